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

#include "replay/probe.h"

/* The threshold: strictly below 90 % of the best; nothing is contended without readings. */
static void test_contended_threshold(void **state)
{
	(void)state;
	assert_false(perfdb_probe_contended(40.0, 40.0));
	assert_false(perfdb_probe_contended(36.0, 40.0));     /* exactly 90 % */
	assert_true(perfdb_probe_contended(35.99, 40.0));
	assert_true(perfdb_probe_contended(1.0, 40.0));
	assert_false(perfdb_probe_contended(0.0, 40.0));      /* not probed */
	assert_false(perfdb_probe_contended(20.0, 0.0));      /* no best yet */
}

/* A real reading is a positive bandwidth and raises the best, which never goes down. */
static void test_measured(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, (size_t)4 << 20, &err), 0);
	double a = perfdb_probe_gbs(&p);
	assert_true(a > 0.1 && a < 10000.0);
	assert_true(p.best >= a);
	double before = p.best;
	(void)perfdb_probe_gbs(&p);
	assert_true(p.best >= before);
	perfdb_probe_release(&p);
	assert_null(p.buf);
}

/* The script hook: readings in order, the last repeated; the best follows them. */
static void test_script(void **state)
{
	(void)state;
	static const double s[] = { 30.0, 45.0, 20.0 };
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	assert_null(p.buf);
	assert_true(perfdb_probe_gbs(&p) == 0.0);   /* no buffer, no script: no reading */
	p.script = s;
	p.nscript = 3;
	assert_true(perfdb_probe_gbs(&p) == 30.0);
	assert_true(perfdb_probe_gbs(&p) == 45.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	assert_true(p.best == 45.0);
	perfdb_probe_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended_threshold),
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_script),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
