/*
 * Unit tests for src/core/stats.c: sample statistics, Python float()
 * parsing, `%.6f` and repr(round(v, 2)) formatting.
 * Spec: docs/spec/parse.md §3 (mean, median, population std, float() parsing,
 * nan written as `nan`), §4 (`%.6f`), open question 7 (no Σx² cancellation);
 * docs/spec/replay.md Decision 2 (statistics); docs/spec/comm.md (round(v, 2) in the
 * comm tables, per stats.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "perfdb/stats.h"

#define EPS 1e-12

/* |got - want| <= rel * |want| (absolute rel when want is 0). */
static void assert_close(double got, double want, double rel)
{
	double tol = want != 0 ? rel * fabs(want) : rel;
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (tolerance %.3g)", got, want, tol);
}

/* parse.md §3: odd n, median is the middle value; std population. */
static void test_compute_odd(void **state)
{
	(void)state;
	double x[] = { 3, 1, 2 };
	struct perfdb_stats st;
	perfdb_stats_compute(x, 3, &st);
	assert_int_equal(st.n, 3);
	assert_close(st.mean, 2.0, EPS);
	assert_close(st.median, 2.0, EPS);
	/* Σ(x-2)² = 1+0+1 = 2; /3; sqrt(2/3) */
	assert_close(st.std, sqrt(2.0 / 3.0), EPS);
	assert_close(st.min, 1.0, EPS);
	assert_close(st.max, 3.0, EPS);
	/* stats.h: the array is sorted in place */
	assert_true(x[0] == 1 && x[1] == 2 && x[2] == 3);
}

/* parse.md §3: even n, median is the mean of the two middle values. */
static void test_compute_even(void **state)
{
	(void)state;
	double x[] = { 4, 1, 3, 2 };
	struct perfdb_stats st;
	perfdb_stats_compute(x, 4, &st);
	assert_close(st.mean, 2.5, EPS);
	assert_close(st.median, 2.5, EPS);
	/* deviations ±1.5, ±0.5: (2.25+0.25+0.25+2.25)/4 = 1.25 */
	assert_close(st.std, sqrt(1.25), EPS);

	/* the textbook population example: mean 5, std exactly 2 */
	double y[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	perfdb_stats_compute(y, 8, &st);
	assert_close(st.mean, 5.0, EPS);
	assert_close(st.median, 4.5, EPS);
	assert_close(st.std, 2.0, EPS);
	assert_close(st.min, 2.0, EPS);
	assert_close(st.max, 9.0, EPS);
}

/* parse.md §3: one sample -> std 0; stats.h: n == 0 -> all zeros. */
static void test_compute_small(void **state)
{
	(void)state;
	double x[] = { 7.5 };
	struct perfdb_stats st;
	perfdb_stats_compute(x, 1, &st);
	assert_int_equal(st.n, 1);
	assert_true(st.mean == 7.5 && st.median == 7.5 && st.std == 0.0);
	assert_true(st.min == 7.5 && st.max == 7.5);

	memset(&st, 0x55, sizeof(st));
	perfdb_stats_compute(NULL, 0, &st);
	assert_int_equal(st.n, 0);
	assert_true(st.mean == 0 && st.median == 0 && st.std == 0);
	assert_true(st.min == 0 && st.max == 0);

	/* equal samples: std exactly 0, never sqrt of a negative */
	double z[] = { 0.1, 0.1, 0.1 };
	perfdb_stats_compute(z, 3, &st);
	assert_true(st.std == 0.0);
}

/*
 * Open question 7 / stats.h: no catastrophic cancellation.  n = 1e6
 * values 1e9 + k·2⁻²³ with k cycling through ±2516582, ±838861 (≈ ±0.3,
 * ±0.1; 2⁻²³ is the spacing of doubles at 1e9, so every value is exact).
 * Exact mean = 1e9.  Exact variance = (2·2516582² + 2·838861²)/4 · 2⁻⁴⁶
 * = (6333184962724 + 703687777321)/2 · 2⁻⁴⁶ = 3518436370022.5 · 2⁻⁴⁶.
 * Σx²/n − mean² would lose everything: Σx² ≈ 1e24, whose spacing is ~1e8.
 */
static void test_std_precision(void **state)
{
	(void)state;
	const size_t n = 1000000;
	const double step = ldexp(1.0, -23);
	static const double k[4] = { -2516582, 838861, -838861, 2516582 };
	double *x = malloc(n * sizeof(*x));
	assert_non_null(x);
	for (size_t i = 0; i < n; i++)
		x[i] = 1e9 + k[i % 4] * step;

	double mean = perfdb_stats_mean(x, n);
	assert_close(mean, 1e9, 1e-15);

	struct perfdb_stats st;
	perfdb_stats_compute(x, n, &st);
	double want = sqrt(3518436370022.5) * step;
	assert_close(st.mean, 1e9, 1e-15);
	assert_close(st.std, want, EPS);
	/* sorted, samples 499999 and 500000 are 1e9 ∓ 838861·2⁻²³ */
	assert_close(st.median, 1e9, 1e-15);
	free(x);
}

/* stats.h: the mean is a compensated sum. */
static void test_mean_compensated(void **state)
{
	(void)state;
	/* naive: (1e16 + 1) rounds to 1e16, minus 1e16 = 0; exact sum is 1 */
	double x[] = { 1e16, 1, -1e16 };
	assert_close(perfdb_stats_mean(x, 3), 1.0 / 3.0, EPS);
	assert_true(perfdb_stats_mean(NULL, 0) == 0.0);
	double y[] = { 1, 2, 3, 4 };
	assert_close(perfdb_stats_mean(y, 4), 2.5, EPS);
	/* does not reorder */
	double z[] = { 3, 1, 2 };
	perfdb_stats_mean(z, 3);
	assert_true(z[0] == 3 && z[1] == 1 && z[2] == 2);
}

static int parse(const char *s, double *out)
{
	return perfdb_stats_parse_double(s, strlen(s), out);
}

static void check_parse(const char *s, double want)
{
	double v = -12345;
	if (parse(s, &v) != 0)
		fail_msg("'%s' rejected", s);
	if (!(v == want))
		fail_msg("'%s' gave %.17g, want %.17g", s, v, want);
}

static void check_reject(const char *s)
{
	double v = -12345;
	if (parse(s, &v) != -1)
		fail_msg("'%s' accepted as %.17g", s, v);
	assert_true(v == -12345);
}

/* parse.md §3: Python float() accepts these (incl. `1_000`). */
static void test_parse_accepts(void **state)
{
	(void)state;
	check_parse("1.5", 1.5);
	check_parse(" 2 ", 2.0);
	check_parse("\t+3\r\n", 3.0);
	check_parse("-4.25", -4.25);
	check_parse("1e3", 1000.0);
	check_parse("1E-2", 0.01);
	check_parse("2.5e+1", 25.0);
	check_parse(".5", 0.5);
	check_parse("5.", 5.0);
	check_parse("007", 7.0);
	check_parse("1_000", 1000.0);
	check_parse("1_000.250_0", 1000.25);
	check_parse("1e1_0", 1e10);
	check_parse("-0", -0.0);
	check_parse("123.456789", 123.456789);
	/* Python float('1e400') is inf, float('1e-400') is 0.0 */
	check_parse("1e400", INFINITY);
	check_parse("-1e400", -INFINITY);
	check_parse("1e-400", 0.0);

	double v;
	assert_int_equal(parse("inf", &v), 0);
	assert_true(isinf(v) && v > 0);
	assert_int_equal(parse("-Infinity", &v), 0);
	assert_true(isinf(v) && v < 0);
	assert_int_equal(parse("+INF", &v), 0);
	assert_true(isinf(v) && v > 0);
	assert_int_equal(parse("NaN", &v), 0);
	assert_true(isnan(v));
	assert_int_equal(parse(" -nan ", &v), 0);
	assert_true(isnan(v));

	/* the length bounds the input: no NUL needed */
	assert_int_equal(perfdb_stats_parse_double("12345", 2, &v), 0);
	assert_true(v == 12.0);

	/* a long (> stack buffer) but valid literal */
	char longnum[300];
	memset(longnum, '0', sizeof(longnum));
	longnum[1] = '.';
	longnum[298] = '5';
	longnum[299] = '\0'; /* 0.000...05 with 297 decimals: 5e-297 */
	check_parse(longnum, 5e-297);
}

/* parse.md §3: empty or invalid -> not a number (strtod extras too). */
static void test_parse_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "   ", "abc", "N/A", "0x10", "0X1p3", "nan(1)", "nan()",
		"1e", "1e+", "e5", ".", "+", "-", "1__0", "_1", "1_", "1_.5",
		"1._5", "1.5.2", "1,5", "infinit", "infinityy", "in", "--1",
		"+-1", "1 2", "1.5x", "1e5.5",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_reject(bad[i]);
	double v;
	assert_int_equal(perfdb_stats_parse_double(NULL, 0, &v), -1);
	/* "1.5" cut to "1." is fine, cut to "" is empty */
	assert_int_equal(perfdb_stats_parse_double("1.5", 0, &v), -1);
}

static void check_fmt6(double v, const char *want)
{
	char buf[64];
	int n = perfdb_stats_format6(v, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
}

/* parse.md §4: `%.6f`; §3: NaN written as `nan` (Python '%.6f' % x). */
static void test_format6(void **state)
{
	(void)state;
	check_fmt6(1.5, "1.500000");
	check_fmt6(0.0, "0.000000");
	check_fmt6(-0.0, "-0.000000");
	check_fmt6(123.4567891, "123.456789");
	check_fmt6(519.0, "519.000000");
	check_fmt6(2.5e-7, "0.000000");
	check_fmt6(1e15, "1000000000000000.000000");
	check_fmt6(NAN, "nan");
	check_fmt6(-NAN, "nan");
	check_fmt6(INFINITY, "inf");
	check_fmt6(-INFINITY, "-inf");

	/* snprintf semantics: full length returned, text truncated */
	char small[4];
	assert_int_equal(perfdb_stats_format6(1.5, small, sizeof(small)), 8);
	assert_string_equal(small, "1.5");
}

static void check_r2(double v, const char *want)
{
	char buf[64];
	int n = perfdb_stats_format_round2(v, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
}

/* stats.h: repr(round(v, 2)), worked out by hand:
 * round is to the nearest of the exact binary value, ties to even; repr
 * is the shortest round-trip text, scientific from 1e16 up. */
static void test_format_round2(void **state)
{
	(void)state;
	check_r2(107.699, "107.7");
	check_r2(-107.699, "-107.7");
	check_r2(100.0, "100.0");
	check_r2(0.0, "0.0");
	check_r2(0.01, "0.01");
	check_r2(0.05, "0.05");
	check_r2(0.5, "0.5");
	check_r2(1234.5, "1234.5");
	check_r2(12.345678, "12.35");
	/* 0.125 and 0.375 are exact binary ties: half to even */
	check_r2(0.125, "0.12");
	check_r2(0.375, "0.38");
	/* 2.675 is stored as 2.67499999999999982236431605997495353221893310546875 */
	check_r2(2.675, "2.67");
	/* 1.005 is stored below 1.005 */
	check_r2(1.005, "1.0");
	check_r2(0.1 + 0.2, "0.3");
	/* tiny values round to zero, keeping the sign: repr(-0.0) */
	check_r2(-0.001, "-0.0");
	check_r2(1.5e-5, "0.0");
	/* positional up to exponent 15 */
	check_r2(9999999999999998.0, "9999999999999998.0");
	/* 123456789012345.67 is stored as ...345.671875; 16 digits
	 * (…345.7) would read back as …345.703125, so 17 are needed */
	check_r2(123456789012345.67, "123456789012345.67");
	/* scientific from exponent 16 */
	check_r2(1e16, "1e+16");
	check_r2(1.5e17, "1.5e+17");
	check_r2(-2.5e20, "-2.5e+20");
	/* nearest double is 12345678901234567168; 17 digits needed */
	check_r2(12345678901234567890.0, "1.2345678901234567e+19");
	check_r2(1e300, "1e+300");
	check_r2(NAN, "nan");
	check_r2(INFINITY, "inf");
	check_r2(-INFINITY, "-inf");
}

/* Expected figures worked by hand from the quartiles (linear interpolation). */
static void test_robust_drops_far_slow_outliers(void **state)
{
	(void)state;
	/* the case: one 8 ms sample among 1.5 us ones is not a duration */
	double x[100];
	for (int i = 0; i < 99; i++)
		x[i] = 1.5;
	x[37] = 8000.0;
	x[99] = 1.5;
	struct perfdb_stats st;
	size_t out;
	perfdb_stats_robust(x, 100, &st, &out);
	assert_int_equal(out, 1);
	assert_int_equal(st.n, 99);
	assert_true(st.mean == 1.5 && st.max == 1.5 && st.std == 0.0);
	/* 1..9 and 100: Q1 3.25, Q3 7.75, IQR 4.5, fence max(21.25, 2 x 5.5) */
	double y[] = { 100, 3, 1, 9, 2, 8, 4, 7, 5, 6 };
	perfdb_stats_robust(y, 10, &st, &out);
	assert_int_equal(out, 1);
	assert_int_equal(st.n, 9);
	assert_true(fabs(st.mean - 5.0) < 1e-12 && st.median == 5.0 && st.min == 1.0 && st.max == 9.0);
	/* the fast side is never cut: 0.001 among 10s stays */
	double z[] = { 10, 10, 10, 10, 10, 0.001 };
	perfdb_stats_robust(z, 6, &st, &out);
	assert_int_equal(out, 0);
	assert_true(st.min == 0.001);
}

static void test_robust_keeps_a_tight_set(void **state)
{
	(void)state;
	struct perfdb_stats st;
	size_t out;
	/* Q1 10.75, Q3 12.25, fence max(16.75, 23): nothing out */
	double a[] = { 13, 10, 12, 11 };
	perfdb_stats_robust(a, 4, &st, &out);
	assert_int_equal(out, 0);
	assert_true(fabs(st.mean - 11.5) < 1e-12);
	/* IQR 0: twice the median (200) is the fence, so 150 stays... */
	double b[] = { 100, 100, 150, 100, 100 };
	perfdb_stats_robust(b, 5, &st, &out);
	assert_int_equal(out, 0);
	assert_true(fabs(st.mean - 110.0) < 1e-9);
	/* ... but not 250 */
	double c[] = { 100, 100, 250, 100, 100 };
	perfdb_stats_robust(c, 5, &st, &out);
	assert_int_equal(out, 1);
	assert_true(st.mean == 100.0);
	/* a heavy tail within twice the median stays: 10 x 90 and 2 x 170 (Tukey's fence is 90) */
	double t[12] = { 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 170, 170 };
	perfdb_stats_robust(t, 12, &st, &out);
	assert_int_equal(out, 0);
	assert_int_equal(st.n, 12);
	/* fewer than 4 samples: all kept */
	double d[] = { 1, 1000 };
	perfdb_stats_robust(d, 2, &st, &out);
	assert_int_equal(out, 0);
	assert_int_equal(st.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compute_odd),
		cmocka_unit_test(test_compute_even),
		cmocka_unit_test(test_compute_small),
		cmocka_unit_test(test_std_precision),
		cmocka_unit_test(test_mean_compensated),
		cmocka_unit_test(test_parse_accepts),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_format6),
		cmocka_unit_test(test_robust_drops_far_slow_outliers),
		cmocka_unit_test(test_robust_keeps_a_tight_set),
		cmocka_unit_test(test_format_round2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
