/*
 * Fuzz target: kernel_details / op_summary reading and aggregation
 * (src/parse/kernel_csv.c, src/parse/aggregate.c, src/core/samples.c).
 *
 * Byte 0 picks the input kind and the sample-store memory limit (tiny
 * limits force the spill and histogram paths); the rest is the CSV.
 * Invariants: every row is either aggregated or counted as dropped; a
 * group's median lies within [min, max]; n_invalid + n sum to its rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum perfdb_input_kind kind = data[0] & 1 ? PERFDB_INPUT_OP_SUMMARY : PERFDB_INPUT_KERNEL_DETAILS;
	size_t limit = (data[0] >> 1) & 1 ? 2 : 0;
	struct perfdb_agg *a;
	struct perfdb_err err;
	if (perfdb_agg_new(&a, limit, &err) < 0)
		abort();
	struct perfdb_row_sink sink = perfdb_agg_sink(a);
	struct perfdb_csv_input_stats st;
	int rc = perfdb_parse_read_csv_mem("fuzz.csv", data + 1, size - 1, kind, &sink, &st, &err);
	if (rc == 0 && perfdb_agg_finish(a, &err) == 0) {
		const struct perfdb_agg_totals *t = perfdb_agg_totals(a);
		size_t rows = t->dropped_na + t->empty_type;
		for (size_t i = 0; i < perfdb_agg_ngroups(a); i++) {
			const struct perfdb_agg_group *g = perfdb_agg_group(a, i);
			rows += g->n + g->n_invalid;
			if (g->n && (g->median < g->min || g->median > g->max || g->std < 0 ||
				     !(g->mean >= g->min * (1 - 1e-12) - 1e-300) ||
				     !(g->mean <= g->max * (1 + 1e-12) + 1e-300)))
				abort();
		}
		if (rows != t->rows || t->rows != st.rows)
			abort();
	} else if (strncmp(err.msg, "fuzz.csv", 8) != 0) {
		abort();   /* every error names the input */
	}
	perfdb_agg_free(a);
	return 0;
}
