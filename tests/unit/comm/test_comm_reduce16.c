/*
 * Unit tests: the 16-bit reductions of perfdb comm (comm.h "16-bit
 * reductions", src/comm/reduce16*.c) at every ISA level this CPU has, held
 * against an oracle written here from the formats' definitions (values by
 * ldexp, nearest by comparing distances in double, ties to even), not from
 * include/perfdb/half.h: random bit patterns of every class (zeros,
 * subnormals, normals, infinities, NaNs), exact ties, sums that fall into
 * the subnormals, and every length from 0 to 70 plus long odd ones at
 * unaligned starts, so each path's main loop and tail run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

/* ---- the oracle ------------------------------------------------------ */

struct fmt {
	int frac_bits, exp_bits, bias;
};
static const struct fmt BF16 = { 7, 8, 127 }, FP16 = { 10, 5, 15 };

static int is_nan16(const struct fmt *f, uint16_t h)
{
	unsigned e = (h >> f->frac_bits) & ((1u << f->exp_bits) - 1u);
	return e == (1u << f->exp_bits) - 1u && (h & ((1u << f->frac_bits) - 1u));
}

static uint16_t quiet16(const struct fmt *f, uint16_t h)
{
	return (uint16_t)(h | (1u << (f->frac_bits - 1)));
}

/* The value of a non-NaN code; the infinity code counts as 2^(emax+1), the
 * first value past the largest finite one, so rounding overflows to it. */
static double value16(const struct fmt *f, uint16_t h)
{
	unsigned e = (h >> f->frac_bits) & ((1u << f->exp_bits) - 1u);
	unsigned m = h & ((1u << f->frac_bits) - 1u);
	double v = e == 0 ? ldexp(m, 1 - f->bias - f->frac_bits)
			  : ldexp((1u << f->frac_bits) + m, (int)e - f->bias - f->frac_bits);
	return (h & 0x8000) ? -v : v;
}

/* The nearest code to a non-NaN x, ties to the even code; beyond the
 * largest finite value by half a step or more: infinity. */
static uint16_t nearest16(const struct fmt *f, double x)
{
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	double a = fabs(x);
	uint16_t inf = (uint16_t)(((1u << f->exp_bits) - 1u) << f->frac_bits);
	if (isinf(a))
		return sign | inf;
	unsigned lo = 0, hi = inf;
	while (lo < hi) {   /* the largest code with value <= a */
		unsigned mid = (lo + hi + 1) / 2;
		if (value16(f, (uint16_t)mid) <= a)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo == inf)
		return sign | inf;
	double dl = a - value16(f, (uint16_t)lo), dh = value16(f, (uint16_t)(lo + 1)) - a;
	if (dl < dh || (dl == dh && (lo & 1u) == 0))
		return (uint16_t)(sign | lo);
	return (uint16_t)(sign | (lo + 1));
}

/*
 * The expected result of op(x = in, y = inout), in one of two codes: both
 * are set; *any_nan: any quiet NaN is right (inf - inf, whose NaN the
 * hardware makes).
 */
static void oracle(const struct fmt *f, enum perfdb_half_op op, uint16_t x, uint16_t y,
		   uint16_t *r1, uint16_t *r2, int *any_nan)
{
	*any_nan = 0;
	int nx = is_nan16(f, x), ny = is_nan16(f, y);
	if (nx || ny) {
		/* a NaN operand comes out quietened; both NaN: a sum may keep
		 * either payload, max keeps in's (comm.h) */
		*r1 = quiet16(f, nx ? x : y);
		*r2 = op == PERFDB_HALF_SUM && nx && ny ? quiet16(f, y) : *r1;
		return;
	}
	double vx = value16(f, x), vy = value16(f, y);
	uint16_t inf = (uint16_t)(((1u << f->exp_bits) - 1u) << f->frac_bits);
	if ((x & 0x7fff) == inf)
		vx = copysign(INFINITY, vx);
	if ((y & 0x7fff) == inf)
		vy = copysign(INFINITY, vy);
	if (op == PERFDB_HALF_MAX) {
		*r1 = *r2 = vx > vy ? x : y;
		return;
	}
	if (isinf(vx) && isinf(vy) && vx != vy) {
		*any_nan = 1;
		*r1 = *r2 = 0;
		return;
	}
	/* fp32 accumulation: the sum rounded to float first, then to 16 bits */
	float s = (float)(vx + vy);   /* exact in double: both have <= 11 bits */
	if (s == 0 && vx + vy == 0)   /* x + (-x) is +0; -0 + -0 is -0 */
		s = signbit(vx) && signbit(vy) ? -0.0f : 0.0f;
	*r1 = *r2 = nearest16(f, (double)s);
}

/* ---- inputs ---------------------------------------------------------- */

static uint32_t rng = 12345;
static uint16_t rnd16(void)
{
	rng = rng * 1103515245u + 12345u;
	return (uint16_t)(rng >> 8);
}

/* A code of the format: mostly finite values in a band of exponents where
 * sums round (so they matter), plus every special class now and then. */
static uint16_t any16(const struct fmt *f)
{
	uint16_t r = rnd16();
	unsigned emax = (1u << f->exp_bits) - 1u;
	uint16_t sign = r & 0x8000;
	uint16_t m = (uint16_t)(rnd16() & ((1u << f->frac_bits) - 1u));
	unsigned e;
	switch (r & 15) {
	case 0: e = 0; break;                                         /* zero / subnormal */
	case 1: e = emax; break;                                      /* inf / NaN */
	case 2: e = emax; m = (uint16_t)(m | 1u); break;              /* NaN, quiet or signalling */
	case 3: e = emax - 1; break;                                  /* overflowing sums */
	case 4: e = 1; break;                                         /* into the subnormals */
	default: e = (unsigned)f->bias - 4 + rnd16() % 9; break;      /* around 1 */
	}
	return (uint16_t)(sign | (e << f->frac_bits) | m);
}

/* x and a y exactly half a step of x's away: a tie for the sum. */
static void tie16(const struct fmt *f, uint16_t *x, uint16_t *y)
{
	unsigned e = (unsigned)f->bias - 3 + rnd16() % 7;
	uint16_t m = (uint16_t)(rnd16() & ((1u << f->frac_bits) - 1u));
	*x = (uint16_t)((e << f->frac_bits) | m);
	/* half a step of x = 2^(e - bias - frac_bits - 1): the code of exponent
	 * e - frac_bits - 1, fraction 0 (a normal number in both formats here) */
	*y = (uint16_t)((e - (unsigned)f->frac_bits - 1u) << f->frac_bits);
	if (rnd16() & 1) {   /* the same tie below x */
		*x |= 0x8000;
		*y |= 0x8000;
	}
}

/* ---- the checks ------------------------------------------------------ */

static const struct fmt *fmt_of(enum perfdb_comm_dtype d)
{
	return d == PERFDB_COMM_BF16 ? &BF16 : &FP16;
}

static const char *const op_name[] = { "sum", "max" };

/* Run the kernel of (d, op, isa) on x, y (n elements at offset off) and
 * compare every element with the oracle and with the scalar reference. */
static void check(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa,
		  const uint16_t *x, const uint16_t *y, size_t n, size_t off)
{
	const struct fmt *f = fmt_of(d);
	perfdb_half_fn *k = perfdb_half_kernel(d, op, isa);
	perfdb_half_fn *ref = perfdb_half_kernel(d, op, PERFDB_ISA_SSE2);
	assert_non_null(k);
	/* guard elements either side catch a write past the range */
	uint16_t *got = malloc((n + off + 2) * sizeof(uint16_t));
	uint16_t *want = malloc((n + 1) * sizeof(uint16_t));
	uint16_t *src = malloc((n + off + 1) * sizeof(uint16_t));
	assert_true(got && want && src);
	for (size_t i = 0; i < n + off + 2; i++)
		got[i] = 0xdead;
	memcpy(src + off, x, n * sizeof(uint16_t));
	memcpy(got + off, y, n * sizeof(uint16_t));
	memcpy(want, y, n * sizeof(uint16_t));
	k(src + off, got + off, n);
	ref(x, want, n);
	for (size_t i = 0; i < off; i++)
		assert_int_equal(got[i], 0xdead);
	assert_int_equal(got[off + n], 0xdead);
	assert_int_equal(got[off + n + 1], 0xdead);
	for (size_t i = 0; i < n; i++) {
		uint16_t r1, r2, g = got[off + i];
		int any;
		oracle(f, op, x[i], y[i], &r1, &r2, &any);
		int ok = any ? is_nan16(f, g) && g == quiet16(f, g) : g == r1 || g == r2;
		/* every level gives the reference's bits (a sum of two NaNs aside) */
		int same = g == want[i] || (is_nan16(f, x[i]) && is_nan16(f, y[i]));
		if (!ok || !same)
			fail_msg("%s %s at %s, n=%zu, element %zu: %04x op %04x gave %04x, "
				 "oracle %04x/%04x%s, reference %04x",
				 perfdb_comm_dtype(d)->name, op_name[op], perfdb_cpu_isa_name(isa), n, i,
				 x[i], y[i], g, r1, r2, any ? " (any quiet NaN)" : "", want[i]);
	}
	free(got);
	free(want);
	free(src);
}

/* For every level this CPU has (the levels above it would fault). */
static void each_level(void (*body)(enum perfdb_comm_dtype, enum perfdb_half_op,
				    enum perfdb_cpu_isa))
{
	enum perfdb_cpu_isa top = perfdb_cpu_isa_detect();
	for (int lv = PERFDB_ISA_SSE2; lv <= PERFDB_ISA_AVX512_BF16; lv++) {
		if (lv > (int)top) {
			fprintf(stderr, "test_comm_reduce16: level %s not tested: this CPU lacks it\n",
				perfdb_cpu_isa_name((enum perfdb_cpu_isa)lv));
			continue;
		}
		for (int d = PERFDB_COMM_BF16; d <= PERFDB_COMM_FP16; d++)
			for (int op = 0; op < PERFDB_HALF_NOPS; op++)
				body((enum perfdb_comm_dtype)d, (enum perfdb_half_op)op,
				     (enum perfdb_cpu_isa)lv);
	}
}

#define NMAX 4133

static void random_body(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa)
{
	static uint16_t x[NMAX], y[NMAX];
	rng = 777u + (uint32_t)d * 31u + (uint32_t)op * 7u;
	for (size_t i = 0; i < NMAX; i++) {
		x[i] = any16(fmt_of(d));
		y[i] = any16(fmt_of(d));
	}
	for (size_t n = 0; n <= 70; n++)
		check(d, op, isa, x + n, y + 2 * n, n, n % 3);
	static const size_t longer[] = { 1023, 1024, 4096 + 37, NMAX };
	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++)
		check(d, op, isa, x, y, longer[i], i);
}

/* Random codes of every class, every short length and tail, long runs. */
static void test_random(void **state)
{
	(void)state;
	each_level(random_body);
}

static void ties_body(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa)
{
	uint16_t x[515], y[515];
	rng = 99u + (uint32_t)d;
	for (size_t i = 0; i < 515; i++) {
		if (i % 2)
			tie16(fmt_of(d), &x[i], &y[i]);
		else
			tie16(fmt_of(d), &y[i], &x[i]);
	}
	check(d, op, isa, x, y, 515, 1);
}

/* Exact halfway sums, both operand orders, both signs: ties to even. */
static void test_ties(void **state)
{
	(void)state;
	each_level(ties_body);
	/* the oracle itself, by hand: bf16 1 + 2^-8 ties down to 1 (even),
	 * 1 + 3*2^-8 up to 1 + 2^-6; fp16 2048 + 1 to 2048, 2048 + 3 to 2052 */
	uint16_t r1, r2;
	int any;
	oracle(&BF16, PERFDB_HALF_SUM, 0x3f80, 0x3b80, &r1, &r2, &any);
	assert_int_equal(r1, 0x3f80);
	oracle(&BF16, PERFDB_HALF_SUM, 0x3f80, 0x3c40, &r1, &r2, &any);
	assert_int_equal(r1, 0x3f82);
	oracle(&FP16, PERFDB_HALF_SUM, 0x6800, 0x3c00, &r1, &r2, &any);
	assert_int_equal(r1, 0x6800);
	oracle(&FP16, PERFDB_HALF_SUM, 0x6800, 0x4200, &r1, &r2, &any);
	assert_int_equal(r1, 0x6802);
}

static void special_body(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa)
{
	const int bf = d == PERFDB_COMM_BF16;
	const uint16_t inf = bf ? 0x7f80 : 0x7c00, qnan = bf ? 0x7fc0 : 0x7e00;
	const uint16_t snan = bf ? 0x7f81 : 0x7c01, maxf = bf ? 0x7f7f : 0x7bff;
	const uint16_t sub = 0x0001, minnorm = bf ? 0x0080 : 0x0400;
	/* pairs: NaN with anything, inf - inf, overflow to inf, signed zeros,
	 * subnormal sums, normal + (-normal) landing in the subnormals */
	const uint16_t px[] = { qnan, snan, 1, inf, inf, maxf, 0x8000, 0x8000, 0, sub,
				minnorm, (uint16_t)(minnorm | 0x8000), 0x8000 | snan, maxf, sub, inf };
	const uint16_t py[] = { 1, 0x3c00, snan, (uint16_t)(inf | 0x8000), inf, maxf, 0x8000, 0,
				0x8000, sub, (uint16_t)(0x8000 | (minnorm + 1)), sub, qnan,
				(uint16_t)(maxf | 0x8000), (uint16_t)(0x8000 | sub), 1 };
	enum { NP = sizeof(px) / sizeof(px[0]) };
	/* each pair alone, and inside a vector of ordinary values, so a lane
	 * that needs care (a subnormal for vcvtneps2bf16) is not the only one */
	uint16_t x[64], y[64];
	for (size_t p = 0; p < NP; p++) {
		check(d, op, isa, &px[p], &py[p], 1, 0);
		for (size_t i = 0; i < 64; i++) {
			x[i] = bf ? 0x3f80 : 0x3c00;
			y[i] = (uint16_t)(x[i] + i);
		}
		x[p % 40] = px[p];
		y[p % 40] = py[p];
		check(d, op, isa, x, y, 64, 0);
		check(d, op, isa, y, x, 64, 0);
	}
}

/* NaN (quiet and signalling), infinities, overflow, signed zeros, subnormals. */
static void test_special(void **state)
{
	(void)state;
	each_level(special_body);
}

/* The levels are distinct paths, held down by PERFDB_MAX_CPU_ISA as the MPI
 * transport asks for them (perfdb_half_kernel(..., perfdb_cpu_isa())). */
static void test_dispatch(void **state)
{
	(void)state;
	assert_null(perfdb_half_kernel(PERFDB_COMM_FP32, PERFDB_HALF_SUM, PERFDB_ISA_SSE2));
	assert_ptr_equal(perfdb_half_kernel(PERFDB_COMM_BF16, PERFDB_HALF_SUM, PERFDB_ISA_SSE2),
			 perfdb_bf16_sum);
	assert_ptr_equal(perfdb_half_kernel(PERFDB_COMM_FP16, PERFDB_HALF_MAX, PERFDB_ISA_SSE2),
			 perfdb_fp16_max);
#if defined(__x86_64__)
	for (int d = PERFDB_COMM_BF16; d <= PERFDB_COMM_FP16; d++)
		for (int op = 0; op < PERFDB_HALF_NOPS; op++) {
			perfdb_half_fn *k[4];
			for (int lv = 0; lv < 4; lv++)
				k[lv] = perfdb_half_kernel((enum perfdb_comm_dtype)d,
							   (enum perfdb_half_op)op,
							   (enum perfdb_cpu_isa)lv);
			assert_true(k[0] != k[1] && k[1] != k[2]);
			/* only bf16 has an avx512_bf16 path of its own */
			assert_true(d == PERFDB_COMM_BF16 ? k[3] != k[2] : k[3] == k[2]);
		}
	if (perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX2) {
		setenv("PERFDB_MAX_CPU_ISA", "avx2", 1);
		assert_ptr_equal(perfdb_half_kernel(PERFDB_COMM_BF16, PERFDB_HALF_SUM, perfdb_cpu_isa()),
				 perfdb_half_kernel(PERFDB_COMM_BF16, PERFDB_HALF_SUM, PERFDB_ISA_AVX2));
		setenv("PERFDB_MAX_CPU_ISA", "sse2", 1);
		assert_ptr_equal(perfdb_half_kernel(PERFDB_COMM_FP16, PERFDB_HALF_SUM, perfdb_cpu_isa()),
				 perfdb_fp16_sum);
		unsetenv("PERFDB_MAX_CPU_ISA");
	}
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_special),
		cmocka_unit_test(test_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
