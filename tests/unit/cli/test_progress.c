/*
 * Unit tests for src/cli/progress.c (linked into this test directly): the
 * text of a progress update on a terminal (bar, colour or not) and off one
 * (plain line), with rates and ETAs worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/progress.h"

static const char *fmt(const struct progress *p, unsigned long long done, double t)
{
	static char buf[512];
	progress_format(buf, sizeof(buf), p, done, t);
	return buf;
}

static void test_plain_bytes(void **state)
{
	(void)state;
	struct progress p = { .label = "parse", .total = 100000000 };
	/* 50 MB of 100 in 10 s: 5 MB/s, 50 MB left: 10 s */
	assert_string_equal(fmt(&p, 50000000, 10), "parse: 50% (50 of 100 MB, 5.0 MB/s, ETA 10s)\n");
}

static void test_bar(void **state)
{
	(void)state;
	struct progress p = { .label = "parse", .total = 100000000, .tty = 1 };
	/* half of a 30-wide bar: 15 '#' then 15 '-' */
	assert_string_equal(fmt(&p, 50000000, 10),
		"\rparse [###############---------------]  50% 50/100 MB 5.0 MB/s ETA 10s ");
	p.color = 1;
	assert_string_equal(fmt(&p, 50000000, 10),
		"\rparse [\033[32m###############\033[0m---------------]  50% 50/100 MB 5.0 MB/s ETA 10s ");
}

static void test_units_and_eta(void **state)
{
	(void)state;
	struct progress p = { .label = "grid", .unit = "rows" };
	/* unknown total: count and rate only; 1234 rows in 2 s = 617/s */
	assert_string_equal(fmt(&p, 1234, 2), "grid: 1234 rows, 617.0 rows/s\n");
	/* 100 of 10000 in 10 s: 10/s, 9900 left = 990 s = 16m30s */
	p.total = 10000;
	assert_string_equal(fmt(&p, 100, 10), "grid: 1% (100 of 10000 rows, 10.0 rows/s, ETA 16m30s)\n");
	/* 100 of 1000000: 999900 / 10 = 99990 s = 27 h 46 m 30 s */
	p.total = 1000000;
	assert_string_equal(fmt(&p, 100, 10), "grid: 0% (100 of 1000000 rows, 10.0 rows/s, ETA 27h46m)\n");
	/* nothing done yet: no rate, ETA unknown */
	assert_string_equal(fmt(&p, 0, 10), "grid: 0% (0 of 1000000 rows, 0.0 rows/s, ETA ?)\n");
	/* failures (microbench rows) are shown once there are some: 30 of 120 in 3 s, 90 left = 9 s */
	struct progress m = { .label = "microbench", .unit = "rows", .total = 120, .failed = 2 };
	assert_string_equal(fmt(&m, 30, 3),
			    "microbench: 25% (30 of 120 rows, 2 failed, 10.0 rows/s, ETA 9s)\n");
	/* the engine's estimate of the rows to come wins over the rate: 215 s = 3m35s */
	m.eta_s = 214.8;
	m.eta_given = 1;
	assert_string_equal(fmt(&m, 30, 3),
			    "microbench: 25% (30 of 120 rows, 2 failed, 10.0 rows/s, ETA 3m35s)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_bytes),
		cmocka_unit_test(test_bar),
		cmocka_unit_test(test_units_and_eta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
