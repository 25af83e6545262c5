/*
 * perfdb trace-to-csv: a TensorCast Chrome trace to a per-op CSV, the
 * reference trace_to_csv.py (docs/spec/parse.md §1 "trace_to_csv input", §7).
 * The conversion is src/parse/trace_to_csv.c; this file is flags and output.
 */
#include <errno.h>
#include <stdio.h>

#include "builtin.h"
#include "perfdb/fsio.h"
#include "parse/trace_to_csv.h"

/* the reference's flags (trace_to_csv.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	"trace", "output", NULL
};

const struct cmd_help cmd_trace_to_csv_help = {
	.name = "trace-to-csv",
	.reference = reference_flags,
	.usage = "perfdb trace-to-csv --trace FILE [--output FILE]",
	.summary = "convert a TensorCast Chrome trace (JSON) to a per-op CSV",
	.description =
		"Writes one CSV row per complete event (\"ph\": \"X\") of the trace: op_name,\n"
		"kernel_type, simulation_shapes, dur_us, source, confidence, composite,\n"
		"sub_kernel_durations, kernel_shapes, shape_match_rule, sub_kernel_shapes.\n"
		"Values are rendered as Python prints them (True, 11.0, ['a', 1]), CRLF line\n"
		"ends, byte for byte what the reference trace_to_csv.py writes.",
};

int cmd_trace_to_csv(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	const char *trace = NULL, *output = NULL;
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "trace", .dest = &trace, .metavar = "FILE",
		  .required = true,
		  .help = "TensorCast Chrome trace JSON (an object with \"traceEvents\")" },
		{ .type = OPT_STRING, .name = "output", .dest = &output, .metavar = "FILE",
		  .help = "output CSV, replaced atomically (default: stdout)" },
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_trace_to_csv_help, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;

	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf csv = PERFDB_STRBUF_INIT;
	rc = perfdb_trace_to_csv(trace, &csv, &err);
	/* Like the reference (`if output_path`), an empty --output means stdout.
	 * The whole CSV is built first, so a bad trace writes nothing at all. */
	if (rc == 0 && output && *output) {
		rc = perfdb_file_write_atomic(output, csv.buf, csv.len, &err);
	} else if (rc == 0) {
		if (fwrite(csv.buf, 1, csv.len, stdout) != csv.len || fflush(stdout) != 0)
			rc = perfdb_err_errno(&err, errno, "cannot write to stdout");
	}
	perfdb_strbuf_release(&csv);
	return rc < 0 ? cli_error("trace-to-csv", &err) : 0;
}
