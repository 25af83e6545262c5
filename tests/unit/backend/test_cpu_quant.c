/*
 * CPU backend quantisation ops (ops_quant.c) against naive references on
 * small shapes: QuantBatchMatmulV3 against exact integer arithmetic (int32
 * output equal bit for bit, signed int8 activations over the full range so
 * oneDNN's s8-source compensation is exercised, weights too where oneDNN has
 * VNNI), the dequantised outputs
 * against the same integers scaled in double; DynamicQuant and
 * AscendQuantV2 against the formulas of docs/ops.md.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cpu/cpu_internal.h"
#include "replay/engine.h"
#include "cpu_test_ctx.h"

static struct perfdb_engine_pool pool;

static uint64_t rng = 0x1234567;

static int32_t rnd(int lo, int hi)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (int32_t)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

/* The int8 weights' range (see cpu_test_int8_vnni): exact on every ISA unless widened. */
static int w8_lo = -64, w8_hi = 63;

/* Build, check, fill (engine), let tweak set inputs, prepare, run. */
static int run_case(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt,
		    const char *outs, const char *odt, void (*tweak)(struct perfdb_op_case *))
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", c, &err), 0);
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_non_null(impl);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err);
	if (rc < 0)
		return rc;
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, 7, &err), 0);
	if (tweak)
		tweak(c);
	if (impl->prepare) {
		rc = impl->prepare(with_ctx(c), &err);
		if (rc < 0)
			fail_msg("prepare: %s", err.msg);
	}
	rc = impl->run(c, &err);
	if (rc < 0)
		fail_msg("run: %s", err.msg);
	return 0;
}

static void finish(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->release)
		impl->release(c);
}

/* int8 activations over the whole range, weights over w8_lo..w8_hi, scales and per-token scales positive */
static void signed_int8(struct perfdb_op_case *c)
{
	for (int i = 0; i < 2; i++)
		if (c->in[i].dtype == PERFDB_DTYPE_INT8)
			for (int64_t j = 0; j < c->in[i].numel; j++)
				((int8_t *)c->in[i].data)[j] = (int8_t)(i == 1 ? rnd(w8_lo, w8_hi) : rnd(-128, 127));
	for (size_t i = 2; i < c->nin; i++)
		if (c->in[i].dtype == PERFDB_DTYPE_FLOAT)
			for (int64_t j = 0; j < c->in[i].numel; j++)
				((float *)c->in[i].data)[j] = (float)rnd(1, 1000) / 4096.0f;
		else if (c->in[i].dtype == PERFDB_DTYPE_INT32)
			for (int64_t j = 0; j < c->in[i].numel; j++)
				((int32_t *)c->in[i].data)[j] = rnd(-100000, 100000);
}

/* exact acc[m][n] = sum_k x[m][k] * w(k,n), w stored (K,N) or (N,K) */
static int64_t acc_at(const struct perfdb_op_case *c, int64_t m, int64_t n, int64_t k, int64_t nn, int wt)
{
	const int8_t *x = c->in[0].data, *w = c->in[1].data;
	int64_t s = 0;
	for (int64_t q = 0; q < k; q++)
		s += (int64_t)x[m * k + q] * (wt ? w[n * k + q] : w[q * nn + n]);
	return s;
}

static void test_qmm_int32_exact(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct { const char *ins; int64_t m, k, n; int wt; } cs[] = {
		{ "5,64;64,48;48;48", 5, 64, 48, 0 },          /* (K,N) weight, bias */
		{ "7,32;40,32;40;40", 7, 32, 40, 1 },          /* (N,K): transposed, as .t() */
		{ "600,32;32,16;16;16", 600, 32, 16, 0 },      /* M over one GEMM block: full + tail */
	};
	for (size_t t = 0; t < sizeof(cs) / sizeof(cs[0]); t++) {
		char outs[32];
		snprintf(outs, sizeof(outs), "%lld,%lld", (long long)cs[t].m, (long long)cs[t].n);
		assert_int_equal(run_case(&c, "QuantBatchMatmulV3", cs[t].ins, "DT_INT8;DT_INT8;DT_FLOAT;DT_INT32",
					  outs, "DT_INT32", signed_int8), 0);
		const int32_t *o = c.out[0].data, *b = c.in[3].data;
		for (int64_t m = 0; m < cs[t].m; m++)
			for (int64_t n = 0; n < cs[t].n; n++) {
				int64_t want = acc_at(&c, m, n, cs[t].k, cs[t].n, cs[t].wt) + b[n];
				if (o[m * cs[t].n + n] != want)
					fail_msg("case %zu (%lld,%lld): got %d, want %lld", t, (long long)m, (long long)n,
						 o[m * cs[t].n + n], (long long)want);
			}
		finish(&c);
	}
}

/* Full-range weights too, where oneDNN's int8 GEMM cannot saturate (cpu_test_int8_vnni). */
static void test_qmm_int32_full_range(void **state)
{
	if (!cpu_test_int8_vnni())
		skip();
	w8_lo = -128;
	w8_hi = 127;
	test_qmm_int32_exact(state);
	w8_lo = -64;
	w8_hi = 63;
}

static void test_qmm_dequant(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* float output: acc * scale[n] * pertoken[m] (in3 float with numel M) */
	assert_int_equal(run_case(&c, "QuantBatchMatmulV3", "6,48;48,32;32;6", "DT_INT8;DT_INT8;DT_FLOAT;DT_FLOAT",
				  "6,32", "DT_BF16", signed_int8), 0);
	for (int64_t m = 0; m < 6; m++)
		for (int64_t n = 0; n < 32; n++) {
			double want = (double)acc_at(&c, m, n, 48, 32, 0) * ((float *)c.in[2].data)[n] *
				      ((float *)c.in[3].data)[m];
			float got = perfdb_bf16_to_float(((uint16_t *)c.out[0].data)[m * 32 + n]);
			if (fabs(got - want) > 1e-2 * (1 + fabs(want)))
				fail_msg("bf16 (%lld,%lld): got %g, want %g", (long long)m, (long long)n, (double)got, want);
		}
	finish(&c);
	/* int8 output: round(acc * scale[n] + offset[n]) saturated (in3 float with numel N) */
	assert_int_equal(run_case(&c, "QuantBatchMatmulV3", "4,32;32,16;16;16", "DT_INT8;DT_INT8;DT_FLOAT;DT_FLOAT",
				  "4,16", "DT_INT8", signed_int8), 0);
	for (int64_t m = 0; m < 4; m++)
		for (int64_t n = 0; n < 16; n++) {
			double v = (double)acc_at(&c, m, n, 32, 16, 0) * ((float *)c.in[2].data)[n] +
				   ((float *)c.in[3].data)[n];
			double want = fmin(127, fmax(-128, nearbyint(v)));
			int got = ((int8_t *)c.out[0].data)[m * 16 + n];
			if (fabs(got - want) > 1)   /* a float rounding tie may land either side */
				fail_msg("int8 (%lld,%lld): got %d, want %g", (long long)m, (long long)n, got, want);
		}
	finish(&c);
}

static void test_qmm_refuses(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* x2 has not K*N elements */
	assert_true(run_case(&c, "QuantBatchMatmulV3", "4,32;30,16;16;16", "DT_INT8;DT_INT8;DT_FLOAT;DT_FLOAT", "4,16",
			     "DT_BF16", NULL) < 0);
	/* no scale */
	assert_true(run_case(&c, "QuantBatchMatmulV3", "4,32;32,16", "DT_INT8;DT_INT8", "4,16", "DT_BF16", NULL) < 0);
	/* in3 float of a size that is neither M, N nor 1 */
	assert_true(run_case(&c, "QuantBatchMatmulV3", "4,32;32,16;16;5", "DT_INT8;DT_INT8;DT_FLOAT;DT_FLOAT", "4,16",
			     "DT_BF16", NULL) < 0);
}

static void test_dynamic_quant(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "DynamicQuant", "5,40", "DT_FLOAT", "5,40;5", "DT_INT8;DT_FLOAT", NULL), 0);
	const float *x = c.in[0].data, *sc = c.out[1].data;
	const int8_t *q = c.out[0].data;
	for (int r = 0; r < 5; r++) {
		float mx = 0;
		for (int i = 0; i < 40; i++)
			mx = fmaxf(mx, fabsf(x[r * 40 + i]));
		assert_true(fabsf(sc[r] - mx / 127.0f) <= 1e-6f * mx);
		int sawmax = 0;
		for (int i = 0; i < 40; i++) {
			double want = nearbyint(x[r * 40 + i] / (mx / 127.0));
			assert_true(fabs(q[r * 40 + i] - want) <= 1);
			sawmax |= abs(q[r * 40 + i]) == 127;
		}
		assert_true(sawmax);   /* the largest |x| maps to +-127 */
	}
	finish(&c);
	/* smooth_scales multiply x first */
	assert_int_equal(run_case(&c, "DynamicQuant", "3,16;16", "DT_BF16;DT_FLOAT", "3,16;3", "DT_INT8;DT_FLOAT", NULL), 0);
	for (int r = 0; r < 3; r++) {
		float mx = 0;
		for (int i = 0; i < 16; i++)
			mx = fmaxf(mx, fabsf(cpu_ld(&c.in[0], (size_t)(r * 16 + i)) * ((float *)c.in[1].data)[i]));
		assert_true(fabsf(((float *)c.out[1].data)[r] - mx / 127.0f) <= 1e-6f * mx);
	}
	finish(&c);
	assert_true(run_case(&c, "DynamicQuant", "5,40", "DT_FLOAT", "5,41;5", "DT_INT8;DT_FLOAT", NULL) < 0);
	assert_true(run_case(&c, "DynamicQuant", "5,40", "DT_FLOAT", "5,40;4", "DT_INT8;DT_FLOAT", NULL) < 0);
}

static void test_ascend_quant(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "AscendQuantV2", "4,24;24;24", "DT_FLOAT;DT_FLOAT;DT_FLOAT", "4,24", "DT_INT8",
				  NULL), 0);
	const float *x = c.in[0].data, *s = c.in[1].data, *o = c.in[2].data;
	for (int i = 0; i < 96; i++) {
		/* scales in [-1,1) and x in [-1,1): |x*s + o| < 2, scale the check up with 100x inputs below */
		double want = fmin(127, fmax(-128, nearbyint((double)x[i] * s[i % 24] + o[i % 24])));
		assert_true(fabs(((int8_t *)c.out[0].data)[i] - want) <= 1);
	}
	finish(&c);
	/* a (1,) scale broadcast, values that saturate */
	assert_int_equal(run_case(&c, "AscendQuantV2", "2,8;1", "DT_FLOAT;DT_FLOAT", "2,8", "DT_INT8", NULL), 0);
	finish(&c);
	assert_true(run_case(&c, "AscendQuantV2", "2,8;7", "DT_FLOAT;DT_FLOAT", "2,8", "DT_INT8", NULL) < 0);
}

static void big_scale(struct perfdb_op_case *c)
{
	((float *)c->in[1].data)[0] = 300.0f;
}

static void test_ascend_quant_saturates(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "AscendQuantV2", "2,8;1", "DT_FLOAT;DT_FLOAT", "2,8", "DT_INT8", big_scale), 0);
	const float *x = c.in[0].data;
	for (int i = 0; i < 16; i++) {
		double want = fmin(127, fmax(-128, nearbyint((double)x[i] * 300.0)));
		assert_true(fabs(((int8_t *)c.out[0].data)[i] - want) <= 1);
	}
	finish(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qmm_int32_exact),
		cmocka_unit_test(test_qmm_int32_full_range),
		cmocka_unit_test(test_qmm_dequant),
		cmocka_unit_test(test_qmm_refuses),
		cmocka_unit_test(test_dynamic_quant),
		cmocka_unit_test(test_ascend_quant),
		cmocka_unit_test(test_ascend_quant_saturates),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
