/*
 * Unit tests: the compute tasks' radix sort (src/parse/ascend_db_sort.c).
 * The expected order is qsort's with adb_cmp_task and, for ties, the
 * tasks' places before the sort (the stable order): a second method, not
 * the radix sort's own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ascend_db.h"

struct placed {
	struct adb_task t;
	size_t at;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;
	int c = adb_cmp_task(&x->t, &y->t);
	return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* t sorted by adb_sort_tasks must equal the stable reference order */
static void check(struct adb_task *t, size_t n, size_t nrank)
{
	struct placed *ref = malloc((n ? n : 1) * sizeof(*ref));
	assert_non_null(ref);
	for (size_t i = 0; i < n; i++) {
		ref[i].t = t[i];
		ref[i].t.end = (int64_t)i;   /* the place before the sort travels with the task */
		t[i].end = (int64_t)i;
		ref[i].at = i;
	}
	qsort(ref, n, sizeof(*ref), cmp_placed);
	assert_int_equal(adb_sort_tasks(t, n, nrank), 0);
	for (size_t i = 0; i < n; i++)
		if (memcmp(&t[i], &ref[i].t, sizeof(t[i])) != 0)
			fail_msg("place %zu: start %lld rank %u from %lld, want start %lld rank %u from %lld", i,
				 (long long)t[i].start, t[i].rank, (long long)t[i].end, (long long)ref[i].t.start,
				 ref[i].t.rank, (long long)ref[i].t.end);
	free(ref);
}

/* A shuffled profile: starts over 2 s of 2025, a few missing, some shared,
 * and tasks that share both start and rank (one TASK row twice). */
static void test_shuffled_profile(void **state)
{
	(void)state;
	enum { N = 60000 };
	struct adb_task *t = malloc(N * sizeof(*t));
	assert_non_null(t);
	uint64_t s = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < N; i++) {
		uint64_t r = next(&s);
		t[i].start = r % 97 == 0 ? INT64_MIN : INT64_C(1736413971558972912) + (int64_t)(r % 2000000000u);
		t[i].rank = (uint32_t)(next(&s) % 50000);
		t[i].combo = (uint32_t)i;
		if (i && r % 13 == 0) {
			t[i].start = t[i - 1].start;   /* a tie on start, and on rank now and then */
			if (r % 3 == 0)
				t[i].rank = t[i - 1].rank;
		}
	}
	check(t, N, 50000);
	free(t);
}

static void test_one_start(void **state)
{
	(void)state;
	struct adb_task t[300];
	for (size_t i = 0; i < 300; i++)
		t[i] = (struct adb_task){ .start = 42, .rank = (uint32_t)((i * 7919) % 300), .combo = 1 };
	check(t, 300, 300);   /* every pass but the rank's is skipped */
	for (size_t i = 0; i < 300; i++)
		assert_int_equal(t[i].rank, i);
}

static void test_small(void **state)
{
	(void)state;
	struct adb_task t[2] = { { .start = 5, .rank = 1 }, { .start = INT64_MIN, .rank = 0 } };
	assert_int_equal(adb_sort_tasks(t, 0, 0), 0);
	check(t, 1, 2);
	check(t, 2, 2);
	assert_int_equal(t[0].start, INT64_MIN);
	struct adb_task all_missing[3] = { { INT64_MIN, 0, 0, 2 }, { INT64_MIN, 0, 0, 0 }, { INT64_MIN, 0, 0, 1 } };
	check(all_missing, 3, 3);
}

/* Starts 2^60 ns apart and a million ranks need 81 bits: qsort's to do, t untouched. */
static void test_too_wide(void **state)
{
	(void)state;
	struct adb_task t[2] = { { .start = INT64_C(1) << 60, .rank = 0 }, { .start = 0, .rank = 1 } },
			keep[2];
	memcpy(keep, t, sizeof(t));
	assert_int_equal(adb_sort_tasks(t, 2, 1u << 20), 1);
	assert_memory_equal(t, keep, sizeof(t));
	struct adb_task extreme[2] = { { .start = INT64_MAX, .rank = 0 }, { .start = INT64_MIN + 1, .rank = 0 } };
	assert_int_equal(adb_sort_tasks(extreme, 2, 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shuffled_profile),
		cmocka_unit_test(test_one_start),
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_too_wide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
