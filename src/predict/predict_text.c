/*
 * perfdb predict's result for people (predict.h): the summary lines
 * (predicted, measured, error, coverage, which columns answered) and the
 * per-op markdown table.  The JSON form is predict_json.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/md_table.h"
#include "perfdb/strbuf.h"
#include "predict/predict.h"

#define CELL_MAX 48

static void shorten(const char *s, char *out, size_t cap)
{
	size_t n = strlen(s);
	if (n <= CELL_MAX)
		snprintf(out, cap, "%s", s);
	else
		snprintf(out, cap, "%.*s...", CELL_MAX - 3, s);
}

/* The per-op table, the first top rows (all when top < 0). */
static int print_rows(const struct perfdb_predict_result *r, long top, struct perfdb_strbuf *out)
{
	int rc = 0;
	size_t n = r->nrows;
	if (top >= 0 && (size_t)top < n)
		n = (size_t)top;
	static const char *const hdr[] = { "op", "input shapes", "input dtypes", "calls",
		"trace us", "db us", "db/trace", "answer", "detail" };
	char ***rows = calloc(n + 1, sizeof(*rows));
	char (*num)[4][32] = calloc(n + 1, sizeof(*num));
	char (*cut)[2][CELL_MAX + 4] = calloc(n + 1, sizeof(*cut));
	int ok = rows && num && cut;
	for (size_t i = 0; ok && i < n; i++) {
		const struct perfdb_predict_row *w = &r->rows[i];
		rows[i] = calloc(9, sizeof(char *));
		if (!rows[i]) {
			ok = 0;
			break;
		}
		snprintf(num[i][0], 32, "%zu", w->calls);
		snprintf(num[i][1], 32, "%.1f", w->trace_us);
		if (w->how == PERFDB_PREDICT_MISSING) {
			snprintf(num[i][2], 32, "-");
			snprintf(num[i][3], 32, "-");
		} else {
			snprintf(num[i][2], 32, "%.1f", w->db_us);
			if (w->trace_us > 0)
				snprintf(num[i][3], 32, "%.2f", w->db_us / w->trace_us);
			else
				snprintf(num[i][3], 32, "-");
		}
		/* long cells (an attention kernel's 30 dtypes) end in "...": --json has them whole */
		shorten(w->in_shapes, cut[i][0], sizeof(cut[i][0]));
		shorten(w->in_dtypes, cut[i][1], sizeof(cut[i][1]));
		char *cells[9] = { w->table, cut[i][0], cut[i][1], num[i][0], num[i][1],
				   num[i][2], num[i][3], (char *)perfdb_predict_how_name(w->how),
				   w->detail };
		memcpy(rows[i], cells, sizeof(cells));
	}
	struct perfdb_strbuf md = PERFDB_STRBUF_INIT;
	if (!ok || perfdb_md_table(&md, hdr, 9, rows, n) < 0)
		rc = -PERFDB_ENOMEM;
	else {
		rc |= perfdb_strbuf_addf(out, "\n%s\n", md.buf);
		if (n < r->nrows)
			rc |= perfdb_strbuf_addf(out, "(%zu more row%s: --top or --json shows them)\n",
						 r->nrows - n, r->nrows - n == 1 ? "" : "s");
	}
	perfdb_strbuf_release(&md);
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i]);
	free(rows);
	free(num);
	free(cut);
	return rc;
}

int perfdb_predict_text(const struct perfdb_predict_result *r, const char *db, long top,
			struct perfdb_strbuf *out)
{
	int rc = 0;
	const double ms = 1e-3;
	rc |= perfdb_strbuf_addf(out, "perfdb predict: %zu op call%s of the %s %s, answered from %s\n", r->calls,
	       r->calls == 1 ? "" : "s", perfdb_predict_kind_text(r->kind), r->trace_file, db);
	if (r->kind == PERFDB_PREDICT_TORCH_CPU)
		rc |= perfdb_strbuf_addf(out, "predicted  %.3f ms  (ops %.3f ms + host overhead %.3f ms, the trace's gaps "
		       "between top-level calls)\n", r->predicted_us * ms, r->predicted_ops_us * ms,
		       r->overhead_us * ms);
	else if (r->overhead_us > 0)
		rc |= perfdb_strbuf_addf(out, "predicted  %.3f ms  (ops %.3f ms + the trace's wait time %.3f ms)\n",
		       r->predicted_us * ms, r->predicted_ops_us * ms, r->overhead_us * ms);
	else
		rc |= perfdb_strbuf_addf(out, "predicted  %.3f ms\n", r->predicted_us * ms);
	rc |= perfdb_strbuf_addf(out, "measured   %.3f ms  (%s)\n", r->measured_us * ms,
	       r->kind == PERFDB_PREDICT_TORCH_CPU ? "the step: first top-level call's start to "
	       "the last one's end" : r->kind == PERFDB_PREDICT_TORCH_GPU ?
	       "the device time the ops launched" : "the kernels' durations and wait times");
	if (r->measured_us > 0) {
		double e = (r->predicted_us / r->measured_us - 1) * 100;
		rc |= perfdb_strbuf_addf(out, "error      %+.1f %%\n", fabs(e) < 0.05 ? 0.0 : e);
	}
	double tot = r->trace_ops_us > 0 ? r->trace_ops_us : 1;
	rc |= perfdb_strbuf_addf(out, "coverage   %.1f %% of the trace's op time answered: hit %.1f %%, interpolated "
	       "%.1f %%, children %.1f %%, zero-cost %.1f %%; missing %.1f %% (%zu call%s, "
	       "counted as 0)\n",
	       100 * (1 - r->how_trace_us[PERFDB_PREDICT_MISSING] / tot),
	       100 * r->how_trace_us[PERFDB_PREDICT_HIT] / tot,
	       100 * r->how_trace_us[PERFDB_PREDICT_INTERPOLATED] / tot,
	       100 * r->how_trace_us[PERFDB_PREDICT_CHILDREN] / tot,
	       100 * r->how_trace_us[PERFDB_PREDICT_ZERO_COST] / tot,
	       100 * r->how_trace_us[PERFDB_PREDICT_MISSING] / tot,
	       r->how_calls[PERFDB_PREDICT_MISSING],
	       r->how_calls[PERFDB_PREDICT_MISSING] == 1 ? "" : "s");
	if (r->predicted_ops_us > 0) {
		rc |= perfdb_strbuf_addf(out, "answered by");
		const char *sep = " ";
		for (int c = 0; c < PERFDB_PREDICT_NCOLUMNS; c++)
			if (r->column_db_us[c] > 0) {
				rc |= perfdb_strbuf_addf(out, "%s%s %.1f %%", sep, perfdb_predict_columns[c],
				       100 * r->column_db_us[c] / r->predicted_ops_us);
				sep = ", ";
			}
		rc |= perfdb_strbuf_addf(out, " of the predicted op time\n");
		/* docs/predict.md "Noise": how precisely the database's own samples fix it */
		if (r->noise_with_us > 0) {
			rc |= perfdb_strbuf_addf(out, "noise      +-%.1f us (%.1f %%): one standard error of the %.3f ms "
			       "from rows with samples (MicroBench Std / sqrt(Samples))", r->noise_se_us,
			       100 * r->noise_se_us / r->noise_with_us, r->noise_with_us * ms);
			if (r->noise_without_us > 0)
				rc |= perfdb_strbuf_addf(out, "; %.3f ms from rows without them",
				       r->noise_without_us * ms);
			rc |= perfdb_strbuf_addf(out, "\n");
		} else {
			rc |= perfdb_strbuf_addf(out, "noise      unknown: no answering row has MicroBench Std and "
			       "Samples (rows perfdb microbench replayed have them)\n");
		}
	}
	if (r->other_thread_calls)
		rc |= perfdb_strbuf_addf(out, "not in the step: %zu top-level call%s (%.3f ms) on other threads\n",
		       r->other_thread_calls, r->other_thread_calls == 1 ? "" : "s",
		       r->other_thread_us * ms);
	rc |= print_rows(r, top, out);
	return rc < 0 ? -PERFDB_ENOMEM : 0;
}

