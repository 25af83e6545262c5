/*
 * core_latency: the one-way latency of a cache line passed between the two
 * CPUs that `mpirun -np 2` binds its ranks to, in ns.  bench/comm.sh runs it
 * before every program run and after the last of a round, because on the
 * 2-vCPU VMs this project is measured on, that latency is not a property of
 * the machine but of the moment: the host places the two vCPUs on cores
 * that share an L3 (about 50 ns) or on cores that do not (about 200 ns),
 * and moves them about once a minute.  A 2-rank collective follows: 4.9 against
 * 10 us at 64 KiB, 74 against 110 us at 1 MiB (docs/measuring.md "Two
 * states of the VM").  A round whose runs straddle a move compares two
 * machines; the probe is how the bench tells.
 *
 *   core_latency [ROUND_TRIPS]      (default 50000 per batch: 100 ms at 200 ns)
 *
 * The CPUs are the first two of this process's affinity mask, which are
 * cores 0 and 1 where Open MPI binds 2 ranks to cores on a machine that
 * numbers its cores before their SMT siblings (Linux's usual order).
 * Prints the median over 5 batches, so that a preemption in one batch does
 * not decide the figure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

enum { BATCHES = 5 };

struct probe {
	_Alignas(64) atomic_long turn;   /* odd: the pong side's move; even: ping's */
	long trips;
};

static int pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *pong(void *arg)
{
	struct probe *p = arg;
	for (long i = 0; i < (long)BATCHES * p->trips; i++) {
		while (atomic_load_explicit(&p->turn, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&p->turn, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long trips = argc > 1 ? atol(argv[1]) : 50000;
	if (trips < 1) {
		fprintf(stderr, "core_latency: ROUND_TRIPS must be >= 1\n");
		return 2;
	}
	cpu_set_t mask;
	int cpus[2], n = 0;
	if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
		perror("core_latency: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &mask))
			cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "core_latency: needs 2 CPUs, this process may use %d\n", n);
		return 1;
	}
	static struct probe p;   /* static: its own cache line, zeroed */
	p.trips = trips;
	if (pin(cpus[0]) != 0) {
		fprintf(stderr, "core_latency: cannot pin to CPU %d\n", cpus[0]);
		return 1;
	}
	/* pinned from its start: a pong thread that failed to pin itself
	 * would leave this side spinning for ever */
	pthread_attr_t attr;
	cpu_set_t other;
	CPU_ZERO(&other);
	CPU_SET(cpus[1], &other);
	pthread_t t;
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setaffinity_np(&attr, sizeof(other), &other) != 0
	    || pthread_create(&t, &attr, pong, &p) != 0) {
		fprintf(stderr, "core_latency: cannot start a thread on CPU %d\n", cpus[1]);
		return 1;
	}
	pthread_attr_destroy(&attr);
	double ns[BATCHES];
	long i = 0;
	for (int b = 0; b < BATCHES; b++) {
		double t0 = bench_now();
		for (long k = 0; k < trips; k++, i++) {
			atomic_store_explicit(&p.turn, 2 * i + 1, memory_order_release);
			while (atomic_load_explicit(&p.turn, memory_order_acquire) != 2 * i + 2)
				;
		}
		ns[b] = (bench_now() - t0) * 1e9 / (double)trips / 2;   /* a round trip is two moves */
	}
	pthread_join(t, NULL);
	qsort(ns, BATCHES, sizeof(double), bench_cmp_d);
	printf("%.1f\n", ns[BATCHES / 2]);
	return 0;
}
