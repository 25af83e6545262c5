/*
 * Fuzz target: msprof op_summary rows, through both of their readers: perfdb
 * parse (src/parse/kernel_csv.c with PERFDB_INPUT_OP_SUMMARY, then
 * src/parse/aggregate.c) and perfdb writeback's ingest
 * (src/replay/msprof_ingest.c, which loads the file as a table).
 *
 * The input is the CSV itself.  Invariants: every parse row is aggregated or
 * counted as dropped and every parse error names the input; an ingest either
 * fails with a message or yields groups whose statistics are ordered
 * (min <= median, min <= mean, std >= 0) and whose sample counts do not
 * exceed the rows given.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "parse/parse.h"
#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_parse(const uint8_t *data, size_t size)
{
	struct perfdb_agg *a;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_agg_new(&a, 0, &err) < 0)
		abort();
	struct perfdb_row_sink sink = perfdb_agg_sink(a);
	struct perfdb_csv_input_stats st;
	int rc = perfdb_parse_read_csv_mem("op_summary.csv", data, size, PERFDB_INPUT_OP_SUMMARY,
					   &sink, &st, &err);
	if (rc == 0 && perfdb_agg_finish(a, &err) == 0) {
		const struct perfdb_agg_totals *t = perfdb_agg_totals(a);
		size_t rows = t->dropped_na + t->empty_type;
		for (size_t i = 0; i < perfdb_agg_ngroups(a); i++) {
			const struct perfdb_agg_group *g = perfdb_agg_group(a, i);
			rows += g->n + g->n_invalid;
			if (g->n && (g->median < g->min || g->median > g->max || g->std < 0))
				abort();
		}
		if (rows != t->rows || t->rows != st.rows)
			abort();
	} else if (strncmp(err.msg, "op_summary.csv", 14) != 0) {
		abort();
	}
	perfdb_agg_free(a);
}

static void check_ingest(const uint8_t *data, size_t size)
{
	/* The ingest reads files by path: give it an anonymous in-memory one. */
	int fd = memfd_create("op_summary", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char *files[1] = { path };
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' || data[i] == '\r';
	struct perfdb_measures m;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_msprof_aggregate(files, 1, 16, &m, &err) == 0) {
		for (size_t i = 0; i < m.n; i++) {
			const struct perfdb_measure *x = &m.v[i];
			if (!x->op || !x->op[0] || x->samples > lines)
				abort();
			if (x->samples && (x->median < x->min || x->std < 0 ||
					   !(x->mean >= x->min * (1 - 1e-12) - 1e-300)))
				abort();
		}
		perfdb_measures_release(&m);
	} else if (!err.msg[0]) {
		abort();
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parse(data, size);
	check_ingest(data, size);
	return 0;
}
