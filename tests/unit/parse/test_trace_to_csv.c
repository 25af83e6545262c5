/*
 * Unit tests: trace-to-csv and its Python rendering helpers
 * (src/parse/trace_to_csv.h; docs/spec/parse.md §1 "trace_to_csv input",
 * §7 "trace_to_csv output").  Expected strings are Python's repr()/str() of
 * the value, worked out by hand from CPython's rules: float repr = shortest
 * round-trip digits, exponent form when the decimal point position is
 * <= -4 or > 16; str repr = unicode_repr (quote choice, \t \n \r, \xNN,
 * \uNNNN, \UNNNNNNNN for non-printable characters).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/trace_to_csv.h"

#define HEADER "op_name,kernel_type,simulation_shapes,dur_us,source,confidence," \
	       "composite,sub_kernel_durations,kernel_shapes,shape_match_rule,"   \
	       "sub_kernel_shapes\r\n"

static void expect_float(double x, const char *want)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_trace_py_float(x, &sb), 0);
	if (strcmp(sb.buf, want) != 0)
		fail_msg("repr(%.17g): got '%s', want '%s'", x, sb.buf, want);
	perfdb_strbuf_release(&sb);
}

/* §7: "Python rendering (... 11.0)"; repr(float) as Python 3 prints it. */
static void test_float_repr(void **state)
{
	(void)state;
	expect_float(11.0, "11.0");
	expect_float(0.75, "0.75");
	expect_float(100.0, "100.0");
	expect_float(0.1, "0.1");
	expect_float(0.3, "0.3");
	expect_float(1.0 / 3.0, "0.3333333333333333");
	expect_float(2.0 / 3.0, "0.6666666666666666");
	expect_float(123456789.125, "123456789.125");
	expect_float(-2.5, "-2.5");
	expect_float(0.0, "0.0");
	expect_float(-0.0, "-0.0");
	/* positional up to 16 integer digits, exponent from 1e16 */
	expect_float(1234567890123456.0, "1234567890123456.0");
	expect_float(9999999999999998.0, "9999999999999998.0");
	expect_float(1e16, "1e+16");
	expect_float(1.5e16, "1.5e+16");
	expect_float(1e22, "1e+22");
	expect_float(123456789012345680.0, "1.2345678901234568e+17");
	/* positional down to 1e-4, exponent below (two exponent digits at least) */
	expect_float(0.0001, "0.0001");
	expect_float(0.00012, "0.00012");
	expect_float(0.00001, "1e-05");
	expect_float(-2.5e-7, "-2.5e-07");
	/* extremes */
	expect_float(5e-324, "5e-324");
	expect_float(2.2250738585072014e-308, "2.2250738585072014e-308");
	expect_float(1.7976931348623157e308, "1.7976931348623157e+308");
	/* 2^-1017: the nearest 16-digit decimal (…0444e-307) misses the narrow
	 * interval below a power of two, the one above (…045e-307) is inside,
	 * so Python prints 16 digits, not 17. */
	expect_float(ldexp(1.0, -1017), "7.120236347223045e-307");
	expect_float(NAN, "nan");
	expect_float(INFINITY, "inf");
	expect_float(-INFINITY, "-inf");
}

/* Parse json (any top level, NULs allowed) and render it as a cell
 * (cell = 1) or as repr (cell = 0); compares len bytes. */
static void expect_render(const char *json, int cell, const char *want, size_t want_len)
{
	json_error_t je;
	json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!v)
		fail_msg("bad test json %s: %s", json, je.text);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = cell ? perfdb_trace_py_cell(v, &sb) : perfdb_trace_py_repr(v, &sb);
	assert_int_equal(rc, 0);
	if (sb.len != want_len || memcmp(sb.buf, want, want_len) != 0)
		fail_msg("%s %s: got '%s', want '%s'", cell ? "cell" : "repr", json, sb.buf, want);
	perfdb_strbuf_release(&sb);
	json_decref(v);
}

#define CELL(json, want) expect_render(json, 1, want, sizeof(want) - 1)
#define REPR(json, want) expect_render(json, 0, want, sizeof(want) - 1)

/* csv writes None as "", float as repr(), everything else as str(). */
static void test_cell_scalars(void **state)
{
	(void)state;
	CELL("null", "");
	CELL("true", "True");
	CELL("false", "False");
	CELL("11", "11");
	CELL("-9223372036854775808", "-9223372036854775808");
	CELL("11.0", "11.0");
	CELL("1e16", "1e+16");
	CELL("\"text, with \\\"quotes\\\"\"", "text, with \"quotes\"");  /* verbatim */
	CELL("\"h\\u00e9\\n\"", "h\xc3\xa9\n");
	CELL("\"a\\u0000b\"", "a\0b");           /* a NUL byte, as Python >= 3.11 */
	CELL("[]", "[]");
	CELL("{}", "{}");
}

/* str(list) / str(dict) is the repr of the items: None, not "". */
static void test_nested_values(void **state)
{
	(void)state;
	CELL("[1, 2.0, \"a\", null, true, false]", "[1, 2.0, 'a', None, True, False]");
	CELL("[[2, 128, 4096], [4096], [4096]]", "[[2, 128, 4096], [4096], [4096]]");
	CELL("{\"a\": {\"b\": []}, \"c\": \"x\", \"d\": [1e-05, -0.0]}",
	     "{'a': {'b': []}, 'c': 'x', 'd': [1e-05, -0.0]}");
	/* a repeated key keeps its first place and its last value (dict) */
	CELL("{\"b\": 1, \"a\": 2, \"b\": 3}", "{'b': 3, 'a': 2}");
	REPR("null", "None");
	REPR("[[]]", "[[]]");
	REPR("{\"k\": {\"k\": {}}}", "{'k': {'k': {}}}");
	REPR("{\"it's\": \"x\"}", "{\"it's\": 'x'}");   /* keys get repr too */
}

/* CPython unicode_repr. */
static void test_string_repr(void **state)
{
	(void)state;
	REPR("\"\"", "''");
	REPR("\"abc\"", "'abc'");
	REPR("\"it's\"", "\"it's\"");                    /* ' only: double quotes */
	REPR("\"say \\\"hi\\\"\"", "'say \"hi\"'");      /* \" only: single quotes */
	REPR("\"a'b\\\"c\"", "'a\\'b\"c'");              /* both: ' escaped */
	REPR("\"back\\\\slash\"", "'back\\\\slash'");
	REPR("\"\\t\\n\\r\"", "'\\t\\n\\r'");
	REPR("\"\\u0000\\u0001\\u001f\\u007f\"", "'\\x00\\x01\\x1f\\x7f'");
	/* non-ASCII: printable kept as UTF-8; C1 controls, NBSP (Zs), soft
	 * hyphen (Cf), line separator (Zl), private use (Co), unassigned
	 * (Cn) and tags (Cf, astral) escaped by size */
	REPR("\"\\u00e9\\u4e2d\\ud83d\\ude00\"", "'\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80'");
	REPR("\"\\u0085\\u00a0\\u00ad\"", "'\\x85\\xa0\\xad'");
	REPR("\"\\u2028\\ue000\\u0378\"", "'\\u2028\\ue000\\u0378'");
	REPR("\"\\udb40\\udc01\"", "'\\U000e0001'");
	REPR("\"\\u3000x\"", "'\\u3000x'");             /* ideographic space (Zs) */
}

static int convert(const char *json, struct perfdb_strbuf *out, struct perfdb_err *err)
{
	return perfdb_trace_to_csv_mem("t.json", json, strlen(json), out, err);
}

/* §6 test_trace_to_csv: `{}` -> header only; `{"ph":"X"}` -> all empty,
 * dur 0; non-X events skipped; one row per X event. */
static void test_convert_rows(void **state)
{
	(void)state;
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;

	assert_int_equal(convert("{}", &out, &err), 0);
	assert_string_equal(out.buf, HEADER);
	perfdb_strbuf_reset(&out);

	assert_int_equal(convert("{\"traceEvents\": [{\"ph\": \"X\"}]}", &out, &err), 0);
	assert_string_equal(out.buf, HEADER ",,,0,,,,,,,\r\n");
	perfdb_strbuf_reset(&out);

	assert_int_equal(convert("{\"traceEvents\": [{\"ph\": \"M\", \"args\": 5}, {\"ph\": \"B\"},"
				 " {\"name\": \"n\"}, {\"ph\": \"X\", \"name\": \"mm\", \"dur\": 20,"
				 " \"args\": {\"kernel_type\": \"MatMulV2\", \"other\": 1}},"
				 " {\"ph\": \"X\", \"name\": \"a\", \"dur\": 1.5, \"args\": null}]}",
				 &out, &err), 0);
	assert_string_equal(out.buf, HEADER "mm,MatMulV2,,20,,,,,,,\r\na,,,1.5,,,,,,,\r\n");
	perfdb_strbuf_release(&out);
}

static void expect_fail(const char *json, const char *msg)
{
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	perfdb_strbuf_addstr(&out, "keep");
	assert_int_equal(convert(json, &out, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, msg);
	assert_string_equal(out.buf, "keep");        /* out left as it was */
	perfdb_strbuf_release(&out);
}

/* Where the reference crashes we fail with a message (docs/cli.md). */
static void test_convert_errors(void **state)
{
	(void)state;
	expect_fail("[]", "t.json: not a TensorCast trace: top-level JSON value is an array, "
		    "expected an object with \"traceEvents\"");
	expect_fail("3", "t.json: not a TensorCast trace: top-level JSON value is a number, "
		    "expected an object with \"traceEvents\"");
	expect_fail("{\"traceEvents\": {\"a\": 1}}",
		    "t.json: not a TensorCast trace: \"traceEvents\" is an object, expected an array");
	expect_fail("{\"traceEvents\": [{\"ph\": \"X\"}, null]}",
		    "t.json: traceEvents[1] is null, expected an object");
	expect_fail("{\"traceEvents\": [{\"ph\": \"X\", \"args\": \"s\"}]}",
		    "t.json: traceEvents[0]: \"args\" is a string, expected an object");
	expect_fail("{\"traceEvents\": [\n{\"ph\": }]}",
		    "t.json:2:8: invalid JSON: unexpected token near '}'");
	expect_fail("", "t.json:1:1: invalid JSON: unexpected token near end of file");
	/* control bytes in jansson's message are escaped: one line */
	expect_fail("{\"a\":\x01}", "t.json:1:6: invalid JSON: invalid token near '\\x01'");

	/* empty iterables are empty loops in the reference, not errors */
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	assert_int_equal(convert("{\"traceEvents\": {}}", &out, &err), 0);
	assert_int_equal(convert("{\"traceEvents\": \"\"}", &out, &err), 0);
	assert_string_equal(out.buf, HEADER HEADER);
	perfdb_strbuf_release(&out);
}

static void test_missing_file(void **state)
{
	(void)state;
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	assert_int_equal(perfdb_trace_to_csv("/nonexistent/t.json", &out, &err), -PERFDB_ENOENT);
	assert_string_equal(err.msg, "file not found: '/nonexistent/t.json'");
	assert_int_equal(out.len, 0);
	perfdb_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_float_repr),
		cmocka_unit_test(test_cell_scalars),
		cmocka_unit_test(test_nested_values),
		cmocka_unit_test(test_string_repr),
		cmocka_unit_test(test_convert_rows),
		cmocka_unit_test(test_convert_errors),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
