/*
 * Unit tests for src/core/shape.c: shape cells, slots and dims.
 * Spec: docs/spec/parse.md §2 (cell syntax), §6 (fia_common acceptance cases),
 * docs/spec/replay.md §4 (FRACTAL_NZ), §5 (NZ acceptance case).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/err.h"
#include "perfdb/shape.h"

static struct perfdb_span S(const char *s)
{
	return (struct perfdb_span){ s, strlen(s) };
}

static void assert_span(struct perfdb_span got, const char *want)
{
	char *copy = malloc(got.len + 1);
	assert_non_null(copy);
	memcpy(copy, got.p, got.len);
	copy[got.len] = '\0';
	assert_string_equal(copy, want);
	free(copy);
}

/* Split cell into slots and compare with want[0..n). */
static void check_split(const char *cell, const char *const *want, size_t n)
{
	struct perfdb_slots sl;
	perfdb_slots_init(&sl);
	assert_int_equal(perfdb_shape_split_slots(S(cell), &sl), 0);
	assert_int_equal(sl.n, n);
	for (size_t i = 0; i < n; i++)
		assert_span(sl.v[i], want[i]);
	perfdb_slots_release(&sl);
}

/* Parse slot, expecting success with dims want[0..n). */
static void check_dims(const char *slot, const int64_t *want, size_t n)
{
	int64_t dims[PERFDB_SHAPE_MAX_DIMS];
	size_t nd = 99;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_shape_parse_dims(S(slot), dims, PERFDB_SHAPE_MAX_DIMS,
						 &nd, &err), 0);
	assert_int_equal(nd, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(dims[i], want[i]);
	assert_int_equal(err.code, 0);
}

/* Parse slot, expecting -PERFDB_EPARSE and exactly message msg. */
static void check_dims_error(const char *slot, const char *msg)
{
	int64_t dims[PERFDB_SHAPE_MAX_DIMS];
	size_t nd = 99;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_shape_parse_dims(S(slot), dims, PERFDB_SHAPE_MAX_DIMS,
						 &nd, &err), -PERFDB_EPARSE);
	assert_int_equal(err.code, PERFDB_EPARSE);
	assert_string_equal(err.msg, msg);
	assert_int_equal(nd, 0);
}

/* shape.h: trim is ASCII whitespace on both ends only. */
static void test_span_trim(void **state)
{
	(void)state;
	assert_span(perfdb_span_trim(S(" \t4,8 \r\n")), "4,8");
	assert_span(perfdb_span_trim(S("   ")), "");
	assert_span(perfdb_span_trim(S("a b")), "a b");
}

/* parse.md §2: cells hold literal quotes, on disk `"""4,8;8,16"""`;
 * shape.h: balanced outer pairs are peeled repeatedly, an unbalanced
 * quote stays. */
static void test_unquote(void **state)
{
	(void)state;
	assert_span(perfdb_shape_unquote(S("\"\"\"4,8\"\"\"")), "4,8");
	assert_span(perfdb_shape_unquote(S("\"a\"")), "a");
	assert_span(perfdb_shape_unquote(S("\"a")), "\"a");
	assert_span(perfdb_shape_unquote(S(" \" \"4,8\" \" ")), "4,8");
	assert_span(perfdb_shape_unquote(S("\"")), "\"");
	assert_span(perfdb_shape_unquote(S("\"\"")), "");
}

/* parse.md §6 fia_common: split('"1,2; ;3,4"') = [`1,2`, ``, `3,4`]. */
static void test_split_fia_acceptance(void **state)
{
	(void)state;
	static const char *const want[] = { "1,2", "", "3,4" };
	check_split("\"1,2; ;3,4\"", want, 3);
}

/* parse.md §2: ';' separates slots; empty and trailing slots are kept. */
static void test_split_keeps_empty_slots(void **state)
{
	(void)state;
	static const char *const w1[] = { "4,8", "", "" };
	check_split("4,8;;", w1, 3);
	static const char *const w2[] = { "", "8" };
	check_split(";8", w2, 2);
	static const char *const w3[] = { "4,8", "8,16" };
	check_split("\"\"\"4,8;8,16\"\"\"", w3, 2);
	/* each slot loses its own surrounding whitespace and quotes */
	static const char *const w4[] = { "4,8", "16" };
	check_split(" \"4,8\" ; \"16\" ", w4, 2);
}

/* shape.h: an empty cell gives zero slots (and so does `""`). */
static void test_split_empty_cell(void **state)
{
	(void)state;
	check_split("", NULL, 0);
	check_split("   ", NULL, 0);
	check_split("\"\"", NULL, 0);
	check_split("\" \"", NULL, 0);
}

/* parse.md §2: FIA has 31 input slots; slot count matters. */
static void test_split_fia_31_slots(void **state)
{
	(void)state;
	const char *cell = "\"1,128;1,16,128;1,16,128;;;1;1;;;;;;;;4,32;;;;;;;;;;;;;;;;\"";
	struct perfdb_slots sl;
	perfdb_slots_init(&sl);
	assert_int_equal(perfdb_shape_split_slots(S(cell), &sl), 0);
	assert_int_equal(sl.n, 31);
	assert_span(sl.v[5], "1");
	assert_span(sl.v[6], "1");
	assert_span(sl.v[14], "4,32");
	assert_span(sl.v[30], "");
	perfdb_slots_release(&sl);
}

/* shape.h: the slot list grows; 10,000 slots are fine, and a list is
 * reusable (reset by the next split). */
static void test_split_many_slots(void **state)
{
	(void)state;
	size_t n = 10000;
	char *cell = malloc(n * 2);
	assert_non_null(cell);
	for (size_t i = 0; i < n; i++) {
		cell[2 * i] = (char)('0' + i % 10);
		cell[2 * i + 1] = ';';
	}
	cell[2 * n - 1] = '\0'; /* no trailing ';' */
	struct perfdb_slots sl;
	perfdb_slots_init(&sl);
	assert_int_equal(perfdb_shape_split_slots(S(cell), &sl), 0);
	assert_int_equal(sl.n, n);
	assert_span(sl.v[0], "0");
	assert_span(sl.v[9999], "9");
	assert_int_equal(perfdb_shape_split_slots(S("1;2"), &sl), 0);
	assert_int_equal(sl.n, 2);
	perfdb_slots_release(&sl);
	assert_null(sl.v);
	free(cell);
}

/* shape.h / replay.md §1b: null spellings ``, `()`, `N/A` (any case),
 * `NA`, `NULL`, `None`, `none`. */
static void test_slot_is_null(void **state)
{
	(void)state;
	const char *nulls[] = { "", "  ", "()", "N/A", "n/a", "NA", "NULL",
				"None", "none", "\"N/A\"" };
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		assert_true(perfdb_shape_slot_is_null(S(nulls[i])));
	const char *real[] = { "1", "0", "na", "null", "NONE", "(1)", "4,8" };
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		assert_false(perfdb_shape_slot_is_null(S(real[i])));
}

/* parse.md §6 fia_common: parse_shape("1, 2,3") = (1,2,3); " " -> none. */
static void test_parse_dims_fia_acceptance(void **state)
{
	(void)state;
	static const int64_t w[] = { 1, 2, 3 };
	check_dims("1, 2,3", w, 3);
	check_dims(" ", NULL, 0);
}

/* shape.h: optional parens; ',' and/or whitespace separate dims; a null
 * slot gives 0 dims. */
static void test_parse_dims_forms(void **state)
{
	(void)state;
	static const int64_t w[] = { 1, 2, 3 };
	check_dims("(1 2 3)", w, 3);
	check_dims("(1,2,3)", w, 3);
	check_dims("1,,2 ,3", w, 3);
	check_dims("\"1,2,3\"", w, 3);
	check_dims("()", NULL, 0);
	check_dims("N/A", NULL, 0);
	check_dims("16", (const int64_t[]){ 16 }, 1);
	check_dims("0,4", (const int64_t[]){ 0, 4 }, 2);
	/* Python int(): sign and digit-separating underscores */
	check_dims("+4,1_000", (const int64_t[]){ 4, 1000 }, 2);
	check_dims("9223372036854775807", (const int64_t[]){ INT64_MAX }, 1);
	check_dims("-0", (const int64_t[]){ 0 }, 1);
}

/* shape.h: errors are -PERFDB_EPARSE naming the dim and the slot. */
static void test_parse_dims_errors(void **state)
{
	(void)state;
	check_dims_error("1,x", "invalid dim 'x' in shape slot '1,x'");
	check_dims_error(" 4,1.5 ", "invalid dim '1.5' in shape slot '4,1.5'");
	check_dims_error("4,-3", "negative dim '-3' in shape slot '4,-3'");
	check_dims_error("9223372036854775808",
			 "dim out of range '9223372036854775808' in shape slot "
			 "'9223372036854775808'");
	check_dims_error("1__0", "invalid dim '1__0' in shape slot '1__0'");
	check_dims_error("_1", "invalid dim '_1' in shape slot '_1'");
	check_dims_error("1_", "invalid dim '1_' in shape slot '1_'");
	check_dims_error("+", "invalid dim '+' in shape slot '+'");
	check_dims_error("na", "invalid dim 'na' in shape slot 'na'");
	check_dims_error("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
			 "too many dims in shape slot "
			 "'1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17' (max 16)");
}

/* shape.h: max bounds the dims written; err may be NULL. */
static void test_parse_dims_small_max(void **state)
{
	(void)state;
	int64_t dims[2];
	size_t nd = 7;
	assert_int_equal(perfdb_shape_parse_dims(S("2,3"), dims, 2, &nd, NULL), 0);
	assert_int_equal(nd, 2);
	assert_int_equal(perfdb_shape_parse_dims(S("2,3,4"), dims, 2, &nd, NULL),
			 -PERFDB_EPARSE);
}

/* parse.md §6 fia_common: numel((2,3,4)) = 24; shape.h: 0 dims -> 1,
 * overflow -> -1. */
static void test_numel(void **state)
{
	(void)state;
	assert_int_equal(perfdb_shape_numel((const int64_t[]){ 2, 3, 4 }, 3), 24);
	assert_int_equal(perfdb_shape_numel(NULL, 0), 1);
	assert_int_equal(perfdb_shape_numel((const int64_t[]){ 5, 0 }, 2), 0);
	/* 2^32 * 2^32 = 2^64 > INT64_MAX */
	const int64_t big[] = { INT64_C(1) << 32, INT64_C(1) << 32 };
	assert_int_equal(perfdb_shape_numel(big, 2), -1);
	/* 2^31 * 2^31 * 2 = 2^63 > INT64_MAX; 2^62 * 1 fits */
	const int64_t edge[] = { INT64_C(1) << 31, INT64_C(1) << 31, 2 };
	assert_int_equal(perfdb_shape_numel(edge, 3), -1);
	const int64_t fits[] = { INT64_C(1) << 31, INT64_C(1) << 31, 1 };
	assert_int_equal(perfdb_shape_numel(fits, 3), INT64_C(1) << 62);
	/* a zero dim wins over an overflowing prefix, as with Python ints */
	const int64_t zero[] = { INT64_C(1) << 32, INT64_C(1) << 32, 0 };
	assert_int_equal(perfdb_shape_numel(zero, 3), 0);
}

/* replay.md §5: NZ (2,3,4,5) -> (12,10); §4: (a,b,c,d) -> (b*c, a*d). */
static void test_nz_to_nd(void **state)
{
	(void)state;
	int64_t out[4];
	size_t n = 0;
	assert_int_equal(perfdb_shape_nz_to_nd((const int64_t[]){ 2, 3, 4, 5 }, 4,
					       out, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 12);
	assert_int_equal(out[1], 10);

	/* other ranks unchanged */
	assert_int_equal(perfdb_shape_nz_to_nd((const int64_t[]){ 7, 9 }, 2, out, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 7);
	assert_int_equal(out[1], 9);
	assert_int_equal(perfdb_shape_nz_to_nd(NULL, 0, out, &n), 0);
	assert_int_equal(n, 0);

	/* in place */
	int64_t d[4] = { 2, 3, 4, 5 };
	assert_int_equal(perfdb_shape_nz_to_nd(d, 4, d, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(d[0], 12);
	assert_int_equal(d[1], 10);

	/* overflow of b*c */
	const int64_t big[] = { 1, INT64_C(1) << 32, INT64_C(1) << 32, 1 };
	assert_int_equal(perfdb_shape_nz_to_nd(big, 4, out, &n), -PERFDB_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_trim),
		cmocka_unit_test(test_unquote),
		cmocka_unit_test(test_split_fia_acceptance),
		cmocka_unit_test(test_split_keeps_empty_slots),
		cmocka_unit_test(test_split_empty_cell),
		cmocka_unit_test(test_split_fia_31_slots),
		cmocka_unit_test(test_split_many_slots),
		cmocka_unit_test(test_slot_is_null),
		cmocka_unit_test(test_parse_dims_fia_acceptance),
		cmocka_unit_test(test_parse_dims_forms),
		cmocka_unit_test(test_parse_dims_errors),
		cmocka_unit_test(test_parse_dims_small_max),
		cmocka_unit_test(test_numel),
		cmocka_unit_test(test_nz_to_nd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
