/*
 * Unit tests: exact medians in bounded memory (include/perfdb/samples.h).
 * The oracle is the definition (docs/spec/parse.md §3: middle value, mean of the
 * two middle values when n is even) computed by sorting with qsort.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/samples.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double oracle(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t rng = 88172645463325252ull;
static double next01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* keys with counts[i] samples each, interleaved; compare every median */
static void run(size_t limit, const size_t *counts, uint32_t nkeys, int spill_expected,
		double (*gen)(uint32_t key, size_t i))
{
	struct perfdb_samples *s;
	struct perfdb_err err;
	assert_int_equal(perfdb_samples_new(&s, limit, NULL, &err), 0);
	double **per = calloc(nkeys, sizeof(*per));
	size_t *have = calloc(nkeys, sizeof(*have));
	size_t max = 0;
	for (uint32_t k = 0; k < nkeys; k++) {
		per[k] = malloc((counts[k] + 1) * sizeof(double));
		if (counts[k] > max)
			max = counts[k];
	}
	for (size_t i = 0; i < max; i++)
		for (uint32_t k = 0; k < nkeys; k++)
			if (i < counts[k]) {
				double v = gen(k, i);
				per[k][have[k]++] = v;
				assert_int_equal(perfdb_samples_add(s, k, v, &err), 0);
			}
	assert_int_equal(perfdb_samples_spilled(s), spill_expected);
	double *med = malloc(nkeys * sizeof(double));
	assert_int_equal(perfdb_samples_medians(s, nkeys, med, &err), 0);
	for (uint32_t k = 0; k < nkeys; k++) {
		if (!counts[k]) {
			assert_true(isnan(med[k]));
			continue;
		}
		double want = oracle(per[k], counts[k]);
		if (med[k] != want)
			fail_msg("key %u: median %.17g, want %.17g", k, med[k], want);
	}
	for (uint32_t k = 0; k < nkeys; k++)
		free(per[k]);
	free(per);
	free(have);
	free(med);
	perfdb_samples_free(s);
}

static double lognormalish(uint32_t key, size_t i)
{
	(void)i;
	/* three decimals, as profilers print durations */
	double v = (10.0 + key) * exp(0.3 * (next01() + next01() + next01() - 1.5));
	return round(v * 1000) / 1000;
}

static double constant(uint32_t key, size_t i)
{
	(void)i;
	return key == 1 ? 7.25 : (double)(i % 3);
}

static double clustered(uint32_t key, size_t i)
{
	/* a huge key whose samples are nearly all in one tiny range */
	(void)key;
	return i % 1000 == 0 ? 1e6 + (double)i : 5.0 + (double)(i % 7) * 1e-9;
}

static void test_in_memory(void **state)
{
	(void)state;
	size_t counts[] = { 1, 2, 3, 10, 0, 101, 1000 };
	run(1u << 20, counts, 7, 0, lognormalish);
}

static void test_spilled_batches(void **state)
{
	(void)state;
	/* limit 64: many batches, and keys 5 and 6 exceed the limit alone */
	size_t counts[] = { 1, 2, 3, 10, 0, 101, 1000, 64, 63 };
	run(64, counts, 9, 1, lognormalish);
}

static void test_huge_keys_duplicates(void **state)
{
	(void)state;
	size_t counts[] = { 500, 777, 1200 };
	run(50, counts, 3, 1, constant);
	size_t one[] = { 20001 };
	run(100, one, 1, 1, clustered);
	size_t even[] = { 20000 };
	run(100, even, 1, 1, clustered);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_memory),
		cmocka_unit_test(test_spilled_batches),
		cmocka_unit_test(test_huge_keys_duplicates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
