/*
 * perfdb comm-suite's launch loop (docs/spec/comm.md §4): each planned
 * launch of `perfdb comm` run in turn, a failed one recorded and the suite
 * going on, then the tables the launches left counted.  What is printed,
 * and where, is the caller's: it hears of each launch through the events.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Rows of a table, -1 when it does not load. */
static long count_rows(const char *path)
{
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	long n = perfdb_table_load(&t, path, &err) == 0 ? (long)t.nrows : -1;
	perfdb_table_release(&t);
	return n;
}

void perfdb_comm_suite_result_release(struct perfdb_comm_suite_result *r)
{
	for (size_t i = 0; i < r->nlaunch; i++)
		free(r->launch[i].command);
	free(r->launch);
	memset(r, 0, sizeof(*r));
}

char *perfdb_comm_path_absolute(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return strdup(path);
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	size_t n = strlen(cwd) + strlen(path) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s", cwd, strcmp(path, ".") == 0 ? "" : "/",
			 strcmp(path, ".") == 0 ? "" : path);
	if (s && s[strlen(s) - 1] == '/' && strlen(s) > 1)
		s[strlen(s) - 1] = '\0';
	return s;
}

static int run_launch(const struct perfdb_comm_launch *l, bool stdout_to_stderr,
		      const struct perfdb_comm_suite_events *ev, struct perfdb_comm_launch_result *lr)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_comm_argv_format(l->argv, &sb);
	if (rc < 0) {
		perfdb_strbuf_release(&sb);
		return rc;
	}
	lr->title = l->title;
	lr->command = sb.buf;   /* owned by the result from here */
	if (ev && ev->launch_begin)
		ev->launch_begin(ev->ctx, lr);
	double t0 = mono();
	struct perfdb_err err;
	perfdb_err_clear(&err);
	int src = perfdb_comm_spawn_to(l->argv, stdout_to_stderr, &lr->status, &err);
	lr->seconds = mono() - t0;
	lr->started = src == 0;
	if (src < 0) {
		lr->status = 127;
		snprintf(lr->why, sizeof(lr->why), "%s", err.msg);
	}
	lr->ok = lr->started && lr->status == 0;
	if (ev && ev->launch_end)
		ev->launch_end(ev->ctx, lr);
	return 0;
}

int perfdb_comm_suite_run(const struct perfdb_comm_suite *s, const char *outdir,
			  bool stdout_to_stderr, const struct perfdb_comm_suite_events *ev,
			  struct perfdb_comm_suite_result *r, struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));
	if (perfdb_mkdir_p(outdir, err) < 0)
		return perfdb_err_set(err, PERFDB_EIO, "cannot create output dir '%s'", outdir);
	r->launch = calloc(s->nlaunch ? s->nlaunch : 1, sizeof(*r->launch));
	if (!r->launch)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nlaunch; i++) {
		int rc = run_launch(&s->launch[i], stdout_to_stderr, ev, &r->launch[i]);
		if (rc < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		r->nlaunch++;
		r->nfailed += !r->launch[i].ok;
	}
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		char path[PATH_MAX];
		const char *file = perfdb_comm_op_file((enum perfdb_comm_op)op);
		snprintf(path, sizeof(path), "%s/%s", outdir, file);
		if (access(path, F_OK) != 0)
			continue;
		r->tables[r->ntables].file = file;
		r->tables[r->ntables++].rows = count_rows(path);
	}
	return 0;
}
