/*
 * The replay operators' definitions (opdef.h): one row per operator of the
 * seed's list, with the rules that belong to the operator itself rather
 * than to a backend, then the operators only PyTorch ops lower to (aten.h).
 * A unit test (test_opdef) holds this table to the seed's list and the
 * aten targets, and every backend's op table to this one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/costs.h"
#include "ops/opdef.h"
#include "ops/rules.h"
#include "perfdb/schema.h"

/* ---- rows kept without replay ------------------------------------------------ */

/* The reference [SKIP]s attention rows it cannot build, keeping them: here rows without q, k, v. */
static int attention_skip(const struct perfdb_op_case *c, char *why, size_t whylen)
{
	const char *s = perfdb_case_cell(c, PERFDB_COL_IN_SHAPES);
	int semis = 0;
	for (; s && *s; s++)
		semis += *s == ';';
	if (semis >= 2)
		return 0;
	snprintf(why, whylen, "not an attention row (no key/value slots)");
	return 1;
}

/*
 * DispatchFFNCombine rows record the expert-parallel size they were taken
 * at (`EP Size`); a run measures one size (--dispatch-ffn-combine-ep-size,
 * the reference's --ep-size), so rows of another size are kept as they are.
 */
static int dfc_skip(const struct perfdb_op_case *c, char *why, size_t whylen)
{
	const char *v = perfdb_case_cell(c, PERFDB_COL_EP_SIZE);
	if (!v)
		return 0;
	char *end;
	long ep = strtol(v, &end, 10);
	if (end != v && *end == '\0' && ep == c->ep_size)
		return 0;
	snprintf(why, whylen, "EP Size %s differs from the run's --dispatch-ffn-combine-ep-size %d", v, c->ep_size);
	return 1;
}

/* ---- outputs updated in place (the caches, as on the device) ----------------- */

static int kvcache_inplace(const struct perfdb_op_case *c, size_t out)
{
	(void)c;
	return out == 0 ? 5 : out == 1 ? 6 : -1;   /* k_cache, ckv_cache */
}

static int reshape_cache_inplace(const struct perfdb_op_case *c, size_t out)
{
	(void)c;
	return out == 0 ? 2 : out == 1 ? 3 : -1;   /* key_cache, value_cache */
}

/* mla_preprocess: kv_cache out (1) is kv_cache in (19), k_rope cache out (3) is input 20. */
static int mla_inplace(const struct perfdb_op_case *c, size_t out)
{
	(void)c;
	return out == 1 ? 19 : out == 3 ? 20 : -1;
}

/* ---- the table --------------------------------------------------------------- */

#define MB true
#define CB false   /* compute-bound (or the op's own traffic pattern): no cache flush */

const struct perfdb_opdef perfdb_opdefs[] = {
	{ .name = "Add", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_add, .cost = perfdb_cost_add },
	{ .name = "AddRmsNormBias", .family = "norm", .memory_bound = MB, .check = perfdb_rules_add_rmsnorm_bias, .cost = perfdb_cost_add_rmsnorm },
	{ .name = "ArgMaxV2", .family = "reduce", .memory_bound = MB, .check = perfdb_rules_argmax, .cost = perfdb_cost_argmax },
	{ .name = "AscendQuantV2", .family = "quant", .memory_bound = MB, .check = perfdb_rules_ascend_quant, .cost = perfdb_cost_ascend_quant },
	{ .name = "BatchMatMulV2", .family = "matmul", .memory_bound = CB, .check = perfdb_rules_matmul, .cost = perfdb_cost_matmul },
	{ .name = "Cast", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_cast, .cost = perfdb_cost_move },
	{ .name = "CastAiCore", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_cast, .cost = perfdb_cost_move },
	{ .name = "DispatchFFNCombine", .family = "moe", .memory_bound = CB, .collective = true, .skip = dfc_skip,
	  .check = perfdb_rules_dfc, .cost = perfdb_cost_dfc },
	{ .name = "DynamicQuant", .family = "quant", .memory_bound = MB, .check = perfdb_rules_dynamic_quant, .cost = perfdb_cost_dynamic_quant },
	{ .name = "Fill", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_fill, .cost = perfdb_cost_move },
	{ .name = "FusedInferAttentionScore", .family = "attention", .memory_bound = CB, .skip = attention_skip,
	  .check = perfdb_rules_fia, .cost = perfdb_cost_fia },
	{ .name = "GatherV2", .family = "index", .memory_bound = MB, .check = perfdb_rules_gather, .cost = perfdb_cost_gather },
	{ .name = "GroupedMatmul", .family = "moe", .memory_bound = CB, .check = perfdb_rules_gmm, .cost = perfdb_cost_gmm },
	{ .name = "GroupedMatmulSwigluQuant", .family = "moe", .memory_bound = CB, .check = perfdb_rules_gmm_swiglu_quant, .cost = perfdb_cost_gmm },
	{ .name = "Index", .family = "index", .memory_bound = MB, .check = perfdb_rules_index, .cost = perfdb_cost_gather },
	{ .name = "InterleaveRope", .family = "rope", .memory_bound = MB, .check = perfdb_rules_interleave_rope, .cost = perfdb_cost_rope },
	{ .name = "KvRmsNormRopeCache", .family = "cache", .memory_bound = MB, .inplace = kvcache_inplace, .check = perfdb_rules_kv_rmsnorm_rope_cache, .cost = perfdb_cost_kv_rmsnorm_rope_cache },
	{ .name = "LayerNormV3", .family = "norm", .memory_bound = MB, .check = perfdb_rules_layer_norm, .cost = perfdb_cost_layer_norm },
	{ .name = "LightningIndexer", .family = "attention", .memory_bound = CB, .check = perfdb_rules_li, .cost = perfdb_cost_li },
	{ .name = "MaskedFill", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_masked_fill, .cost = perfdb_cost_move },
	{ .name = "MatMulCommon", .family = "matmul", .memory_bound = CB, .check = perfdb_rules_matmul, .cost = perfdb_cost_matmul },
	{ .name = "MatMulV2", .family = "matmul", .memory_bound = CB, .check = perfdb_rules_matmul, .cost = perfdb_cost_matmul },
	{ .name = "MatMulV3", .family = "matmul", .memory_bound = CB, .check = perfdb_rules_matmul, .cost = perfdb_cost_matmul },
	{ .name = "MoeGatingTopK", .family = "moe", .memory_bound = MB, .check = perfdb_rules_gating_topk, .cost = perfdb_cost_gating_topk },
	{ .name = "MoeTokenPermute", .family = "moe", .memory_bound = MB, .check = perfdb_rules_token_permute, .cost = perfdb_cost_move },
	{ .name = "MoeTokenUnpermute", .family = "moe", .memory_bound = MB, .check = perfdb_rules_token_unpermute, .cost = perfdb_cost_token_unpermute },
	{ .name = "Mul", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_mul, .cost = perfdb_cost_add },
	{ .name = "PadV3", .family = "index", .memory_bound = MB, .check = perfdb_rules_pad, .cost = perfdb_cost_move },
	{ .name = "QuantBatchMatmulV3", .family = "quant", .memory_bound = CB, .cost = perfdb_cost_quant_matmul },
	{ .name = "RINGMLAPrefillBF16Kernel", .family = "attention", .memory_bound = CB, .check = perfdb_rules_ring, .cost = perfdb_cost_ring },
	{ .name = "ReshapeAndCacheNdKernel", .family = "cache", .memory_bound = MB, .inplace = reshape_cache_inplace, .check = perfdb_rules_reshape_cache, .cost = perfdb_cost_reshape_cache },
	{ .name = "RmsNorm", .family = "norm", .memory_bound = MB, .check = perfdb_rules_rmsnorm, .cost = perfdb_cost_rmsnorm },
	{ .name = "ScatterNdUpdate", .family = "index", .memory_bound = MB, .check = perfdb_rules_scatter, .cost = perfdb_cost_scatter },
	{ .name = "ScatterNdUpdateAiCore", .family = "index", .memory_bound = MB, .check = perfdb_rules_scatter, .cost = perfdb_cost_scatter },
	{ .name = "Slice", .family = "index", .memory_bound = MB, .check = perfdb_rules_slice, .cost = perfdb_cost_gather },
	{ .name = "SliceAiCore", .family = "index", .memory_bound = MB, .check = perfdb_rules_slice, .cost = perfdb_cost_gather },
	{ .name = "SoftmaxV2", .family = "norm", .memory_bound = MB, .check = perfdb_rules_softmax, .cost = perfdb_cost_softmax },
	/*
	 * Sort: O(n log n) compares over data read once; the CPU backend used to
	 * time it cache-warm and the CUDA backend flushed.  One answer now: the
	 * device-side one (an engine's sort input is not cache-resident).
	 */
	{ .name = "Sort", .family = "reduce", .memory_bound = MB, .check = perfdb_rules_sort, .cost = perfdb_cost_move },
	{ .name = "SparseFlashAttention", .family = "attention", .memory_bound = CB, .check = perfdb_rules_sfa, .cost = perfdb_cost_sfa },
	{ .name = "SwiGlu", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_swiglu, .cost = perfdb_cost_swiglu },
	{ .name = "TensorMove", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_tensor_move, .cost = perfdb_cost_move },
	{ .name = "Transpose", .family = "index", .memory_bound = MB, .check = perfdb_rules_transpose, .cost = perfdb_cost_move },
	{ .name = "TransposeBatchMatMul", .family = "matmul", .memory_bound = CB, .check = perfdb_rules_matmul, .cost = perfdb_cost_matmul },
	{ .name = "_triton_rope_siso", .family = "rope", .memory_bound = MB, .check = perfdb_rules_triton_rope, .cost = perfdb_cost_rope },
	{ .name = "mla_preprocess_0_mix_aic", .family = "attention", .memory_bound = CB, .inplace = mla_inplace,
	  .check = perfdb_rules_mla_preprocess, .cost = perfdb_cost_mla_preprocess },
	{ .name = "split_qkv_rmsnorm_rope_kernel", .family = "rope", .memory_bound = MB, .check = perfdb_rules_qkv_rope, .cost = perfdb_cost_qkv_rope },
	/* the operators only PyTorch ops lower to (aten.h), not tables of the seed's list */
	{ .name = "Gelu", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_activation, .cost = perfdb_cost_gelu },
	/* x^2 per element: the exponent is a scalar the trace does not record (docs/ops.md) */
	{ .name = "Pow", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_activation, .cost = perfdb_cost_add },
	{ .name = "RealDiv", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_binary, .cost = perfdb_cost_add },
	{ .name = "ReduceMean", .family = "reduce", .memory_bound = MB, .check = perfdb_rules_reduce_last, .cost = perfdb_cost_argmax },
	{ .name = "ReduceSum", .family = "reduce", .memory_bound = MB, .check = perfdb_rules_reduce_last, .cost = perfdb_cost_argmax },
	{ .name = "Rsqrt", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_activation, .cost = perfdb_cost_rsqrt },
	{ .name = "Sub", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_binary, .cost = perfdb_cost_add },
	{ .name = "Silu", .family = "eltwise", .memory_bound = MB, .check = perfdb_rules_activation, .cost = perfdb_cost_silu },
};
const size_t perfdb_nopdefs = sizeof(perfdb_opdefs) / sizeof(perfdb_opdefs[0]);

const struct perfdb_opdef *perfdb_opdef_find(const char *op)
{
	/* 46 names: a linear scan costs less than one row's tensor setup */
	for (size_t i = 0; op && i < perfdb_nopdefs; i++)
		if (strcmp(perfdb_opdefs[i].name, op) == 0)
			return &perfdb_opdefs[i];
	return NULL;
}

const struct perfdb_opdef *perfdb_opdef_get(const char *op)
{
	static const struct perfdb_opdef plain = { .name = "", .family = "" };
	const struct perfdb_opdef *d = perfdb_opdef_find(op);
	return d ? d : &plain;
}

/* A row's cost through its definition (costs.c and its siblings hold the per-op rules). */
int perfdb_op_cost(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	memset(w, 0, sizeof(*w));
	const struct perfdb_opdef *d = perfdb_opdef_find(c->op);
	if (!d || !d->cost)
		return perfdb_err_set(err, PERFDB_ENOENT, "%s: no operator definition, no cost", c->op);
	if (d->check)
		PERFDB_TRY(d->check(c, err));
	return d->cost(c, w, err);
}
