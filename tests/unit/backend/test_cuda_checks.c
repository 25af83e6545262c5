/*
 * The CUDA backend's host side, which needs no GPU: which ops its tables
 * hold, and the checks of ScatterNdUpdate and Sort (the operator layer's
 * rules, then what their CUDA kernels add), run on cases the engine builds
 * from table-like rows.  The kernels themselves are checked on a GPU by
 * tests/device/cuda_ops_check.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "replay/engine.h"

static int check(const char *op, const char *ins, const char *idt, const char *outs, const char *odt, char *msg)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", &c, &err), 0);
	const struct perfdb_op_impl *impl = perfdb_backend_cuda.find_op(c.op);   /* an aten row: the lowered op */
	assert_non_null(impl);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err);
	snprintf(msg, 256, "%.200s", err.msg);
	return rc;
}

static void test_ops_table(void **state)
{
	(void)state;
	static const char *const ops[] = { "MatMulV2", "GroupedMatmul", "FusedInferAttentionScore", "Transpose",
					   "ScatterNdUpdate", "Sort", "ArgMaxV2" };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		assert_true(perfdb_backend_cuda.supports_op(ops[i]));
	/* CPU-only so far (docs/ops.md): their rows are skipped, not failed */
	assert_false(perfdb_backend_cuda.supports_op("MoeTokenPermute"));
	assert_false(perfdb_backend_cuda.supports_op("mla_preprocess_0_mix_aic"));
}

static void test_scatter_check(void **state)
{
	(void)state;
	char msg[256];
	assert_int_equal(check("ScatterNdUpdate", "64,48;10,1;10,48", "DT_BF16;INT64;DT_BF16", "64,48", "DT_BF16", msg),
			 0);
	assert_int_equal(check("ScatterNdUpdate", "33,5;7,1;7,5", "DT_FLOAT;INT32;DT_FLOAT", "", "", msg), 0);
	/* the definition's refusal (run before the backend's check): updates not (N, var.shape[1:]) */
	assert_true(check("ScatterNdUpdate", "8,2;3,1;3,3", "DT_FLOAT;INT32;DT_FLOAT", "8,2", "DT_FLOAT", msg) < 0);
	assert_non_null(strstr(msg, "updates"));
	/* the kernel's: int8 indices, an output of another size */
	assert_true(check("ScatterNdUpdate", "8,2;3,1;3,2", "DT_FLOAT;INT8;DT_FLOAT", "8,2", "DT_FLOAT", msg) < 0);
	assert_non_null(strstr(msg, "int32 or int64"));
	assert_true(check("ScatterNdUpdate", "8,2;3,1;3,2", "DT_FLOAT;INT32;DT_FLOAT", "4,2", "DT_FLOAT", msg) < 0);
	assert_non_null(strstr(msg, "var's size"));
}

static void test_sort_check(void **state)
{
	(void)state;
	char msg[256];
	assert_int_equal(check("Sort", "6,1000", "DT_FLOAT", "6,1000;6,1000", "DT_FLOAT;INT64", msg), 0);
	assert_int_equal(check("Sort", "3,100", "DT_FLOAT16", "3,100", "DT_FLOAT16", msg), 0);
	/* the definition's refusal (run before the backend's check): indices of another size */
	assert_true(check("Sort", "4,8", "DT_BF16", "4,8;4,7", "DT_BF16;INT32", msg) < 0);
	/* the kernel's: values of another dtype than the keys */
	assert_true(check("Sort", "4,8", "DT_BF16", "4,8", "DT_FLOAT", msg) < 0);
	assert_non_null(strstr(msg, "input's dtype"));
}

/* PyTorch op rows (docs/cuda.md): GEMMs run, sdpa's BNSD is refused, Silu has no kernel (skipped) */
static void test_aten_rows(void **state)
{
	(void)state;
	char msg[256];
	assert_int_equal(check("aten.linear", "8,64;128,64;", "DT_BF16;DT_BF16;", "", "", msg), 0);
	assert_int_equal(check("aten.bmm", "4,8,16;4,16,8", "FLOAT;FLOAT", "", "", msg), 0);
	assert_true(check("aten._scaled_dot_product_flash_attention", "1,8,64,64;1,8,64,64;1,8,64,64;;;;",
			  "DT_BF16;DT_BF16;DT_BF16;;;;", "", "", msg) < 0);
	assert_non_null(strstr(msg, "(T, N, D)"));
	assert_false(perfdb_backend_cuda.supports_op("Silu"));
	/* a (T,1) column: the operator layer takes it, the CUDA Add kernel (y[i % n]) does not */
	assert_int_equal(check("aten.add", "8,64;64;", "FLOAT;FLOAT;", "", "", msg), 0);
	assert_true(check("aten.add", "8,64;8,1;", "FLOAT;FLOAT;", "", "", msg) < 0);
	assert_non_null(strstr(msg, "non-trailing"));
}

/* GroupedMatmul: float rows, and W8A8 (INT8 x INT8) into a float output; INT8 into INT8 refused */
static void test_gmm_check(void **state)
{
	(void)state;
	char msg[256];
	assert_int_equal(check("GroupedMatmul", "10,64;4,64,32;;4,32;;;;4;10", "DT_BF16", "10,32", "DT_BF16", msg), 0);
	assert_int_equal(check("GroupedMatmul", "12,64;4,64,32;;4,32;;;;4;12", "INT8;INT8;;DT_FLOAT;;;;INT64;DT_FLOAT",
			       "12,32", "DT_BF16", msg), 0);
	assert_true(check("GroupedMatmul", "12,64;4,64,32", "INT8;INT8", "12,32", "INT8", msg) < 0);
	assert_non_null(strstr(msg, "bf16, fp16 or fp32"));
	assert_true(check("GroupedMatmul", "12,64;4,64,32", "INT8;DT_BF16", "12,32", "DT_BF16", msg) < 0);
	assert_non_null(strstr(msg, "INT8 x INT8"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_table),
		cmocka_unit_test(test_aten_rows),
		cmocka_unit_test(test_scatter_check),
		cmocka_unit_test(test_sort_check),
		cmocka_unit_test(test_gmm_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
