/*
 * perfdb comm-suite: the collection sweeps of run_comm_bench.sh as three
 * MPI launches of `perfdb comm` (docs/spec/comm.md §4, Decision 5; the plan is
 * src/comm/suite.c).  A failed launch is reported and the suite goes on;
 * the exit status says whether every launch succeeded.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"

const struct cmd_help cmd_comm_suite_help = {
	.name = "comm-suite",
	.usage = "perfdb comm-suite [OUTPUT_DIR] [--hostfile FILE] [--nproc-per-node N] [--quick]\n"
		 "         [--num-devices N ...] [--bytes-grid B ...] [--mpirun PROG] [--mpirun-args ARGS]\n"
		 "         [--dry-run] [--json] [-- COMM_ARGS ...]",
	.summary = "run the standard collective sweeps (launches mpirun)",
	.description =
		"Single node (no --hostfile): group sizes 16 8 4 2 on the 23 powers of two\n"
		"128 B .. 512 MiB, tiers from the 48 8 2 grid, into OUTPUT_DIR (default\n"
		"./hccl_bench_data). Multi-node (--hostfile): powers of two from 32 plus 384 and\n"
		"768 up to hosts x --nproc-per-node ranks, all at tier 0 (default\n"
		"./hccl_bench_inter_pod_v8.5). Three launches, one per round: all_reduce;\n"
		"all_gather and reduce_scatter; all_to_all. Arguments after `--` are passed\n"
		"to every `perfdb comm`. Exit status 1 if any launch failed.",
	.positional = "  OUTPUT_DIR  database directory for the hcom_*.csv tables (created)",
	.max_positional = 1,
};

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);
	long long x;
	return v && *v && perfdb_comm_parse_pyint(v, &x) == 0 && x > 0 && x <= LONG_MAX ? (long)x : dflt;
}

static char *self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return strdup("perfdb");
	buf[n] = '\0';
	return strdup(buf);
}

/* An absolute form of path (not resolved: it need not exist yet). */
static char *absolute(const char *path)
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

/* Split on blanks (no quoting: one word per argument). */
static size_t split_words(char *s, char **out, size_t cap)
{
	size_t n = 0;
	for (char *tok = strtok(s, " \t\n"); tok && n < cap; tok = strtok(NULL, " \t\n"))
		out[n++] = tok;
	return n;
}

/* The local time, with the date when full. */
static const char *clock_now(char *buf, size_t cap, bool full)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	if (full)
		strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
	else
		strftime(buf, cap, "%H:%M:%S", &tm);
	return buf;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long count_rows(const char *path)
{
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	long n = perfdb_table_load(&t, path, &err) == 0 ? (long)t.nrows : -1;
	perfdb_table_release(&t);
	return n;
}

int cmd_comm_suite(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	const struct cmd_help *h = &cmd_comm_suite_help;
	/* everything after the first "--" belongs to perfdb comm */
	int split = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			split = i;
			break;
		}
	const char *hostfile = NULL, *mpirun = getenv("PERFDB_MPIRUN");
	const char *mpirun_args = getenv("PERFDB_MPIRUN_ARGS");
	long nproc = env_long("NPROC", 16);
	const char *quick_env = getenv("QUICK");
	bool quick = quick_env && strcmp(quick_env, "1") == 0;
	bool dry = false, json = false;
	struct opt_list nd = { 0 }, bytes = { 0 };
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "hostfile", .dest = &hostfile, .metavar = "FILE",
		  .help = "Open MPI hostfile: one host per line; multi-node mode (the rank 0 host "
			  "writes the tables: run from it or use a shared OUTPUT_DIR)" },
		{ .type = OPT_INT, .name = "nproc-per-node", .dest = &nproc, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "ranks per host in multi-node mode (default: $NPROC or 16)" },
		{ .type = OPT_FLAG, .name = "quick", .dest = &quick,
		  .help = "multi-node: the 5 sizes 1024 65536 1048576 16777216 268435456 "
			  "(default: $QUICK=1)" },
		{ .type = OPT_LIST, .name = "num-devices", .dest = &nd, .metavar = "N",
		  .help = "group sizes instead of the mode's list (a quick single-node run: "
			  "--num-devices 4 2)" },
		{ .type = OPT_LIST, .name = "bytes-grid", .dest = &bytes, .metavar = "B",
		  .help = "message sizes instead of the mode's grid" },
		{ .type = OPT_STRING, .name = "mpirun", .dest = &mpirun, .metavar = "PROG",
		  .help = "MPI launcher (default: $PERFDB_MPIRUN or mpirun)" },
		{ .type = OPT_STRING, .name = "mpirun-args", .dest = &mpirun_args, .metavar = "ARGS",
		  .help = "extra launcher arguments, split on blanks, e.g. '--oversubscribe "
			  "--mca btl self,vader' (default: $PERFDB_MPIRUN_ARGS)" },
		{ .type = OPT_FLAG, .name = "dry-run", .dest = &dry,
		  .help = "print the launch commands and exit" },
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON summary on stdout (the launches' output goes to stderr)" },
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(split, argv, opts, h, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;

	long *ndv = NULL;
	long long *bv = NULL;
	char *words_buf = NULL, *words[256];
	size_t nwords = 0;
	int status = 0;
	char *exe = self_exe(), *outabs = NULL;
	struct perfdb_comm_suite s;
	perfdb_comm_suite_init(&s);
	json_t *launches = json_array();

	if (nd.n) {
		ndv = calloc(nd.n, sizeof(long));
		for (size_t i = 0; ndv && i < nd.n; i++) {
			long long v;
			if (perfdb_comm_parse_pyint(nd.v[i], &v) < 0 || v < 1 || v > INT_MAX) {
				status = opt_usage_error(h, "argument --num-devices: invalid group size: '%s'",
							 nd.v[i]);
				goto out;
			}
			ndv[i] = (long)v;
		}
	}
	if (bytes.n) {
		bv = calloc(bytes.n, sizeof(long long));
		for (size_t i = 0; bv && i < bytes.n; i++) {
			long long v;
			if (perfdb_comm_parse_pyint(bytes.v[i], &v) < 0 || v < 1) {
				status = opt_usage_error(h, "argument --bytes-grid: message sizes must be "
							    "positive integers, got '%s'", bytes.v[i]);
				goto out;
			}
			bv[i] = v;
		}
	}
	if (mpirun_args) {
		words_buf = strdup(mpirun_args);
		if (words_buf)
			nwords = split_words(words_buf, words, sizeof(words) / sizeof(words[0]));
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	const char *const *comm_args = (const char *const *)argv + split + 1;
	struct perfdb_comm_suite_opts so = {
		.output_dir = npos ? pos[0] : NULL, .hostfile = hostfile, .nproc = nproc,
		.num_devices = ndv, .nnum_devices = nd.n, .bytes = bv, .nbytes = bytes.n,
		.quick = quick, .mpirun = mpirun && *mpirun ? mpirun : "mpirun",
		.mpirun_args = (const char *const *)words, .nmpirun_args = nwords, .perfdb = exe,
		.comm_args = split < argc ? comm_args : NULL,
		.ncomm_args = split < argc ? (size_t)(argc - split - 1) : 0,
	};
	/* the output directory is passed absolute: ranks may start elsewhere */
	const char *out_rel = so.output_dir ? so.output_dir
			    : hostfile ? "./hccl_bench_inter_pod_v8.5" : "./hccl_bench_data";
	outabs = absolute(out_rel);
	so.output_dir = outabs;
	if (perfdb_comm_suite_plan(&so, &s, &err) < 0) {
		status = cli_error("comm-suite", &err);
		goto out;
	}
	if (dry) {
		for (size_t i = 0; i < s.nlaunch; i++) {
			struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
			perfdb_comm_argv_format(s.launch[i].argv, &sb);
			if (json)
				json_array_append_new(launches, json_pack("{s:s, s:s}", "title",
						      s.launch[i].title, "command", sb.buf));
			else
				printf("# %s\n%s\n", s.launch[i].title, sb.buf);
			perfdb_strbuf_release(&sb);
		}
		if (json) {
			char *js = json_dumps(launches, JSON_INDENT(2));
			if (js)
				printf("%s\n", js);
			free(js);
		}
		goto out;
	}
	if (perfdb_mkdir_p(outabs, &err) < 0) {
		perfdb_err_set(&err, PERFDB_EIO, "cannot create output dir '%s'", outabs);
		status = cli_error("comm-suite", &err);
		goto out;
	}

	FILE *log = json ? stderr : stdout;
	char tbuf[64];
	fprintf(log, "=== perfdb comm-suite: collective microbenchmarks ===\n");
	fprintf(log, "Output: %s\n", outabs);
	if (s.multi_node)
		fprintf(log, "Mode: multi-node, %ld hosts x %ld ranks = %ld, tier 0\n", s.nhosts, s.nproc,
			s.world);
	else
		fprintf(log, "Mode: single node, %ld ranks\n", s.world);
	fprintf(log, "Group sizes:");
	for (size_t i = 0; i < s.nnd; i++)
		fprintf(log, " %ld", s.nd[i]);
	fprintf(log, "\nSizes: %zu (%lld .. %lld bytes)\n", s.nbytes, s.bytes[0], s.bytes[s.nbytes - 1]);
	fprintf(log, "Start time: %s\n", clock_now(tbuf, sizeof(tbuf), true));
	int failed = 0;
	for (size_t i = 0; i < s.nlaunch; i++) {
		const struct perfdb_comm_launch *l = &s.launch[i];
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		perfdb_comm_argv_format(l->argv, &sb);
		fprintf(log, "\n--- [%s] %s ---\n    $ %s\n", l->title,
			clock_now(tbuf, sizeof(tbuf), false), sb.buf);
		fflush(log);
		double t0 = mono();
		int st = 0;
		perfdb_err_clear(&err);
		int src = perfdb_comm_spawn_to(l->argv, json, &st, &err);
		double secs = mono() - t0;
		if (src < 0) {
			fprintf(stderr, "perfdb comm-suite: warning: %s: %s, continuing\n", l->title,
				err.msg);
			failed++;
		} else if (st == 0) {
			fprintf(log, "    OK (%s)\n", clock_now(tbuf, sizeof(tbuf), false));
		} else if (st == 139) {
			fprintf(stderr, "perfdb comm-suite: warning: %s: exit status 139 (a rank crashed "
					"with SIGSEGV); rows written before the crash are kept, continuing\n",
				l->title);
			failed++;
		} else {
			fprintf(stderr, "perfdb comm-suite: warning: %s: exit status %d, continuing\n",
				l->title, st);
			failed++;
		}
		json_array_append_new(launches, json_pack("{s:s, s:s, s:i, s:f, s:b}", "title", l->title,
							  "command", sb.buf, "status",
							  src < 0 ? 127 : st, "seconds", secs,
							  "ok", src == 0 && st == 0));
		perfdb_strbuf_release(&sb);
	}

	fprintf(log, "\n=== Collection complete: %zu of %zu launches succeeded ===\n",
		s.nlaunch - (size_t)failed, s.nlaunch);
	fprintf(log, "End time: %s\n", clock_now(tbuf, sizeof(tbuf), true));
	json_t *tables = json_array();
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		char path[PATH_MAX];
		const char *file = perfdb_comm_op_file((enum perfdb_comm_op)op);
		snprintf(path, sizeof(path), "%s/%s", outabs, file);
		if (access(path, F_OK) != 0)
			continue;
		long rows = count_rows(path);
		fprintf(log, "  %-24s %ld rows\n", file, rows);
		json_array_append_new(tables, json_pack("{s:s, s:I}", "file", file, "rows",
							(json_int_t)rows));
	}
	if (json) {
		json_t *root = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:b}", "output_dir", outabs,
					 "mode", s.multi_node ? "multi-node" : "single-node",
					 "hosts", (json_int_t)s.nhosts, "nproc", (json_int_t)s.nproc,
					 "world", (json_int_t)s.world, "launches", launches,
					 "tables", tables, "ok", !failed);
		launches = NULL;
		char *js = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		if (js)
			printf("%s\n", js);
		free(js);
		json_decref(root);
	} else {
		json_decref(tables);
	}
	status = failed ? 1 : 0;
out:
	json_decref(launches);
	perfdb_comm_suite_release(&s);
	free(outabs);
	free(exe);
	free(words_buf);
	free(ndv);
	free(bv);
	free(nd.v);
	free(bytes.v);
	return status;
}
