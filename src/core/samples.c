/*
 * Sample store with exact medians in bounded memory (include/perfdb/samples.h).
 *
 * Spill file format: a sequence of records {uint32 key; double value} packed
 * as 12 bytes, native endianness; the file is unlinked at creation and only
 * ever read back by this process.
 */
#include "perfdb/samples.h"
#include "perfdb/fsio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC 12
#define IOBUF (1u << 20)
#define BINS 65536

struct perfdb_samples {
	size_t limit;
	uint32_t *keys;
	double *vals;
	size_t n;               /* in memory */
	uint64_t total;
	int fd;                 /* spill file, -1 until the first spill */
	char *dir;
	uint32_t maxkey;
};

int perfdb_samples_new(struct perfdb_samples **out, size_t limit,
		       const char *spill_dir, struct perfdb_err *err)
{
	struct perfdb_samples *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	s->limit = limit ? limit : PERFDB_SAMPLES_DEFAULT_LIMIT;
	s->fd = -1;
	s->dir = strdup(perfdb_spill_dir(spill_dir));
	if (!s->dir) {
		free(s);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

void perfdb_samples_free(struct perfdb_samples *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->keys);
	free(s->vals);
	free(s->dir);
	free(s);
}

uint64_t perfdb_samples_count(const struct perfdb_samples *s)
{
	return s->total;
}

int perfdb_samples_spilled(const struct perfdb_samples *s)
{
	return s->fd >= 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int spill(struct perfdb_samples *s, struct perfdb_err *err)
{
	if (s->fd < 0) {
		int fd = perfdb_spill_file(s->dir, "samples", "sample", err);
		if (fd < 0)
			return fd;
		s->fd = fd;
	}
	char *buf = malloc(IOBUF);
	if (!buf)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t w = 0;
	int rc = 0;
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		memcpy(buf + w, &s->keys[i], 4);
		memcpy(buf + w + 4, &s->vals[i], 8);
		w += REC;
		if (w + REC > IOBUF || i + 1 == s->n) {
			if (write_all(s->fd, buf, w) < 0)
				rc = perfdb_err_errno(err, errno, "cannot write sample spill file in '%s'", s->dir);
			w = 0;
		}
	}
	free(buf);
	s->n = 0;
	return rc;
}

int perfdb_samples_add(struct perfdb_samples *s, uint32_t key, double v,
		       struct perfdb_err *err)
{
	if (!s->keys) {
		s->keys = malloc(s->limit * sizeof(*s->keys));
		s->vals = malloc(s->limit * sizeof(*s->vals));
		if (!s->keys || !s->vals)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	if (s->n == s->limit)
		PERFDB_TRY(spill(s, err));
	s->keys[s->n] = key;
	s->vals[s->n] = v;
	s->n++;
	s->total++;
	if (key > s->maxkey)
		s->maxkey = key;
	return 0;
}

/* ---- selection ------------------------------------------------------ */

static void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* k-th smallest (0-based) of x[0..n), reordering x (Hoare quickselect,
 * median-of-three pivots; deterministic). */
static double select_k(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] < x[lo])
			swap(&x[mid], &x[lo]);
		if (x[hi] < x[lo])
			swap(&x[hi], &x[lo]);
		if (x[hi] < x[mid])
			swap(&x[hi], &x[mid]);
		double p = x[mid];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (x[i] < p)
				i++;
			while (x[j] > p)
				j--;
			if (i <= j) {
				swap(&x[i], &x[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return x[k];
	}
	return x[k];
}

static double median_of(double *x, size_t n)
{
	double a = select_k(x, n, (n - 1) / 2);
	if (n % 2)
		return a;
	/* the upper middle is the minimum of the upper part */
	double b = x[n / 2];
	for (size_t i = n / 2 + 1; i < n; i++)
		if (x[i] < b)
			b = x[i];
	return (a + b) / 2;
}

/* ---- reading the spill file back ------------------------------------ */

struct reader {
	int fd;
	char *buf;
	size_t len, pos;
	off_t off, end;         /* the region read: [off, end) in bytes */
	off_t begin, stop;      /* region set by reader_region, for restarts */
};

/* Read the records of [begin, stop) bytes of fd (stop < 0: to the end). */
static void reader_region(struct reader *r, off_t begin, off_t stop)
{
	r->begin = begin;
	r->stop = stop;
}

static int reader_start(struct reader *r, int fd, struct perfdb_err *err)
{
	r->fd = fd;
	r->len = r->pos = 0;
	r->off = r->begin;
	r->end = r->stop;
	if (!r->buf && !(r->buf = malloc(IOBUF - IOBUF % REC)))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}

/* Next record: 1, 0 at end, <0 on error. */
static int reader_next(struct reader *r, uint32_t *key, double *v, struct perfdb_err *err)
{
	if (r->pos + REC > r->len) {
		ssize_t n;
		size_t want = IOBUF - IOBUF % REC;
		if (r->end >= 0 && (off_t)want > r->end - r->off)
			want = (size_t)(r->end - r->off);
		if (!want)
			return 0;
		do
			n = pread(r->fd, r->buf, want, r->off);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return perfdb_err_errno(err, errno, "cannot read sample spill file");
		if (n < REC)
			return 0;
		r->off += n;
		r->len = (size_t)n;
		r->pos = 0;
	}
	memcpy(key, r->buf + r->pos, 4);
	memcpy(v, r->buf + r->pos + 4, 8);
	r->pos += REC;
	return 1;
}

/*
 * The k-th smallest sample of one key too large for memory: histograms
 * narrow the candidates level by level until they fit, then select.  A
 * sample is a candidate when, at every level, it falls in that level's
 * chosen bin by the very same formula the histogram used, so rounding can
 * never put a sample in one bin when counting and another when collecting.
 */
#define MAX_LEVELS 128

struct level {
	double mn, mx, width;
	size_t bin;
};

static size_t bin_of(const struct level *l, double v)
{
	size_t b = l->width > 0 ? (size_t)((v - l->mn) / l->width) : 0;
	return b < BINS ? b : BINS - 1;
}

static int candidate(const struct level *lv, size_t nl, double v)
{
	for (size_t i = 0; i < nl; i++)
		if (v < lv[i].mn || v > lv[i].mx || bin_of(&lv[i], v) != lv[i].bin)
			return 0;
	return 1;
}

static int huge_select(struct perfdb_samples *s, struct reader *rd, uint32_t key,
		       uint64_t k, double *out, struct perfdb_err *err)
{
	struct level lv[MAX_LEVELS];
	size_t nl = 0;
	uint64_t below = 0;        /* samples of key ranked before the candidates */
	uint64_t *hist = malloc(BINS * sizeof(*hist));
	double *vals = NULL;
	int rc = 0;
	uint32_t kk;
	double v;
	if (!hist)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (;;) {
		/* count and bounds of the candidates */
		uint64_t inside = 0;
		double mn = INFINITY, mx = -INFINITY;
		if ((rc = reader_start(rd, s->fd, err)) < 0)
			break;
		while ((rc = reader_next(rd, &kk, &v, err)) > 0) {
			if (kk == key && candidate(lv, nl, v)) {
				inside++;
				if (v < mn) mn = v;
				if (v > mx) mx = v;
			}
		}
		if (rc < 0)
			break;
		if (mn == mx || nl == MAX_LEVELS) {
			*out = mn;
			break;
		}
		if (inside <= s->limit) {
			vals = malloc(inside * sizeof(*vals));
			if (!vals) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			size_t n = 0;
			if ((rc = reader_start(rd, s->fd, err)) < 0)
				break;
			while ((rc = reader_next(rd, &kk, &v, err)) > 0)
				if (kk == key && candidate(lv, nl, v))
					vals[n++] = v;
			if (rc < 0)
				break;
			*out = select_k(vals, n, (size_t)(k - below));
			break;
		}
		/* histogram of the candidates; keep the bin holding rank k */
		struct level *l = &lv[nl];
		l->mn = mn;
		l->mx = mx;
		l->width = (mx - mn) / BINS;
		memset(hist, 0, BINS * sizeof(*hist));
		if ((rc = reader_start(rd, s->fd, err)) < 0)
			break;
		while ((rc = reader_next(rd, &kk, &v, err)) > 0)
			if (kk == key && candidate(lv, nl, v))
				hist[bin_of(l, v)]++;
		if (rc < 0)
			break;
		size_t bsel = 0;
		while (bsel < BINS - 1 && below + hist[bsel] <= k)
			below += hist[bsel++];
		l->bin = bsel;
		nl++;
	}
	free(vals);
	free(hist);
	return rc < 0 ? rc : 0;
}

int perfdb_samples_foreach(const struct perfdb_samples *s,
			   int (*fn)(void *ctx, uint32_t key, double v, struct perfdb_err *err),
			   void *ctx, struct perfdb_err *err)
{
	if (s->fd >= 0) {
		struct reader rd = { 0 };
		uint32_t k;
		double v;
		reader_region(&rd, 0, -1);
		int rc = reader_start(&rd, s->fd, err);
		while (rc == 0 && (rc = reader_next(&rd, &k, &v, err)) > 0)
			rc = fn(ctx, k, v, err);
		free(rd.buf);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < s->n; i++)
		PERFDB_TRY(fn(ctx, s->keys[i], s->vals[i], err));
	return 0;
}

/*
 * Copy the spill file into a new one with the records of batch b at record
 * offsets [boff[b], boff[b+1]), through a small write buffer per batch, then
 * make the new file the spill file.
 */
static int partition(struct perfdb_samples *s, uint32_t nkeys, const uint32_t *batch_of,
		     uint32_t nb, const uint64_t *boff, struct perfdb_err *err)
{
	size_t bufrec = ((size_t)1 << 20) / nb / REC;
	if (bufrec < 16)
		bufrec = 16;
	if (bufrec > 512)
		bufrec = 512;
	char *bufs = malloc((size_t)nb * bufrec * REC);
	size_t *used = calloc(nb, sizeof(*used));
	uint64_t *written = calloc(nb, sizeof(*written));
	struct reader rd = { 0 };
	int rc = 0, fd = -1;
	if (!bufs || !used || !written) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	fd = perfdb_spill_file(s->dir, "samples", "sample", err);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	reader_region(&rd, 0, -1);
	if ((rc = reader_start(&rd, s->fd, err)) < 0)
		goto out;
	uint32_t k;
	double v;
	while ((rc = reader_next(&rd, &k, &v, err)) > 0) {
		if (k >= nkeys)
			continue;
		uint32_t b = batch_of[k];
		char *p = bufs + ((size_t)b * bufrec + used[b]) * REC;
		memcpy(p, &k, 4);
		memcpy(p + 4, &v, 8);
		if (++used[b] == bufrec) {
			if (pwrite(fd, bufs + (size_t)b * bufrec * REC, bufrec * REC,
				   (off_t)((boff[b] + written[b]) * REC)) != (ssize_t)(bufrec * REC)) {
				rc = perfdb_err_errno(err, errno, "cannot write sample spill file in '%s'", s->dir);
				break;
			}
			written[b] += bufrec;
			used[b] = 0;
		}
	}
	for (uint32_t b = 0; rc == 0 && b < nb; b++) {
		if (used[b] && pwrite(fd, bufs + (size_t)b * bufrec * REC, used[b] * REC,
				      (off_t)((boff[b] + written[b]) * REC)) != (ssize_t)(used[b] * REC))
			rc = perfdb_err_errno(err, errno, "cannot write sample spill file in '%s'", s->dir);
	}
	if (rc == 0) {
		close(s->fd);
		s->fd = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(rd.buf);
	free(bufs);
	free(used);
	free(written);
	return rc < 0 ? rc : 0;
}

int perfdb_samples_medians(struct perfdb_samples *s, uint32_t nkeys,
			   double *medians, struct perfdb_err *err)
{
	uint64_t *count = calloc(nkeys ? nkeys : 1, sizeof(*count));
	if (!count)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (uint32_t k = 0; k < nkeys; k++)
		medians[k] = NAN;
	int rc = 0;
	double *grouped = NULL;
	uint64_t *start = NULL, *boff = NULL, btotal_prev = 0;
	uint32_t *batch_of = NULL, *bfirst = NULL;
	struct reader rd = { 0 };

	if (s->fd < 0) {
		/* everything is in memory: counting sort by key, then select */
		for (size_t i = 0; i < s->n; i++)
			if (s->keys[i] < nkeys)
				count[s->keys[i]]++;
		start = malloc(((size_t)nkeys + 1) * sizeof(*start));
		grouped = malloc((s->n ? s->n : 1) * sizeof(*grouped));
		if (!start || !grouped) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto out;
		}
		start[0] = 0;
		for (uint32_t k = 0; k < nkeys; k++)
			start[k + 1] = start[k] + count[k];
		for (uint32_t k = 0; k < nkeys; k++)
			count[k] = start[k];
		for (size_t i = 0; i < s->n; i++)
			if (s->keys[i] < nkeys)
				grouped[count[s->keys[i]]++] = s->vals[i];
		for (uint32_t k = 0; k < nkeys; k++)
			if (start[k + 1] > start[k])
				medians[k] = median_of(grouped + start[k], (size_t)(start[k + 1] - start[k]));
		goto out;
	}

	/* spilled: flush the rest, count per key, then batches of keys */
	if ((rc = spill(s, err)) < 0)
		goto out;
	free(s->keys);
	free(s->vals);
	s->keys = NULL;
	s->vals = NULL;
	uint32_t kk;
	double v;
	reader_region(&rd, 0, -1);
	if ((rc = reader_start(&rd, s->fd, err)) < 0)
		goto out;
	while ((rc = reader_next(&rd, &kk, &v, err)) > 0)
		if (kk < nkeys)
			count[kk]++;
	if (rc < 0)
		goto out;

	/*
	 * Batches: runs of keys whose samples fit the limit together, and each
	 * key above the limit alone.  One pass copies the spill file into a
	 * second file grouped by batch, so every batch then reads only its own
	 * region: the I/O stays two passes however many batches there are.
	 */
	batch_of = malloc((nkeys ? nkeys : 1) * sizeof(*batch_of));
	bfirst = malloc(((size_t)nkeys + 1) * sizeof(*bfirst));
	boff = malloc(((size_t)nkeys + 2) * sizeof(*boff));
	if (!batch_of || !bfirst || !boff) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	uint32_t nb = 0;
	for (uint32_t k = 0; k < nkeys;) {
		uint32_t last = k + 1;
		uint64_t total = count[k];
		if (count[k] <= s->limit)
			while (last < nkeys && count[last] <= s->limit && total + count[last] <= s->limit)
				total += count[last++];
		bfirst[nb] = k;
		boff[nb] = nb ? boff[nb - 1] + btotal_prev : 0;
		btotal_prev = total;
		for (uint32_t j = k; j < last; j++)
			batch_of[j] = nb;
		nb++;
		k = last;
	}
	bfirst[nb] = nkeys;
	boff[nb] = nb ? boff[nb - 1] + btotal_prev : 0;
	if (nb > 1 && (rc = partition(s, nkeys, batch_of, nb, boff, err)) < 0)
		goto out;

	start = malloc(((size_t)nkeys + 1) * sizeof(*start));
	grouped = malloc(s->limit * sizeof(*grouped));
	if (!start || !grouped) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t first = bfirst[b], last = bfirst[b + 1];
		if (nb > 1)
			reader_region(&rd, (off_t)(boff[b] * REC), (off_t)(boff[b + 1] * REC));
		if (count[first] > s->limit) {
			uint64_t n = count[first];
			double x, y;
			if ((rc = huge_select(s, &rd, first, (n - 1) / 2, &x, err)) < 0)
				goto out;
			y = x;
			if (n % 2 == 0 && (rc = huge_select(s, &rd, first, n / 2, &y, err)) < 0)
				goto out;
			medians[first] = n % 2 ? x : (x + y) / 2;
			continue;
		}
		start[first] = 0;
		for (uint32_t k = first; k < last; k++)
			start[k + 1] = start[k] + count[k];
		uint64_t *fill = calloc(last - first, sizeof(*fill));
		if (!fill) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = reader_start(&rd, s->fd, err)) < 0) {
			free(fill);
			goto out;
		}
		while ((rc = reader_next(&rd, &kk, &v, err)) > 0)
			if (kk >= first && kk < last)
				grouped[start[kk] + fill[kk - first]++] = v;
		free(fill);
		if (rc < 0)
			goto out;
		for (uint32_t k = first; k < last; k++)
			if (count[k])
				medians[k] = median_of(grouped + start[k], (size_t)count[k]);
	}
	rc = 0;
out:
	free(rd.buf);
	free(batch_of);
	free(bfirst);
	free(boff);
	free(grouped);
	free(start);
	free(count);
	return rc < 0 ? rc : 0;
}
