/*
 * perfdb predict: a trace's step time from a database (docs/predict.md).
 * Parses the flags, calls the predict stage once and prints its result as
 * a summary and a per-op markdown table, or as JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/md_table.h"
#include "predict/predict.h"

/* the reference's flags (the database flags every reference tool has): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_predict_help = {
	.name = "predict",
	.reference = reference_flags,
	.usage = "perfdb predict --trace TRACE [--measured-only] [--top N] [--json] [database flags]",
	.summary = "predict a trace's step time from a database and compare it with the trace",
	.description =
		"Reads the op sequence of TRACE (a PyTorch profiler trace recorded with\n"
		"record_shapes=True, an Ascend kernel_details or an msprof op_summary table)\n"
		"and answers each top-level op call from the database with the simulator's\n"
		"lookup rules: the row of the same shapes and dtypes, else linear\n"
		"interpolation along the token axis between two rows, never extrapolation.\n"
		"An op the database cannot answer takes its children's time; views cost 0.\n"
		"The prediction adds the trace's own gaps between ops as host overhead.\n"
		"Prints predicted and measured step time, the error, the coverage, and one\n"
		"row per op and inputs: the trace's time, the database's, their ratio and\n"
		"how it was answered (hit, interpolated, children, zero-cost, or missing\n"
		"with the reason). The database may be another device's: that is a\n"
		"prediction; the same device's is closure. Nothing is written.",
};

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
static void print_rows(const struct perfdb_predict_result *r, long top)
{
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
	if (ok && perfdb_md_table(&md, hdr, 9, rows, n) == 0) {
		printf("\n%s\n", md.buf);
		if (n < r->nrows)
			printf("(%zu more row%s: --top or --json shows them)\n", r->nrows - n,
			       r->nrows - n == 1 ? "" : "s");
	}
	perfdb_strbuf_release(&md);
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i]);
	free(rows);
	free(num);
	free(cut);
}

static void print_text(const struct perfdb_predict_result *r, const char *db, long top)
{
	const double ms = 1e-3;
	printf("perfdb predict: %zu op call%s of the %s %s, answered from %s\n", r->calls,
	       r->calls == 1 ? "" : "s", perfdb_predict_kind_text(r->kind), r->trace_file, db);
	if (r->kind == PERFDB_PREDICT_TORCH_CPU)
		printf("predicted  %.3f ms  (ops %.3f ms + host overhead %.3f ms, the trace's gaps "
		       "between top-level calls)\n", r->predicted_us * ms, r->predicted_ops_us * ms,
		       r->overhead_us * ms);
	else if (r->overhead_us > 0)
		printf("predicted  %.3f ms  (ops %.3f ms + the trace's wait time %.3f ms)\n",
		       r->predicted_us * ms, r->predicted_ops_us * ms, r->overhead_us * ms);
	else
		printf("predicted  %.3f ms\n", r->predicted_us * ms);
	printf("measured   %.3f ms  (%s)\n", r->measured_us * ms,
	       r->kind == PERFDB_PREDICT_TORCH_CPU ? "the step: first top-level call's start to "
	       "the last one's end" : r->kind == PERFDB_PREDICT_TORCH_GPU ?
	       "the device time the ops launched" : "the kernels' durations and wait times");
	if (r->measured_us > 0) {
		double e = (r->predicted_us / r->measured_us - 1) * 100;
		printf("error      %+.1f %%\n", fabs(e) < 0.05 ? 0.0 : e);
	}
	double tot = r->trace_ops_us > 0 ? r->trace_ops_us : 1;
	printf("coverage   %.1f %% of the trace's op time answered: hit %.1f %%, interpolated "
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
		printf("answered by");
		const char *sep = " ";
		for (int c = 0; c < PERFDB_PREDICT_NCOLUMNS; c++)
			if (r->column_db_us[c] > 0) {
				printf("%s%s %.1f %%", sep, perfdb_predict_columns[c],
				       100 * r->column_db_us[c] / r->predicted_ops_us);
				sep = ", ";
			}
		printf(" of the predicted op time\n");
	}
	if (r->other_thread_calls)
		printf("not in the step: %zu top-level call%s (%.3f ms) on other threads\n",
		       r->other_thread_calls, r->other_thread_calls == 1 ? "" : "s",
		       r->other_thread_us * ms);
	print_rows(r, top);
}

int cmd_predict(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	const char *trace = NULL;
	bool json = false, measured_only = false;
	long top = -1;
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "trace", .dest = &trace, .metavar = "TRACE",
		  .required = true,
		  .help = "the trace: a *.pt.trace.json[.gz], kernel_details*.csv or op_summary*.csv "
			  "file, or a directory holding one" },
		{ .type = OPT_FLAG, .name = "measured-only", .dest = &measured_only,
		  .help = "answer only from Average Duration(us), the replayed figure (the "
			  "consumer falls back to the profiled columns)" },
		{ .type = OPT_INT, .name = "top", .dest = &top, .metavar = "N", .has_min = true,
		  .min = 0, .help = "print only the N rows with the most trace time (default: all)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print one JSON object instead (keys: docs/predict.md)" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_predict_help, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;
	if ((rc = db_opts_finish(db, &cmd_predict_help)))
		return rc;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, js = PERFDB_STRBUF_INIT;
	struct perfdb_predict_result res;
	memset(&res, 0, sizeof(res));
	rc = perfdb_db_resolve(o, &dir, &err);
	if (rc == 0) {
		struct perfdb_predict_opts po = { trace, dir.buf, measured_only };
		rc = perfdb_predict_run(&po, &res, &err);
	}
	if (rc == 0 && json)
		rc = perfdb_predict_json(&res, dir.buf, measured_only, &js, &err);
	if (rc < 0)
		rc = cli_error("predict", &err);
	else if (json)
		fputs(js.buf, stdout);
	else
		print_text(&res, dir.buf, top);
	perfdb_predict_result_release(&res);
	perfdb_strbuf_release(&js);
	perfdb_strbuf_release(&dir);
	return rc;
}
