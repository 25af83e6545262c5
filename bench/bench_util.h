/*
 * Helpers shared by the bench programs (microbench_ref, microbench_attention,
 * microbench_moe): clocks, a sort order, and a STREAM triad that can be
 * interleaved with the operator it is compared with.
 *
 * Why interleaved: these machines share their memory bandwidth with other
 * tenants of the host.  A triad measured once at the start of a run was
 * seen anywhere between 24 and 38 GB/s (one thread) within minutes, so a
 * ratio against it said more about the neighbours than about the kernel.
 * bench_triad_once() between the samples of an operator gives both the
 * same conditions; each bench then applies one statistic to both sides.
 */
#ifndef PERFDB_BENCH_UTIL_H
#define PERFDB_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process (every thread). */
static inline double bench_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* a = b + s*c over fp32 arrays of n elements, on `threads` OpenMP threads. */
struct bench_triad {
	float *a, *b, *c;
	size_t n;
	int threads;
};

static inline int bench_triad_init(struct bench_triad *t, size_t n, int threads)
{
	t->n = n;
	t->threads = threads > 0 ? threads : 1;
	t->a = malloc(n * 4);
	t->b = malloc(n * 4);
	t->c = malloc(n * 4);
	if (!t->a || !t->b || !t->c)
		return -1;
	/* first touch by the threads that use the pages, as STREAM does */
#pragma omp parallel for num_threads(t->threads) schedule(static)
	for (size_t i = 0; i < n; i++) {
		t->a[i] = 0;
		t->b[i] = 1;
		t->c[i] = 2;
	}
	return 0;
}

/* Seconds of one triad pass. */
static inline double bench_triad_once(struct bench_triad *t)
{
	float *a = t->a;
	const float *b = t->b, *c = t->c;
	size_t n = t->n;
	double t0 = bench_now();
#pragma omp parallel for num_threads(t->threads) schedule(static)
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + 3.0f * c[i];
	double s = bench_now() - t0;
	volatile float sink = a[n / 2];
	(void)sink;
	return s;
}

/* GB/s of a pass that took sec seconds (STREAM's count: 3 arrays). */
static inline double bench_triad_gbs(const struct bench_triad *t, double sec)
{
	return sec > 0 ? 3.0 * 4.0 * (double)t->n / sec / 1e9 : 0;
}

/* Best of reps passes, in GB/s. */
static inline double bench_triad_best(struct bench_triad *t, int reps)
{
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double s = bench_triad_once(t);
		best = s < best ? s : best;
	}
	return bench_triad_gbs(t, best);
}

static inline void bench_triad_free(struct bench_triad *t)
{
	free(t->a);
	free(t->b);
	free(t->c);
	t->a = t->b = t->c = NULL;
}

#endif
