/*
 * The PRNG of `perfdb grid --rows` (docs/spec/grid.md §4, Decision 2): the
 * same rows for the same seed on every platform, not CPython's random.
 *
 *   seeding   the 64-bit seed goes through SplitMix64 four times to fill the
 *             256-bit state (Vigna's recommended seeding; never all zero)
 *   generator xoshiro256** 1.0 (Blackman and Vigna, 2018)
 *   bounded   uniform in [0, n) by Lemire's multiply-and-reject method, exact
 *             (no modulo bias)
 *   sample    k of n by a partial Fisher-Yates shuffle of the indices
 *             0..n-1: for i = 0..k-1, swap a[i] with a[i + below(n - i)];
 *             the first k entries are the chosen ones, and the rows are
 *             then taken in generation order
 * One generator serves every table in sorted path order; a table draws
 * only when it has more candidates than --rows.
 */
#include "grid_internal.h"

#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void grid_rng_seed(struct grid_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t grid_rng_next(struct grid_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t grid_rng_below(struct grid_rng *r, uint64_t n)
{
	u128 m = (u128)grid_rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = -n % n;
		while (low < threshold) {
			m = (u128)grid_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

int grid_rng_sample(struct grid_rng *r, size_t n, size_t k, bool *sel)
{
	memset(sel, 0, n * sizeof(*sel));
	if (k >= n) {
		for (size_t i = 0; i < n; i++)
			sel[i] = true;
		return 0;
	}
	size_t *a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < n; i++)
		a[i] = i;
	for (size_t i = 0; i < k; i++) {
		size_t j = i + (size_t)grid_rng_below(r, n - i);
		size_t tmp = a[i];
		a[i] = a[j];
		a[j] = tmp;
		sel[a[i]] = true;
	}
	free(a);
	return 0;
}
