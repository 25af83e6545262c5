/*
 * Fuzz target: a database row's cells as a replay case
 * (src/ops/case_build.c, aten_lower.c) and its rules and cost
 * (opdefs.c, costs*.c, gemm_plan.c, rules_attention.c): the one reading of
 * a row that the engine and the report share, for every seed operator and
 * every PyTorch op table.
 *
 * The input is an operator picked by the first byte, then up to six cells
 * split on '\n' (in shapes, in dtypes, in formats, out shapes, out dtypes,
 * out formats).  Invariants checked: a built case names a defined operator
 * (an aten row its lowered one), its tensors have at most the supported
 * dims and non-negative sizes matching dtype x numel; a cost that succeeds
 * has finite, non-negative FLOPs and bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "replay/replay.h"
#include "ops/aten.h"
#include "ops/opdef.h"

#include "fuzz_cells.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_side(const struct perfdb_tensor *t, size_t n)
{
	if (n > PERFDB_OP_MAX_TENSORS)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!t[i].present)
			continue;
		if (t[i].ndims > PERFDB_SHAPE_MAX_DIMS || t[i].numel < 0)
			abort();
		if (t[i].bytes != perfdb_dtype_bytes(t[i].dtype, (size_t)t[i].numel))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t nops = perfdb_replay_nops + perfdb_aten_nops, k = data[0] % nops;
	const char *op = k < perfdb_replay_nops ? perfdb_replay_ops[k] : perfdb_aten_ops[k - perfdb_replay_nops].stem;
	char *text, *cells[6];
	if (fuzz_cells(data, size, &text, cells) < 0)
		return 0;
	struct perfdb_op_case *c = malloc(sizeof(*c));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (c && perfdb_case_build(op, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], c, &err) == 0) {
		if (!c->op || !c->def || !perfdb_opdef_find(c->op))
			abort();
		check_side(c->in, c->nin);
		check_side(c->out, c->nout);
		struct perfdb_op_cost w;
		if (perfdb_op_cost(c, &w, &err) == 0 && (!(w.flops >= 0) || !(w.bytes >= 0) || isinf(w.flops)))
			abort();
	} else if (c && !err.msg[0]) {
		abort();   /* a refusal always says why */
	}
	free(c);
	free(text);
	return 0;
}
