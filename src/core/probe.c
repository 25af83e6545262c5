/*
 * Memory-bandwidth probe (probe.h): why it exists and how rows use it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdb/stats.h"
#include "perfdb/hugebuf.h"
#include "perfdb/probe.h"
#include "perfdb/sched.h"

int perfdb_probe_init(struct perfdb_probe *p, size_t bytes, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	p->n = bytes / sizeof(uint64_t) / 32 * 32;   /* whole steps of the read loop */
	if (p->n == 0)
		return 0;   /* no buffer: perfdb_probe_gbs reads 0 (or its script) */
	p->buf = perfdb_huge_alloc(p->n * sizeof(uint64_t), NULL);
	if (!p->buf)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory (%zu MiB for the bandwidth probe)",
				      bytes >> 20);
	for (size_t i = 0; i < p->n; i++)
		p->buf[i] = i;
	return 0;
}

void perfdb_probe_release(struct perfdb_probe *p)
{
	free(p->buf);
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile uint64_t probe_sink;

/* later - earlier of two others_run_ns counts, 0 when a thread that left took its time with it */
static uint64_t ran(uint64_t b, uint64_t a)
{
	return b > a ? b - a : 0;
}

/*
 * Wait until the process's other threads are at rest: until they ran
 * less than PERFDB_PROBE_OTHERS of a 1 ms window, at most
 * PERFDB_PROBE_SETTLE_S.  Without it a reading after an op at --threads
 * as many as the CPUs read the op's own workers spinning, not the
 * machine: 4 of 69 rows of a quiet run read 18-28 GB/s against 35.
 * Leaves in *ns their CPU time at the end of the wait, for the reading
 * to start from; returns how many there are, or -1 when they cannot be
 * read.
 */
static long settle(uint64_t *ns)
{
	size_t n;
	if (perfdb_sched_others_run_ns(ns, &n) < 0)
		return -1;
	double t0 = now_s();
	while (n > 0) {
		uint64_t a = *ns;
		double w0 = now_s();
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		if (perfdb_sched_others_run_ns(ns, &n) < 0)
			return -1;
		double w = now_s() - w0;
		if ((double)ran(*ns, a) < PERFDB_PROBE_OTHERS * w * 1e9 || now_s() - t0 > PERFDB_PROBE_SETTLE_S)
			break;
	}
	return (long)n;
}

double perfdb_probe_gbs(struct perfdb_probe *p)
{
	if (p->nscript)
		return p->script[p->pos < p->nscript ? p->pos++ : p->nscript - 1];
	if (!p->buf)
		return 0;
	uint64_t o0 = 0, o1 = 0;
	size_t n;
	int others = settle(&o0) > 0;
	double w0 = now_s();
	double fastest = 0;
	for (int pass = 0; pass < 3; pass++) {
		/* one word per 64-byte line brings in every line; four sums keep four misses in flight */
		const uint64_t *b = p->buf;
		uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		double t0 = now_s();
		for (size_t i = 0; i < p->n; i += 32) {
			s0 += b[i];
			s1 += b[i + 8];
			s2 += b[i + 16];
			s3 += b[i + 24];
		}
		double t = now_s() - t0;
		probe_sink += s0 + s1 + s2 + s3;
		double gbs = t > 0 ? (double)(p->n * sizeof(uint64_t)) / t / 1e9 : 0;
		fastest = gbs > fastest ? gbs : fastest;
	}
	/* read beside the process's own busy threads: of the run, not of the machine */
	if (others && perfdb_sched_others_run_ns(&o1, &n) == 0 &&
	    (double)ran(o1, o0) > PERFDB_PROBE_OTHERS * (now_s() - w0) * 1e9)
		return 0;
	return fastest;
}

double perfdb_probe_lower(double a, double b)
{
	return a > 0 && (b <= 0 || a < b) ? a : b;
}

int perfdb_probe_note(struct perfdb_probe *p, double gbs)
{
	if (!(gbs > 0))
		return 0;
	if (p->nrows == p->caprows) {
		size_t nc = p->caprows ? 2 * p->caprows : 64;
		double *v = realloc(p->rows, nc * sizeof(double));
		if (!v)
			return -PERFDB_ENOMEM;
		p->rows = v;
		p->caprows = nc;
	}
	p->rows[p->nrows++] = gbs;
	return 0;
}

double perfdb_probe_median(double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > 0)
			v[k++] = v[i];
	struct perfdb_stats st;
	perfdb_stats_compute(v, k, &st);   /* k == 0: all zeros */
	return st.median;
}

double perfdb_probe_reference(const struct perfdb_probe *p)
{
	if (p->nrows == 0)
		return 0;
	double *v = malloc(p->nrows * sizeof(double));
	if (!v)
		return 0;   /* no reference: nothing is judged contended, the run goes on */
	memcpy(v, p->rows, p->nrows * sizeof(double));
	double m = perfdb_probe_median(v, p->nrows);
	free(v);
	return m;
}

int perfdb_probe_contended(double gbs, double ref)
{
	return gbs > 0 && ref > 0 && gbs < (1.0 - PERFDB_PROBE_TOLERANCE) * ref;
}
