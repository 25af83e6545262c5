/*
 * The replay engine's input fill (src/replay/pool.c) against the sequential
 * generator it replaced, written out here as the reference: one splitmix64
 * state per tensor, advanced once per element, shaped per dtype as
 * docs/replay.md "Buffers" says.  The fill computes each element from its
 * index, in chunks on the OpenMP threads; its values must be these, bit for
 * bit, on both sides of every chunk boundary.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perfdb/dtype.h"
#include "perfdb/half.h"
#include "replay/engine.h"

static uint64_t ref_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The reference, element by element; n elements of dtype into p. */
static void ref_fill(enum perfdb_dtype dt, void *data, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = ref_mix(&s);
		switch (dt) {
		case PERFDB_DTYPE_FLOAT:
			((float *)data)[i] = (float)((double)(r >> 40) * 0x1p-23 - 1.0);
			break;
		case PERFDB_DTYPE_BF16:
			((uint16_t *)data)[i] = (uint16_t)(((r & 1) << 15) | ((120 + (r >> 1) % 7) << 7) | ((r >> 8) & 0x7f));
			break;
		case PERFDB_DTYPE_FLOAT16:
			((uint16_t *)data)[i] = (uint16_t)(((r & 1) << 15) | ((9 + (r >> 1) % 6) << 10) | ((r >> 8) & 0x3ff));
			break;
		case PERFDB_DTYPE_FLOAT64:
			((double *)data)[i] = (double)(r >> 11) * 0x1p-52 - 1.0;
			break;
		case PERFDB_DTYPE_BOOL:
			((uint8_t *)data)[i] = (uint8_t)(r & 1);
			break;
		case PERFDB_DTYPE_INT4: {
			uint8_t *b = data;
			if (i % 2 == 0)
				b[i / 2] = (uint8_t)(r & 7);
			else
				b[i / 2] |= (uint8_t)((r & 7) << 4);
			break;
		}
		default: {
			size_t es = perfdb_dtype_bits(dt) / 8;
			uint8_t *b = data;
			memset(b + i * es, 0, es);
			b[i * es] = (uint8_t)(r & 7);
			break;
		}
		}
	}
}

/* Sizes around the fill's chunk of 2^18 elements, and the small ones. */
static const size_t sizes[] = { 0, 1, 2, 7, 4095, (1u << 18) - 1, 1u << 18, (1u << 18) + 1, 3 * (1u << 18) + 5 };
static const uint64_t seeds[] = { 0, UINT64_MAX, 1000003ull * 77 + 3 };

static void check_dtype(enum perfdb_dtype dt)
{
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (size_t ki = 0; ki < sizeof(seeds) / sizeof(seeds[0]); ki++) {
			size_t n = sizes[si];
			size_t bytes = perfdb_dtype_bytes(dt, n);
			/* exactly the tensor's bytes: under ASan a fill past them is caught */
			unsigned char *got = malloc(bytes ? bytes : 1), *want = calloc(1, bytes ? bytes : 1);
			assert_non_null(got);
			assert_non_null(want);
			memset(got, 0xa5, bytes);
			struct perfdb_tensor t = { .present = true, .dtype = dt, .ndims = 1, .numel = (int64_t)n,
						   .data = got, .bytes = bytes };
			t.dims[0] = (int64_t)n;
			perfdb_engine_fill(&t, seeds[ki]);
			ref_fill(dt, want, n, seeds[ki]);
			if (memcmp(got, want, bytes) != 0) {
				size_t at = 0;
				while (got[at] == want[at])
					at++;
				fail_msg("dtype %s, %zu elements, seed %#llx: byte %zu is %#x, the reference's %#x",
					 perfdb_dtype_name(dt), n, (unsigned long long)seeds[ki], at, got[at], want[at]);
			}
			free(got);
			free(want);
		}
	}
}

static void test_fp32(void **state) { (void)state; check_dtype(PERFDB_DTYPE_FLOAT); }
static void test_bf16(void **state) { (void)state; check_dtype(PERFDB_DTYPE_BF16); }
static void test_fp16(void **state) { (void)state; check_dtype(PERFDB_DTYPE_FLOAT16); }
static void test_fp64(void **state) { (void)state; check_dtype(PERFDB_DTYPE_FLOAT64); }
static void test_bool(void **state) { (void)state; check_dtype(PERFDB_DTYPE_BOOL); }
static void test_int8(void **state) { (void)state; check_dtype(PERFDB_DTYPE_INT8); }
static void test_int32(void **state) { (void)state; check_dtype(PERFDB_DTYPE_INT32); }
static void test_int64(void **state) { (void)state; check_dtype(PERFDB_DTYPE_INT64); }
/* two elements to a byte (a byte per element would run past the buffer) */
static void test_int4(void **state) { (void)state; check_dtype(PERFDB_DTYPE_INT4); }

/* The values are what the docs promise: floats in [-1, 1), none of them
 * subnormal, ints in [0, 8). */
static void test_ranges(void **state)
{
	(void)state;
	size_t n = 100000;
	float *f = malloc(n * sizeof(float));
	uint16_t *h = malloc(n * sizeof(uint16_t));
	assert_non_null(f);
	assert_non_null(h);
	struct perfdb_tensor t = { .present = true, .dtype = PERFDB_DTYPE_FLOAT, .ndims = 1, .numel = (int64_t)n,
				   .data = f, .bytes = n * sizeof(float) };
	perfdb_engine_fill(&t, 42);
	for (size_t i = 0; i < n; i++)
		assert_true(f[i] >= -1.0f && f[i] < 1.0f);
	t.dtype = PERFDB_DTYPE_BF16;
	t.data = h;
	t.bytes = n * 2;
	perfdb_engine_fill(&t, 42);
	for (size_t i = 0; i < n; i++) {
		float v = perfdb_bf16_to_float(h[i]);
		assert_true(fabsf(v) < 1.0f && fabsf(v) >= 0x1p-7f);
	}
	t.dtype = PERFDB_DTYPE_FLOAT16;
	perfdb_engine_fill(&t, 42);
	for (size_t i = 0; i < n; i++) {
		float v = perfdb_fp16_to_float(h[i]);
		assert_true(fabsf(v) < 1.0f && fabsf(v) >= 0x1p-6f);
	}
	free(f);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp32), cmocka_unit_test(test_bf16), cmocka_unit_test(test_fp16),
		cmocka_unit_test(test_fp64), cmocka_unit_test(test_bool), cmocka_unit_test(test_int8),
		cmocka_unit_test(test_int32), cmocka_unit_test(test_int64), cmocka_unit_test(test_int4),
		cmocka_unit_test(test_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
