/* The seed's replay operator list and measurement lifetimes. */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "ops/aten.h"

/*
 * Stems of the reference's tools/perf_data_collection/op_replay/<Op>_run.py:
 * the tables the reference's writeback visits when no --ops is given, and
 * the coverage target of the native backends (docs/spec/replay.md Decision 1).
 */
const char *const perfdb_replay_ops[] = {
	"Add", "AddRmsNormBias", "ArgMaxV2", "AscendQuantV2", "BatchMatMulV2", "Cast",
	"CastAiCore", "DispatchFFNCombine", "DynamicQuant", "Fill", "FusedInferAttentionScore",
	"GatherV2", "GroupedMatmul", "GroupedMatmulSwigluQuant", "Index", "InterleaveRope",
	"KvRmsNormRopeCache", "LayerNormV3", "LightningIndexer", "MaskedFill", "MatMulCommon",
	"MatMulV2", "MatMulV3", "MoeGatingTopK", "MoeTokenPermute", "MoeTokenUnpermute", "Mul",
	"PadV3", "QuantBatchMatmulV3", "RINGMLAPrefillBF16Kernel", "ReshapeAndCacheNdKernel",
	"RmsNorm", "ScatterNdUpdate", "ScatterNdUpdateAiCore", "Slice", "SliceAiCore",
	"SoftmaxV2", "Sort", "SparseFlashAttention", "SwiGlu", "TensorMove",
	"Transpose", "TransposeBatchMatMul", "_triton_rope_siso", "mla_preprocess_0_mix_aic",
	"split_qkv_rmsnorm_rope_kernel",
};
const size_t perfdb_replay_nops = sizeof(perfdb_replay_ops) / sizeof(perfdb_replay_ops[0]);

int perfdb_replay_op_known(const char *op)
{
	for (size_t i = 0; i < perfdb_replay_nops; i++)
		if (strcmp(perfdb_replay_ops[i], op) == 0)
			return 1;
	return 0;
}

const char *perfdb_replay_aten_target(const char *stem)
{
	const struct perfdb_aten_op *a = perfdb_aten_find(stem);
	return a ? a->target : NULL;
}

void perfdb_measure_release(struct perfdb_measure *m)
{
	free(m->op);
	for (int b = 0; b < 8; b++)
		free(m->base[b]);
	free(m->ep_size);
	free(m->cmean);
	m->cmean = NULL;
	m->op = m->ep_size = NULL;
	memset(m->base, 0, sizeof(m->base));
}

void perfdb_measures_release(struct perfdb_measures *m)
{
	for (size_t i = 0; i < m->n; i++)
		perfdb_measure_release(&m->v[i]);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
