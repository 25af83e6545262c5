/*
 * A plain oneDNN matmul, as its documentation shows it, timed: the
 * reference the bench programs (microbench_ref, microbench_moe,
 * microbench_attention) put beside the perfdb ops.  Each had its own copy.
 */
#ifndef PERFDB_BENCH_DNNL_H
#define PERFDB_BENCH_DNNL_H

#include <dnnl.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define BENCH_DNNL_MAX_REPS 16

/*
 * (M,K) x (K,N) -> (M,N): src `ab` of dtype at, the weight given in layout
 * b_tag (ab, or ba as a recorded (N,K) weight) and reordered once to the
 * primitive's preferred layout (format_tag_any), dst `ab` of dtype ct; every
 * byte of the operands 0x3c.  Median seconds of reps timed calls after
 * warm untimed ones; *best (optional) gets the fastest.  0 when oneDNN
 * has no such matmul.
 */
static inline double bench_dnnl_matmul(int64_t m, int64_t n, int64_t k, dnnl_data_type_t at, dnnl_data_type_t ct,
				       dnnl_format_tag_t b_tag, int warm, int reps, double *best)
{
	static dnnl_engine_t eng;
	static dnnl_stream_t s;
	if (!eng) {
		dnnl_engine_create(&eng, dnnl_cpu, 0);
		dnnl_stream_create(&s, eng, dnnl_stream_default_flags);
	}
	reps = reps < 1 ? 1 : reps > BENCH_DNNL_MAX_REPS ? BENCH_DNNL_MAX_REPS : reps;
	dnnl_dims_t da = { m, k }, db = { k, n }, dc = { m, n };
	dnnl_memory_desc_t a, b, bany, c;
	dnnl_memory_desc_init_by_tag(&a, 2, da, at, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&b, 2, db, at, b_tag);
	dnnl_memory_desc_init_by_tag(&bany, 2, db, at, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&c, 2, dc, ct, dnnl_ab);
	dnnl_matmul_desc_t md;
	dnnl_matmul_desc_init(&md, &a, &bany, NULL, &c);
	dnnl_primitive_desc_t pd;
	if (dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL) != dnnl_success)
		return 0;
	const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_primitive_t p, r;
	dnnl_primitive_create(&p, pd);
	dnnl_memory_t ma, mb, mw, mc;
	dnnl_memory_create(&ma, &a, eng, DNNL_MEMORY_ALLOCATE);
	dnnl_memory_create(&mb, &b, eng, DNNL_MEMORY_ALLOCATE);
	dnnl_memory_create(&mw, w, eng, DNNL_MEMORY_ALLOCATE);
	dnnl_memory_create(&mc, &c, eng, DNNL_MEMORY_ALLOCATE);
	void *h;
	dnnl_memory_get_data_handle(ma, &h);
	memset(h, 0x3c, dnnl_memory_desc_get_size(&a));
	dnnl_memory_get_data_handle(mb, &h);
	memset(h, 0x3c, dnnl_memory_desc_get_size(&b));
	dnnl_primitive_desc_t rpd;
	dnnl_reorder_primitive_desc_create(&rpd, &b, eng, w, eng, NULL);
	dnnl_primitive_create(&r, rpd);
	dnnl_exec_arg_t ra[] = { { DNNL_ARG_FROM, mb }, { DNNL_ARG_TO, mw } };
	dnnl_primitive_execute(r, s, 2, ra);
	dnnl_stream_wait(s);
	dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ma }, { DNNL_ARG_WEIGHTS, mw }, { DNNL_ARG_DST, mc } };
	double t[BENCH_DNNL_MAX_REPS];
	for (int i = 0; i < warm + reps; i++) {
		double t0 = bench_now();
		dnnl_primitive_execute(p, s, 3, args);
		dnnl_stream_wait(s);
		if (i >= warm)
			t[i - warm] = bench_now() - t0;
	}
	dnnl_primitive_destroy(p);
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(pd);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(ma);
	dnnl_memory_destroy(mb);
	dnnl_memory_destroy(mw);
	dnnl_memory_destroy(mc);
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_d);
	if (best)
		*best = t[0];
	return t[reps / 2];
}

/* GFLOP/s of a plain square oneDNN matmul of dtype dt, its fastest of reps calls after one warm-up: the machine's peak as a GEMM reaches it. */
static inline double bench_dnnl_peak(int64_t n, dnnl_data_type_t dt, int reps)
{
	double best = 0;
	if (bench_dnnl_matmul(n, n, n, dt, dt, dnnl_ab, 1, reps, &best) <= 0 || best <= 0)
		return 0;
	return 2.0 * (double)n * (double)n * (double)n / best / 1e9;
}

#endif
