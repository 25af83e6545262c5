/*
 * The CUDA kernels' division by run-time constants (src/backend/cuda/fdiv.h)
 * against the C operators: every divisor up to 4096 and random ones up to
 * 2^31 - 1, each with the dividends where a quotient changes (multiples of
 * d and their neighbours), the largest dividends and random ones.  The
 * device's __umulhi is the high word of the 64-bit product here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backend/cuda/fdiv.h"

static uint32_t quot(struct cuk_fdiv f, uint32_t x)
{
	return cuk_fdiv_quot(f, x, (uint32_t)(((uint64_t)x * f.mul) >> 32));
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t next31(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 33);
}

static void check_divisor(uint32_t d)
{
	const uint32_t max = 0x7fffffffu;
	struct cuk_fdiv f = cuk_fdiv_make(d);
	uint32_t xs[] = { 0, 1, d - 1, d, d + 1, 2 * (uint64_t)d <= max ? 2 * d - 1 : max, max, max - 1, max - d + 1,
			  max / d * d, max / d * d - 1 };
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		if (xs[i] <= max && quot(f, xs[i]) != xs[i] / d)
			fail_msg("%u / %u: %u, want %u", xs[i], d, quot(f, xs[i]), xs[i] / d);
	for (int i = 0; i < 200; i++) {
		uint32_t x = next31();
		uint64_t m = (uint64_t)(x % (max / d + 1)) * d;   /* a multiple of d and its neighbours */
		uint32_t c[] = { x, (uint32_t)m, m ? (uint32_t)m - 1 : 0, m + 1 <= max ? (uint32_t)m + 1 : 0 };
		for (int k = 0; k < 4; k++)
			if (quot(f, c[k]) != c[k] / d)
				fail_msg("%u / %u: %u, want %u", c[k], d, quot(f, c[k]), c[k] / d);
	}
}

static void test_small_divisors(void **state)
{
	(void)state;
	for (uint32_t d = 1; d <= 4096; d++)
		check_divisor(d);
}

static void test_large_divisors(void **state)
{
	(void)state;
	uint32_t ds[] = { 65535, 65536, 65537, 1u << 30, (1u << 30) + 1, 0x7fffffffu, 0x7ffffffeu, 3u << 29 };
	for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++)
		check_divisor(ds[i]);
	for (int i = 0; i < 2000; i++) {
		uint32_t d = next31();
		check_divisor(d ? d : 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_divisors),
		cmocka_unit_test(test_large_divisors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
