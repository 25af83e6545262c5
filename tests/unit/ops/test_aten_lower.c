/*
 * PyTorch op rows lowered to the operators doing their work
 * (src/ops/aten.h, docs/ops.md "PyTorch operators").  Expected
 * targets, shapes and GEMM plans are worked out by hand from aten's
 * schemas (native_functions.yaml argument order) and its shape rules;
 * rows the slots cannot describe must fail with the reason, never be
 * guessed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "replay/replay.h"
#include "replay/engine.h"
#include "ops/attention.h"
#include "ops/aten.h"
#include "ops/opdef.h"

static struct perfdb_err err;

static void build(const char *op, const char *ins, const char *idt, const char *outs, const char *odt,
		  struct perfdb_op_case *c)
{
	perfdb_err_clear(&err);
	int rc = perfdb_case_build(op, ins, idt, "", outs, odt, "", c, &err);
	if (rc != 0)
		fail_msg("%s: %s", op, err.msg);
}

static int build_fails(const char *op, const char *ins, const char *idt, const char *outs, const char *odt,
		       const char *why)
{
	struct perfdb_op_case c;
	perfdb_err_clear(&err);
	int rc = perfdb_case_build(op, ins, idt, "", outs, odt, "", &c, &err);
	if (rc == 0)
		fail_msg("%s lowered to %s", op, c.op);
	if (!strstr(err.msg, why))
		fail_msg("%s: '%s' lacks '%s'", op, err.msg, why);
	return rc;
}

static void dims_are(const struct perfdb_tensor *t, size_t nd, const int64_t *d)
{
	assert_true(t->present);
	assert_int_equal(t->ndims, nd);
	for (size_t i = 0; i < nd; i++)
		assert_int_equal(t->dims[i], d[i]);
}

#define DIMS(t, ...) dims_are(t, sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (int64_t[]){ __VA_ARGS__ })

static void plan(const struct perfdb_op_case *c, int64_t bt, int64_t m, int64_t n, int64_t k, int btrans)
{
	struct perfdb_gemm g;
	perfdb_err_clear(&err);
	if (perfdb_gemm_plan(c, &g, &err) != 0)
		fail_msg("%s: %s", c->op, err.msg);
	assert_int_equal(g.bt, bt);
	assert_int_equal(g.m, m);
	assert_int_equal(g.n, n);
	assert_int_equal(g.k, k);
	assert_int_equal(g.btrans, btrans);
}

/* The table: every stem an aten op, every target a defined operator, stems found by name only. */
static void test_table(void **state)
{
	(void)state;
	assert_true(perfdb_aten_nops >= 20);
	for (size_t i = 0; i < perfdb_aten_nops; i++) {
		assert_memory_equal(perfdb_aten_ops[i].stem, "aten.", 5);
		assert_non_null(perfdb_opdef_find(perfdb_aten_ops[i].target));
		assert_ptr_equal(perfdb_aten_find(perfdb_aten_ops[i].stem), &perfdb_aten_ops[i]);
		assert_string_equal(perfdb_replay_aten_target(perfdb_aten_ops[i].stem), perfdb_aten_ops[i].target);
	}
	assert_null(perfdb_aten_find("aten::mm"));   /* the table stem, not the profiler's name */
	assert_null(perfdb_aten_find("MatMulV2"));
	assert_null(perfdb_replay_aten_target("aten.cat"));   /* its tensor list is not recorded */
}

/*
 * The GEMMs.  A square (64,64) B is what the shapes alone cannot place:
 * mm's B is (K,N) (btrans 0), linear's weight (N,K) (btrans 1).
 */
static void test_gemms(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	build("aten.mm", "8,64;64,64", "DT_BF16;DT_BF16", "8,64", "DT_BF16", &c);
	assert_string_equal(c.op, "MatMulV2");
	assert_ptr_equal(c.def, perfdb_opdef_find("MatMulV2"));
	assert_int_equal(c.nin, 2);
	DIMS(&c.out[0], 8, 64);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_BF16);
	plan(&c, 1, 8, 64, 64, 0);

	build("aten.linear", "8,64;64,64;", "DT_BF16;DT_BF16;", "8,64", "DT_BF16", &c);
	assert_string_equal(c.op, "MatMulV2");
	plan(&c, 1, 8, 64, 64, 1);
	/* a 3-D input folds its leading dims into M: (2,8,64)·(128,64)ᵀ -> (16,128) */
	build("aten.linear", "2,8,64;128,64;128", "FLOAT;FLOAT;FLOAT", "", "", &c);
	DIMS(&c.in[0], 16, 64);
	DIMS(&c.out[0], 16, 128);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_FLOAT);
	plan(&c, 1, 16, 128, 64, 1);

	/* addmm(bias, mat1, mat2, beta, alpha): the GEMM of slots 1 and 2 (the real Kineto trace's row) */
	build("aten.addmm", "256;2048,6948;6948,256;;", "FLOAT;FLOAT;FLOAT;;", "2048,256", "FLOAT", &c);
	assert_string_equal(c.op, "MatMulV2");
	DIMS(&c.in[0], 2048, 6948);
	DIMS(&c.in[1], 6948, 256);
	plan(&c, 1, 2048, 256, 6948, 0);

	build("aten.bmm", "4,8,16;4,16,8", "DT_BF16;DT_BF16", "4,8,8", "DT_BF16", &c);
	assert_string_equal(c.op, "BatchMatMulV2");
	plan(&c, 4, 8, 8, 16, 0);
	/* square (4,8,8)·(4,8,16): B is (K,N) */
	build("aten.bmm", "4,8,8;4,8,16", "DT_BF16;DT_BF16", "", "", &c);
	plan(&c, 4, 8, 16, 8, 0);
	build("aten.baddbmm", "4,8,8;4,8,16;4,16,8;;", "FLOAT;FLOAT;FLOAT;;", "", "", &c);
	assert_string_equal(c.op, "BatchMatMulV2");
	plan(&c, 4, 8, 8, 16, 0);
}

/* matmul by aten's rank rules. */
static void test_matmul(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	build("aten.matmul", "8,64;64,128", "DT_BF16;DT_BF16", "8,128", "DT_BF16", &c);
	assert_string_equal(c.op, "MatMulV2");
	plan(&c, 1, 8, 128, 64, 0);
	/* (2,3,8,64)·(64,32): leading dims fold into M = 48 */
	build("aten.matmul", "2,3,8,64;64,32", "FLOAT;FLOAT", "", "", &c);
	assert_string_equal(c.op, "MatMulV2");
	DIMS(&c.out[0], 48, 32);
	plan(&c, 1, 48, 32, 64, 0);
	/* (B,H,S,D)·(B,H,D,S): batch B·H = 6 */
	build("aten.matmul", "2,3,8,16;2,3,16,8", "FLOAT;FLOAT", "", "", &c);
	assert_string_equal(c.op, "BatchMatMulV2");
	DIMS(&c.out[0], 6, 8, 8);
	plan(&c, 6, 8, 8, 16, 0);
	/* vector · matrix: (1,K)·(K,N); matrix · vector: (M,K)·(K,1) */
	build("aten.matmul", "64;64,32", "FLOAT;FLOAT", "", "", &c);
	plan(&c, 1, 1, 32, 64, 0);
	build("aten.matmul", "8,64;64", "FLOAT;FLOAT", "", "", &c);
	plan(&c, 1, 8, 1, 64, 0);
	build_fails("aten.matmul", "2,8,16;3,16,8", "FLOAT;FLOAT", "", "", "broadcast batch");
	build_fails("aten.matmul", "8,16;3,16,8", "FLOAT;FLOAT", "", "", "broadcasts self");
	build_fails("aten.mm", "8,64;32,64", "FLOAT;FLOAT", "", "", "K=64 differs from the weight's 32");
	build_fails("aten.mm", "8,64", "FLOAT", "", "", "mat2 slot records no tensor shape");
}

/* Scaled-dot-product attention as FusedInferAttentionScore BNSD: GQA (8 query heads, 2 kv heads). */
static void test_sdpa(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	build("aten._scaled_dot_product_flash_attention", "2,8,128,64;2,2,256,64;2,2,256,64;;;;",
	      "DT_BF16;DT_BF16;DT_BF16;;;;", "", "", &c);
	assert_string_equal(c.op, "FusedInferAttentionScore");
	assert_int_equal(c.nin, 3);
	DIMS(&c.out[0], 2, 8, 128, 64);
	struct perfdb_fia_plan f;
	perfdb_err_clear(&err);
	int rc = perfdb_fia_plan(&c, &f, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(f.layout, PERFDB_FIA_BNSD);
	assert_int_equal(f.out_nbsd, 0);
	assert_int_equal(f.nb, 2);
	assert_int_equal(f.hq, 8);
	assert_int_equal(f.hkv, 2);
	assert_int_equal(f.sq, 128);
	assert_int_equal(f.skv, 256);
	assert_int_equal(f.kvlen[1], 256);
	assert_int_equal(f.sparse, 0);   /* is_causal is not recorded: full attention */
	perfdb_fia_plan_release(&f);
	build_fails("aten.scaled_dot_product_attention", "16,128,64;16,128,64;16,128,64", "FLOAT;FLOAT;FLOAT", "",
		    "", "query must be 4-D");
}

/* One input, its shape out; norms take their weight; add/mul put the broadcast operand second. */
static void test_eltwise_norm(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	build("aten._softmax", "4,8,8;;", "DT_BF16;;", "4,8,8", "DT_BF16", &c);
	assert_string_equal(c.op, "SoftmaxV2");
	DIMS(&c.out[0], 4, 8, 8);
	/* _softmax(half_to_float): the recorded output dtype wins */
	build("aten._softmax", "4,8;;", "DT_BF16;;", "4,8", "FLOAT", &c);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_FLOAT);
	build("aten.silu", "8,128", "DT_BF16", "", "", &c);
	assert_string_equal(c.op, "Silu");
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_BF16);
	build("aten.gelu", "8,128;", "FLOAT;", "", "", &c);
	assert_string_equal(c.op, "Gelu");

	build("aten.native_layer_norm", "8,64;;64;64;", "DT_BF16;;DT_BF16;DT_BF16;", "8,64", "DT_BF16", &c);
	assert_string_equal(c.op, "LayerNormV3");
	assert_int_equal(c.nin, 3);
	DIMS(&c.in[1], 64);
	DIMS(&c.out[0], 8, 64);
	build_fails("aten.layer_norm", "8,64;;;;;", "FLOAT;;;;;", "", "", "normalised shape");
	build("aten.rms_norm", "8,64;;64;", "DT_BF16;;DT_BF16;", "", "", &c);
	assert_string_equal(c.op, "RmsNorm");
	assert_int_equal(c.nin, 2);

	build("aten.add", "8,64;8,64;", "DT_BF16;DT_BF16;", "8,64", "DT_BF16", &c);
	assert_string_equal(c.op, "Add");
	assert_int_equal(c.nin, 2);
	/* a scalar other (empty slot): the target's absent operand */
	build("aten.add", "8,1;;", "FLOAT;DOUBLE;", "8,1", "FLOAT", &c);
	assert_int_equal(c.nin, 1);
	/* (64,) * (8,64): the bigger operand first, the output (8,64) */
	build("aten.mul", "64;8,64", "DT_BF16;DT_BF16", "", "", &c);
	assert_string_equal(c.op, "Mul");
	DIMS(&c.in[0], 8, 64);
	DIMS(&c.in[1], 64);
	DIMS(&c.out[0], 8, 64);
	/* in place: self stays the output */
	build("aten.mul_", "8,64;64", "FLOAT;FLOAT", "", "", &c);
	DIMS(&c.out[0], 8, 64);
	/* (8,64) * (8,1): numpy's column broadcast, which Mul's rule takes; (8,64) * (4,64) it refuses */
	build("aten.mul", "8,64;8,1", "FLOAT;FLOAT", "8,64", "FLOAT", &c);
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
	build("aten.mul", "8,64;4,64", "FLOAT;FLOAT", "8,64", "FLOAT", &c);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "does not broadcast"));

	/* sub and div as Sub and RealDiv; div by a Python float (a bare double) divides by nothing */
	build("aten.sub", "8,64;64", "FLOAT;FLOAT", "", "", &c);
	assert_string_equal(c.op, "Sub");
	build("aten.div", "1,16,512,512;", "DT_BF16;DOUBLE", "1,16,512,512", "DT_BF16", &c);
	assert_string_equal(c.op, "RealDiv");
	assert_int_equal(c.nin, 1);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
}

/* The ops of a decoder's RMSNorm and the like: pow, rsqrt, mean, sum, fill_, clone. */
static void test_unary_reduce(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* pow(x, 2.0): the exponent is not recorded; x's shape out */
	build("aten.pow", "1,512,1024;", "FLOAT;", "1,512,1024", "FLOAT", &c);
	assert_string_equal(c.op, "Pow");
	assert_int_equal(c.nin, 1);
	DIMS(&c.out[0], 1, 512, 1024);
	build("aten.rsqrt", "8,1", "FLOAT", "", "", &c);
	assert_string_equal(c.op, "Rsqrt");
	DIMS(&c.out[0], 8, 1);
	/* a 0-d self (no dims, a dtype) reads as an absent slot: refused, named */
	build_fails("aten.rsqrt", "", "FLOAT", "", "", "records no tensor shape");
	/* mean(x, [-1], keepdim): over the last dim, which stays as 1 */
	build("aten.mean", "8,1,1024;;;", "FLOAT;;;", "", "", &c);
	assert_string_equal(c.op, "ReduceMean");
	DIMS(&c.out[0], 8, 1, 1);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
	build("aten.sum", "4,6;;;", "DT_BF16;;;", "", "", &c);
	assert_string_equal(c.op, "ReduceSum");
	DIMS(&c.out[0], 4, 1);
	build_fails("aten.sum", ";;;", ";;;", "", "", "records no tensor shape");
	/* fill_(self, value): writes self, reads no tensor */
	build("aten.fill_", "4,8;", "DT_BF16;", "", "", &c);
	assert_string_equal(c.op, "Fill");
	assert_int_equal(c.nin, 0);
	DIMS(&c.out[0], 4, 8);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
	/* masked_fill(scores, mask, -inf): the mask broadcast trailing-wise, the value a scalar */
	build("aten.masked_fill", "4,8,8;8,8;", "DT_BF16;BOOL;", "4,8,8", "DT_BF16", &c);
	assert_string_equal(c.op, "MaskedFill");
	assert_int_equal(c.nin, 2);
	DIMS(&c.in[1], 8, 8);
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
	build_fails("aten.masked_fill_", "4,8,8;;", "DT_BF16;;", "", "", "mask slot records no tensor shape");
	build("aten.clone", "8,16,64;", "DT_BF16;", "", "", &c);
	assert_string_equal(c.op, "TensorMove");
	assert_int_equal(perfdb_case_check(c.def, NULL, &c, &err), 0);
}

/* Gathers and copies. */
static void test_data_movement(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	build("aten.embedding", "32000,64;4,16;;;", "DT_BF16;INT64;;;", "", "", &c);
	assert_string_equal(c.op, "GatherV2");
	DIMS(&c.out[0], 4, 16, 64);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_BF16);
	/* index_select of a 1-D self (the real Kineto trace's row): a gather from a (V,1) table */
	build("aten.index_select", "2048;;6825", "INT64;;INT64", "", "", &c);
	assert_string_equal(c.op, "GatherV2");
	DIMS(&c.in[0], 2048, 1);
	DIMS(&c.out[0], 6825, 1);
	build_fails("aten.index_select", "2048,64;;100", "FLOAT;;INT64", "", "", "dim argument is not recorded");

	build("aten.copy_", "8,64;8,64;", "FLOAT;DT_BF16;", "8,64", "FLOAT", &c);
	assert_string_equal(c.op, "Cast");
	assert_int_equal(c.in[0].dtype, PERFDB_DTYPE_BF16);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_FLOAT);
	build("aten.copy_", "8,64;8,64;", "FLOAT;FLOAT;", "", "", &c);
	assert_string_equal(c.op, "TensorMove");
	assert_ptr_equal(c.def, perfdb_opdef_find("TensorMove"));
	build_fails("aten.copy_", ";;", "FLOAT;INT64;", "", "", "self slot records no tensor shape");
	build_fails("aten.copy_", "8,64;64;", "FLOAT;FLOAT;", "", "", "broadcasts into self");

	/* to: the target dtype only from a recorded output */
	build("aten._to_copy", "8,64;;;;;;", "DT_BF16;;;;;;", "8,64", "FLOAT", &c);
	assert_string_equal(c.op, "Cast");
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_FLOAT);
	build_fails("aten.to", "8,64;;;;", "DT_BF16;;;;", "", "", "target dtype (a scalar argument) is not recorded");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_gemms),
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_sdpa),
		cmocka_unit_test(test_eltwise_norm),
		cmocka_unit_test(test_unary_reduce),
		cmocka_unit_test(test_data_movement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
