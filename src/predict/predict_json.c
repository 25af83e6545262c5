/*
 * `perfdb predict --json` (docs/predict.md "JSON"): the totals, the
 * answers by kind and by latency column, and the per-op rows.
 */
#include <jansson.h>

#include "perfdb/json_out.h"
#include "predict/predict.h"

/* A ratio that is not a number (nothing to divide by) is null, never NaN. */
static json_t *ratio(double num, double den)
{
	return den > 0 ? json_real(num / den) : json_null();
}

int perfdb_predict_json(const struct perfdb_predict_result *r, const char *database,
			int measured_only, struct perfdb_strbuf *out, struct perfdb_err *err)
{
	json_t *how = json_object();
	for (int h = 0; h < PERFDB_PREDICT_NHOW; h++)
		json_object_set_new(how, perfdb_predict_how_name((enum perfdb_predict_how)h),
				    json_pack("{s:I, s:f}", "calls", (json_int_t)r->how_calls[h],
					      "trace_us", r->how_trace_us[h]));
	json_t *cols = json_object();
	for (int c = 0; c < PERFDB_PREDICT_NCOLUMNS; c++)
		json_object_set_new(cols, perfdb_predict_columns[c], json_real(r->column_db_us[c]));
	json_t *rows = json_array();
	for (size_t i = 0; i < r->nrows; i++) {
		const struct perfdb_predict_row *w = &r->rows[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:o, s:s, s:o, s:s}",
			"table", w->table, "input_shapes", w->in_shapes,
			"input_dtypes", w->in_dtypes, "calls", (json_int_t)w->calls,
			"trace_us", w->trace_us, "db_us", w->db_us,
			"ratio", w->how == PERFDB_PREDICT_MISSING ? json_null() :
				 ratio(w->db_us, w->trace_us),
			"how", perfdb_predict_how_name(w->how),
			"column", w->column >= 0 ? json_string(perfdb_predict_columns[w->column]) :
				  json_null(),
			"detail", w->detail);
		json_array_append_new(rows, o);
	}
	double missing = r->how_trace_us[PERFDB_PREDICT_MISSING];
	/* docs/predict.md "Noise": null where no answering row has samples */
	json_t *noise = json_pack("{s:o, s:f, s:f}", "standard_error_us",
				  r->noise_with_us > 0 ? json_real(r->noise_se_us) : json_null(),
				  "with_samples_us", r->noise_with_us, "without_samples_us", r->noise_without_us);
	json_t *j = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:{s:I, s:f}, s:f, s:f, s:f, "
			      "s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I}, s:o}",
		"trace", r->trace_file, "kind", perfdb_predict_kind_key(r->kind),
		"database", database, "measured_only", measured_only,
		"calls", (json_int_t)r->calls, "nested_calls", (json_int_t)r->nested,
		"other_threads", "calls", (json_int_t)r->other_thread_calls,
		"trace_us", r->other_thread_us,
		"measured_us", r->measured_us, "trace_ops_us", r->trace_ops_us,
		"overhead_us", r->overhead_us, "predicted_ops_us", r->predicted_ops_us,
		"predicted_us", r->predicted_us,
		"error", r->measured_us > 0 ? json_real(r->predicted_us / r->measured_us - 1) :
			 json_null(),
		"coverage", ratio(r->trace_ops_us - missing, r->trace_ops_us),
		"answers", how, "columns", cols, "noise", noise,
		"tables", "found", (json_int_t)r->tables_used, "absent",
		(json_int_t)r->tables_missing,
		"rows", rows);
	if (perfdb_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10),
			      out) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}
