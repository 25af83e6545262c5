/*
 * The operator layer (docs/ops.md "The operator layer", docs/design.md): one
 * definition per replay operator, shared by every backend.  What an op *is*
 * lives here (whether it is memory-bound, collective, which outputs it
 * updates in place, which rows it keeps without replay, the shape planning
 * such as the GEMM layouts and GroupedMatmul's groups); a backend's op table
 * (src/backend/backend.h) holds only how it runs the op: check of its own
 * limits, prepare, run, release.  So two backends cannot disagree on what a
 * row means, and the engine takes the method's decisions (cache flushing,
 * collective replay, in-place buffers, skipped rows) from one place.
 */
#ifndef PERFDB_REPLAY_OPDEF_H
#define PERFDB_REPLAY_OPDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

/*
 * The epsilons of the operators' norms, which the rows do not record: one
 * value per operator, the same on every backend (the CPU's and CUDA's
 * kernels and the operator layer's plans read them here).
 */
#define PERFDB_EPS_RMSNORM 1e-6f     /* RmsNorm, AddRmsNormBias */
#define PERFDB_EPS_LAYERNORM 1e-5f   /* LayerNorm (biased variance) */
#define PERFDB_EPS_QKV_ROPE 1e-6f    /* the q/k RmsNorm of the fused QKV rope */
#define PERFDB_EPS_KV_RMSNORM 1e-5f  /* KvRmsNormRopeCache's RmsNorm, MlaPreprocess's */

/* The unit an op's FLOPs run on: which of the device's peaks bounds it (perfdb_device). */
enum perfdb_op_unit { PERFDB_OP_UNIT_VECTOR, PERFDB_OP_UNIT_MATRIX };

/*
 * What one row of an op costs (costs_*.c, docs/ops.md "Costs"): the work a
 * roofline plots.  bytes: the memory the op touches, each byte once: a
 * tensor it reads or writes in whole counts whole; of a tensor it touches
 * in part only that part (the rows a gather reads, the rows an update
 * writes into a cache or a scattered table, the keys and values of
 * attention up to each batch's real length); an output updated in place
 * counts as the rows written.  flops: arithmetic operations by the op's
 * convention (docs/ops.md "Costs"; 0 for pure data movement).  unit and
 * dtype (the operands' type) choose the peak.
 */
struct perfdb_op_cost {
	double flops, bytes;
	enum perfdb_op_unit unit;
	enum perfdb_dtype dtype;
};

struct perfdb_opdef {
	const char *name;                     /* OP Type = table stem */
	const char *family;                   /* "matmul", "attention", "norm", ... (docs/ops.md) */
	/*
	 * Memory-bound: a device backend flushes its caches before each sample
	 * (time_run's flush); the host engine flushes before every op's samples
	 * below 64 MiB, bound or not (timing_flushes).
	 */
	bool memory_bound;
	/*
	 * Collective: under mpirun every rank replays each row of this op
	 * together (the engine barriers before every sample and takes the
	 * slowest rank's time, as nccl-tests does); other ops' rows are sharded
	 * across the ranks.  A backend's run() may communicate over c->comm.
	 */
	bool collective;
	/*
	 * Optional (NULL: no rule beyond the backends').  The row rules every
	 * backend applies, before the backend's own check: 0 or -PERFDB_EINVAL
	 * with the reason in err (recorded as the row's failure).
	 */
	int (*check)(const struct perfdb_op_case *c, struct perfdb_err *err);
	/*
	 * Optional (NULL: every row is replayed).  A row the op keeps without
	 * replay (the reference's skip hook, e.g. DFC rows whose `EP Size`
	 * differs from the run's): returns 1 and writes why, else 0.  Called
	 * before any check; its answer must be the same on every MPI rank.
	 */
	int (*skip)(const struct perfdb_op_case *c, char *why, size_t whylen);
	/*
	 * Optional (NULL: no output is in place).  The input slot whose buffer
	 * output slot `out` is (the op updates it in place, as KV-cache writes
	 * do on the device), or -1.  The engine then allocates no buffer for
	 * that output and does not count it against the row's memory.
	 */
	int (*inplace)(const struct perfdb_op_case *c, size_t out);
	/*
	 * Required (test_opdef holds every definition to one).  The row's cost
	 * (struct perfdb_op_cost) from its shapes, dtypes and cells, after the
	 * check passed: 0, or -PERFDB_EINVAL when the row's shapes do not say
	 * it (a plan the op cannot make).
	 */
	int (*cost)(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
};

/*
 * The definitions, one per operator of the seed's replay list
 * (perfdb_replay_ops), and the operators only PyTorch ops lower to (aten.h:
 * Silu, Gelu).
 */
extern const struct perfdb_opdef perfdb_opdefs[];
extern const size_t perfdb_nopdefs;

/* The definition of op, or NULL when it is not a replay operator. */
const struct perfdb_opdef *perfdb_opdef_find(const char *op);
/* The same, or (never NULL) a definition without rules or properties. */
const struct perfdb_opdef *perfdb_opdef_get(const char *op);

/*
 * Build a case from a row's cells (case_build.c; docs/spec/replay.md §4
 * "Parsing", "Building a tensor"): slots split on ';' keeping empty ones; a
 * null slot is an absent tensor; a missing dtype is DT_FLOAT, a missing
 * format ND; FRACTAL_NZ (a,b,c,d) becomes (b*c, a*d).  No buffer is
 * allocated; c->def is the op's definition (perfdb_opdef_get).  A PyTorch
 * op's row (op an aten stem such as "aten.mm", aten.h) is lowered: c->op
 * is then the operator doing its work ("MatMulV2").  Returns 0 or
 * -PERFDB_EINVAL/-PERFDB_EPARSE with the reason.
 */
int perfdb_case_build(const char *op, const char *in_shapes, const char *in_dtypes, const char *in_formats,
		      const char *out_shapes, const char *out_dtypes, const char *out_formats,
		      struct perfdb_op_case *c, struct perfdb_err *err);

/*
 * A built case's cost (w zeroed first): the definition's check, then its
 * cost.  -PERFDB_ENOENT when the op has no definition, else the check's or
 * the cost's error with the reason.
 */
int perfdb_op_cost(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);

struct perfdb_device;
/*
 * w's roofline time on dev (cost_time.c): max(flops / the unit's peak for
 * its dtype, bytes / memory bandwidth), seconds; -1 when dev lacks a figure
 * the cost needs (or is NULL).
 */
double perfdb_op_cost_seconds(const struct perfdb_op_cost *w, const struct perfdb_device *dev);

/*
 * The MatMul family's plan (gemm_plan.c): one strided batched GEMM
 * C[b] = A[b]·B[b], logical (bt,m,k)·(bt,k,n)→(bt,m,n), over the stored
 * buffers.  Strides are in elements over (batch, row, col).
 */
struct perfdb_gemm {
	int64_t bt, m, n, k;
	int64_t sa[3], sb[3], sc[3];
	int btrans;                           /* B stored as (N,K) */
};
/* A MatMulV2/V3, MatMulCommon, BatchMatMulV2 or TransposeBatchMatMul row's plan, or -PERFDB_EINVAL. */
int perfdb_gemm_plan(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err);
/* The 2-D plan only: A (M,K) or (K,M); B (K,N) or (N,K); C (M,N). */
int perfdb_gemm_plan_2d(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err);

/*
 * GroupedMatmul's group list (docs/spec/replay.md §4: the tokens split evenly
 * over the E groups, cumulative): the end of group g's rows when t tokens
 * are split, the remainder going to the first groups.  Every backend splits
 * the same way, so a row's groups do not depend on the backend.
 */
static inline int64_t perfdb_even_group_end(int64_t t, int64_t e, int64_t g)
{
	int64_t base = t / e, rem = t % e;
	return base * (g + 1) + (g + 1 < rem ? g + 1 : rem);
}

/*
 * What the data-movement and reduction ops' rules decide and the backends
 * read (rules_index.c, rules_reduce.c), each after the op's check passed:
 * the tensor holding Index's indices (NULL: none); the two dims Transpose
 * swaps; the dim ArgMaxV2 reduces.  The last two refuse a bad row with the
 * op's message.
 */
const struct perfdb_tensor *perfdb_index_indices(const struct perfdb_op_case *c);
int perfdb_transpose_dims(const struct perfdb_op_case *c, size_t d[2], struct perfdb_err *err);
int perfdb_argmax_dim(const struct perfdb_op_case *c, size_t *dim, struct perfdb_err *err);

/* Whether Cast converts from or to d and Fill writes it (rules_misc.c): fp32/fp16/bf16/fp64, int8..int64, uint8, bool. */
int perfdb_castable(enum perfdb_dtype d);
/*
 * Whether a quantised output may be recorded in d (rules_quant.c): int8,
 * or int32/fp32/bf16/fp16 (a synthetic table's slot), which hold the same
 * integer values.
 */
int perfdb_quant_target(enum perfdb_dtype d);

/*
 * The index operands of GatherV2, Index and ScatterNdUpdate spread over
 * their table in place (index_fill.c), the same on every backend; a no-op
 * for other ops.  Called once after the buffers are filled, before any
 * timed call.  0 or -PERFDB_ENOMEM.
 */
int perfdb_gather_indices(struct perfdb_op_case *c, struct perfdb_err *err);
/*
 * n distinct slots in [0, nslots) (n <= nslots), deterministic: tokens
 * fill blocks of block_size slots in order, the blocks taken in a
 * scattered order (an affine permutation of the block ids), as a paged
 * KV-cache allocator hands them out.
 */
void perfdb_slots_distinct(int64_t *slots, size_t n, int64_t nslots, int64_t block_size);

#endif
