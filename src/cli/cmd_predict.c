/*
 * perfdb predict: a trace's step time from a database (docs/predict.md).
 * Parses the flags, calls the predict stage once and prints its result as
 * a summary and a per-op markdown table, or as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "dbopts.h"
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
		"Prints predicted and measured step time, the error, the coverage, the\n"
		"noise of the prediction (the standard error the answering rows' own\n"
		"samples give it), and one row per op and inputs: the trace's time, the\n"
		"database's, their ratio and how it was answered (hit, interpolated,\n"
		"children, zero-cost, or missing with the reason). The database may be\n"
		"another device's: that is a prediction; the same device's is closure.\n"
		"Nothing is written.",
};

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
	else if (perfdb_predict_text(&res, dir.buf, top, &js) < 0)
		rc = cli_oom("predict");
	else
		fputs(js.buf, stdout);
	perfdb_predict_result_release(&res);
	perfdb_strbuf_release(&js);
	perfdb_strbuf_release(&dir);
	return rc;
}
