/*
 * Unit tests for src/report/: peak selection; the coverage, hotspot, run
 * record, roofline, summary and collective numbers of the committed
 * database tests/data/report/db; the roofline of the committed example
 * database against the A3's peaks (docs/report.md).  Expected values are
 * worked out by hand in the comments (the operators' costs themselves:
 * test_opdef).
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

#include "report/dbreport.h"
#include "perfdb/dtype.h"

static void assert_close(double got, double want)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)) {
		print_error("got %.17g, want %.17g\n", got, want);
		fail();
	}
}

/* The fixture's device: TEST_DEVICE's peaks of data/devices.json, written out so the numbers below are checkable. */
static void test_registry(struct perfdb_device_registry *reg, struct perfdb_err *err)
{
	struct perfdb_device d = { .name = "TEST_DEVICE", .kind = "test", .vendor = "T", .description = "",
				   .source = "test", .memory_bandwidth = 1759.218604e9 };
	d.mma_flops[PERFDB_PEAK_BF16] = 353.9e12;
	d.mma_flops[PERFDB_PEAK_FP32] = 99.5e12;
	d.vector_flops[PERFDB_PEAK_FP16] = 11e12;
	d.vector_flops[PERFDB_PEAK_BF16] = 11e12;
	perfdb_device_registry_init(reg);
	assert_int_equal(perfdb_device_registry_add(reg, &d, err), 0);
}

static void test_peak(void **state)
{
	(void)state;
	struct perfdb_device d = { 0 };
	d.mma_flops[PERFDB_PEAK_BF16] = 300e12;
	d.mma_flops[PERFDB_PEAK_FP32] = 100e12;
	d.mma_flops[PERFDB_PEAK_INT8] = 600e12;
	d.vector_flops[PERFDB_PEAK_BF16] = 10e12;
	assert_close(perfdb_device_peak_flops(&d, true, PERFDB_DTYPE_BF16), 300e12);
	assert_close(perfdb_device_peak_flops(&d, true, PERFDB_DTYPE_FLOAT), 100e12);
	assert_close(perfdb_device_peak_flops(&d, true, PERFDB_DTYPE_INT8), 600e12);
	assert_close(perfdb_device_peak_flops(&d, false, PERFDB_DTYPE_BF16), 10e12);
	/* no int64 peak: a FLOP-counting int64 row has no roof */
	assert_close(perfdb_device_peak_flops(&d, false, PERFDB_DTYPE_INT64), 0);
	assert_close(perfdb_device_peak_flops(NULL, false, PERFDB_DTYPE_BF16), 0);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
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
	struct perfdb_device_registry reg;
	test_registry(&reg, &err);
	perfdb_dbreport_init(&r);
	assert_int_equal(perfdb_dbreport_load(&r, dir, NULL, &reg, "TEST_DEVICE", &err), 0);
	assert_int_equal(r.nk, 2);
	assert_int_equal(r.nruns, 3);
	assert_true(r.mtime_min > 0 && r.mtime_min <= r.mtime_max);
	/* Add, lines 2-6: prof 1.0; 12 vs 10 = 1.2 (inside, inclusive); junk; mb 2.0; mb 3.0 */
	const struct perfdb_dbreport_kernel *a = &r.k[0];
	assert_string_equal(a->name, "Add");
	assert_string_equal(a->family, "eltwise");
	assert_int_equal(a->rows, 5);
	assert_int_equal(a->with_prof, 2);
	assert_int_equal(a->with_mb, 3);
	assert_int_equal(a->theory_only, 1);
	assert_int_equal(a->both, 1);
	assert_int_equal(a->hot, 0);
	/* line 3: failed in 2025, measured ok in 2026 with probe 5 < 0.8 x 10: contended, not failed */
	assert_false(a->pts[1].failed);
	assert_true(a->pts[1].contended);
	assert_int_equal(a->failed, 0);
	assert_int_equal(a->contended, 1);
	/* Add 4x4 + 4x4 fp16: 16 FLOP, 3 x 16 x 2 = 96 B; line 2 at 1 us:
	 * 0.016 GFLOP/s, 0.096 GB/s on TEST_DEVICE (vector fp16 11000 GFLOP/s, 1759.218604 GB/s) */
	assert_true(a->pts[0].roof && a->pts[0].from_prof);
	assert_close(a->pts[0].flops, 16);
	assert_close(a->pts[0].bytes, 96);
	assert_close(a->pts[0].gflops, 0.016);
	assert_close(a->pts[0].gbps, 0.096);
	assert_close(a->pts[0].peak_gflops, 11000);
	assert_close(a->pts[0].roof_frac, 0.096 / 1759.218604);
	assert_false(a->pts[0].above);
	/* line 5: microbench only, its record's host TEST_DEVICE: plotted at 2 us */
	assert_true(a->pts[3].roof && !a->pts[3].from_prof);
	assert_string_equal(a->pts[3].dev_name, "TEST_DEVICE");
	assert_close(a->pts[3].gbps, 0.048);
	/* line 6: measured on CPU_UNKNOWN, which the registry does not know: not plotted */
	assert_false(a->pts[4].roof);
	assert_null(a->pts[4].dev);
	assert_string_equal(a->pts[4].dev_name, "CPU_UNKNOWN");
	assert_int_equal(a->roof, 3);
	assert_int_equal(a->no_device, 1);
	/* MatMulV2: 10/10, 30/10 (hot), 7.9/10 (0.79: hot), empty, prof 5 only */
	const struct perfdb_dbreport_kernel *m = &r.k[1];
	assert_string_equal(m->name, "MatMulV2");
	assert_string_equal(m->family, "matmul");
	assert_int_equal(m->rows, 5);
	assert_int_equal(m->with_prof, 4);
	assert_int_equal(m->with_mb, 3);
	assert_int_equal(m->theory_only, 1);
	assert_int_equal(m->both, 3);
	assert_int_equal(m->hot, 2);
	assert_false(m->pts[0].hot);
	assert_true(m->pts[1].hot);
	assert_true(m->pts[2].hot);
	/* line 2 contended (2025: probe 2 < 8), line 3 failed (2026) */
	assert_true(m->pts[0].contended);
	assert_true(m->pts[1].failed);
	/* line 3: 4x8 @ 8x16 fp32, 2*4*16*8 = 1024 FLOP, 4*(32+128+64) = 896 B, 10 us, matrix fp32 99500 */
	assert_true(m->pts[1].matrix);
	assert_close(m->pts[1].ai, 1024.0 / 896.0);
	assert_close(m->pts[1].gflops, 1024.0 / 10 / 1e3);
	assert_close(m->pts[1].gbps, 896.0 / 10 / 1e3);
	assert_close(m->pts[1].peak_gflops, 99500);
	assert_int_equal(m->roof, 4);
	assert_int_equal(m->above, 0);
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

	/* The summary figures (the Chromium test reads the same numbers off the page:
	 * tests/report/chromium.sh).  10 rows, 2 theory-only; profiled 2 + 4; microbench
	 * only Add 5, 6; gaps |ln ratio| 3.0 > 0.79 > 1.2 > 1.0, of which Add 3 (probe 5 against
	 * its run's 10) and MatMulV2 2 (2 against 10) were measured under contention and never
	 * headline the gaps. */
	struct perfdb_dbreport_summary s;
	perfdb_dbreport_summary(&r, &s);
	assert_int_equal(s.rows, 10);
	assert_int_equal(s.usable, 8);
	assert_int_equal(s.profiled, 6);
	assert_int_equal(s.mb_only, 2);
	assert_int_equal(s.theory_only, 2);
	assert_int_equal(s.both, 4);
	assert_int_equal(s.hot, 2);
	assert_int_equal(s.failed, 1);
	assert_int_equal(s.contended, 2);
	assert_int_equal(s.roof, 7);
	assert_int_equal(s.above, 0);
	assert_int_equal(s.no_cost, 0);
	assert_int_equal(s.no_device, 1);
	assert_int_equal(s.comm_tables, 2);
	assert_int_equal(s.comm_ops, 2);
	assert_int_equal(s.comm_series, 3);
	assert_int_equal(s.comm_points, 4);
	assert_int_equal(s.ngaps, 2);
	size_t want[2][2] = { { 1, 1 }, { 1, 2 } };
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(s.gaps[i].k, want[i][0]);
		assert_int_equal(s.gaps[i].p, want[i][1]);
	}
	assert_close(s.gaps[0].ratio, 3.0);

	struct perfdb_strbuf html = PERFDB_STRBUF_INIT;
	struct perfdb_dbreport_ctx ctx = { .generated = "now", .version = "test" };
	assert_int_equal(perfdb_dbreport_html(&r, &ctx, &html), 0);
	/* 4 rows with both (< 8): the overall scatter only; no type has 8 roofline points:
	 * no roofline chart; all_gather and all_reduce latency + busbw: 1 + 4 charts */
	assert_int_equal(count(html.buf, "<svg class=\"chart\""), 5);
	/* scatter 4, all_gather 1 + 1, all_reduce 3 + 3 */
	assert_int_equal(count(html.buf, "<circle class=\"pt"), 12);
	assert_int_equal(count(html.buf, "no data points"), 0);
	assert_non_null(strstr(html.buf, "<b data-figure=\"usable\">8</b>"));
	assert_non_null(strstr(html.buf, "MatMulV2.csv:3"));
	/* the summary comes before any other table */
	assert_true(strstr(html.buf, "id=\"summary\"") < strstr(html.buf, "<table class=\"ctx\""));
	perfdb_strbuf_release(&html);
	perfdb_dbreport_release(&r);
	perfdb_device_registry_release(&reg);
}

/*
 * The committed example database (examples/database, the demo's start)
 * against the ATLAS_800_A3 of data/devices.json: 1759.218604 GB/s, matrix
 * bf16 353900 GFLOP/s, vector bf16 22000.  Its durations are illustrative
 * (examples/README.md) but were set from the device's roof, so none may be
 * above it (the "no demo point lies above its roof"):
 *   MatMulV2 (M,7168)·(2048,7168)ᵀ bf16: bytes 2(7168M + 14680064 + 2048M),
 *   FLOPs 2·M·2048·7168:
 *     M=1    29378560 B / 21.4 us  = 1372.8 GB/s  0.780 of 1759.2
 *     M=16   29655040 B / 22.1 us  = 1341.9 GB/s  0.763
 *     M=128  31719424 B / 24.6 us  = 1289.4 GB/s  0.733
 *     M=1024 30064771072 FLOP / 112.3 us = 267718 GFLOP/s  0.756 of 353900
 *     M=4096 120259084288 FLOP / 421.5 us = 285312 GFLOP/s  0.806
 *   RmsNorm (T,7168) bf16, gamma 7168, out (T,7168) bf16 + (T,1) fp32:
 *   bytes 4·7168T + 14336 + 4T:
 *     T=1    43012 B / 2.1 us       = 20.5 GB/s    0.012
 *     T=64   1849600 B / 2.4 us     = 770.7 GB/s   0.438
 *     T=1024 29378560 B / 21.8 us   = 1347.6 GB/s  0.766
 *     T=8192 234928128 B / 168.4 us = 1395.1 GB/s  0.793
 */
static void test_example_roofline(void **state)
{
	(void)state;
	const char *data = getenv("PERFDB_TEST_DATA");
	assert_non_null(data);
	char dir[4096], devs[4096];
	snprintf(dir, sizeof(dir),
		 "%s/../../examples/database/ATLAS_800_A3_752T_128G_DIE/vllm_ascend/vllm0.13.0_torch2.8.0_cann8.3", data);
	snprintf(devs, sizeof(devs), "%s/../../data/devices.json", data);
	struct perfdb_device_registry reg;
	struct perfdb_err err;
	perfdb_device_registry_init(&reg);
	assert_int_equal(perfdb_device_registry_load_file(&reg, devs, &err), 0);
	struct perfdb_dbreport r;
	perfdb_dbreport_init(&r);
	assert_int_equal(perfdb_dbreport_load(&r, dir, NULL, &reg, "ATLAS_800_A3_752T_128G_DIE", &err), 0);
	assert_int_equal(r.nk, 2);
	const struct perfdb_dbreport_kernel *m = &r.k[0], *n = &r.k[1];
	/* The example's durations were set from the A3 die's roof (examples/README.md):
	 * MatMulV2 bf16 [M,7168] x [2048,7168] moves 2(7168M + 2048*7168 + 2048M) B and does
	 * 2*M*2048*7168 FLOPs; at 1759.218604 GB/s and 353.9 TFLOP/s the roof is 16.70,
	 * 16.86, 18.03 (bandwidth) and 84.95, 339.81 us (compute) for M = 1, 16, 128, 1024,
	 * 4096, under the 21.4, 22.1, 24.6, 112.3, 421.5 us of the table. */
	assert_int_equal(m->roof, 5);
	assert_int_equal(m->above, 0);
	assert_close(m->pts[0].bytes, 29378560);
	assert_close(m->pts[0].gbps, 29378560 / 21.4 / 1e3);
	assert_close(m->pts[2].roof_frac, 31719424 / 24.6 / 1e3 / 1759.218604);
	assert_close(m->pts[4].roof_frac, 120259084288.0 / 421.5 / 1e3 / 353900);
	for (size_t i = 0; i < 5; i++)
		assert_false(m->pts[i].above);
	/* RmsNorm bf16 [T,7168] moves 28676T + 14336 B: 0.02, 1.05, 16.70, 133.54 us
	 * at the bandwidth, under 2.1, 2.4, 21.8, 168.4 us */
	assert_int_equal(n->roof, 4);
	assert_int_equal(n->above, 0);
	for (size_t i = 0; i < 4; i++)
		assert_false(n->pts[i].above);
	assert_close(n->pts[3].roof_frac, 234928128 / 168.4 / 1e3 / 1759.218604);
	assert_close(n->pts[1].bytes, 1849600);
	/* no point above its roof goes unflagged, and every flagged one is listed with its row */
	struct perfdb_strbuf html = PERFDB_STRBUF_INIT;
	struct perfdb_dbreport_ctx ctx = { .dev = r.dev };
	assert_int_equal(perfdb_dbreport_html(&r, &ctx, &html), 0);
	for (size_t k = 0; k < r.nk; k++)
		for (size_t i = 0; i < r.k[k].rows; i++) {
			const struct perfdb_dbreport_point *p = &r.k[k].pts[i];
			assert_int_equal(p->above, p->roof && (p->gbps > p->bw_gbps * (1 + 1e-9) ||
							       p->gflops > p->peak_gflops * (1 + 1e-9)));
			char row[128];
			snprintf(row, sizeof(row), "<tr class=\"above\"><td>%s.csv:%zu</td>", r.k[k].name, p->line);
			assert_int_equal(strstr(html.buf, row) != NULL, p->above);
		}
	perfdb_strbuf_release(&html);
	perfdb_dbreport_release(&r);
	perfdb_device_registry_release(&reg);
}

static void test_load_missing(void **state)
{
	(void)state;
	struct perfdb_dbreport r;
	struct perfdb_err err;
	perfdb_dbreport_init(&r);
	assert_int_equal(perfdb_dbreport_load(&r, "/nonexistent/perfdb/db", NULL, NULL, NULL, &err),
			 -PERFDB_ENOENT);
	assert_non_null(strstr(err.msg, "database directory not found"));
	perfdb_dbreport_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_load_fixture),
		cmocka_unit_test(test_example_roofline),
		cmocka_unit_test(test_load_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
