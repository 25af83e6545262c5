/*
 * TensorCast Chrome trace -> per-op CSV (docs/spec/parse.md §1 "trace_to_csv
 * input", §7 "trace_to_csv output"; the reference is trace_to_csv.py).
 *
 * Input: a JSON object {"traceEvents": [...]}, loaded whole.  Each event
 * with "ph" == "X" becomes one row of the 11 columns below; other events are
 * skipped.  op_name is the event's "name", dur_us its "dur" (0 when absent),
 * the other columns come from its "args" ("" when absent).
 *
 * Cells are what Python's csv module writes for the json-decoded value:
 * null -> "", true -> "True", 11 -> "11", 11.0 -> "11.0", strings verbatim,
 * arrays and objects as Python's repr ("[1, 'a', None]", "{'k': 2.5}").
 * The output is the database CSV dialect (CRLF, minimal quoting).
 *
 * Where the reference crashes (a top-level value that is not an object,
 * "traceEvents" that is not iterable, an event or "args" that is not an
 * object) these functions fail with a message instead; "args": null is read
 * as no args.  docs/cli.md "perfdb trace-to-csv" lists every deviation.
 */
#ifndef PERFDB_TRACE_TO_CSV_H
#define PERFDB_TRACE_TO_CSV_H

#include <jansson.h>
#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

#define PERFDB_TRACE_NCOLUMNS 11

/* The header, in output order (the reference's COLUMNS). */
extern const char *const perfdb_trace_columns[PERFDB_TRACE_NCOLUMNS];

/*
 * Convert the trace file at trace_path and append the whole CSV (header
 * first) to out.  Returns 0, or a negative code with err filled:
 * -PERFDB_ENOENT / -PERFDB_EIO (reading), -PERFDB_EPARSE (invalid JSON,
 * "<file>:<line>:<col>: invalid JSON: ...", or a value of the wrong type,
 * "<file>: ..."), -PERFDB_ENOMEM.  On failure out is left as it was.
 */
int perfdb_trace_to_csv(const char *trace_path, struct perfdb_strbuf *out,
			struct perfdb_err *err);

/* The same for a trace held in memory; name is used in messages.  data
 * need not be NUL-terminated. */
int perfdb_trace_to_csv_mem(const char *name, const void *data, size_t len,
			    struct perfdb_strbuf *out, struct perfdb_err *err);

/*
 * Append v as one CSV cell would hold it (before quoting): Python's csv
 * writes None as "", a float as repr() and anything else as str().
 * Returns 0 or -PERFDB_ENOMEM.  v must not be NULL.
 */
int perfdb_trace_py_cell(const json_t *v, struct perfdb_strbuf *out);

/* Append Python's repr() of the json-decoded v: None, True, 11, 11.0,
 * 'text' (quoted and escaped as Python does), [..], {..}.  Returns 0 or
 * -PERFDB_ENOMEM. */
int perfdb_trace_py_repr(const json_t *v, struct perfdb_strbuf *out);

/*
 * Append Python's repr() of a double: the shortest digits that read back to
 * x, positional with at least one fractional digit ("100.0", "0.0001") when
 * 1e-4 <= |x| < 1e16, else exponent form ("1e+16", "1.5e-05"); "nan",
 * "inf", "-inf", "-0.0".  Returns 0 or -PERFDB_ENOMEM.
 */
int perfdb_trace_py_float(double x, struct perfdb_strbuf *out);

#endif
