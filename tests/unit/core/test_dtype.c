/*
 * Unit tests for src/core/dtype.c: dtype and format spellings.
 * Spec: docs/spec/replay.md Decision 5 (dtype spellings are one dtype; the
 * reference signature_utils._DTYPE_CANONICAL map), §4 (replay dtype map,
 * DT_DOUBLE), docs/spec/parse.md §2 (dtypes/formats as profilers write them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/dtype.h"
#include "perfdb/strbuf.h"

static struct perfdb_span S(const char *s)
{
	return (struct perfdb_span){ s, strlen(s) };
}

static void check_canonical(const char *token, const char *want)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_dtype_canonical(S(token), &sb), 0);
	assert_string_equal(sb.buf, want);
	perfdb_strbuf_release(&sb);
}

/* Decision 5 / reference _DTYPE_CANONICAL, case-insensitive. */
static void test_reference_map(void **state)
{
	(void)state;
	static const char *const map[][2] = {
		{ "BF16", "DT_BF16" },       { "BFLOAT16", "DT_BF16" },
		{ "DT_BFLOAT16", "DT_BF16" }, { "FP16", "DT_FLOAT16" },
		{ "FLOAT16", "DT_FLOAT16" }, { "HALF", "DT_FLOAT16" },
		{ "FLOAT", "DT_FLOAT" },     { "FP32", "DT_FLOAT" },
		{ "FLOAT32", "DT_FLOAT" },   { "FLOAT64", "DT_FLOAT64" },
		{ "FP64", "DT_FLOAT64" },    { "DOUBLE", "DT_FLOAT64" },
		{ "INT4", "DT_INT4" },       { "INT8", "DT_INT8" },
		{ "UINT8", "DT_UINT8" },     { "INT16", "DT_INT16" },
		{ "INT32", "DT_INT32" },     { "INT64", "DT_INT64" },
		{ "BOOL", "DT_BOOL" },       { "UNDEFINED", "DT_UNDEFINED" },
		/* any case */
		{ "bf16", "DT_BF16" },       { "Float16", "DT_FLOAT16" },
		{ "half", "DT_FLOAT16" },    { "double", "DT_FLOAT64" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		check_canonical(map[i][0], map[i][1]);
}

/* Decision 5: `FLOAT16` ≡ `DT_FLOAT16`; canonical names map to themselves. */
static void test_canonical_names_fixed(void **state)
{
	(void)state;
	static const char *const names[] = {
		"DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_FLOAT64", "DT_INT4",
		"DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16", "DT_INT32",
		"DT_UINT32", "DT_INT64", "DT_UINT64", "DT_BOOL",
		"DT_FLOAT8_E4M3FN", "DT_FLOAT8_E5M2", "DT_HIFLOAT8",
		"DT_COMPLEX64", "DT_UNDEFINED",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_canonical(names[i], names[i]);
	check_canonical("dt_float16", "DT_FLOAT16");
}

/* §4: the replay scripts spell fp64 DT_DOUBLE. */
static void test_dt_double(void **state)
{
	(void)state;
	check_canonical("DT_DOUBLE", "DT_FLOAT64");
	assert_int_equal(perfdb_dtype_parse(S("DT_DOUBLE")), PERFDB_DTYPE_FLOAT64);
}

/* dtype.h: torch forms. */
static void test_torch_forms(void **state)
{
	(void)state;
	check_canonical("torch.bfloat16", "DT_BF16");
	check_canonical("torch.float16", "DT_FLOAT16");
	check_canonical("torch.half", "DT_FLOAT16");
	check_canonical("torch.float32", "DT_FLOAT");
	check_canonical("torch.float", "DT_FLOAT");
	check_canonical("torch.float64", "DT_FLOAT64");
	check_canonical("torch.double", "DT_FLOAT64");
	check_canonical("torch.int8", "DT_INT8");
	check_canonical("torch.uint8", "DT_UINT8");
	check_canonical("torch.int", "DT_INT32");
	check_canonical("torch.long", "DT_INT64");
	check_canonical("torch.short", "DT_INT16");
	check_canonical("torch.bool", "DT_BOOL");
	check_canonical("torch.float8_e4m3fn", "DT_FLOAT8_E4M3FN");
	check_canonical("torch.float8_e5m2", "DT_FLOAT8_E5M2");
	check_canonical("torch.complex64", "DT_COMPLEX64");
	check_canonical("torch.cfloat", "DT_COMPLEX64");
	/* the C-style aliases are torch-only: bare tokens stay verbatim */
	check_canonical("INT", "INT");
	check_canonical("long", "long");
}

/* dtype.h: an empty token stays empty; unknown tokens are kept trimmed but
 * otherwise verbatim (reference: opaque Triton ids are preserved). */
static void test_unknown_and_empty(void **state)
{
	(void)state;
	check_canonical("", "");
	check_canonical("   ", "");
	check_canonical(" 7 ", "7");
	check_canonical("triton_fp8x", "triton_fp8x");
	check_canonical("  Weird Type ", "Weird Type");
	check_canonical(" fp16 ", "DT_FLOAT16");

	/* canonical appends: the buffer is not reset */
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_strbuf_addstr(&sb, "x;"), 0);
	assert_int_equal(perfdb_dtype_canonical(S("bf16"), &sb), 0);
	assert_string_equal(sb.buf, "x;DT_BF16");
	perfdb_strbuf_release(&sb);
}

/* dtype.h: parse ignores surrounding whitespace and quotes. */
static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(perfdb_dtype_parse(S(" \"DT_BF16\" ")), PERFDB_DTYPE_BF16);
	assert_int_equal(perfdb_dtype_parse(S("bfloat16")), PERFDB_DTYPE_BF16);
	assert_int_equal(perfdb_dtype_parse(S("UINT16")), PERFDB_DTYPE_UINT16);
	assert_int_equal(perfdb_dtype_parse(S("uint64")), PERFDB_DTYPE_UINT64);
	assert_int_equal(perfdb_dtype_parse(S("hifloat8")), PERFDB_DTYPE_HIFLOAT8);
	assert_int_equal(perfdb_dtype_parse(S("DT_UNDEFINED")), PERFDB_DTYPE_UNDEFINED);
	assert_int_equal(perfdb_dtype_parse(S("")), PERFDB_DTYPE_UNKNOWN);
	assert_int_equal(perfdb_dtype_parse(S("DT_")), PERFDB_DTYPE_UNKNOWN);
	assert_int_equal(perfdb_dtype_parse(S("FLOAT1")), PERFDB_DTYPE_UNKNOWN);
	assert_int_equal(perfdb_dtype_parse(S("DT_DT_FLOAT")), PERFDB_DTYPE_UNKNOWN);
}

/* dtype.h: every dtype's name parses back to it. */
static void test_name_roundtrip(void **state)
{
	(void)state;
	for (int t = PERFDB_DTYPE_UNDEFINED; t < PERFDB_DTYPE_COUNT_; t++) {
		const char *name = perfdb_dtype_name((enum perfdb_dtype)t);
		assert_non_null(name);
		assert_int_equal(strncmp(name, "DT_", 3), 0);
		assert_int_equal(perfdb_dtype_parse(S(name)), t);
	}
	assert_string_equal(perfdb_dtype_name(PERFDB_DTYPE_BF16), "DT_BF16");
	assert_string_equal(perfdb_dtype_name(PERFDB_DTYPE_FLOAT), "DT_FLOAT");
	assert_non_null(perfdb_dtype_name(PERFDB_DTYPE_UNKNOWN));
	assert_non_null(perfdb_dtype_name(PERFDB_DTYPE_COUNT_));
}

/* dtype.h: bits (INT4 = 4, BOOL = 8), 0 for UNKNOWN/UNDEFINED. */
/*
 * The spellings of the real kernel_details files in ../shared/data/real/
 * (CANN 8: DT_BF16, FLOAT, INT64, BOOL, UINT8; older CANN: FLOAT16, INT32,
 * UINT64), and DOUBLE from GE's type names; each reads back as its dtype.
 */
static void test_profiler_names(void **state)
{
	(void)state;
	static const struct {
		enum perfdb_dtype t;
		const char *name;
	} want[] = {
		{ PERFDB_DTYPE_BF16, "DT_BF16" }, { PERFDB_DTYPE_FLOAT, "FLOAT" },
		{ PERFDB_DTYPE_INT64, "INT64" }, { PERFDB_DTYPE_BOOL, "BOOL" },
		{ PERFDB_DTYPE_UINT8, "UINT8" }, { PERFDB_DTYPE_FLOAT16, "FLOAT16" },
		{ PERFDB_DTYPE_INT32, "INT32" }, { PERFDB_DTYPE_UINT64, "UINT64" },
		{ PERFDB_DTYPE_INT8, "INT8" }, { PERFDB_DTYPE_FLOAT64, "DOUBLE" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *n = perfdb_dtype_profiler_name(want[i].t);
		assert_string_equal(n, want[i].name);
		assert_int_equal(perfdb_dtype_parse((struct perfdb_span){ n, strlen(n) }), want[i].t);
	}
}

static void test_bits(void **state)
{
	(void)state;
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_INT4), 4);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_BOOL), 8);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_INT8), 8);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_FLOAT8_E4M3FN), 8);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_BF16), 16);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_FLOAT16), 16);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_FLOAT), 32);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_INT32), 32);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_FLOAT64), 64);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_COMPLEX64), 64);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_UINT64), 64);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_UNKNOWN), 0);
	assert_int_equal(perfdb_dtype_bits(PERFDB_DTYPE_UNDEFINED), 0);
}

/* dtype.h: bytes for n elements, sub-byte types rounded up. */
static void test_bytes(void **state)
{
	(void)state;
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_INT4, 3), 2); /* 12 bits */
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_INT4, 4), 2);
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_INT4, 17), 9); /* 68 bits */
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_FLOAT, 10), 40);
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_BF16, 0), 0);
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_UNKNOWN, 10), 0);
	assert_int_equal(perfdb_dtype_bytes(PERFDB_DTYPE_UNDEFINED, 10), 0);
	/* no wrap-around: SIZE_MAX 8-byte elements saturate */
	assert_true(perfdb_dtype_bytes(PERFDB_DTYPE_FLOAT64, SIZE_MAX) == SIZE_MAX);
}

/* dtype.h / parse.md §2: formats, case-insensitive, FORMAT_ prefix. */
static void test_formats(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		enum perfdb_format f;
	} cases[] = {
		{ "ND", PERFDB_FORMAT_ND },
		{ "NCHW", PERFDB_FORMAT_NCHW },
		{ "NHWC", PERFDB_FORMAT_NHWC },
		{ "NC1HWC0", PERFDB_FORMAT_NC1HWC0 },
		{ "FRACTAL_Z", PERFDB_FORMAT_FRACTAL_Z },
		{ "FRACTAL_NZ", PERFDB_FORMAT_FRACTAL_NZ },
		{ "NULL", PERFDB_FORMAT_NULL },
		{ "nd", PERFDB_FORMAT_ND },
		{ "FORMAT_FRACTAL_NZ", PERFDB_FORMAT_FRACTAL_NZ },
		{ "format_nd", PERFDB_FORMAT_ND },
		{ " \"ND\" ", PERFDB_FORMAT_ND },
		{ "", PERFDB_FORMAT_UNKNOWN },
		{ "FRACTAL", PERFDB_FORMAT_UNKNOWN },
		{ "UNKNOWN", PERFDB_FORMAT_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(perfdb_format_parse(S(cases[i].s)), cases[i].f);
	assert_string_equal(perfdb_format_name(PERFDB_FORMAT_FRACTAL_NZ), "FRACTAL_NZ");
	assert_string_equal(perfdb_format_name(PERFDB_FORMAT_NULL), "NULL");
	assert_string_equal(perfdb_format_name(PERFDB_FORMAT_ND), "ND");
	for (int f = PERFDB_FORMAT_ND; f <= PERFDB_FORMAT_NULL; f++)
		assert_int_equal(perfdb_format_parse(S(perfdb_format_name(f))), f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_map),
		cmocka_unit_test(test_canonical_names_fixed),
		cmocka_unit_test(test_dt_double),
		cmocka_unit_test(test_torch_forms),
		cmocka_unit_test(test_unknown_and_empty),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_name_roundtrip),
		cmocka_unit_test(test_profiler_names),
		cmocka_unit_test(test_bits),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
