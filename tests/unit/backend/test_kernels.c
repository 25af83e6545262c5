/*
 * Per-kernel device records (backend/kernel_report.h): the dump parser, the kernel
 * family mapping and the per-row aggregation behind the CUDA backend's
 * reports/cuda_kernels_<ts>.csv, fed from tests/data/cupti/ without a GPU.
 * Expected values are worked out by hand from the fixture's timestamps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/fsio.h"
#include "backend/kernel_report.h"

static void load_fixture(const char *name, struct perfdb_kernel_recs *r)
{
	const char *dir = getenv("PERFDB_TEST_DATA");
	assert_non_null(dir);
	char p[4096];
	snprintf(p, sizeof(p), "%s/cupti/%s", dir, name);
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_file_read_all(p, &b, &err), 0);
	assert_int_equal(perfdb_kernel_recs_parse(b.buf, r, &err), 0);
	perfdb_strbuf_release(&b);
}

static void test_parse_fixture(void **state)
{
	(void)state;
	struct perfdb_kernel_recs r = { 0 };
	load_fixture("matmul_bf16_rows.tsv", &r);
	assert_int_equal(r.n, 10);   /* 2 spins + 4 GEMMs + 4 split-K reductions */
	assert_string_equal(r.v[0].name, "cuk_spin_kernel");
	assert_true(r.v[1].start == 21000 && r.v[1].end == 31000);
	assert_non_null(strstr(r.v[2].name, "splitKreduce_kernel<32, 16, int"));
	perfdb_kernel_recs_release(&r);
}

static void test_parse_errors(void **state)
{
	(void)state;
	struct perfdb_kernel_recs r = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_kernel_recs_parse("# c\n\n10\t20\tk\n30 40 k\n", &r, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "line 4"));
	perfdb_kernel_recs_release(&r);
	perfdb_err_clear(&err);
	/* end before start */
	assert_int_equal(perfdb_kernel_recs_parse("50\t40\tk\n", &r, &err), -PERFDB_EPARSE);
	perfdb_kernel_recs_release(&r);
	/* no name */
	assert_int_equal(perfdb_kernel_recs_parse("10\t40\t\n", &r, &err), -PERFDB_EPARSE);
	perfdb_kernel_recs_release(&r);
}

static void test_dump_roundtrip(void **state)
{
	(void)state;
	struct perfdb_kernel_recs r = { 0 }, q = { 0 };
	assert_int_equal(perfdb_kernel_recs_add(&r, "a\tb", 1, 5), 0);
	assert_int_equal(perfdb_kernel_recs_add(&r, "cuk_add_vec16", 7, 9), 0);
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_kernel_recs_dump(&r, &b);
	assert_string_equal(b.buf, "1\t5\ta b\n7\t9\tcuk_add_vec16\n");
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_kernel_recs_parse(b.buf, &q, &err), 0);
	assert_int_equal(q.n, 2);
	assert_string_equal(q.v[0].name, "a b");
	perfdb_strbuf_release(&b);
	perfdb_kernel_recs_release(&r);
	perfdb_kernel_recs_release(&q);
}

static void test_family(void **state)
{
	(void)state;
	assert_string_equal(perfdb_kernel_family("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
						 "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"), "gemm");
	assert_string_equal(perfdb_kernel_family("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"), "gemm");
	assert_string_equal(perfdb_kernel_family("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_128x128_"
						 "32x4_tn_align8>(cutlass_80_tensorop_s16816gemm_bf16_128x128_32x4_tn_"
						 "align8::Params)"), "gemm");
	assert_string_equal(perfdb_kernel_family("void cublasLt::splitKreduce_kernel<32, 16, int, float>(...)"),
			    "gemm_splitk_reduce");
	assert_string_equal(perfdb_kernel_family("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_"
						 "3_64x64x128_4x1x1_kernel0_0"), "attention");
	assert_string_equal(perfdb_kernel_family("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<"
						 "4096ul>)"), "nccl");
	assert_string_equal(perfdb_kernel_family("cuk_rmsnorm_kernel"), "perfdb_rmsnorm");
	assert_string_equal(perfdb_kernel_family("cuk_add_vec16"), "perfdb_add");
	assert_string_equal(perfdb_kernel_family("_Z13cuk_add_vec16I13__nv_bfloat16Lb0EEvPK5uint4S3_lPS1_l"), "perfdb_add");
	assert_string_equal(perfdb_kernel_family("cuk_copy_vec16"), "perfdb_copy");
	assert_string_equal(perfdb_kernel_family("cuk_block_copy_kernel"), "perfdb_block_copy");
	assert_string_equal(perfdb_kernel_family("cuk_add_rmsnorm_kernel"), "perfdb_add_rmsnorm");
	assert_string_equal(perfdb_kernel_family("void cuk_rmsnorm_vec8<__nv_bfloat16>(__nv_bfloat16 const*, "
						 "__nv_bfloat16 const*, __nv_bfloat16*, float*, long, float)"),
			    "perfdb_rmsnorm");
	assert_string_equal(perfdb_kernel_family("cuk_attention_kernel"), "perfdb_attention");
	assert_string_equal(perfdb_kernel_family("cuk_scatter_kernel"), "perfdb_scatter");
	assert_string_equal(perfdb_kernel_family("void cub::CUB_300000_SM_900::detail::radix_sort::"
						 "DeviceSegmentedRadixSortKernel<cub::detail::radix_sort::policy_hub<"
						 "float, int, int>::Policy900, false, true, float, int, int const*>"),
			    "sort");
	assert_string_equal(perfdb_kernel_family("cuk_flush_kernel"), "timing");
	assert_string_equal(perfdb_kernel_family("cuk_spin_kernel"), "timing");
	assert_string_equal(perfdb_kernel_family("void at::native::vectorized_elementwise_kernel<4>"), "other");
	assert_string_equal(perfdb_kernel_family(""), "other");
}

static void test_report_from_fixture(void **state)
{
	(void)state;
	struct perfdb_kernel_recs r = { 0 };
	load_fixture("matmul_bf16_rows.tsv", &r);
	struct perfdb_kernel_report rep = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_kernel_report_add(&rep, "MatMulV2", 2, "cublasLt", &r, 4.0, &err), 0);
	assert_int_equal(rep.n, 2);   /* the spin kernel is left out */
	/* GEMM: 10, 11, 9, 12 us -> median 10.5, mean 10.5, min 9 */
	assert_string_equal(rep.v[0].family, "gemm");
	assert_int_equal(rep.v[0].records, 4);
	assert_true(rep.v[0].calls == 1.0);
	assert_true(rep.v[0].median_us > 10.4999 && rep.v[0].median_us < 10.5001);
	assert_true(rep.v[0].min_us > 8.9999 && rep.v[0].min_us < 9.0001);
	/* split-K: 1.0, 1.2, 1.1, 1.4 us -> median 1.15, mean 1.175, min 1.0 */
	assert_string_equal(rep.v[1].family, "gemm_splitk_reduce");
	assert_true(rep.v[1].median_us > 1.1499 && rep.v[1].median_us < 1.1501);
	assert_true(rep.v[1].mean_us > 1.1749 && rep.v[1].mean_us < 1.1751);
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_kernel_report_csv(&rep, &b);
	const char *want =
		"Operator,Line,Kernel Used,Kernel Name,Kernel Family,Calls,Device Duration(us),Mean(us),Min(us)\n"
		"MatMulV2,2,cublasLt,sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
		"execute_segment_k_off_kernel__5x_cublas,gemm,1.000,10.500,10.500,9.000\n"
		"MatMulV2,2,cublasLt,\"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
		"__nv_bfloat16, false, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, "
		"__nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, "
		"__nv_bfloat16*, void*, long, float*, int*, float*, float*)\",gemm_splitk_reduce,1.000,1.150,1.175,1.000\n";
	assert_string_equal(b.buf, want);
	perfdb_strbuf_release(&b);
	perfdb_kernel_report_release(&rep);
	perfdb_kernel_recs_release(&r);
}

static void test_report_calls(void **state)
{
	(void)state;
	/* 3 launches of one kernel over 1.5 op calls (a graph of 3 calls seen half): 2 per call */
	struct perfdb_kernel_recs r = { 0 };
	assert_int_equal(perfdb_kernel_recs_add(&r, "k", 0, 1000), 0);
	assert_int_equal(perfdb_kernel_recs_add(&r, "k", 0, 3000), 0);
	assert_int_equal(perfdb_kernel_recs_add(&r, "k", 0, 2000), 0);
	struct perfdb_kernel_report rep = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_kernel_report_add(&rep, "Add", 7, "own", &r, 1.5, &err), 0);
	assert_int_equal(rep.n, 1);
	assert_true(rep.v[0].calls == 2.0);
	assert_true(rep.v[0].median_us == 2.0);
	/* no records: no rows */
	struct perfdb_kernel_recs none = { 0 };
	assert_int_equal(perfdb_kernel_report_add(&rep, "Add", 8, "own", &none, 3, &err), 0);
	assert_int_equal(rep.n, 1);
	perfdb_kernel_report_release(&rep);
	perfdb_kernel_recs_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fixture),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_dump_roundtrip),
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_report_from_fixture),
		cmocka_unit_test(test_report_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
