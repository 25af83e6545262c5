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

#include "perfdb/dtype.h"
#include "perfdb/err.h"

struct cpu_ctx;

/*
 * A conversion from one memory to another (a dtype conversion, a layout
 * change), both owned: `from` and `to` are created on the given data
 * (DNNL_MEMORY_NONE: re-pointed before each run; DNNL_MEMORY_ALLOCATE:
 * scratch of oneDNN's).  Between fp32 and bf16/fp16 with rows of unit
 * stride on both sides (2-D or 3-D, plain layouts) the own row
 * conversions do it on `threads` threads (cpu_load_row/cpu_store_row):
 * oneDNN 2.6's reorder of bf16 below AVX-512 is its generic one, which
 * measured at about half the fp32 GEMM's time at M = 4096; otherwise a
 * oneDNN reorder.
 */
struct cpu_cvt {
	int used;                     /* 0: a zeroed cvt, nothing to convert */
	dnnl_memory_t from, to;
	dnnl_primitive_t prim;        /* the oneDNN reorder (NULL: own rows) */
	int threads;
	int64_t rows1, n;             /* own rows: outer dims (rows0 x rows1 rows), row length */
	int64_t rows0, fs[2], ts[2];  /* element strides of the two outer dims, from and to */
	enum perfdb_dtype fdt, tdt;
};
int cpu_cvt_init(struct cpu_cvt *cv, dnnl_engine_t eng, const dnnl_memory_desc_t *from, void *from_data,
		 const dnnl_memory_desc_t *to, void *to_data, int threads, struct perfdb_err *err);
/*
 * Run the conversion: a oneDNN reorder is queued on strm (in order with
 * what follows); the own rows wait for strm's earlier work, then convert
 * before returning.
 */
dnnl_status_t cpu_cvt_exec(const struct cpu_cvt *cv, dnnl_stream_t strm);
/* Frees what init made (cv zeroed; safe on a zeroed cv). */
void cpu_cvt_release(struct cpu_cvt *cv);

/*
 * The matmul primitive descriptor for a · w -> c (w format_tag any).  Where
 * oneDNN has no kernel for the 16-bit float dtypes (oneDNN 2.6: no bf16
 * matmul below AVX-512, no fp16 one below AVX512_FP16), the fp32 GEMM
 * instead, as PyTorch does on such CPUs: *f32 = 1, *a32 and *c32 are the
 * dense fp32 layouts of a and c the primitive takes (equal to a, c where
 * those are fp32 already), and the caller converts a in and c out around
 * each call (cpu_cvt); the weight is converted once, by its reorder to the
 * primitive's layout.  Otherwise *f32 = 0 and *a32, *c32 are a and c.
 * Returns oneDNN's status of the last attempt.
 */
dnnl_status_t cpu_mm_pd(dnnl_engine_t eng, const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *w,
			const dnnl_memory_desc_t *c, dnnl_primitive_desc_t *pd, dnnl_memory_desc_t *a32,
			dnnl_memory_desc_t *c32, int *f32);
/*
 * What runs the GEMM, for the row's Kernel Used: "onednn:<implementation>"
 * as oneDNN names it (e.g. brg:avx512_core_bf16, gemm:jit), "+f32" added
 * on the fp32 fallback.
 */
void cpu_mm_kernel_name(const_dnnl_primitive_desc_t pd, int f32, char *buf, size_t n);

struct cpu_mm {
	int64_t m, k, n;
	dnnl_engine_t eng;            /* the backend context's (not owned) */
	dnnl_stream_t strm;
	dnnl_primitive_t prim;
	dnnl_memory_desc_t wmd;       /* the weight layout the primitive wants */
	dnnl_memory_t a, c;           /* re-pointed at every call */
	/* the fp32 fallback (cpu_mm_pd): A converted in, C out (used 0: not needed) */
	struct cpu_cvt ca, cc;
	char kernel[64];              /* cpu_mm_kernel_name */
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
