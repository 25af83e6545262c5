/*
 * External merge sort of fixed-size records (src/parse/recsort.h).
 *
 * Spill file: the sorted runs one after another, records packed, native
 * layout; unlinked at creation and read back only by this process.
 */
#include "parse/recsort.h"
#include "perfdb/fsio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_LIMIT ((size_t)4 << 20)

struct run {
	uint64_t off, n;     /* first record, records in the run */
	uint64_t done;       /* records consumed */
	unsigned char *buf;  /* read buffer */
	size_t bn, bi;       /* records in buf, next one */
};

struct perfdb_recsort {
	size_t recsize, cap;       /* cap: records that fit the buffer */
	int (*cmp)(const void *, const void *);
	unsigned char *buf;
	size_t n;                  /* records in buf */
	uint64_t total;
	char *dir;
	int fd;                    /* -1 until the first spill */
	uint64_t fileoff;          /* records on disk */
	struct run *runs;
	size_t nruns, capruns;
	size_t *heap, nheap;       /* run indices, min-heap by current record */
	size_t mi;                 /* in-memory cursor when nothing spilled */
	size_t per_run;            /* records per run buffer at merge time */
	unsigned char *slab;
	int sorted;
};

int perfdb_recsort_new(struct perfdb_recsort **out, size_t recsize,
		       int (*cmp)(const void *, const void *), size_t mem_limit,
		       const char *spill_dir, struct perfdb_err *err)
{
	struct perfdb_recsort *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	s->recsize = recsize;
	s->cmp = cmp;
	s->fd = -1;
	size_t lim = mem_limit ? mem_limit : DEFAULT_LIMIT;
	s->cap = lim / recsize > 16 ? lim / recsize : 16;
	s->dir = strdup(perfdb_spill_dir(spill_dir));
	if (!s->dir) {
		free(s);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

void perfdb_recsort_free(struct perfdb_recsort *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->runs);
	free(s->heap);
	free(s->slab);
	free(s->dir);
	free(s);
}

uint64_t perfdb_recsort_count(const struct perfdb_recsort *s)
{
	return s->total;
}

int perfdb_recsort_spilled(const struct perfdb_recsort *s)
{
	return s->fd >= 0;
}

static int write_all(int fd, const void *p, size_t len, off_t at)
{
	const unsigned char *b = p;
	while (len) {
		ssize_t w = pwrite(fd, b, len, at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		len -= (size_t)w;
		at += w;
	}
	return 0;
}

/* Sort the buffer and append it to the spill file as one run. */
static int spill(struct perfdb_recsort *s, struct perfdb_err *err)
{
	if (s->fd < 0) {
		int fd = perfdb_spill_file(s->dir, "sort", "sort", err);
		if (fd < 0)
			return fd;
		s->fd = fd;
	}
	if (s->nruns == s->capruns) {
		size_t cap = s->capruns ? s->capruns * 2 : 16;
		struct run *nr = realloc(s->runs, cap * sizeof(*nr));
		if (!nr)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		s->runs = nr;
		s->capruns = cap;
	}
	qsort(s->buf, s->n, s->recsize, s->cmp);
	if (write_all(s->fd, s->buf, s->n * s->recsize, (off_t)(s->fileoff * s->recsize)) < 0)
		return perfdb_err_errno(err, errno, "cannot write sort spill file in '%s'", s->dir);
	struct run *r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->off = s->fileoff;
	r->n = s->n;
	s->fileoff += s->n;
	s->n = 0;
	return 0;
}

int perfdb_recsort_add(struct perfdb_recsort *s, const void *rec, struct perfdb_err *err)
{
	if (!s->buf) {
		s->buf = malloc(s->cap * s->recsize);
		if (!s->buf)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	if (s->n == s->cap)
		PERFDB_TRY(spill(s, err));
	memcpy(s->buf + s->n * s->recsize, rec, s->recsize);
	s->n++;
	s->total++;
	return 0;
}

static int refill(struct perfdb_recsort *s, struct run *r, struct perfdb_err *err)
{
	uint64_t left = r->n - r->done;
	size_t want = left < s->per_run ? (size_t)left : s->per_run;
	size_t bytes = want * s->recsize;
	off_t at = (off_t)((r->off + r->done) * s->recsize);
	size_t got = 0;
	while (got < bytes) {
		ssize_t k = pread(s->fd, r->buf + got, bytes - got, at + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return perfdb_err_errno(err, k < 0 ? errno : EIO,
						"cannot read sort spill file in '%s'", s->dir);
		got += (size_t)k;
	}
	r->bn = want;
	r->bi = 0;
	return 0;
}

static const void *run_cur(const struct perfdb_recsort *s, size_t ri)
{
	const struct run *r = &s->runs[ri];
	return r->buf + r->bi * s->recsize;
}

static int heap_less(const struct perfdb_recsort *s, size_t a, size_t b)
{
	return s->cmp(run_cur(s, s->heap[a]), run_cur(s, s->heap[b])) < 0;
}

static void heap_down(struct perfdb_recsort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < s->nheap && heap_less(s, l, m))
			m = l;
		if (l + 1 < s->nheap && heap_less(s, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		size_t t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

int perfdb_recsort_sort(struct perfdb_recsort *s, struct perfdb_err *err)
{
	s->sorted = 1;
	if (s->fd < 0) {
		if (s->n)
			qsort(s->buf, s->n, s->recsize, s->cmp);
		return 0;
	}
	if (s->n)
		PERFDB_TRY(spill(s, err));
	/* the record buffer becomes the runs' read buffers */
	s->per_run = s->cap / s->nruns;
	if (s->per_run == 0)
		s->per_run = 1;
	free(s->buf);
	s->buf = NULL;
	s->slab = malloc(s->per_run * s->nruns * s->recsize);
	s->heap = malloc(s->nruns * sizeof(*s->heap));
	if (!s->slab || !s->heap)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nruns; i++) {
		s->runs[i].buf = s->slab + i * s->per_run * s->recsize;
		PERFDB_TRY(refill(s, &s->runs[i], err));
		s->heap[s->nheap++] = i;
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		heap_down(s, i);
	return 0;
}

int perfdb_recsort_next(struct perfdb_recsort *s, void *rec, struct perfdb_err *err)
{
	if (!s->sorted)
		PERFDB_TRY(perfdb_recsort_sort(s, err));
	if (s->fd < 0) {
		if (s->mi >= s->n)
			return 0;
		memcpy(rec, s->buf + s->mi++ * s->recsize, s->recsize);
		return 1;
	}
	if (!s->nheap)
		return 0;
	size_t ri = s->heap[0];
	struct run *r = &s->runs[ri];
	memcpy(rec, run_cur(s, ri), s->recsize);
	r->bi++;
	r->done++;
	if (r->done == r->n) {
		s->heap[0] = s->heap[--s->nheap];
	} else if (r->bi == r->bn) {
		PERFDB_TRY(refill(s, r, err));
	}
	if (s->nheap)
		heap_down(s, 0);
	return 1;
}
