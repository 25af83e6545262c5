/*
 * `perfdb validate --json` (docs/comm.md "validate"): the alpha-beta check
 * of every collective's table as one JSON document (no ratio: null).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "comm/comm.h"

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int perfdb_comm_validation_json(const struct perfdb_comm_validation *v, const char *dir,
				struct perfdb_strbuf *out)
{
	json_t *ops = json_array();
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		const struct perfdb_comm_vreport *r = &v->op[op];
		json_t *rows = json_array();
		for (size_t i = 0; i < r->nrows; i++) {
			const struct perfdb_comm_vrow *x = &r->rows[i];
			json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I}",
					      "status", perfdb_comm_status_name(x->status),
					      "message_bytes", (json_int_t)x->message_bytes,
					      "num_devices", (json_int_t)x->num_devices,
					      "topology_tier", (json_int_t)x->tier,
					      "line", (json_int_t)x->line);
			json_object_set_new(j, "measured_us", jnum(x->measured_us));
			json_object_set_new(j, "predicted_us", jnum(x->predicted_us));
			json_object_set_new(j, "ratio", jnum(x->ratio));
			json_array_append_new(rows, j);
		}
		json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I}",
				      "op", perfdb_comm_op_name((enum perfdb_comm_op)op),
				      "file", perfdb_comm_op_file((enum perfdb_comm_op)op),
				      "present", r->present, "rows", (json_int_t)r->nrows,
				      "pass", (json_int_t)r->count[0], "warn", (json_int_t)r->count[1],
				      "fail", (json_int_t)r->count[2],
				      "skipped_rows", (json_int_t)r->skipped_rows);
		json_object_set_new(o, "mean_ratio", jnum(r->mean));
		json_object_set_new(o, "min_ratio", jnum(r->min));
		json_object_set_new(o, "max_ratio", jnum(r->max));
		json_object_set_new(o, "table", rows);
		json_array_append_new(ops, o);
	}
	json_t *root = json_pack("{s:s, s:f, s:s, s:o, s:{s:I, s:I, s:I, s:I}, s:b}",
				 "csv_dir", dir, "tolerance", v->tolerance, "device", v->device->name,
				 "ops", ops, "total", "rows", (json_int_t)v->rows,
				 "pass", (json_int_t)v->total[0], "warn", (json_int_t)v->total[1],
				 "fail", (json_int_t)v->total[2], "ok", v->ok);
	return perfdb_json_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12),
				out);
}
