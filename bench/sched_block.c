/*
 * bench/sched_block: how the scheduler's accounts (include/perfdb/sched.h)
 * see blocks of timed work on this machine as it is now.  Each block is a
 * fixed amount of arithmetic on every thread of an OpenMP team, with a
 * barrier every iteration (as a oneDNN or an own kernel's parallel loop
 * does), bracketed by two readings and judged by perfdb_sched_judge.
 * Prints, per block size: the blocks judged contaminated; the blocks the
 * judgement missed (kept, yet 1.5x slower than the median block) and its
 * false alarms (judged, yet within 1.15x of the median); the run-queue
 * wait as a share of wall time and the block's wall time (median, max).
 *   sched_block [BLOCKS [THREADS]]      (defaults 200, all usable CPUs)
 * Run it quiet and beside a busy loop per core (docs/measuring.md
 * "The scheduler's accounts" has both runs).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "perfdb/sched.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* iters barrier-separated steps of work on every thread */
static double block(long iters, long work)
{
	double sink = 0;
#pragma omp parallel reduction(+ : sink)
	{
		double s = 1.0;
		for (long i = 0; i < iters; i++) {
			for (long k = 0; k < work; k++)
				s = s * 1.0000001 + 1e-9;
#pragma omp barrier
		}
		sink += s;
	}
	return sink;
}

int main(int argc, char **argv)
{
	int nblocks = argc > 1 ? atoi(argv[1]) : 200;
	if (argc > 2)
		omp_set_num_threads(atoi(argv[2]));
	if (nblocks < 2)
		nblocks = 2;
	double *wall = malloc(sizeof(double) * (size_t)nblocks);
	int *judged = malloc(sizeof(int) * (size_t)nblocks);
	double *sorted = malloc(sizeof(double) * (size_t)nblocks);
	double *share = malloc(sizeof(double) * (size_t)nblocks);
	if (!wall || !share || !judged || !sorted)
		return 1;
	static const long iters[] = { 10, 100, 1000 };
	volatile double sink = block(100, 2000);   /* start the team */
	printf("%-10s %6s %7s %6s %6s %12s %12s %11s %11s\n", "block", "blocks", "judged", "missed",
	       "false", "wait median", "wait max", "wall median", "wall max");
	for (size_t b = 0; b < sizeof(iters) / sizeof(iters[0]); b++) {
		int bad = 0;
		for (int i = 0; i < nblocks; i++) {
			struct perfdb_sched_reading r0, r1;
			struct perfdb_err err;
			if (perfdb_sched_read(&r0, &err) < 0) {
				fprintf(stderr, "sched_block: %s\n", err.msg);
				return 1;
			}
			double t0 = now();
			sink += block(iters[b], 2000);
			double t1 = now();
			perfdb_sched_read(&r1, &err);
			struct perfdb_sched_block j;
			perfdb_sched_judge(&r0, &r1, t1 - t0, -1, &j);
			bad += j.contaminated;
			judged[i] = j.contaminated;
			wall[i] = t1 - t0;
			share[i] = (double)j.wait_ns / ((t1 - t0) * 1e9);
		}
		for (int i = 0; i < nblocks; i++)
			sorted[i] = wall[i];
		qsort(sorted, (size_t)nblocks, sizeof(double), cmp);
		/* missed: a block 1.5x slower than the median that was kept;
		 * false: a block judged contaminated that ran within 1.15x of it */
		int missed = 0, falsealarm = 0;
		for (int i = 0; i < nblocks; i++) {
			missed += !judged[i] && wall[i] > 1.5 * sorted[nblocks / 2];
			falsealarm += judged[i] && wall[i] <= 1.15 * sorted[nblocks / 2];
		}
		qsort(share, (size_t)nblocks, sizeof(double), cmp);
		char name[32];
		snprintf(name, sizeof(name), "%ld steps", iters[b]);
		printf("%-10s %6d %7d %6d %6d %11.2f%% %11.1f%% %9.3fms %9.3fms\n", name, nblocks, bad,
		       missed, falsealarm, 100 * share[nblocks / 2], 100 * share[nblocks - 1],
		       1e3 * sorted[nblocks / 2], 1e3 * sorted[nblocks - 1]);
	}
	(void)sink;
	free(wall);
	free(share);
	free(judged);
	free(sorted);
	return 0;
}
