/*
 * The compute tasks of an Ascend SQLite profile in time order
 * (ascend_db_tasks.c sorts them when TASK does not list them so).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ascend_db.h"

int adb_cmp_task(const void *a, const void *b)
{
	const struct adb_task *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

#define DIGIT_BITS 11

static unsigned bits_of(uint64_t v)
{
	unsigned b = 0;
	for (; v; v >>= 1)
		b++;
	return b;
}

/*
 * The tasks in adb_cmp_task's order, (startNs, rank), by an LSD radix sort of
 * one 64-bit key: the start's offset from the earliest (a missing start,
 * INT64_MIN, as 0, first) above the rank's bits.  A profile's starts span
 * seconds, so the key is 50-odd bits and five passes of 11; qsort's
 * comparator calls took 0.3 s of a million shuffled tasks
 * (docs/measuring.md "Ascend SQLite profiles").  Stable, so tasks that tie
 * keep TASK's order.  1 when it cannot (a key over 64 bits, no memory for
 * its second buffer): the caller sorts with qsort.
 */
int adb_sort_tasks(struct adb_task *t, size_t n, size_t nrank)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++)
		if (t[i].start != INT64_MIN) {
			lo = t[i].start < lo ? t[i].start : lo;
			hi = t[i].start > hi ? t[i].start : hi;
		}
	if (lo > hi)
		lo = hi = 0;
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	unsigned rbits = bits_of(nrank), total = bits_of(span + 1) + rbits;
	if (span >= UINT64_MAX / 2 || total > 64)
		return 1;
	unsigned passes = (total + DIGIT_BITS - 1) / DIGIT_BITS;
	struct adb_task *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	size_t(*count)[1 << DIGIT_BITS] = calloc(passes ? passes : 1, sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return 1;
	}
#define KEY(k) ((((k).start == INT64_MIN ? 0 : (uint64_t)(k).start - (uint64_t)lo + 1) << rbits) | (k).rank)
	for (size_t i = 0; i < n; i++) {
		uint64_t key = KEY(t[i]);
		for (unsigned d = 0; d < passes; d++)
			count[d][(key >> (d * DIGIT_BITS)) & ((1u << DIGIT_BITS) - 1)]++;
	}
	struct adb_task *src = t, *dst = tmp;
	for (unsigned d = 0; d < passes; d++) {
		size_t at = 0, *c = count[d];
		int one = 0;
		for (size_t b = 0; b < (1u << DIGIT_BITS); b++) {
			size_t k = c[b];
			one |= k == n;
			c[b] = at;
			at += k;
		}
		if (one)
			continue;   /* every key has this digit: the pass would change nothing */
		for (size_t i = 0; i < n; i++)
			dst[c[(KEY(src[i]) >> (d * DIGIT_BITS)) & ((1u << DIGIT_BITS) - 1)]++] = src[i];
		struct adb_task *sw = src;
		src = dst;
		dst = sw;
	}
#undef KEY
	if (src != t)
		memcpy(t, src, n * sizeof(*t));
	free(tmp);
	free(count);
	return 0;
}

