/*
 * Unit tests for src/report/: FLOP and byte counts of hand-computed
 * shapes, family classification, peak selection, and the coverage,
 * hotspot and collective numbers of the committed database
 * tests/data/report/db (docs/report.md).  Expected values are worked out
 * by hand in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "perfdb/dbreport.h"

static void assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)) {
		print_error("got %.17g, want %.17g\n", got, want);
		fail();
	}
}

static void test_family(void **state)
{
	(void)state;
	assert_int_equal(perfdb_op_family_of("MatMulV2"), PERFDB_OP_FAMILY_MATMUL);
	assert_int_equal(perfdb_op_family_of("BatchMatMulV2"), PERFDB_OP_FAMILY_MATMUL);
	assert_int_equal(perfdb_op_family_of("GroupedMatmul"), PERFDB_OP_FAMILY_MATMUL);
	assert_int_equal(perfdb_op_family_of("RmsNorm"), PERFDB_OP_FAMILY_VECTOR);
	assert_int_equal(perfdb_op_family_of("Add"), PERFDB_OP_FAMILY_VECTOR);
}

static void test_work_matmul(void **state)
{
	(void)state;
	struct perfdb_op_work w;
	/* A 128x7168, B (N,K) 2048x7168, C 128x2048, bf16:
	 * FLOPs 2*128*2048*7168 = 3758096384;
	 * bytes 2*(917504 + 14680064 + 262144) = 31719424 */
	assert_int_equal(perfdb_op_work_of("MatMulV2", "\"128,7168;2048,7168\"",
					   "DT_BF16;DT_BF16", "\"128,2048\"", "DT_BF16", &w), 0);
	assert_close(w.flops, 3758096384.0);
	assert_close(w.bytes, 31719424.0);
	assert_int_equal(w.dtype_bits, 16);
	/* batched, fp32, B as (K,N): A 3x4x8, B 8x16, C 3x4x16:
	 * FLOPs 2*(3*4*16)*8 = 2*192*8 = 3072; bytes 4*(96 + 128 + 192) = 1664 */
	assert_int_equal(perfdb_op_work_of("BatchMatMul", "3,4,8;8,16", "FLOAT;FLOAT",
					   "3,4,16", "FLOAT", &w), 0);
	assert_close(w.flops, 3072.0);
	assert_close(w.bytes, 1664.0);
	assert_int_equal(w.dtype_bits, 32);
}

static void test_work_vector(void **state)
{
	(void)state;
	struct perfdb_op_work w;
	/* RmsNorm x 64x7168 bf16, gamma 7168 bf16 -> y 64x7168 bf16, rstd 64x1 fp32:
	 * FLOPs = outputs = 458752 + 64 = 458816;
	 * bytes = 2*458752 + 2*7168 + 2*458752 + 4*64 = 1849600 */
	assert_int_equal(perfdb_op_work_of("RmsNorm", "\"\"\"64,7168;7168\"\"\"", "DT_BF16;DT_BF16",
					   "\"64,7168;64,1\"", "DT_BF16;FLOAT", &w), 0);
	assert_close(w.flops, 458816.0);
	assert_close(w.bytes, 1849600.0);
	/* an empty slot is skipped; an unknown dtype counts 2 bytes:
	 * inputs 4 (int8: 4 B) + nothing, output 4 of "WEIRD" (8 B) */
	assert_int_equal(perfdb_op_work_of("Cast", "4;", "DT_INT8;", "4", "WEIRD", &w), 0);
	assert_close(w.flops, 4.0);
	assert_close(w.bytes, 12.0);
	assert_int_equal(perfdb_op_work_of("Cast", "4,x", "DT_INT8", "4", "DT_INT8", &w),
			 -PERFDB_EPARSE);
	assert_close(w.flops, 0);
}

static void test_peak(void **state)
{
	(void)state;
	struct perfdb_device d = { 0 };
	d.mma_flops[PERFDB_PEAK_BF16] = 300e12;
	d.mma_flops[PERFDB_PEAK_FP32] = 100e12;
	d.mma_flops[PERFDB_PEAK_INT8] = 600e12;
	d.vector_flops[PERFDB_PEAK_BF16] = 10e12;
	assert_close(perfdb_dbreport_peak_flops(&d, PERFDB_OP_FAMILY_MATMUL, 16), 300e12);
	assert_close(perfdb_dbreport_peak_flops(&d, PERFDB_OP_FAMILY_MATMUL, 32), 100e12);
	assert_close(perfdb_dbreport_peak_flops(&d, PERFDB_OP_FAMILY_MATMUL, 8), 600e12);
	assert_close(perfdb_dbreport_peak_flops(&d, PERFDB_OP_FAMILY_VECTOR, 16), 10e12);
	assert_close(perfdb_dbreport_peak_flops(NULL, PERFDB_OP_FAMILY_VECTOR, 16), 0);
}

static void test_load_fixture(void **state)
{
	(void)state;
	const char *data = getenv("PERFDB_TEST_DATA");
	assert_non_null(data);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/report/db/TEST_DEVICE/vllm_ascend/vllm1.0.0_torch2.0.0_cann8.0",
		 data);
	struct perfdb_dbreport r;
	struct perfdb_err err;
	perfdb_dbreport_init(&r);
	assert_int_equal(perfdb_dbreport_load(&r, dir, NULL, &err), 0);
	assert_int_equal(r.nk, 2);
	assert_true(r.mtime_min > 0 && r.mtime_min <= r.mtime_max);
	/* Add: 1.0 prof only; 12 vs 10 = 1.2 (inside, inclusive); junk/empty */
	assert_string_equal(r.k[0].name, "Add");
	assert_int_equal(r.k[0].rows, 3);
	assert_int_equal(r.k[0].with_prof, 2);
	assert_int_equal(r.k[0].with_mb, 1);
	assert_int_equal(r.k[0].theory_only, 1);
	assert_int_equal(r.k[0].both, 1);
	assert_int_equal(r.k[0].hot, 0);
	/* MatMulV2: 10/10, 30/10 (hot), 7.9/10 (0.79: hot), empty, prof 5 only */
	assert_string_equal(r.k[1].name, "MatMulV2");
	assert_int_equal(r.k[1].rows, 5);
	assert_int_equal(r.k[1].with_prof, 4);
	assert_int_equal(r.k[1].with_mb, 3);
	assert_int_equal(r.k[1].theory_only, 1);
	assert_int_equal(r.k[1].both, 3);
	assert_int_equal(r.k[1].hot, 2);
	assert_false(r.k[1].pts[0].hot);
	assert_true(r.k[1].pts[1].hot);
	assert_true(r.k[1].pts[2].hot);
	/* row 2: 4x8 @ 8x16 fp32, 2*64*8 = 1024 FLOP, 4*(32+128+64) = 896 B, 10 us */
	assert_close(r.k[1].pts[1].ai, 1024.0 / 896.0);
	assert_close(r.k[1].pts[1].gflops, 1024.0 / 10 / 1e3);
	assert_close(r.k[1].pts[1].gbps, 896.0 / 10 / 1e3);
	/* the newest hccl version (v8.5, not v8.0), files sorted */
	assert_non_null(strstr(r.hccl_dir, "hccl/v8.5"));
	assert_int_equal(r.nc, 2);
	assert_string_equal(r.c[0].op, "all_gather");
	assert_true(r.c[0].busbw_derived);
	assert_close(r.c[0].pts[0].busbw_gbps, 0.4 * 3 / 4); /* (n-1)/n */
	assert_string_equal(r.c[1].op, "all_reduce");
	assert_false(r.c[1].busbw_derived);
	assert_int_equal(r.c[1].n, 3);
	assert_close(r.c[1].pts[0].bytes, 1024); /* sorted by group, tier, size */
	assert_close(r.c[1].pts[1].bytes, 4096);
	assert_int_equal(r.c[1].pts[2].ndev, 4);

	struct perfdb_strbuf html = PERFDB_STRBUF_INIT;
	struct perfdb_dbreport_ctx ctx = { .generated = "now", .version = "test" };
	assert_int_equal(perfdb_dbreport_html(&r, &ctx, &html), 0);
	/* 2 scatters + 2 rooflines + 2 x 2 collective charts */
	size_t charts = 0, circles = 0;
	for (const char *p = html.buf; (p = strstr(p, "<svg class=\"chart\"")); p++)
		charts++;
	for (const char *p = html.buf; (p = strstr(p, "<circle class=\"pt")); p++)
		circles++;
	assert_int_equal(charts, 8);
	/* scatter 1 + 3, roofline 2 + 4, all_gather 1 + 1, all_reduce 3 + 3 */
	assert_int_equal(circles, 18);
	perfdb_strbuf_release(&html);
	perfdb_dbreport_release(&r);
}

static void test_load_missing(void **state)
{
	(void)state;
	struct perfdb_dbreport r;
	struct perfdb_err err;
	perfdb_dbreport_init(&r);
	assert_int_equal(perfdb_dbreport_load(&r, "/nonexistent/perfdb/db", NULL, &err),
			 -PERFDB_ENOENT);
	assert_non_null(strstr(err.msg, "database directory not found"));
	perfdb_dbreport_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_work_matmul),
		cmocka_unit_test(test_work_vector),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_load_fixture),
		cmocka_unit_test(test_load_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
