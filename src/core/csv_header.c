/*
 * Duplicate column names in a CSV header, found in O(n log n): a header of
 * 200,000 columns is checked in milliseconds, not the seconds of comparing
 * every pair (docs/reliability.md "Bounded work").
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/csv.h"

struct key {
	const struct perfdb_csv_field *f;
	size_t i;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->f->len != y->f->len)
		return x->f->len < y->f->len ? -1 : 1;
	int c = memcmp(x->f->p, y->f->p, x->f->len);
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

size_t perfdb_csv_first_duplicate(const struct perfdb_csv_field *f, size_t n)
{
	struct key *k = malloc((n ? n : 1) * sizeof(*k));
	size_t best = n, m = 0;
	if (!k) {   /* no memory for the index: the quadratic check, still right */
		for (size_t i = 0; i < n && best == n; i++)
			for (size_t j = 0; j < i; j++)
				if (f[i].len && f[i].len == f[j].len &&
				    memcmp(f[i].p, f[j].p, f[i].len) == 0) {
					best = i;
					break;
				}
		return best;
	}
	for (size_t i = 0; i < n; i++)
		if (f[i].len)
			k[m++] = (struct key){ &f[i], i };
	qsort(k, m, sizeof(*k), cmp_key);
	/* in each run of equal names the second is the first repeat */
	for (size_t i = 1; i < m; i++)
		if (k[i].f->len == k[i - 1].f->len &&
		    memcmp(k[i].f->p, k[i - 1].f->p, k[i].f->len) == 0 &&
		    (i < 2 || k[i - 1].f->len != k[i - 2].f->len ||
		     memcmp(k[i - 1].f->p, k[i - 2].f->p, k[i].f->len) != 0) &&
		    k[i].i < best)
			best = k[i].i;
	free(k);
	return best;
}
