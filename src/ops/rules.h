/*
 * What the row rules of the operator layer share (rules_*.c, opdefs.c):
 * the shape and dtype predicates several ops' rules ask, and each family's
 * check functions for the table in opdefs.c.  Not for backends: what they
 * may use of the rules is declared in opdef.h.
 */
#ifndef PERFDB_REPLAY_OPDEF_RULES_H
#define PERFDB_REPLAY_OPDEF_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

/* Whether d is one of the integer dtypes an index may have (int8..int64, uint8). */
int perfdb_rules_is_int(enum perfdb_dtype d);
/* The last dim of t (1 for a scalar). */
int64_t perfdb_rules_last(const struct perfdb_tensor *t);
/* b broadcasts trailing-wise into out: b's dims (leading 1s dropped) are out's last dims. */
int perfdb_rules_trailing_bcast(const struct perfdb_tensor *b, const struct perfdb_tensor *out);
/*
 * Whether b broadcasts to out by numpy's (and aten's) rule: b's dims
 * right-aligned to out's, each equal to out's or 1 (a (T,1) column into
 * (T,D) included).  Every trailing broadcast is one.
 */
int perfdb_rules_bcast(const struct perfdb_tensor *b, const struct perfdb_tensor *out);
/* The first nin inputs and output 0 present, else "<op> needs N input(s) and an output" / "input i is empty". */
int perfdb_rules_need(const struct perfdb_op_case *c, size_t nin, struct perfdb_err *err);

/*
 * The attention ops' per-batch lengths (rules_attention.c): from the Runtime
 * list col (cumulative when cum; "<op>: <col> …" when it breaks that), else
 * an even split of total (cum) or each_max; and the batch count such a list
 * gives (fallback when absent or unreadable).
 */
int perfdb_attn_lengths(const struct perfdb_op_case *c, const char *col, int cum, int64_t nb, int64_t total,
			int64_t each_max, int64_t *len, struct perfdb_err *err);
int64_t perfdb_attn_count(const struct perfdb_op_case *c, const char *col, int64_t fallback);
/* The attention plans' per-batch arrays, nb each, zeroed, in one allocation owned by *qlen. */
int perfdb_attn_batches_alloc(int64_t nb, int64_t **qlen, int64_t **kvlen, int64_t **qst, int64_t **kvst,
			      struct perfdb_err *err);

/* ---- each family's rules (opdefs.c's table) ---- */

/* The MatMul family: 2 inputs and an output laid out as perfdb_gemm_plan plans them (gemm_plan.c). */
int perfdb_rules_matmul(const struct perfdb_op_case *c, struct perfdb_err *err);

/* mla_preprocess_0_mix_aic: its plan (rules_mla.c, mla.h) */
int perfdb_rules_mla_preprocess(const struct perfdb_op_case *c, struct perfdb_err *err);

/* FusedInferAttentionScore: what every backend applies of its plan (rules_attention.c, attention.h) */
int perfdb_rules_fia(const struct perfdb_op_case *c, struct perfdb_err *err);

/* SparseFlashAttention, LightningIndexer, RINGMLAPrefillBF16Kernel: their plans (rules_attention_sparse.c) */
int perfdb_rules_sfa(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_li(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_ring(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_rmsnorm(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_add_rmsnorm_bias(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_softmax(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_add(const struct perfdb_op_case *c, struct perfdb_err *err);
/* Sub, RealDiv: float in0 op in1, in1 broadcast to in0's (the output's) shape. */
int perfdb_rules_binary(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_swiglu(const struct perfdb_op_case *c, struct perfdb_err *err);
/* Silu, Gelu, Pow, Rsqrt (PyTorch's silu/gelu/pow/rsqrt, aten.h): one float tensor in, the same shape out. */
int perfdb_rules_activation(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_tensor_move(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_masked_fill(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_gather(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_index(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_pad(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_scatter(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_slice(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_transpose(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_argmax(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_sort(const struct perfdb_op_case *c, struct perfdb_err *err);
/* ReduceSum, ReduceMean: over the last dim of a float input (PyTorch's sum and mean rows, aten.h). */
int perfdb_rules_reduce_last(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_cast(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_fill(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_mul(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_layer_norm(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_interleave_rope(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_qkv_rope(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_triton_rope(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_reshape_cache(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_kv_rmsnorm_rope_cache(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_gmm(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_gmm_swiglu_quant(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_gating_topk(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_token_permute(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_token_unpermute(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_dynamic_quant(const struct perfdb_op_case *c, struct perfdb_err *err);
int perfdb_rules_ascend_quant(const struct perfdb_op_case *c, struct perfdb_err *err);

int perfdb_rules_dfc(const struct perfdb_op_case *c, struct perfdb_err *err);

#endif
