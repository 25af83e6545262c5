/*
 * The MoE family's plan (docs/ops.md "MoE and grouped matmul"): what a
 * backend's check and prepare read of a grouped GEMM's slots, shared with
 * the definitions' rules (rules_moe.c).
 */
#ifndef PERFDB_REPLAY_OPDEF_MOE_H
#define PERFDB_REPLAY_OPDEF_MOE_H

#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

/*
 * A GroupedMatmul or GroupedMatmulSwigluQuant row's shape: t tokens, k and
 * n of each group's (K,N) weight, e groups (group_list's length, else
 * scale's first dim, else the weight's), the optional slots scale (3),
 * group_list (7) and per_token_scale (8) (NULL when empty), swq for
 * GroupedMatmulSwigluQuant.
 */
struct perfdb_gmm_shape {
	int64_t t, k, n, e;
	int swq;
	const struct perfdb_tensor *scale, *glist, *ptok;
};
/*
 * The shape's rules, the operator's: x (T,K) and out0 (T,N) 2-D with one
 * T, a weight of E*K*N elements, out0's N the weight's (SwigluQuant: N/2,
 * or N for the grid template's row; out1 float (T,)).  0 with s filled, or
 * -PERFDB_EINVAL.  GroupedMatmul's definition applies only the slot and
 * 2-D rules, which the CUDA backend shares; the CPU check applies all.
 */
int perfdb_gmm_shape(const struct perfdb_op_case *c, struct perfdb_gmm_shape *s, struct perfdb_err *err);

#endif
