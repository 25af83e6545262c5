/*
 * The operator layer's costs (opdef.h struct perfdb_op_cost, docs/ops.md
 * "Costs"): every definition has one, and a few ops' FLOPs and bytes
 * against arithmetic worked out by hand in the comments, in particular
 * the ops that touch part of a tensor (the cache updates, gathers,
 * scatters) and attention over its real lengths.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "replay/replay.h"
#include "perfdb/schema.h"
#include "ops/opdef.h"

static void assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)) {
		print_error("got %.17g, want %.17g\n", got, want);
		fail();
	}
}

struct cells {
	const char *const *cols, *const *vals;
	size_t n;
};

static const char *cell_of(const void *ctx, const char *col)
{
	const struct cells *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->cols[i], col))
			return c->vals[i];
	return NULL;
}

/* The cost of one row (its cells optional); the expected return code. */
static int cost(const char *op, const char *ins, const char *idt, const char *outs, const char *odt,
		const struct cells *cells, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_op_case c;
	perfdb_err_clear(err);
	assert_int_equal(perfdb_case_build(op, ins, idt, "", outs, odt, "", &c, err), 0);
	c.nranks = 1;
	if (cells) {
		c.cell = cell_of;
		c.cell_ctx = cells;
	}
	return perfdb_op_cost(&c, w, err);
}

static void test_every_def_has_a_cost(void **state)
{
	(void)state;
	for (size_t i = 0; i < perfdb_nopdefs; i++) {
		if (!perfdb_opdefs[i].cost)
			print_error("%s has no cost\n", perfdb_opdefs[i].name);
		assert_non_null(perfdb_opdefs[i].cost);
	}
	struct perfdb_op_cost w;
	struct perfdb_err err;
	/* an op without a definition has no cost (the report does not plot it) */
	assert_int_equal(cost("ConcatD", "4;4", "DT_BF16;DT_BF16", "8", "DT_BF16", NULL, &w, &err), -PERFDB_ENOENT);
}

static void test_dense(void **state)
{
	(void)state;
	struct perfdb_op_cost w;
	struct perfdb_err err;
	/* MatMulV2 A 128x7168, B (N,K) 2048x7168, C 128x2048, bf16:
	 * FLOPs 2*128*2048*7168 = 3758096384; bytes 2*(917504 + 14680064 + 262144) = 31719424 */
	assert_int_equal(cost("MatMulV2", "128,7168;2048,7168", "DT_BF16;DT_BF16", "128,2048", "DT_BF16", NULL, &w,
			      &err), 0);
	assert_close(w.flops, 3758096384.0);
	assert_close(w.bytes, 31719424.0);
	assert_int_equal(w.unit, PERFDB_OP_UNIT_MATRIX);
	assert_int_equal(w.dtype, PERFDB_DTYPE_BF16);
	/* QuantBatchMatmulV3 x1 (8,64) int8, x2 (32,64) int8, scale (32) fp32 -> (8,32) bf16:
	 * K = 64, FLOPs 2*8*32*64 = 32768; bytes 512 + 2048 + 128 + 512 = 3200 */
	assert_int_equal(cost("QuantBatchMatmulV3", "8,64;32,64;32", "INT8;INT8;FLOAT", "8,32", "DT_BF16", NULL, &w,
			      &err), 0);
	assert_close(w.flops, 32768);
	assert_close(w.bytes, 3200);
	assert_int_equal(w.dtype, PERFDB_DTYPE_INT8);
	/* GroupedMatmul x (10,64), 4 groups of (64,32), out (10,32), bf16: 10 tokens reach all 4 groups:
	 * FLOPs 2*10*64*32 = 40960; bytes 1280 + 16384 + 640 = 18304 */
	assert_int_equal(cost("GroupedMatmul", "10,64;4,64,32", "DT_BF16;DT_BF16", "10,32", "DT_BF16", NULL, &w, &err),
			 0);
	assert_close(w.flops, 40960);
	assert_close(w.bytes, 18304);
	/* 2 tokens reach 2 of the 4 groups: half the weight, 8192 B; bytes 256 + 8192 + 128 = 8576 */
	assert_int_equal(cost("GroupedMatmul", "2,64;4,64,32", "DT_BF16;DT_BF16", "2,32", "DT_BF16", NULL, &w, &err), 0);
	assert_close(w.flops, 8192);
	assert_close(w.bytes, 8576);
	/* RmsNorm x 64x7168 bf16, gamma 7168 -> y bf16, rstd 64x1 fp32: 4 FLOPs per input element,
	 * 4*458752 = 1835008; bytes 2*458752 + 2*7168 + 2*458752 + 4*64 = 1849600; vector unit */
	assert_int_equal(cost("RmsNorm", "\"\"\"64,7168;7168\"\"\"", "DT_BF16;DT_BF16", "\"64,7168;64,1\"",
			      "DT_BF16;FLOAT", NULL, &w, &err), 0);
	assert_close(w.flops, 1835008);
	assert_close(w.bytes, 1849600);
	assert_int_equal(w.unit, PERFDB_OP_UNIT_VECTOR);
	/* Cast 4 int8 -> 4 fp32: data movement, 0 FLOPs, 4 + 16 B */
	assert_int_equal(cost("Cast", "4", "INT8", "4", "FLOAT", NULL, &w, &err), 0);
	assert_close(w.flops, 0);
	assert_close(w.bytes, 20);
	/* a row its op's rules refuse has no cost, for the rule's reason */
	assert_int_equal(cost("MatMulV2", "8,64;16,32", "DT_BF16;DT_BF16", "8,32", "DT_BF16", NULL, &w, &err),
			 -PERFDB_EINVAL);
	assert_string_equal(err.msg, "MatMulV2: input 1 is not (64,32) or its transpose");
}

/* Scalar rope tensors ("," is a present tensor of no dims): the attention
 * plans refuse them, their last dim never read (fuzz_case_build's finding:
 * dims[-1], caught by UBSan in the sanitizer suite). */
static void test_scalar_rope(void **state)
{
	(void)state;
	struct perfdb_op_cost w;
	struct perfdb_err err;
	assert_int_equal(cost("FusedInferAttentionScore", "8,4,64;8,4,64;8,4,64;;;;;;;;;;;;;;;;;;;;;;,;8,4,16",
			      "DT_BF16;DT_BF16;DT_BF16;;;;;;;;;;;;;;;;;;;;;;DT_BF16;DT_BF16", "8,4,64", "DT_BF16", NULL,
			      &w, &err), -PERFDB_EINVAL);
	assert_string_equal(err.msg, "FusedInferAttentionScore: query_rope/key_rope must match query/key but for the rope dim");
	assert_int_equal(cost("SparseFlashAttention", "4,2,16;4,1,16;4,1,16;4,1,2;;;;,;4,1,8",
			      "DT_BF16;DT_BF16;DT_BF16;INT32;;;;DT_BF16;DT_BF16", "4,2,16", "DT_BF16", NULL, &w, &err),
			 -PERFDB_EINVAL);
	assert_string_equal(err.msg, "SparseFlashAttention: rope shapes must match query/key but for the last dim");
}

static void test_partial(void **state)
{
	(void)state;
	struct perfdb_op_cost w;
	struct perfdb_err err;
	/* ReshapeAndCacheNdKernel key, value (4,2,8) bf16 into caches (6,16,2,8) bf16, slots (4) int32:
	 * reads 128 + 128 + 16, writes 64 elements into each cache, 128 + 128: 528 B (the whole caches
	 * would be 2 x 3072 B more, twice) */
	assert_int_equal(cost("ReshapeAndCacheNdKernel", "4,2,8;4,2,8;6,16,2,8;6,16,2,8;4",
			      "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32", "6,16,2,8;6,16,2,8", "DT_BF16;DT_BF16", NULL, &w,
			      &err), 0);
	assert_close(w.bytes, 528);
	assert_close(w.flops, 0);
	/* GatherV2 table (1000,8) fp32, indices (32) int32 -> (32,8) fp32:
	 * indices 128 + rows read 1024 + written 1024 = 2176 (not the 32000 B table) */
	assert_int_equal(cost("GatherV2", "1000,8;32", "FLOAT;INT32", "32,8", "FLOAT", NULL, &w, &err), 0);
	assert_close(w.bytes, 2176);
	/* ScatterNdUpdate var (1000,4) fp32, indices (16,1) int64, updates (16,4) fp32; out is var:
	 * 128 + 256 read, 64 elements written 256: 640 */
	assert_int_equal(cost("ScatterNdUpdate", "1000,4;16,1;16,4", "FLOAT;INT64;FLOAT", "1000,4", "FLOAT", NULL, &w,
			      &err), 0);
	assert_close(w.bytes, 640);
	/* KvRmsNormRopeCache kv (2,1,1,24) bf16 = gamma 16 + rope 8, cos and sin (2,1,1,8), index (2) int64,
	 * k_cache (10,8), ckv_cache (10,16) bf16 updated in place: reads 96 + 32 + 32 + 32 + 16 = 208,
	 * writes 2 rows of 8 and of 16, 32 + 64: 304 B; FLOPs 2 x (4*16 + 3*8) = 176 */
	assert_int_equal(cost("KvRmsNormRopeCache", "2,1,1,24;16;2,1,1,8;2,1,1,8;2;10,8;10,16",
			      "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16", "10,8;10,16", "DT_BF16;DT_BF16",
			      NULL, &w, &err), 0);
	assert_close(w.bytes, 304);
	assert_close(w.flops, 176);
}

static void test_attention(void **state)
{
	(void)state;
	struct perfdb_op_cost w;
	struct perfdb_err err;
	/*
	 * FIA TND, 2 heads of 16, one kv head: q (6,2,16), k and v (10,1,16), out (6,2,16), bf16;
	 * batches q 2 and 4 tokens (cumulative 2,6), kv 4 and 6 (4,10), sparse mode 3 (causal, aligned to
	 * the last key): pairs 2*(4-2) + 2*3/2 = 7 and 4*(6-4) + 4*5/2 = 18, 25 in all;
	 * FLOPs 2 * 2 heads * 25 * (16 + 16) = 3200; bytes q 384 + k 320 + v 320 + out 384 = 1408
	 */
	static const char *const cols[] = { PERFDB_COL_RT_SEQ_VALUES, PERFDB_COL_RT_SEQ_KV_VALUES, "Runtime num_heads",
					    "Runtime input_layout", PERFDB_COL_RT_SPARSE_MODE };
	static const char *const vals[] = { "[2,6]", "[4,10]", "2", "TND", "3" };
	struct cells cells = { cols, vals, 5 };
	assert_int_equal(cost("FusedInferAttentionScore", "6,2,16;10,1,16;10,1,16", "DT_BF16;DT_BF16;DT_BF16",
			      "6,2,16", "DT_BF16", &cells, &w, &err), 0);
	assert_close(w.flops, 3200);
	assert_close(w.bytes, 1408);
	assert_int_equal(w.unit, PERFDB_OP_UNIT_MATRIX);
	/* mode 0 (no mask): 2*4 + 4*6 = 32 pairs, 4096 FLOPs */
	static const char *const vals0[] = { "[2,6]", "[4,10]", "2", "TND", "0" };
	struct cells c0 = { cols, vals0, 5 };
	assert_int_equal(cost("FusedInferAttentionScore", "6,2,16;10,1,16;10,1,16", "DT_BF16;DT_BF16;DT_BF16",
			      "6,2,16", "DT_BF16", &c0, &w, &err), 0);
	assert_close(w.flops, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_def_has_a_cost),
		cmocka_unit_test(test_dense),
		cmocka_unit_test(test_scalar_rope),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_attention),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
