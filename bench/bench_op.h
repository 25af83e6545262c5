/*
 * Timing one CPU-backend operator through the op interface, shared by the
 * bench programs (microbench_ref, microbench_moe): the case built by the
 * engine from a table-like row, checked, its buffers from the engine's
 * pool, prepared once, then 2 warm-up calls and reps timed ones.
 */
#ifndef PERFDB_BENCH_OP_H
#define PERFDB_BENCH_OP_H

#include <stdio.h>

#include "bench_util.h"
#include "replay/engine.h"

#define BENCH_OP_MAX_REPS 64

/*
 * Median seconds of reps (<= BENCH_OP_MAX_REPS) calls of op on a row's
 * cells with `threads` threads; 0 on failure (the reason on stderr).
 * bytes (may be NULL): the bytes of every input and output tensor.  With tr
 * a triad pass precedes each timed call and *tri gets the median triad GB/s
 * of those passes (bench_util.h: why).
 */
/* The CPU backend's context (open), set by the program's main; every case gets it. */
static void *bench_ctx;

/* bench_time_op, also copying the case's Kernel Used (the backend's c->kernel, "own" when empty) into kern. */
static inline double bench_time_op_full(struct perfdb_engine_pool *pool, const char *op, const char *ins,
					const char *dts, const char *outs, const char *odt, int threads, int reps,
					double *bytes, struct bench_triad *tr, double *tri, char *kern, size_t kn)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	reps = reps < 1 ? 1 : reps > BENCH_OP_MAX_REPS ? BENCH_OP_MAX_REPS : reps;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	if (!impl || perfdb_engine_build_case(op, ins, dts, "", outs, odt, "", &c, &err) < 0 ||
	    perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err) < 0 || perfdb_engine_alloc_case(pool, &c, 1, &err) < 0) {
		fprintf(stderr, "%s: %s\n", op, impl ? err.msg : "not a cpu backend op");
		return 0;
	}
	c.threads = threads;
	c.backend_ctx = bench_ctx;
	if (impl->prepare && impl->prepare(&c, &err) < 0) {
		fprintf(stderr, "%s: %s\n", op, err.msg);
		if (impl->release)
			impl->release(&c);
		return 0;
	}
	if (kern && kn)
		snprintf(kern, kn, "%s", c.kernel[0] ? c.kernel : "own");
	if (bytes) {
		*bytes = 0;
		for (size_t i = 0; i < c.nin; i++)
			*bytes += (double)c.in[i].bytes;
		for (size_t i = 0; i < c.nout; i++)
			*bytes += (double)c.out[i].bytes;
	}
	double t[BENCH_OP_MAX_REPS], tt[BENCH_OP_MAX_REPS], res = 0;
	int ok = 1;
	for (int i = 0; ok && i < 2 + reps; i++) {
		if (tr && i >= 2)
			tt[i - 2] = bench_triad_once(tr);
		double t0 = bench_now();
		ok = impl->run(&c, &err) >= 0;
		if (i >= 2)
			t[i - 2] = bench_now() - t0;
	}
	if (!ok)
		fprintf(stderr, "%s: %s\n", op, err.msg);
	if (impl->release)
		impl->release(&c);
	if (ok) {
		qsort(t, (size_t)reps, sizeof(double), bench_cmp_d);
		res = t[reps / 2];
		if (tr) {
			qsort(tt, (size_t)reps, sizeof(double), bench_cmp_d);
			*tri = bench_triad_gbs(tr, tt[reps / 2]);
		}
	}
	return res;
}

static inline double bench_time_op(struct perfdb_engine_pool *pool, const char *op, const char *ins, const char *dts,
				   const char *outs, const char *odt, int threads, int reps, double *bytes,
				   struct bench_triad *tr, double *tri)
{
	return bench_time_op_full(pool, op, ins, dts, outs, odt, threads, reps, bytes, tr, tri, NULL, 0);
}

static inline double bench_time_op_kernel(struct perfdb_engine_pool *pool, const char *op, const char *ins,
					  const char *dts, const char *outs, const char *odt, int threads, int reps,
					  char *kern, size_t kn)
{
	return bench_time_op_full(pool, op, ins, dts, outs, odt, threads, reps, NULL, NULL, NULL, kern, kn);
}

#endif
