/*
 * Unit tests for src/grid/expr.c: the shape expression evaluator (spec §3).
 * Expected values are worked out by hand from docs/spec/grid.md (counts also
 * match tests/grid/oracle_grid.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "grid_test.h"

/* ---- §3 evaluator, §7 "align 7/8/9 -> 8/8/16; ().__class__ rejected" ----- */

static int64_t ev(const char *text, const char *const *vars, size_t n, const int64_t *vals)
{
	struct grid_expr *e;
	char msg[256];
	if (grid_expr_compile(&e, text, strlen(text), vars, n, msg, sizeof(msg)) != 0)
		fail_msg("%s: %s", text, msg);
	int64_t v = 0;
	const char *why;
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), 0);
	grid_expr_free(e);
	return v;
}

static int compile_fails(const char *text, const char *const *vars, size_t n)
{
	struct grid_expr *e = NULL;
	char msg[256];
	int rc = grid_expr_compile(&e, text, strlen(text), vars, n, msg, sizeof(msg));
	grid_expr_free(e);
	return rc != 0;
}

/* Nesting and chain limits (a fuzz_grid_yaml finding: deep nesting overflowed the stack) */
static void test_expr_depth_limits(void **state)
{
	(void)state;
	char buf[4096];
	size_t k = 0;
	for (int i = 0; i < 50; i++)
		buf[k++] = '(';
	buf[k++] = '7';
	for (int i = 0; i < 50; i++)
		buf[k++] = ')';
	buf[k] = '\0';
	assert_int_equal(ev(buf, NULL, 0, NULL), 7);           /* 50 levels: fine */
	k = 0;
	for (int i = 0; i < 1000; i++)
		buf[k++] = '(';
	buf[k++] = '7';
	for (int i = 0; i < 1000; i++)
		buf[k++] = ')';
	buf[k] = '\0';
	assert_true(compile_fails(buf, NULL, 0));              /* 1000 levels: refused, no crash */
	k = 0;
	for (int i = 0; i < 1000; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "not ");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_true(compile_fails(buf, NULL, 0));
	k = 0;
	for (int i = 0; i < 100; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "1+");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_int_equal(ev(buf, NULL, 0, NULL), 101);         /* a chain of 100 '+' evaluates */
	k = 0;
	for (int i = 0; i < 1000; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "1+");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_true(compile_fails(buf, NULL, 0));              /* 1000: too deep a tree to walk */
}

static void test_expr_reference_cases(void **state)
{
	(void)state;
	const char *vars[] = { "tokens", "D", "tp" };
	int64_t vals[] = { 128, 5120, 4 };
	assert_int_equal(ev("D // tp", vars, 3, vals), 1280);
	assert_int_equal(ev("tokens * 2", vars, 3, vals), 256);
	assert_int_equal(ev("max(1, tokens // 256)", vars, 3, vals), 1);
	assert_int_equal(ev("abs(-10)", vars, 3, vals), 10);
	assert_int_equal(ev("align(tokens, 8)", vars, 3, vals), 128);
	assert_int_equal(ev("align(1, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(7, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(8, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(9, 8)", vars, 3, vals), 16);
	assert_true(compile_fails("().__class__", vars, 3));
	assert_true(compile_fails("tokens.real", vars, 3));
	assert_true(compile_fails("__import__", vars, 3));
}

static void test_expr_python_semantics(void **state)
{
	(void)state;
	const char *vars[] = { "a", "b" };
	int64_t vals[] = { -7, 2 };
	assert_int_equal(ev("a // b", vars, 2, vals), -4);       /* floors */
	assert_int_equal(ev("a % b", vars, 2, vals), 1);         /* divisor's sign */
	assert_int_equal(ev("7 % -2", vars, 2, vals), -1);
	assert_int_equal(ev("-2 ** 2", vars, 2, vals), -4);      /* ** binds tighter */
	assert_int_equal(ev("2 ** 3 ** 2", vars, 2, vals), 512); /* right-assoc */
	assert_int_equal(ev("1 < b < 3", vars, 2, vals), 1);     /* chained */
	assert_int_equal(ev("1 < b < 2", vars, 2, vals), 0);
	assert_int_equal(ev("0 or b", vars, 2, vals), 2);        /* returns an operand */
	assert_int_equal(ev("a and 0", vars, 2, vals), 0);
	assert_int_equal(ev("not a", vars, 2, vals), 0);
	assert_int_equal(ev("min(3, b, 9)", vars, 2, vals), 2);
	assert_int_equal(ev("1_000 + 1", vars, 2, vals), 1001);
	assert_true(compile_fails("a / b", vars, 2));            /* true division */
	assert_true(compile_fails("c + 1", vars, 2));            /* unknown name */
	assert_true(compile_fails("pow(a, b)", vars, 2));        /* unknown function */
	assert_true(compile_fails("abs(a, b)", vars, 2));        /* arity */
	assert_true(compile_fails("(a", vars, 2));
	struct grid_expr *e;
	char msg[256];
	const char *why;
	int64_t v;
	assert_int_equal(grid_expr_compile(&e, "a // (b - 2)", 12, vars, 2, msg, sizeof(msg)), 0);
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), -PERFDB_EINVAL);
	assert_string_equal(why, "integer division by zero");
	grid_expr_free(e);
	assert_int_equal(grid_expr_compile(&e, "a * 9223372036854775807", 23, vars, 2, msg,
					   sizeof(msg)), 0);
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), -PERFDB_EINVAL);
	grid_expr_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_depth_limits),
		cmocka_unit_test(test_expr_reference_cases),
		cmocka_unit_test(test_expr_python_semantics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
