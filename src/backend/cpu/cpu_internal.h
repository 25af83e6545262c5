/*
 * Shared by the CPU backend's op files: element access for the float
 * dtypes stored in their own format (bf16, fp16, fp32; the conversions are
 * core's, include/perfdb/half.h), row scratch, and
 * the op tables of each family (one file per family, docs/style.md rule 3).
 */
#ifndef PERFDB_CPU_INTERNAL_H
#define PERFDB_CPU_INTERNAL_H

#include <dnnl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/backend.h"
#include "perfdb/cpu_isa.h"
#include "perfdb/half.h"

/*
 * Hot loops are compiled for AVX-512 and AVX2 with a portable fallback,
 * picked at load time from the hardware.  The hand-written kernels
 * (kern_*.c, the attention tiles) dispatch on the context's ISA level
 * instead (cpu_isa_of: perfdb_cpu_isa(), held down by PERFDB_MAX_CPU_ISA).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_CLONES
#endif

/*
 * exp for the kernels: 2^n * p(r), r = x - n*ln2 in about [-ln2/2, ln2/2], p the
 * degree-6 Taylor polynomial (relative error < 2e-7 on that range);
 * branch-free, so loops over it vectorise.  Inputs below -87.3 give 0,
 * above 88.7 give +inf.
 */
static inline float cpu_expf(float x)
{
	x = x < -87.3f ? -87.3f : x > 88.7f ? 88.7f : x;
	float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;   /* round to nearest via 1.5*2^23 */
	float r = x - n * 0.693145752f - n * 1.42860677e-6f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
		  r * (8.33333377e-3f + r * 1.38888892e-3f)))));
	int32_t e = (int32_t)n + 127;
	e = e < 1 ? 0 : e;                              /* 2^n underflows to 0 */
	uint32_t u = (uint32_t)e << 23;
	float s;
	memcpy(&s, &u, 4);
	return x >= 88.7f ? INFINITY : p * s;
}

/* Element i of a float tensor (fp32, bf16 or fp16) as float. */
static inline float cpu_ld(const struct perfdb_tensor *t, size_t i)
{
	return perfdb_float_elem(t->data, t->dtype, i);
}

/*
 * The element of b that output element i of o reads under numpy
 * broadcasting (b's dims right-aligned to o's, a 1 stretches;
 * perfdb_rules_bcast held).  For a trailing broadcast it is i % numel(b).
 */
static inline size_t cpu_bcast_at(const struct perfdb_tensor *b, const struct perfdb_tensor *o, size_t i)
{
	size_t off = 0, stride = 1;
	for (size_t k = 0; k < b->ndims && k < o->ndims; k++) {
		size_t bd = (size_t)b->dims[b->ndims - 1 - k], od = (size_t)o->dims[o->ndims - 1 - k];
		size_t coord = i % od;
		i /= od;
		if (bd != 1)
			off += coord * stride;
		stride *= bd;
	}
	return off;
}

/* Convert n elements starting at element off of t into dst (fp32). */
void cpu_load_row(const struct perfdb_tensor *t, size_t off, size_t n, float *dst);
/* The sum of squares of x[0..h) (the norms' and rope-norms' rstd). */
float cpu_sumsq(const float *x, size_t h);
/* Store n fp32 values into t at element off, converting to its dtype. */
void cpu_store_row(struct perfdb_tensor *t, size_t off, size_t n, const float *src);
/* Value of an integer tensor's element i (int8..int64, uint8, bool). */
int64_t cpu_ld_int(const struct perfdb_tensor *t, size_t i);

/*
 * --threads for the own kernels: fn(ctx, lo, hi, tid) runs on contiguous
 * ranges of [0, n) on up to `threads` OpenMP threads (tid < threads), or
 * inline on the caller when threads <= 1 or the work (elements touched) is
 * below CPU_PAR_MIN, where a fork/join costs more than it saves.  The
 * ranges are static, so a row is always done by the same thread.
 */
#define CPU_PAR_MIN ((size_t)1 << 16)
void cpu_parallel(size_t n, size_t work, int threads, void (*fn)(void *ctx, size_t lo, size_t hi, int tid),
		  void *ctx);
/* The threads cpu_parallel will use for this much work. */
int cpu_par_threads(size_t n, size_t work, int threads);

/*
 * Transpose of 2-byte elements (kern_transpose.c): o[j * ld_o + i] =
 * x[i * ld_x + j] for i < a, j < b; nt: with non-temporal stores (outputs
 * past the last-level cache).  Only where cpu_transpose_u16_ok(): a a
 * multiple of 8, and for nt o's rows 16-byte aligned (x86-64 only).
 */
int cpu_transpose_u16_ok(const void *o, size_t a, size_t ld_o, int nt);
void cpu_transpose_u16(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o, int nt,
		       enum perfdb_cpu_isa isa);
/* The same with the AVX2 tile copy (avx2 = 1, where the ISA level has it) or the SSE2 one (0): for the tests. */
void cpu_transpose_u16_isa(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o, int nt,
			   int avx2);

/*
 * bf16 row kernels (kern_bf16.c), used when cpu_has_avx512bf16(isa) (isa:
 * cpu_isa_of, the level the kernels may use; 0 where not compiled in):
 * softmax rows (e: h floats of scratch).  Same fp32 arithmetic as the
 * generic path.  (bf16 RmsNorm takes kern_rows.c's table, whose bf16
 * format converts with the same vcvtneps2bf16: ops_norm.c.)  nt: write
 * y with streaming stores (outputs of CPU_NT_MIN_BYTES and more, see there;
 * SwiGlu, bound by its exp rather than by memory, measured 3-5 points of a
 * triad slower with them on one thread and keeps ordinary stores).
 */
int cpu_has_avx512bf16(enum perfdb_cpu_isa isa);
void cpu_softmax_rows_bf16(const uint16_t *x, uint16_t *y, float *e, size_t h, size_t rows, int nt);
/* One SwiGlu row: y[j] = silu(x[j]) * x[h + j], j < h. */
void cpu_swiglu_row_bf16(const uint16_t *x, uint16_t *y, size_t h);

/*
 * fp32/fp16/bf16 row kernels, one table per ISA level: kern_rows.c
 * (AVX-512 F, BW, VL) and kern_rows_avx2.c (AVX2, FMA, F16C), used by the
 * rows kern_bf16.c does not take.  cpu_rows_for(isa) is the table for the
 * level the kernels may use (cpu_isa_of), NULL below AVX2 or where not
 * compiled in (the generic path then runs).  f is the format of every row
 * pointer, cpu_row_fmt(dtype, isa) for an fp32/fp16/bf16 tensor (bf16
 * rounded by vcvtneps2bf16 where the CPU has AVX512_BF16, 15 % faster,
 * fp32 denormal results flushed to zero as in kern_bf16.c; else in integer
 * arithmetic).  Same fp32 arithmetic and order as the generic path but
 * for the lane sums, conversions bitwise as
 * perfdb_fp16_from_float/perfdb_bf16_from_float on non-NaN values
 * (CPU_ROW_BF16_CVT: but for denormals); nt as above.
 * rms: one row y = (x * rstd) * gam (+ bias) with x = x1, or x = x1 + x2
 * when x2 is not NULL (then also stored to xsum when that is not NULL;
 * xsum must not overlap x1 or x2); gam and bias (NULL: none) fp32;
 * returns rstd.
 * softmax: rows [0, rows) of width h (e: h floats of scratch).
 * swiglu: one row y[j] = silu(x[j]) * x[h + j], j < h.
 * name: what the rows report as Kernel Used ("own:<name>").
 */
enum cpu_row_fmt { CPU_ROW_F32, CPU_ROW_F16, CPU_ROW_BF16, CPU_ROW_BF16_CVT };
struct cpu_rows_kern {
	const char *name;
	float (*rms)(enum cpu_row_fmt f, const void *x1, const void *x2, void *xsum, void *y, const float *gam,
		     const float *bias, size_t h, float eps, int nt);
	void (*softmax)(enum cpu_row_fmt f, const void *x, void *y, float *e, size_t h, size_t rows, int nt);
	void (*swiglu)(enum cpu_row_fmt f, const void *x, void *y, size_t h);
};
extern const struct cpu_rows_kern cpu_rows_avx512, cpu_rows_avx2;
const struct cpu_rows_kern *cpu_rows_for(enum perfdb_cpu_isa isa);

/*
 * The kernel a RmsNorm, AddRmsNormBias, SoftmaxV2 or SwiGlu case runs on,
 * from one predicate per op that its prepare (for Kernel Used) and its run
 * both call: kern_bf16.c, the level's row-kernel table (cpu_rows_for), or
 * the generic fp32-scratch path.  cpu_rows_set_kernel writes c->kernel:
 * "own:rows_avx512_bf16", "own:<table name>" or "own:generic".
 */
enum cpu_rows_path { CPU_ROWS_BF16, CPU_ROWS_TABLE, CPU_ROWS_GENERIC };
void cpu_rows_set_kernel(struct perfdb_op_case *c, enum cpu_rows_path path);
int cpu_has_avx512(enum perfdb_cpu_isa isa);
enum cpu_row_fmt cpu_row_fmt(enum perfdb_dtype t, enum perfdb_cpu_isa isa);

/*
 * Outputs this large (the last-level cache) are written with non-temporal
 * stores by the memory-bound kernels: a line overwritten whole need not be
 * read first (a third of the traffic of a read-modify-write kernel), and
 * the next op could not have found the output in the cache anyway.
 * Smaller outputs keep ordinary stores so the next op reads them from cache.
 */
#define CPU_NT_MIN_BYTES ((size_t)32 << 20)

/*
 * The check of an op whose row rules are all the operator layer's
 * (src/ops/): its kernels take every row the definition accepts.
 */
static inline int cpu_no_limits(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)c;
	(void)err;
	return 0;
}

/*
 * Binary element-wise ops on float tensors (kern_binary.c): out = in0 op in1
 * with in1 broadcast by numpy's rule (absent: in0 op 1), fp32 arithmetic,
 * on c->threads; in0 has the output's shape.
 */
enum cpu_binop { CPU_BIN_ADD, CPU_BIN_SUB, CPU_BIN_MUL, CPU_BIN_DIV };
void cpu_binary(struct perfdb_op_case *c, enum cpu_binop op);

/* Op tables, one per family file. */
extern const struct perfdb_op_impl cpu_ops_matmul[];
extern const struct perfdb_op_impl cpu_ops_eltwise[];
extern const struct perfdb_op_impl cpu_ops_norm[];
extern const struct perfdb_op_impl cpu_ops_index[];
extern const struct perfdb_op_impl cpu_ops_reduce[];
extern const struct perfdb_op_impl cpu_ops_rope[];
extern const struct perfdb_op_impl cpu_ops_cache[];
extern const struct perfdb_op_impl cpu_ops_misc[];
extern const struct perfdb_op_impl cpu_ops_moe[];
extern const struct perfdb_op_impl cpu_ops_quant[];
extern const struct perfdb_op_impl cpu_ops_dfc[];
extern const struct perfdb_op_impl cpu_ops_attention[], cpu_ops_attention_sparse[];
extern const struct perfdb_op_impl cpu_ops_mla_preprocess[];

/*
 * The backend's context (open/free): the run's threads and its one oneDNN
 * engine and stream, which every primitive of the run shares (oneDNN
 * caches JIT-compiled kernels per engine, so an engine per row or per op
 * family would compile them again).
 */
struct cpu_ctx {
	int threads;
	enum perfdb_cpu_isa isa;      /* perfdb_cpu_isa() at open: what the own kernels may use */
	dnnl_engine_t eng;
	dnnl_stream_t strm;
};
/*
 * How many buffers a GEMM weight of `bytes` (in the layout the primitive
 * takes it) rotates through, itself included: enough for 64 MiB in all, at
 * most 64; 1 (no copies) from 64 MiB (ops_matmul.c says why).
 */
size_t cpu_rotation_copies(size_t bytes);

/* The case's context, or NULL with "the cpu backend is not open" (a case built outside a run). */
const struct cpu_ctx *cpu_ctx_of(const struct perfdb_op_case *c, struct perfdb_err *err);

/* The ISA level the own kernels of case c dispatch on: its context's, else perfdb_cpu_isa(). */
static inline enum perfdb_cpu_isa cpu_isa_of(const struct perfdb_op_case *c)
{
	const struct cpu_ctx *x = c->backend_ctx;
	return x ? x->isa : perfdb_cpu_isa();
}

#endif
