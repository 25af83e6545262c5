/*
 * Fuzz target: Ascend SQLite profiles (src/parse/ascend_db.c), through
 * SQLite itself.  The input is written to a scratch file and read as a
 * profile.  Invariants: success sinks exactly the rows it counts, each
 * with a Type and a duration that is empty or a number; failure names the
 * file; the reader leaves no file beside it (it opens immutable).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#include "parse/parse.h"
#include "parse/comm_agg.h"
#include "perfdb/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct count {
	size_t rows;
};

static int on_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	(void)err;
	struct count *c = ctx;
	double d;
	if (row->duration.len && perfdb_stats_parse_double(row->duration.p, row->duration.len, &d) < 0)
		abort();
	c->rows++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[512], path[600];
	snprintf(dir, sizeof(dir), "%s/perfdb-fuzz-db-XXXXXX", tmp);
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/msprof_0.db", dir);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	struct count c = { 0 };
	struct perfdb_row_sink sink = { .row = on_row, .ctx = &c };
	struct perfdb_csv_input_stats st;
	struct perfdb_err err;
	struct perfdb_comm_agg *comm = NULL;
	if (perfdb_comm_agg_new(&comm, &err) < 0)
		abort();
	int rc = perfdb_parse_read_db(path, &sink, comm, &st, &err);
	if (rc == 0 && st.rows != c.rows)
		abort();
	/* every sized collective call is in one group or another */
	size_t calls = 0;
	for (size_t g = 0; g < perfdb_comm_agg_ngroups(comm); g++) {
		struct perfdb_comm_obs o;
		double *s;
		calls += perfdb_comm_agg_group(comm, g, &o, &s);
	}
	if (rc == 0 && calls != st.comm_calls)
		abort();
	perfdb_comm_agg_free(comm);
	if (rc < 0 && strncmp(err.msg, path, strlen(path)) != 0 && strncmp(err.msg, "out of memory", 13) != 0)
		abort();   /* every error names the input */
	/* nothing beside it: no -journal, -wal or -shm made by the reader */
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	if (n != 1)
		abort();
	unlink(path);
	rmdir(dir);
	return 0;
}
