/*
 * Fuzz target: TensorCast trace -> CSV and the Python rendering helpers
 * (src/parse/trace_to_csv.c; docs/spec/parse.md §1 "trace_to_csv input", §7).
 *
 * The input is converted as a trace file would be.  Invariants checked: a
 * failure is a parse (or memory) error with a one-line message and leaves
 * the output buffer as it was; a success appends the header first and ends
 * with CRLF.  When the input is any JSON value, its Python repr holds no
 * raw control byte (repr escapes them all) and every real in it prints as
 * digits that read back to the same double.  The first 8 bytes, read as a
 * double, drive the float repr directly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/trace_to_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_float(double x)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	if (perfdb_trace_py_float(x, &sb) < 0)
		abort();
	double back = strtod(sb.buf, NULL);
	if (isnan(x) ? !isnan(back) : (back != x || signbit(back) != signbit(x)))
		abort();
	/* Python keeps a '.', an 'e' or a non-finite word in every float repr */
	if (isfinite(x) && !strchr(sb.buf, '.') && !strchr(sb.buf, 'e'))
		abort();
	perfdb_strbuf_release(&sb);
}

static void walk_reals(const json_t *v)
{
	if (json_is_real(v)) {
		check_float(json_real_value(v));
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			walk_reals(json_array_get(v, i));
	} else if (json_is_object(v)) {
		json_t *m = (json_t *)v;
		for (void *it = json_object_iter(m); it; it = json_object_iter_next(m, it))
			walk_reals(json_object_iter_value(it));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sentinel[] = "keep";
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	if (perfdb_strbuf_addstr(&out, sentinel) < 0)
		abort();
	int rc = perfdb_trace_to_csv_mem("fuzz.json", data, size, &out, &err);
	if (rc < 0) {
		if (rc != -PERFDB_EPARSE && rc != -PERFDB_ENOMEM)
			abort();
		if (!err.msg[0] || strchr(err.msg, '\n') || strcmp(out.buf, sentinel) != 0)
			abort();
	} else {
		size_t hl = strlen(perfdb_trace_columns[0]);
		if (rc != 0 || out.len < sizeof(sentinel) + hl + 2 ||
		    memcmp(out.buf + sizeof(sentinel) - 1, perfdb_trace_columns[0], hl) != 0 ||
		    memcmp(out.buf + out.len - 2, "\r\n", 2) != 0)
			abort();
	}
	perfdb_strbuf_release(&out);

	json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (v) {
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		if (perfdb_trace_py_repr(v, &sb) < 0)
			abort();
		for (size_t i = 0; i < sb.len; i++) {
			unsigned char c = (unsigned char)sb.buf[i];
			if (c < 0x20 || c == 0x7f)
				abort();
		}
		perfdb_strbuf_reset(&sb);
		if (perfdb_trace_py_cell(v, &sb) < 0)
			abort();
		perfdb_strbuf_release(&sb);
		walk_reals(v);
		json_decref(v);
	}

	if (size >= sizeof(double)) {
		double x;
		memcpy(&x, data, sizeof(x));
		check_float(x);
	}
	return 0;
}
