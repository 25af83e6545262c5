/*
 * What the operator layer's cost functions share (costs_*.c, opdefs.c;
 * docs/ops.md "Costs"): the byte counts of a case's tensors and each
 * family's cost functions for the table in opdefs.c.
 */
#ifndef PERFDB_REPLAY_OPDEF_COSTS_H
#define PERFDB_REPLAY_OPDEF_COSTS_H

#include "ops/opdef.h"

/* A tensor's bytes, 0 when absent. */
static inline double perfdb_cost_tbytes(const struct perfdb_tensor *t)
{
	return t->present ? (double)t->bytes : 0;
}
/* numel elements of t's dtype. */
double perfdb_cost_elems_bytes(const struct perfdb_tensor *t, double numel);
/* Every present input, and every present output the op does not update in place (def->inplace). */
double perfdb_cost_all_bytes(const struct perfdb_op_case *c);
/* The present inputs from slot `from` on, and every present output. */
double perfdb_cost_bytes_from(const struct perfdb_op_case *c, size_t from);

/* ---- each family's costs (opdefs.c's table) ---- */
/* Streaming ops: every tensor touched once; FLOPs a fixed count per element (docs/ops.md "Costs"). */
int perfdb_cost_add(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_move(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_swiglu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_silu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_rsqrt(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_gelu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_rmsnorm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_add_rmsnorm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_layer_norm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_softmax(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_dynamic_quant(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_ascend_quant(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_rope(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_qkv_rope(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_argmax(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_gating_topk(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_token_unpermute(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
/* Matrix-unit ops (costs.c). */
int perfdb_cost_matmul(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_quant_matmul(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_gmm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_dfc(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
/* Ops that touch part of a tensor (costs_part.c). */
int perfdb_cost_gather(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_scatter(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_reshape_cache(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_kv_rmsnorm_rope_cache(const struct perfdb_op_case *c, struct perfdb_op_cost *w,
				      struct perfdb_err *err);
int perfdb_cost_mla_preprocess(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
/* Attention (costs_attention.c): Q, K, V and O for the real lengths. */
int perfdb_cost_fia(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_sfa(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_li(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);
int perfdb_cost_ring(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err);

#endif
