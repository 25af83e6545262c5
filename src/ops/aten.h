/*
 * PyTorch-level operators on the native backends (docs/ops.md "PyTorch
 * operators"): a table parsed from a PyTorch trace (`aten.mm.csv`, one per
 * aten op; docs/chrome_trace.md) is replayed by lowering each of its rows
 * to the operator whose kernel does the same work: aten::mm, addmm,
 * linear, matmul to MatMulV2, bmm/baddbmm to BatchMatMulV2, the
 * scaled-dot-product attentions to FusedInferAttentionScore (BNSD),
 * softmax, layer and RMS norm, add, mul, silu, gelu, embedding,
 * index_select, copy_ and to to their kernels.  The lowering is the
 * operator layer's, so every backend and the report's costs read an aten
 * row the same way; the backends only see the lowered operator.
 *
 * Slots follow aten's schema as the trace records it: one slot per
 * argument, a scalar argument an empty slot (its value is not recorded).
 * What a lowering cannot know from the slots (cat's tensor list, to's
 * target dtype where no output dtype is recorded, index_select's dim on a
 * 2-D table) fails the row with the reason; it is never guessed.
 */
#ifndef PERFDB_REPLAY_OPDEF_ATEN_H
#define PERFDB_REPLAY_OPDEF_ATEN_H

#include <stddef.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

struct perfdb_aten_op {
	const char *stem;     /* the table stem: "aten.mm" */
	const char *target;   /* the operator its rows run as: "MatMulV2" */
	/* raw: the row as built (perfdb_case_build with the stem); c: the lowered case */
	int (*lower)(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err);
};

extern const struct perfdb_aten_op perfdb_aten_ops[];
extern const size_t perfdb_aten_nops;

/* The op of table stem `stem` ("aten.mm"), or NULL. */
const struct perfdb_aten_op *perfdb_aten_find(const char *stem);

/*
 * Lower a built row (raw, built with the stem as op) into c: the target's
 * name and definition and its tensors (no buffer).  perfdb_case_build
 * calls it for every aten stem, so the engine and the report only ever
 * see lowered cases.  0, or -PERFDB_EINVAL with "aten.mm: …" when the
 * row's slots do not say the call.
 */
int perfdb_aten_lower(const struct perfdb_aten_op *a, const struct perfdb_op_case *raw, struct perfdb_op_case *c,
		      struct perfdb_err *err);

#endif
