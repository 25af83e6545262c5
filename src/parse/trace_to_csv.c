/*
 * TensorCast Chrome trace -> per-op CSV, byte-compatible with the reference
 * trace_to_csv.py (docs/spec/parse.md §1 "trace_to_csv input", §7 "trace_to_csv
 * output"; contract in src/parse/trace_to_csv.h).
 *
 * Input format (the TensorCast simulator's trace):
 *
 *   { "traceEvents": [
 *       { "ph": "X", "name": "<op>", "dur": <us>, "pid": .., "tid": ..,
 *         "args": { "kernel_type": .., "simulation_shapes": .., "source": ..,
 *                   "confidence": .., "composite": ..,
 *                   "sub_kernel_durations": .., "kernel_shapes": ..,
 *                   "shape_match_rule": .., "sub_kernel_shapes": .. } },
 *       { "ph": "M", ... },  ...  ] }
 *
 * Output: one header row, then one row per "X" event in file order (no pid
 * or category filter, so a trace holding several perf models gives one row
 * per model and op).  The reference hands the json-decoded values straight
 * to csv.DictWriter, so a cell is Python's csv rendering of whatever JSON
 * value sits there: None -> "", float -> repr(), anything else -> str(),
 * which for a list or dict is the repr of its items.  The functions below
 * reproduce Python's repr for every JSON type:
 *
 *   null        None            true / false  True / False
 *   integer     decimal         real          shortest round-trip digits
 *   string      '...' with Python's quote choice and escapes
 *   array       [a, b]          object        {'k': v, 'k2': w}  (file order)
 *
 * Which non-ASCII characters repr() escapes depends on the interpreter's
 * Unicode tables; py_printable.inc is generated from Python 3.10, the
 * interpreter the reference names (scripts/gen_py_printable.py).
 */
#include "parse/trace_to_csv.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "perfdb/csv.h"
#include "perfdb/fsio.h"

#include "py_printable.inc"

const char *const perfdb_trace_columns[PERFDB_TRACE_NCOLUMNS] = {
	"op_name", "kernel_type", "simulation_shapes", "dur_us", "source",
	"confidence", "composite", "sub_kernel_durations", "kernel_shapes",
	"shape_match_rule", "sub_kernel_shapes",
};

/* Columns 1..10 other than dur_us come from "args" under their own name. */
#define COL_OP_NAME 0
#define COL_DUR_US 3

/* --- Python float repr ------------------------------------------------ */

/* Split "%.*e" output of a positive number ("d.ddde±XX") into its digits
 * and decimal exponent.  Returns the digit count. */
static int split_sci(const char *s, char *digits, int *exp10)
{
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			digits[n++] = *s;
	*exp10 = atoi(s + 1);
	return n;
}

/* Read back digits d[0].d[1..n-1] x 10^exp10. */
static double join_sci(const char *d, int n, int exp10)
{
	char buf[48];
	int k = 0;
	buf[k++] = d[0];
	if (n > 1) {
		buf[k++] = '.';
		memcpy(buf + k, d + 1, (size_t)n - 1);
		k += n - 1;
	}
	snprintf(buf + k, sizeof(buf) - (size_t)k, "e%d", exp10);
	return strtod(buf, NULL);
}

/* The next n-digit decimal above d x 10^exp10 (in place). */
static void digits_up(char *d, int n, int *exp10)
{
	int i = n - 1;
	while (i >= 0 && d[i] == '9')
		d[i--] = '0';
	if (i >= 0) {
		d[i]++;
		return;
	}
	/* 9.99 -> 10.0 = 1.00 x 10^(e+1) */
	d[0] = '1';
	(*exp10)++;
}

/* The next n-digit decimal below d x 10^exp10 (in place).  Just below a
 * power of ten the n-digit grid is ten times finer: 1.00e5 -> 9.99e4. */
static void digits_down(char *d, int n, int *exp10)
{
	bool pow10 = d[0] == '1';
	for (int i = 1; i < n && pow10; i++)
		pow10 = d[i] == '0';
	if (pow10) {
		memset(d, '9', (size_t)n);
		(*exp10)--;
		return;
	}
	int i = n - 1;
	while (d[i] == '0')
		d[i--] = '9';
	d[i]--;
}

/*
 * Shortest decimal digits that read back to a (> 0, finite), and the
 * nearest to a among those, as Python's repr (David Gay's dtoa, mode 0).
 * For each length n, glibc's "%.*e" gives the n-digit decimal nearest to
 * a; if it does not read back, the n-digit decimal on the other side of a
 * still may (at a power of two the interval below a is half as wide as
 * the one above), and no other n-digit decimal can.  n = 17 always works.
 */
static int shortest_digits(double a, char *digits, int *exp10)
{
	char buf[48];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, a);
		int n = split_sci(buf, digits, exp10);
		double c = strtod(buf, NULL);
		if (c == a)
			return n;
		if (c < a)
			digits_up(digits, n, exp10);
		else
			digits_down(digits, n, exp10);
		if (join_sci(digits, n, *exp10) == a)
			return n;
	}
	/* Not reached for a finite double: 17 digits always round-trip. */
	snprintf(buf, sizeof(buf), "%.16e", a);
	return split_sci(buf, digits, exp10);
}

int perfdb_trace_py_float(double x, struct perfdb_strbuf *out)
{
	if (isnan(x))
		return perfdb_strbuf_addstr(out, "nan");
	if (isinf(x))
		return perfdb_strbuf_addstr(out, x < 0 ? "-inf" : "inf");
	if (x == 0)
		return perfdb_strbuf_addstr(out, signbit(x) ? "-0.0" : "0.0");

	char d[24];
	int e;
	int n = shortest_digits(fabs(x), d, &e);
	while (n > 1 && d[n - 1] == '0')
		n--;
	int decpt = e + 1; /* x = 0.d1d2... x 10^decpt, as in Python's dtoa */

	char res[64];
	int k = 0;
	if (x < 0)
		res[k++] = '-';
	if (decpt <= -4 || decpt > 16) {
		/* Python: repr switches to exponent form below 1e-4 and from 1e16 */
		res[k++] = d[0];
		if (n > 1) {
			res[k++] = '.';
			memcpy(res + k, d + 1, (size_t)n - 1);
			k += n - 1;
		}
		k += snprintf(res + k, sizeof(res) - (size_t)k, "e%c%02d",
			      e < 0 ? '-' : '+', e < 0 ? -e : e);
	} else if (decpt <= 0) {
		res[k++] = '0';
		res[k++] = '.';
		for (int i = 0; i < -decpt; i++)
			res[k++] = '0';
		memcpy(res + k, d, (size_t)n);
		k += n;
	} else if (decpt >= n) {
		memcpy(res + k, d, (size_t)n);
		k += n;
		for (int i = n; i < decpt; i++)
			res[k++] = '0';
		res[k++] = '.';
		res[k++] = '0';
	} else {
		memcpy(res + k, d, (size_t)decpt);
		k += decpt;
		res[k++] = '.';
		memcpy(res + k, d + decpt, (size_t)(n - decpt));
		k += n - decpt;
	}
	return perfdb_strbuf_add(out, res, (size_t)k);
}

/* --- Python str repr -------------------------------------------------- */

/* Python's Py_UNICODE_ISPRINTABLE for cp >= 0x80. */
static bool py_printable(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(py_nonprintable) / sizeof(py_nonprintable[0]);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cp < py_nonprintable[mid][0])
			hi = mid;
		else if (cp > py_nonprintable[mid][1])
			lo = mid + 1;
		else
			return false;
	}
	return true;
}

/* Decode one UTF-8 sequence at s (len > 0 bytes left).  Returns its length
 * and sets *cp, or 0 when it is not valid UTF-8 (jansson only hands out
 * valid strings; this guards hand-built values). */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/*
 * repr() of a str (CPython unicode_repr): single quotes unless the text
 * holds a ' and no ", the chosen quote and backslash escaped, \t \n \r,
 * other ASCII controls and DEL as \xNN, non-printable non-ASCII as \xNN,
 * \uNNNN or \UNNNNNNNN (lowercase hex), everything else as is.
 */
static int py_repr_str(const char *p, size_t len, struct perfdb_strbuf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	char q = memchr(p, '\'', len) && !memchr(p, '"', len) ? '"' : '\'';
	PERFDB_TRY(perfdb_strbuf_addch(out, q));
	size_t i = 0;
	while (i < len) {
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			if (c == (unsigned char)q || c == '\\') {
				PERFDB_TRY(perfdb_strbuf_addch(out, '\\'));
				PERFDB_TRY(perfdb_strbuf_addch(out, c));
			} else if (c == '\t') {
				PERFDB_TRY(perfdb_strbuf_add(out, "\\t", 2));
			} else if (c == '\n') {
				PERFDB_TRY(perfdb_strbuf_add(out, "\\n", 2));
			} else if (c == '\r') {
				PERFDB_TRY(perfdb_strbuf_add(out, "\\r", 2));
			} else if (c < 0x20 || c == 0x7f) {
				PERFDB_TRY(perfdb_strbuf_addf(out, "\\x%02x", c));
			} else {
				PERFDB_TRY(perfdb_strbuf_addch(out, c));
			}
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		if (n == 0) {
			PERFDB_TRY(perfdb_strbuf_addf(out, "\\x%02x", c));
			i++;
			continue;
		}
		if (py_printable(cp))
			PERFDB_TRY(perfdb_strbuf_add(out, s + i, n));
		else if (cp <= 0xff)
			PERFDB_TRY(perfdb_strbuf_addf(out, "\\x%02x", (unsigned)cp));
		else if (cp <= 0xffff)
			PERFDB_TRY(perfdb_strbuf_addf(out, "\\u%04x", (unsigned)cp));
		else
			PERFDB_TRY(perfdb_strbuf_addf(out, "\\U%08x", (unsigned)cp));
		i += n;
	}
	return perfdb_strbuf_addch(out, q);
}

/* --- Python str/repr of json values ----------------------------------- */

/* The scalars whose str() and repr() agree. */
static int py_scalar(const json_t *v, struct perfdb_strbuf *out)
{
	switch (json_typeof(v)) {
	case JSON_TRUE:
		return perfdb_strbuf_add(out, "True", 4);
	case JSON_FALSE:
		return perfdb_strbuf_add(out, "False", 5);
	case JSON_INTEGER:
		return perfdb_strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL:
		return perfdb_trace_py_float(json_real_value(v), out);
	default:
		return perfdb_strbuf_add(out, "None", 4);
	}
}

int perfdb_trace_py_repr(const json_t *v, struct perfdb_strbuf *out)
{
	/* jansson's API takes non-const pointers; nothing here modifies v. */
	json_t *m = (json_t *)v;
	switch (json_typeof(v)) {
	case JSON_STRING:
		return py_repr_str(json_string_value(v), json_string_length(v), out);
	case JSON_ARRAY:
		PERFDB_TRY(perfdb_strbuf_addch(out, '['));
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				PERFDB_TRY(perfdb_strbuf_add(out, ", ", 2));
			PERFDB_TRY(perfdb_trace_py_repr(json_array_get(v, i), out));
		}
		return perfdb_strbuf_addch(out, ']');
	case JSON_OBJECT: {
		/* jansson iterates in insertion order; a repeated key keeps its
		 * first place and its last value, as a Python dict does. */
		PERFDB_TRY(perfdb_strbuf_addch(out, '{'));
		bool first = true;
		for (void *it = json_object_iter(m); it; it = json_object_iter_next(m, it)) {
			if (!first)
				PERFDB_TRY(perfdb_strbuf_add(out, ", ", 2));
			first = false;
			PERFDB_TRY(py_repr_str(json_object_iter_key(it),
					       json_object_iter_key_len(it), out));
			PERFDB_TRY(perfdb_strbuf_add(out, ": ", 2));
			PERFDB_TRY(perfdb_trace_py_repr(json_object_iter_value(it), out));
		}
		return perfdb_strbuf_addch(out, '}');
	}
	default:
		return py_scalar(v, out);
	}
}

int perfdb_trace_py_cell(const json_t *v, struct perfdb_strbuf *out)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return 0; /* csv writes None as an empty field */
	case JSON_STRING:
		return perfdb_strbuf_add(out, json_string_value(v), json_string_length(v));
	case JSON_ARRAY:
	case JSON_OBJECT:
		return perfdb_trace_py_repr(v, out); /* str(list) is the repr of its items */
	default:
		return py_scalar(v, out);
	}
}

/* --- conversion ------------------------------------------------------- */

/* "an array", "null", ... for messages. */
static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Append field i of the row for event ev (args may be NULL). */
static int put_cell(const json_t *ev, const json_t *args, size_t col,
		    struct perfdb_strbuf *cell, struct perfdb_strbuf *out)
{
	const json_t *v;
	if (col == COL_OP_NAME)
		v = json_object_get(ev, "name");
	else if (col == COL_DUR_US)
		v = json_object_get(ev, "dur");
	else
		v = args ? json_object_get(args, perfdb_trace_columns[col]) : NULL;
	perfdb_strbuf_reset(cell);
	if (v)
		PERFDB_TRY(perfdb_trace_py_cell(v, cell));
	else if (col == COL_DUR_US)
		PERFDB_TRY(perfdb_strbuf_addch(cell, '0')); /* event.get("dur", 0) */
	/* Cells are written with their length: a string may hold "\u0000",
	 * which Python >= 3.11 writes as a raw NUL byte. */
	return perfdb_csv_put_field(out, cell->buf, cell->len);
}

static int convert_events(const char *name, const json_t *events,
			  struct perfdb_strbuf *out, struct perfdb_err *err)
{
	struct perfdb_strbuf cell = PERFDB_STRBUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < json_array_size(events) && rc == 0; i++) {
		const json_t *ev = json_array_get(events, i);
		if (!json_is_object(ev)) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
					   "traceEvents[%zu] is %s, expected an object",
					   i, json_kind(ev));
			break;
		}
		const json_t *ph = json_object_get(ev, "ph");
		if (!json_is_string(ph) || json_string_length(ph) != 1 ||
		    json_string_value(ph)[0] != 'X')
			continue;
		/* "args": null is taken as no args (the reference crashes). */
		const json_t *args = json_object_get(ev, "args");
		if (json_is_null(args))
			args = NULL;
		if (args && !json_is_object(args)) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
					   "traceEvents[%zu]: \"args\" is %s, expected an object",
					   i, json_kind(args));
			break;
		}
		for (size_t c = 0; c < PERFDB_TRACE_NCOLUMNS && rc == 0; c++) {
			if (c)
				rc = perfdb_strbuf_addch(out, ',');
			if (rc == 0)
				rc = put_cell(ev, args, c, &cell, out);
		}
		if (rc == 0)
			rc = perfdb_strbuf_add(out, "\r\n", 2);
		if (rc < 0 && err->code == 0)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
	}
	perfdb_strbuf_release(&cell);
	return rc;
}

/* Copy a jansson message, escaping control bytes so it stays one line. */
static void clean_text(const char *s, char *dst, size_t cap)
{
	size_t k = 0;
	for (; *s && k + 5 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			k += (size_t)snprintf(dst + k, cap - k, "\\x%02x", c);
		else
			dst[k++] = (char)c;
	}
	dst[k] = '\0';
}

/*
 * jansson reports an allocation that fails inside its lexer as a syntax
 * error ("invalid token", json_error_invalid_syntax), not as
 * json_error_out_of_memory.  A document that yajl's validator (no
 * callbacks: constant memory) accepts has no syntax error, so that failure
 * was the memory limit.  jansson's other refusals of valid syntax (number
 * overflow, depth) have their own codes and keep their messages.
 */
static bool valid_json(const void *data, size_t len)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	if (!h)
		return false;
	bool ok = yajl_parse(h, data, len) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

int perfdb_trace_to_csv_mem(const char *name, const void *data, size_t len,
			    struct perfdb_strbuf *out, struct perfdb_err *err)
{
	struct perfdb_err local;
	if (!err)
		err = &local;
	perfdb_err_clear(err);
	size_t start = out->len;

	/* JSON_DECODE_ANY: a scalar top level gets our message, not jansson's.
	 * JSON_ALLOW_NUL: Python's json accepts "\u0000" in strings. */
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!root && (json_error_code(&je) == json_error_out_of_memory || !je.text[0] ||
		      (json_error_code(&je) == json_error_invalid_syntax && valid_json(data, len))))
		return perfdb_err_set(err, PERFDB_ENOMEM,
				      "%s: out of memory loading the trace (%zu bytes): "
				      "traces are loaded whole; raise the memory limit", name, len);
	if (!root) {
		char text[JSON_ERROR_TEXT_LENGTH * 4 + 1];
		clean_text(je.text, text, sizeof(text));
		return perfdb_err_at(err, PERFDB_EPARSE, name,
				     je.line > 0 ? (size_t)je.line : 1,
				     je.column > 0 ? (size_t)je.column : 1,
				     "invalid JSON: %s", text);
	}

	int rc = 0;
	const json_t *events = NULL;
	if (!json_is_object(root)) {
		rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
				   "not a TensorCast trace: top-level JSON value is %s, "
				   "expected an object with \"traceEvents\"", json_kind(root));
		goto done;
	}
	events = json_object_get(root, "traceEvents");
	/* The reference iterates whatever is there: an empty object or string
	 * is an empty loop; anything else that is not a list crashes it. */
	if (events && !json_is_array(events) &&
	    !(json_is_object(events) && json_object_size(events) == 0) &&
	    !(json_is_string(events) && json_string_length(events) == 0)) {
		rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
				   "not a TensorCast trace: \"traceEvents\" is %s, expected an array",
				   json_kind(events));
		goto done;
	}
	rc = perfdb_csv_put_row(out, perfdb_trace_columns, PERFDB_TRACE_NCOLUMNS);
	if (rc < 0) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
		goto done;
	}
	if (json_is_array(events))
		rc = convert_events(name, events, out, err);
done:
	json_decref(root);
	if (rc < 0 && out->alloc) {
		out->len = start;
		out->buf[start] = '\0';
	}
	return rc;
}

int perfdb_trace_to_csv(const char *trace_path, struct perfdb_strbuf *out,
			struct perfdb_err *err)
{
	struct perfdb_strbuf data = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all(trace_path, &data, err);
	if (rc == 0)
		rc = perfdb_trace_to_csv_mem(trace_path, data.buf, data.len, out, err);
	perfdb_strbuf_release(&data);
	return rc;
}
