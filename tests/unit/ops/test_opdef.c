/*
 * The operator layer (src/ops/): one definition per seed operator,
 * every backend op defined there, the shared GEMM plan checked against
 * strides worked out by hand for each layout the tables record, the row
 * rules refusing bad rows without any backend, and the shared index spreading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "replay/replay.h"
#include "replay/engine.h"
#include "ops/aten.h"

static void test_defs_are_the_seed_list(void **state)
{
	(void)state;
	for (size_t i = 0; i < perfdb_replay_nops; i++) {
		const struct perfdb_opdef *d = perfdb_opdef_find(perfdb_replay_ops[i]);
		assert_non_null(d);
		assert_string_equal(d->name, perfdb_replay_ops[i]);
		assert_true(d->family && *d->family);
	}
	/* every other definition is an operator a PyTorch op lowers to, and every such target is defined */
	size_t extra = 0;
	for (size_t i = 0; i < perfdb_nopdefs; i++) {
		if (perfdb_replay_op_known(perfdb_opdefs[i].name))
			continue;
		int target = 0;
		for (size_t a = 0; a < perfdb_aten_nops; a++)
			target |= strcmp(perfdb_aten_ops[a].target, perfdb_opdefs[i].name) == 0;
		assert_true(target);
		extra++;
	}
	assert_int_equal(perfdb_nopdefs, perfdb_replay_nops + extra);
	for (size_t a = 0; a < perfdb_aten_nops; a++) {
		assert_non_null(perfdb_opdef_find(perfdb_aten_ops[a].target));
		assert_null(perfdb_opdef_find(perfdb_aten_ops[a].stem));
	}
	assert_null(perfdb_opdef_find("NotAnOp"));
	assert_null(perfdb_opdef_find(NULL));
	/* the fallback has no rules: an op outside the list is replayed plainly */
	const struct perfdb_opdef *p = perfdb_opdef_get("NotAnOp");
	assert_non_null(p);
	assert_false(p->memory_bound || p->collective || p->check || p->skip || p->inplace);
}

/* Every op a backend implements is a defined op (so the engine's decisions come from one table). */
static void test_cpu_ops_are_defined(void **state)
{
	(void)state;
	size_t n = 0;
	for (size_t i = 0; i < perfdb_nopdefs; i++)
		if (perfdb_backend_cpu.supports_op(perfdb_opdefs[i].name))
			n++;
	/* the CPU backend covers the whole seed list (docs/ops.md) */
	assert_int_equal(n, perfdb_nopdefs);
	assert_false(perfdb_backend_cpu.supports_op("NotAnOp"));
}

/* The properties the engine's method depends on, as docs/ops.md states them. */
static void test_properties(void **state)
{
	(void)state;
	assert_true(perfdb_opdef_find("DispatchFFNCombine")->collective);
	assert_non_null(perfdb_opdef_find("DispatchFFNCombine")->skip);
	assert_non_null(perfdb_opdef_find("FusedInferAttentionScore")->skip);
	assert_false(perfdb_opdef_find("MatMulV2")->memory_bound);
	assert_true(perfdb_opdef_find("RmsNorm")->memory_bound);
	assert_true(perfdb_opdef_find("Sort")->memory_bound);
	size_t ncoll = 0;
	for (size_t i = 0; i < perfdb_nopdefs; i++)
		ncoll += perfdb_opdefs[i].collective;
	assert_int_equal(ncoll, 1);
	/* KV-cache writers: each in-place output names an input slot that exists in a full row */
	struct perfdb_op_case c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(perfdb_opdef_find("ReshapeAndCacheNdKernel")->inplace(&c, 0), 2);
	assert_int_equal(perfdb_opdef_find("ReshapeAndCacheNdKernel")->inplace(&c, 1), 3);
	assert_int_equal(perfdb_opdef_find("ReshapeAndCacheNdKernel")->inplace(&c, 2), -1);
	assert_int_equal(perfdb_opdef_find("KvRmsNormRopeCache")->inplace(&c, 0), 5);
	assert_int_equal(perfdb_opdef_find("KvRmsNormRopeCache")->inplace(&c, 1), 6);
	assert_int_equal(perfdb_opdef_find("mla_preprocess_0_mix_aic")->inplace(&c, 1), 19);
	assert_int_equal(perfdb_opdef_find("mla_preprocess_0_mix_aic")->inplace(&c, 3), 20);
	assert_int_equal(perfdb_opdef_find("mla_preprocess_0_mix_aic")->inplace(&c, 0), -1);
}

static void plan_of(const char *op, const char *ins, const char *outs, struct perfdb_gemm *g, int want)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, "", "", outs, "", "", &c, &err), 0);
	assert_int_equal(perfdb_gemm_plan(&c, g, &err), want);
}

static void test_gemm_plans(void **state)
{
	(void)state;
	struct perfdb_gemm g;
	/* x (8,64) · w (32,64) stored (N,K): M 8, K 64, N 32; B read with row stride 1, col stride K */
	plan_of("MatMulV2", "8,64;32,64", "8,32", &g, 0);
	assert_int_equal(g.bt, 1);
	assert_int_equal(g.m, 8);
	assert_int_equal(g.k, 64);
	assert_int_equal(g.n, 32);
	assert_int_equal(g.btrans, 1);
	assert_int_equal(g.sb[1], 1);
	assert_int_equal(g.sb[2], 64);
	assert_int_equal(g.sa[1], 64);
	assert_int_equal(g.sc[1], 32);
	/* A given transposed: stored (K,M) = (64,8); A row stride 1, col stride M */
	plan_of("MatMulV3", "64,8;64,32", "8,32", &g, 0);
	assert_int_equal(g.m, 8);
	assert_int_equal(g.k, 64);
	assert_int_equal(g.btrans, 0);
	assert_int_equal(g.sa[1], 1);
	assert_int_equal(g.sa[2], 8);
	/* BatchMatMulV2 (4,8,16)·(4,16,32): batch strides M*K, K*N, M*N */
	plan_of("BatchMatMulV2", "4,8,16;4,16,32", "4,8,32", &g, 0);
	assert_int_equal(g.bt, 4);
	assert_int_equal(g.sa[0], 8 * 16);
	assert_int_equal(g.sb[0], 16 * 32);
	assert_int_equal(g.sc[0], 8 * 32);
	/* TransposeBatchMatMul (M,B,K) = (8,4,16) · (B,K,N) = (4,16,32) -> (M,B,N): batch is dim 1 */
	plan_of("TransposeBatchMatMul", "8,4,16;4,16,32", "8,4,32", &g, 0);
	assert_int_equal(g.bt, 4);
	assert_int_equal(g.m, 8);
	assert_int_equal(g.sa[0], 16);
	assert_int_equal(g.sa[1], 4 * 16);
	assert_int_equal(g.sc[0], 32);
	assert_int_equal(g.sc[1], 4 * 32);
	/* TransposeBatchMatMul (B,M,K) = (4,8,16) in, (M,B,N) = (8,4,32) out: only the output is transposed */
	plan_of("TransposeBatchMatMul", "4,8,16;4,16,32", "8,4,32", &g, 0);
	assert_int_equal(g.bt, 4);
	assert_int_equal(g.m, 8);
	assert_int_equal(g.sa[0], 8 * 16);
	assert_int_equal(g.sa[1], 16);
	assert_int_equal(g.sc[0], 32);
	assert_int_equal(g.sc[1], 4 * 32);
	/* shapes that fit no layout */
	plan_of("MatMulV2", "8,64;33,64", "8,32", &g, -PERFDB_EINVAL);
	plan_of("MatMulV2", "8,64", "8,32", &g, -PERFDB_EINVAL);
	plan_of("BatchMatMulV2", "4,8,16;5,16,32", "4,8,32", &g, -PERFDB_EINVAL);
}

/* A row refused by its definition alone (no backend), with the message the backends gave. */
static void refused(const char *op, const char *ins, const char *idt, const char *outs, const char *odt,
		    const char *want)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", &c, &err), 0);
	const struct perfdb_opdef *d = perfdb_opdef_find(op);
	assert_non_null(d);
	assert_non_null(d->check);
	int rc = d->check(&c, &err);
	if (rc != -PERFDB_EINVAL)
		fail_msg("%s: accepted (%d), expected \"%s\"", op, rc, want);
	assert_string_equal(err.msg, want);
	/* the same through the one sequence every caller runs, with no backend */
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_case_check(d, NULL, &c, &err), -PERFDB_EINVAL);
	assert_string_equal(err.msg, want);
}

static void test_row_rules(void **state)
{
	(void)state;
	/* norm */
	refused("RmsNorm", "4,8;7", "DT_BF16;DT_BF16", "4,8", "DT_BF16", "RmsNorm: gamma must have the last dim of x");
	refused("SoftmaxV2", "4,8", "INT32", "4,8", "DT_FLOAT", "SoftmaxV2: input 0 must be an fp32/bf16/fp16 tensor");
	refused("AddRmsNormBias", "4,8;4,7;8", "DT_FLOAT;DT_FLOAT;DT_FLOAT", "4,8", "DT_FLOAT",
		"AddRmsNormBias: x1 and x2 differ in size");
	/* eltwise */
	refused("SwiGlu", "4,7", "DT_FLOAT", "4,3", "DT_FLOAT", "SwiGlu: output must halve the last dim of input 0");
	refused("SwiGlu", "2", "DT_FLOAT", ",", "DT_FLOAT", "SwiGlu: output must halve the last dim of input 0");
	refused("Add", "4,8;3", "DT_FLOAT;DT_FLOAT", "4,8", "DT_FLOAT", "Add: input 1 does not broadcast to the output");
	refused("TensorMove", "4,8", "DT_FLOAT", "4,4", "DT_FLOAT", "TensorMove: input and output differ in size");
	/* index */
	refused("GatherV2", "16,8;4", "DT_FLOAT;DT_FLOAT", "4,8", "DT_FLOAT", "GatherV2: indices must be integers");
	refused("Slice", "4,8", "DT_FLOAT", "4,9", "DT_FLOAT", "Slice: output dim 1 exceeds the input");
	refused("Transpose", "2,4,6", "DT_FLOAT", "4,6,2", "DT_FLOAT", "Transpose: dims 0 and 1 are not swapped");
	refused("ScatterNdUpdateAiCore", "8,2;3,1;3,3", "DT_FLOAT;INT32;DT_FLOAT", "8,2", "DT_FLOAT",
		"ScatterNdUpdate: updates must be (N, var.shape[1:]) of var's dtype");
	/* reduce */
	refused("ArgMaxV2", "4,8", "DT_FLOAT", "4,3", "INT32", "ArgMaxV2: the output is not the input less one dim");
	refused("Sort", "4,8", "DT_FLOAT", "4,8;4,8", "DT_FLOAT;DT_FLOAT",
		"Sort: indices output must be int32/int64 of the input's size");
	/* misc */
	refused("Cast", "4,8", "DT_FLOAT", "4,9", "DT_BF16", "Cast: input and output differ in size");
	refused("Mul", "4,8;3", "DT_FLOAT;DT_FLOAT", "4,8", "DT_FLOAT", "Mul: input 1 does not broadcast to the output");
	refused("LayerNormV3", "4,8;7", "DT_FLOAT;DT_FLOAT", "4,8", "DT_FLOAT",
		"LayerNormV3: gamma's size must match x's trailing dims");
	/* rope */
	refused("InterleaveRope", "2,4,8,64;2,1,8,32;2,1,8,32", "DT_BF16;DT_BF16;DT_BF16", "2,4,8,64", "DT_BF16",
		"InterleaveRope: cos and sin must both be (B or 1, 1, S or 1, D)");
	refused("split_qkv_rmsnorm_rope_kernel", "4,384;128", "DT_BF16;DT_BF16", "4,256;4,64;4,64",
		"DT_BF16;DT_BF16;DT_BF16", "split_qkv_rmsnorm_rope_kernel: q and kv widths must be multiples of the head dim 128");
	refused("_triton_rope_siso", "4,8,64;;16,64", "DT_BF16;;DT_BF16", "4,8,32", "DT_BF16",
		"_triton_rope_siso: output 0 must have q's shape");
	/* cache */
	refused("ReshapeAndCacheNdKernel", "4,2,64;4,2,64;1,2,2,64;8,2,2,64;4", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32",
		"", "", "ReshapeAndCacheNdKernel: cache 2 must hold at least 4 rows of input 0 (both caches the same count)");
	refused("KvRmsNormRopeCache", "2,1,4,576;512;2,1,4,64;2,1,4,64;7;16,16,1,64;16,16,1,512",
		"DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16", "", "",
		"KvRmsNormRopeCache: index must hold one slot per token (8)");
}

/*
 * The matmul, mla_preprocess and attention families' rules: what both
 * backends refused, now refused by the definition alone.  The CPU's dtype
 * limits (float GEMMs) stay its check, so an INT8 MatMul passes here.
 */
/* A hand-made row's Runtime cells (FusedInferAttentionScore's rules read them). */
struct fia_row {
	const char *const *cols;
	const char *const *vals;
};

static const char *fia_cell(const void *ctx, const char *col)
{
	const struct fia_row *r = ctx;
	for (size_t i = 0; i < 3; i++)
		if (strcmp(r->cols[i], col) == 0)
			return r->vals[i];
	return NULL;
}

static void test_row_rules_matmul_attention(void **state)
{
	(void)state;
	/* matmul */
	refused("MatMulV2", "8,64;16,32", "DT_BF16;DT_BF16", "8,32", "DT_BF16",
		"MatMulV2: input 1 is not (64,32) or its transpose");
	refused("BatchMatMulV2", "2,8,64;3,64,32", "DT_FLOAT;DT_FLOAT", "2,8,32", "DT_FLOAT",
		"BatchMatMulV2: batch of input 1 does not match");
	refused("TransposeBatchMatMul", "8,2,64", "DT_BF16", "8,2,32", "DT_BF16",
		"TransposeBatchMatMul needs 2 inputs and 1 output");
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("MatMulV2", "8,64;32,64", "INT8;INT8", "", "8,32", "INT32", "", &c,
						  &err), 0);
	assert_int_equal(perfdb_opdef_find("MatMulV2")->check(&c, &err), 0);
	/* mla_preprocess (aclnn slot order; an INT8 kv_cache is the op's int8_nzcache, the CPU's limit) */
#define MLA_DT(kvc) "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_INT8;DT_INT8;DT_FLOAT;DT_INT32;DT_BF16;DT_BF16;DT_BF16;" \
	"DT_INT8;DT_INT8;DT_FLOAT;DT_INT32;DT_BF16;DT_BF16;DT_BF16;DT_BF16;" kvc ";DT_BF16;DT_INT32;DT_BF16;DT_BF16"
	static const char mla_outs[] = "3,2,32;4,4,1,32;3,2,8;4,4,1,8";
	refused("mla_preprocess_0_mix_aic",
		"3,64;64;64;1;1;72,60;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2",
		MLA_DT("DT_BF16"), mla_outs, "DT_BF16;DT_BF16;DT_BF16;DT_BF16",
		"mla_preprocess_0_mix_aic: in5 wdqkv has K=60, expected 64");
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("mla_preprocess_0_mix_aic",
						  "3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;"
						  "4,4,1,32;4,4,1,8;3;1;2", MLA_DT("DT_INT8"), "", mla_outs,
						  "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "", &c, &err), 0);
	assert_int_equal(perfdb_opdef_find("mla_preprocess_0_mix_aic")->check(&c, &err), 0);
#undef MLA_DT
	/* FusedInferAttentionScore: the slots, layouts, sparse modes and num_heads every backend applies */
	refused("FusedInferAttentionScore", "8,4,64;8,4,64;", "DT_BF16;DT_BF16;", "8,4,64", "DT_BF16",
		"FusedInferAttentionScore: slot 2 (value) is empty");
	static const char *const fia_cols[] = { "Runtime input_layout", "Runtime sparse_mode", "Runtime num_heads" };
	static const char *const fia_bad[][3] = {
		{ "BSH", NULL, NULL }, { NULL, "1", NULL }, { NULL, NULL, "8" }, { "TND", "[4]", NULL },
	};
	static const char *const fia_want[] = {
		"FusedInferAttentionScore: input_layout BSH not supported (TND, BNSD, BNSD_NBSD)",
		"FusedInferAttentionScore: sparse_mode 1 not supported (0, 2, 3)",
		"FusedInferAttentionScore: Runtime num_heads disagrees with the query's 4 heads",
		NULL,   /* a sparse mode not every backend reads as an integer: the backends' limit */
	};
	for (size_t i = 0; i < sizeof(fia_want) / sizeof(fia_want[0]); i++) {
		struct fia_row row = { fia_cols, fia_bad[i] };
		perfdb_err_clear(&err);
		assert_int_equal(perfdb_engine_build_case("FusedInferAttentionScore", "8,4,64;8,4,64;8,4,64",
							  "DT_BF16;DT_BF16;DT_BF16", "", "8,4,64", "DT_BF16", "", &c,
							  &err), 0);
		c.cell = fia_cell;
		c.cell_ctx = &row;
		int rc = perfdb_opdef_find("FusedInferAttentionScore")->check(&c, &err);
		if (!fia_want[i]) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -PERFDB_EINVAL);
		assert_string_equal(err.msg, fia_want[i]);
	}
	/* the DeepSeek-V3.2 / MLA kernels: their plans are the definitions' (the float dtypes the CPU's) */
	refused("SparseFlashAttention", "4,2,16;4,1,16;4,1,16;4,1,2", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "4,2,16",
		"DT_BF16", "SparseFlashAttention: slot 3 (sparse_indices) must be an integer tensor");
	refused("LightningIndexer", "4,2,16;4,1,16;4,3", "DT_BF16;DT_BF16;DT_BF16", "4,1,2", "DT_INT32",
		"LightningIndexer: weights must hold one value per query head");
	refused("RINGMLAPrefillBF16Kernel", "4,3,16;4,3,8;4,2,16;4,2,8;4,2,16", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16",
		"4,3,16", "DT_BF16", "RINGMLAPrefillBF16Kernel: 3 heads are not a multiple of 2 kv heads");
	/* an integer query is the CPU kernel's limit, not the op's rule */
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("RINGMLAPrefillBF16Kernel", "4,2,16;4,2,8;4,2,16;4,2,8;4,2,16",
						  "INT32;DT_BF16;DT_BF16;DT_BF16;DT_BF16", "", "4,2,16", "DT_BF16", "",
						  &c, &err), 0);
	assert_int_equal(perfdb_opdef_find("RINGMLAPrefillBF16Kernel")->check(&c, &err), 0);
}

/* ---- the MoE, quantisation and DFC families' rules (opdef-checks3) ---- */
static void test_row_rules_moe_quant_dfc(void **state)
{
	(void)state;
	/* moe */
	refused("GroupedMatmul", "10,64;4,64,32", "DT_BF16;DT_BF16", "9,32", "DT_BF16",
		"GroupedMatmul: x (T,K) and output 0 (T,N) must be 2-D with the same T");
	refused("GroupedMatmulSwigluQuant", "10,64;4,64,32", "INT8;INT8", "10,20", "INT8",
		"GroupedMatmulSwigluQuant: output 0 must be (T,N/2) for the weight's N = 32");
	refused("MoeGatingTopK", "4,16", "INT32", "4,2;4,2", "DT_FLOAT;INT32", "MoeGatingTopK: x must be a float (T,E)");
	refused("MoeTokenPermute", "4,8;4,2", "DT_FLOAT;INT32", "9,8", "DT_FLOAT",
		"MoeTokenPermute: 9 output rows exceed T*k = 8");
	refused("MoeTokenUnpermute", "8,16;8", "DT_FLOAT;INT32", "3,16", "DT_FLOAT",
		"MoeTokenUnpermute: permuted rows (8) must be T*k for T = 3, sorted_indices (T*k,)");
	/* quant (QuantBatchMatmulV3's rules are still each backend's) */
	refused("DynamicQuant", "4,8;7", "DT_BF16;DT_FLOAT", "4,8", "INT8", "DynamicQuant: smooth_scales must be a float (8,)");
	refused("AscendQuantV2", "4,8;8", "DT_FLOAT;DT_FLOAT", "4,8", "INT16",
		"AscendQuantV2: output 0 must have the input's shape (int8)");
	assert_null(perfdb_opdef_find("QuantBatchMatmulV3")->check);
	/* dfc */
	refused("DispatchFFNCombine", "12,32;3,32,16;3,7,32;12,2;48;96;12,2",
		"DT_FLOAT;DT_FLOAT;DT_FLOAT;INT32;DT_FLOAT;DT_FLOAT;DT_FLOAT", "12,32", "DT_FLOAT",
		"DispatchFFNCombine: w2 must be (E,n/2,H) = (3,8,32)");
}

/* The indices every backend replays: spread over the table, distinct rows for a scatter that fits. */
static void test_gather_indices(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("ScatterNdUpdate", "64,4;64,1;64,4", "DT_FLOAT;INT64;DT_FLOAT", "",
						  "", "", "", &c, &err), 0);
	int64_t ix[64] = { 0 };
	c.in[1].data = ix;
	assert_int_equal(perfdb_gather_indices(&c, &err), 0);
	int seen[64] = { 0 };
	for (size_t i = 0; i < 64; i++) {
		assert_in_range(ix[i], 0, 63);
		seen[ix[i]]++;
	}
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(perfdb_engine_build_case("GatherV2", "1000,8;32", "DT_FLOAT;INT32", "", "32,8", "DT_FLOAT",
						  "", &c, &err), 0);
	int32_t g[32] = { 0 };
	c.in[1].data = g;
	assert_int_equal(perfdb_gather_indices(&c, &err), 0);
	int distinct = 0;
	for (size_t i = 0; i < 32; i++) {
		assert_in_range(g[i], 0, 999);
		distinct += i == 0 || g[i] != g[i - 1];
	}
	assert_true(distinct > 8);   /* not the 8 cache-hot rows randint(0, 8) gave */
}

static void test_even_groups(void **state)
{
	(void)state;
	/* 10 tokens over 4 groups: 3,3,2,2 -> cumulative 3,6,8,10 */
	assert_int_equal(perfdb_even_group_end(10, 4, 0), 3);
	assert_int_equal(perfdb_even_group_end(10, 4, 1), 6);
	assert_int_equal(perfdb_even_group_end(10, 4, 2), 8);
	assert_int_equal(perfdb_even_group_end(10, 4, 3), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defs_are_the_seed_list),
		cmocka_unit_test(test_cpu_ops_are_defined),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_gemm_plans),
		cmocka_unit_test(test_even_groups),
		cmocka_unit_test(test_row_rules),
		cmocka_unit_test(test_row_rules_matmul_attention),
		cmocka_unit_test(test_row_rules_moe_quant_dfc),
		cmocka_unit_test(test_gather_indices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
