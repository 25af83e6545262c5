/*
 * Unit tests for src/replay/probe.c, the memory-bandwidth probe behind
 * microbench's contention retries (docs/replay.md "Contention").  The
 * engine's use of it (retries, kept measurement, journal, resume) is
 * tested end to end in tests/cli/microbench/cpu_contention.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/probe.h"

/* The threshold: strictly below 80 % of the reference; nothing is contended without readings. */
static void test_contended_threshold(void **state)
{
	(void)state;
	assert_false(perfdb_probe_contended(40.0, 40.0));
	assert_false(perfdb_probe_contended(32.0, 40.0));     /* exactly 80 % */
	assert_true(perfdb_probe_contended(31.99, 40.0));
	assert_true(perfdb_probe_contended(1.0, 40.0));
	assert_false(perfdb_probe_contended(0.0, 40.0));      /* not probed */
	assert_false(perfdb_probe_contended(20.0, 0.0));      /* no reference yet */
}

/* Medians by hand: odd and even counts, readings <= 0 left out, none at all. */
static void test_median(void **state)
{
	(void)state;
	double a[] = { 41.0, 0.0, 46.0, 38.0 };             /* 38 41 46 */
	assert_true(perfdb_probe_median(a, 4) == 41.0);
	double b[] = { 40.0, 30.0, -1.0, 20.0, 50.0 };      /* 20 30 40 50 */
	assert_true(perfdb_probe_median(b, 5) == 35.0);
	double c[] = { 0.0, 0.0 };
	assert_true(perfdb_probe_median(c, 2) == 0.0);
	assert_true(perfdb_probe_median(NULL, 0) == 0.0);
}

/* The reference follows the noted rows; unprobed rows (0) do not count. */
static void test_reference(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	assert_true(perfdb_probe_reference(&p) == 0.0);
	assert_int_equal(perfdb_probe_note(&p, 40.0), 0);
	assert_int_equal(perfdb_probe_note(&p, 0.0), 0);
	assert_true(perfdb_probe_reference(&p) == 40.0);
	assert_int_equal(perfdb_probe_note(&p, 20.0), 0);
	assert_true(perfdb_probe_reference(&p) == 30.0);
	for (int i = 0; i < 100; i++)   /* past the first allocation */
		assert_int_equal(perfdb_probe_note(&p, 44.0), 0);
	assert_true(perfdb_probe_reference(&p) == 44.0);
	assert_int_equal(p.nrows, 102);
	perfdb_probe_release(&p);
	assert_null(p.rows);
}

/* A real reading is a positive bandwidth. */
static void test_measured(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, (size_t)4 << 20, &err), 0);
	double a = perfdb_probe_gbs(&p);
	assert_true(a > 0.1 && a < 10000.0);
	perfdb_probe_release(&p);
	assert_null(p.buf);
}

/* The script hook: readings in order, the last repeated; without buffer or script, 0. */
static void test_script(void **state)
{
	(void)state;
	static const double s[] = { 30.0, 45.0, 20.0 };
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	assert_null(p.buf);
	assert_true(perfdb_probe_gbs(&p) == 0.0);
	p.script = s;
	p.nscript = 3;
	assert_true(perfdb_probe_gbs(&p) == 30.0);
	assert_true(perfdb_probe_gbs(&p) == 45.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	perfdb_probe_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended_threshold),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_script),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
