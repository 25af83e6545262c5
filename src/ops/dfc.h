/*
 * DispatchFFNCombine's plan (docs/ops.md "DispatchFFNCombine"): the sizes
 * of one expert-parallel MoE layer, which the definition's rules
 * (rules_dfc.c) and a backend's prepare read from the same slots.
 */
#ifndef PERFDB_REPLAY_OPDEF_DFC_H
#define PERFDB_REPLAY_OPDEF_DFC_H

#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

/* The reference's max_output_size: routed rows (T*k) per rank. */
#define PERFDB_DFC_MAX_OUTPUT 65536

/* t tokens of h, e local experts of w1 (H,n) and w2 (n/2,H), k choices per token, ep ranks. */
struct perfdb_dfc_plan {
	int64_t t, h, e, n, k;
	int ep;
};
/*
 * The row's plan, or -PERFDB_EINVAL with the rule it breaks: seven input
 * slots, shapes that chain, T*k within PERFDB_DFC_MAX_OUTPUT, and EP > 1
 * only under mpirun with one rank per EP member.
 */
int perfdb_dfc_plan(const struct perfdb_op_case *c, struct perfdb_dfc_plan *p, struct perfdb_err *err);

#endif
