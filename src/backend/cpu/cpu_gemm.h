/*
 * One 2-D GEMM C(M,N) = A(M,K) · W(K,N) through a oneDNN matmul primitive,
 * for the MoE and quantisation families (ops_moe.c, ops_quant.c,
 * ops_dfc.c): the primitive is created once per (M,K,N, dtypes) in prepare,
 * every weight is reordered once to the layout the primitive prefers (the
 * one-time weight transform of an inference engine, converting its dtype
 * too: an fp32 table weight becomes bf16 beside a bf16 activation), and
 * run() only re-points A and C.  Int8: s8 (or u8) A × s8 W -> s32 C, exact
 * (oneDNN adds the s8-source compensation itself); scaling is the caller's.
 */
#ifndef PERFDB_CPU_GEMM_H
#define PERFDB_CPU_GEMM_H

#include <dnnl.h>
#include <stdint.h>

#include "perfdb/err.h"

struct cpu_ctx;

struct cpu_mm {
	int64_t m, k, n;
	dnnl_engine_t eng;            /* the backend context's (not owned) */
	dnnl_stream_t strm;
	dnnl_primitive_t prim;
	dnnl_memory_desc_t wmd;       /* the weight layout the primitive wants */
	dnnl_memory_t a, c;           /* re-pointed at every call */
};

/* A (M,K) with row stride lda, C (M,N) with row stride ldc, of the given dtypes, on x's engine. */
int cpu_mm_init(struct cpu_mm *mm, const struct cpu_ctx *x, int64_t m, int64_t k, int64_t n, dnnl_data_type_t at, int64_t lda,
		dnnl_data_type_t wt, dnnl_data_type_t ct, int64_t ldc, struct perfdb_err *err);
/*
 * Reorder a stored weight into mm's layout (once): src is (K,N) row-major of
 * dtype st (trans: stored (N,K)); *out is a new memory the caller destroys.
 */
int cpu_mm_weight(const struct cpu_mm *mm, const void *src, dnnl_data_type_t st, int trans,
		  dnnl_memory_t *out, struct perfdb_err *err);
/* C = A · W, synchronous. */
int cpu_mm_run(struct cpu_mm *mm, const void *a, dnnl_memory_t w, void *c, struct perfdb_err *err);
/* Frees what init made (mm zeroed; safe on a zeroed mm). */
void cpu_mm_release(struct cpu_mm *mm);

#endif
