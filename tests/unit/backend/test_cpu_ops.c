/*
 * CPU backend ops against naive references on small shapes (docs/ops.md),
 * and the engine's row -> tensor rules (docs/spec/replay.md §4 "Parsing",
 * "Building a tensor").  Expected values are computed here by plain loops
 * over the same random inputs, or derived by hand.
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

/* Build, check, allocate/fill, prepare, run one case; returns check's result. */
static int run_case(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt,
		    const char *ifm, const char *outs, const char *odt)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, ifm, outs, odt, "", c, &err), 0);
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_non_null(impl);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err);
	if (rc < 0)
		return rc;
	/* each tensor its own buffers: the pool is indexed by slot, fine within one case */
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, 42, &err), 0);
	if (impl->prepare)
		assert_int_equal(impl->prepare(with_ctx(c), &err), 0);
	assert_int_equal(impl->run(c, &err), 0);
	return 0;
}

static void finish(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->release)
		impl->release(c);
}

static void near(float got, float want, float tol)
{
	if (fabsf(got - want) > tol * (1.0f + fabsf(want)))
		fail_msg("got %g, want %g (tol %g)", (double)got, (double)want, (double)tol);
}

static float tol_of(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_BF16 ? 2e-2f : d == PERFDB_DTYPE_FLOAT16 ? 2e-3f : 1e-5f;
}

/* ---- conversions (hand-derived bit patterns) ---- */

static void test_conversions(void **state)
{
	(void)state;
	assert_int_equal(perfdb_bf16_from_float(1.0f), 0x3f80);
	assert_int_equal(perfdb_bf16_from_float(-2.0f), 0xc000);
	assert_int_equal(perfdb_fp16_from_float(1.0f), 0x3c00);
	assert_int_equal(perfdb_fp16_from_float(65504.0f), 0x7bff);
	assert_int_equal(perfdb_fp16_from_float(0x1p-24f), 0x0001);      /* smallest subnormal */
	assert_int_equal(perfdb_fp16_from_float(1e6f), 0x7c00);          /* overflow -> inf */
	assert_true(perfdb_fp16_to_float(0x3555) > 0.333f && perfdb_fp16_to_float(0x3555) < 0.3334f);
	assert_true(perfdb_fp16_to_float(0x0001) == 0x1p-24f);
	assert_true(perfdb_bf16_to_float(0x3f80) == 1.0f);
	/* ties to even: 1 + 2^-8 lies halfway between bf16 1.0 and 1.0078125 */
	assert_int_equal(perfdb_bf16_from_float(1.0f + 0x1p-8f), 0x3f80);
}

/*
 * The row conversions (cpu_load_row/cpu_store_row, vector paths on AVX-512
 * and F16C where the CPU has them) equal the scalar ones bit for bit: every
 * fp16 and bf16 pattern in (NaNs: NaN, as F16C quiets signalling ones), and
 * out every fp16 value, every halfway point between neighbours (ties to
 * even), subnormals, overflow and NaNs.
 */
static void test_row_conversions_exact(void **state)
{
	(void)state;
	enum { N = 65536 };
	uint16_t *h = malloc(N * 2), *o = malloc(3 * N * 2);
	float *f = malloc(3 * N * sizeof(float)), *g = malloc(N * sizeof(float));
	assert_true(h && o && f && g);
	for (uint32_t i = 0; i < N; i++)
		h[i] = (uint16_t)i;
	const enum perfdb_dtype dts[] = { PERFDB_DTYPE_FLOAT16, PERFDB_DTYPE_BF16 };
	for (int d = 0; d < 2; d++) {
		struct perfdb_tensor t = { .dtype = dts[d], .data = h };
		cpu_load_row(&t, 0, N, g);
		for (uint32_t i = 0; i < N; i++) {
			float want = d ? perfdb_bf16_to_float(h[i]) : perfdb_fp16_to_float(h[i]);
			/* NaNs: NaN of the same sign (F16C quiets a signalling one) */
			int same = isnan(want) ? isnan(g[i]) && signbit(g[i]) == signbit(want) : memcmp(&g[i], &want, 4) == 0;
			if (!same)
				fail_msg("load %s 0x%04x", d ? "bf16" : "fp16", i);
		}
		/* out: the values, the points halfway to the next pattern, and those nudged by one ulp */
		for (uint32_t i = 0; i < N; i++) {
			uint32_t u, v;
			memcpy(&u, &g[i], 4);
			memcpy(&v, &g[(i + 1) % N], 4);
			uint32_t mid = u + (v - u) / 2;   /* neighbours of one sign: an exact midpoint in bits */
			f[i] = g[i];
			memcpy(&f[N + i], &mid, 4);
			mid += i & 1 ? 1u : (uint32_t)-1;
			memcpy(&f[2 * N + i], &mid, 4);
		}
		struct perfdb_tensor y = { .dtype = dts[d], .data = o };
		cpu_store_row(&y, 0, 3 * N, f);
		for (uint32_t i = 0; i < 3 * N; i++) {
			uint16_t want = d ? perfdb_bf16_from_float(f[i]) : perfdb_fp16_from_float(f[i]);
			if (o[i] != want)
				fail_msg("store %s %a: got 0x%04x, want 0x%04x", d ? "bf16" : "fp16", (double)f[i], o[i], want);
		}
	}
	free(h);
	free(o);
	free(f);
	free(g);
}

/* ---- §4 parsing and tensor building ---- */

static void test_build_case(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	/* FRACTAL_NZ (2,3,4,5) -> (12,10); empty slot kept and absent; missing dtype -> DT_FLOAT */
	assert_int_equal(perfdb_engine_build_case("X", "\"\"\"4,8;;2,3,4,5\"\"\"", "DT_BF16;;", "ND;;FRACTAL_NZ",
						  "4,8", "", "", &c, &err), 0);
	assert_int_equal(c.nin, 3);
	assert_true(c.in[0].present);
	assert_int_equal(c.in[0].dtype, PERFDB_DTYPE_BF16);
	assert_int_equal(c.in[0].bytes, 64);
	assert_false(c.in[1].present);
	assert_int_equal(c.in[2].ndims, 2);
	assert_int_equal(c.in[2].dims[0], 12);
	assert_int_equal(c.in[2].dims[1], 10);
	assert_int_equal(c.in[2].dtype, PERFDB_DTYPE_FLOAT);
	assert_int_equal(c.out[0].dtype, PERFDB_DTYPE_FLOAT);
	/* an unsupported dtype fails the row */
	assert_true(perfdb_engine_build_case("X", "4", "DT_WHATEVER", "", "4", "", "", &c, &err) < 0);
	assert_non_null(strstr(err.msg, "Unsupported dtype: DT_WHATEVER"));
	/* a bad dim fails the row */
	assert_true(perfdb_engine_build_case("X", "4,x", "", "", "4", "", "", &c, &err) < 0);
}

/* ---- MatMul family vs a naive triple loop ---- */

/* C[b,m,n] = sum_k A(b,m,k) B(b,k,n) with element accessors given by strides. */
static void check_gemm(const struct perfdb_op_case *c, int64_t bt, int64_t m, int64_t n, int64_t k,
		       const int64_t sa[3], const int64_t sb[3], const int64_t sc[3])
{
	float tol = tol_of(c->in[0].dtype) > tol_of(c->out[0].dtype) ? tol_of(c->in[0].dtype)
								   : tol_of(c->out[0].dtype);
	for (int64_t b = 0; b < bt; b++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double s = 0;
				for (int64_t p = 0; p < k; p++)
					s += (double)cpu_ld(&c->in[0], (size_t)(b * sa[0] + i * sa[1] + p * sa[2])) *
					     (double)cpu_ld(&c->in[1], (size_t)(b * sb[0] + p * sb[1] + j * sb[2]));
				near(cpu_ld(&c->out[0], (size_t)(b * sc[0] + i * sc[1] + j * sc[2])), (float)s,
				     tol * 4);
			}
}

/*
 * The weight rotation's buffers, itself included, worked by hand: enough
 * for 64 MiB, at most 64, none past 64 MiB.  A weight between one and two
 * 32 MiB L3s gets a copy too (docs/measuring.md "Working sets between one
 * and two L3s").
 */
static void test_matmul_rotation_copies(void **state)
{
	(void)state;
	const size_t mib = (size_t)1 << 20;
	assert_int_equal(cpu_rotation_copies(0), 1);
	assert_int_equal(cpu_rotation_copies(4096), 64);         /* capped */
	assert_int_equal(cpu_rotation_copies(mib), 64);          /* 64 x 1 MiB */
	assert_int_equal(cpu_rotation_copies(mib + 1), 64);      /* 64 MiB / (1 MiB + 1) rounds up to 64 */
	assert_int_equal(cpu_rotation_copies(28 * mib), 3);      /* (7168, 2048) bf16: 84 MiB */
	assert_int_equal(cpu_rotation_copies(32 * mib), 2);
	assert_int_equal(cpu_rotation_copies(40 * mib), 2);      /* (5120, 4096) bf16 */
	assert_int_equal(cpu_rotation_copies(64 * mib - 1), 2);
	assert_int_equal(cpu_rotation_copies(64 * mib), 1);
	assert_int_equal(cpu_rotation_copies(80 * mib), 1);
}

static void test_matmul_2d(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	const char *dts[] = { "DT_FLOAT;DT_FLOAT", "DT_BF16;DT_BF16" };
	const char *ods[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		/* weight recorded (N,K) = (5,7): used transposed */
		assert_int_equal(run_case(&c, "MatMulV2", "3,7;5,7", dts[d], "ND;ND", "3,5", ods[d]), 0);
		check_gemm(&c, 1, 3, 5, 7, (int64_t[]){ 0, 7, 1 }, (int64_t[]){ 0, 1, 7 }, (int64_t[]){ 0, 5, 1 });
		finish(&c);
		/* weight recorded (K,N) = (7,5) */
		assert_int_equal(run_case(&c, "MatMulCommon", "3,7;7,5", dts[d], "ND;ND", "3,5", ods[d]), 0);
		check_gemm(&c, 1, 3, 5, 7, (int64_t[]){ 0, 7, 1 }, (int64_t[]){ 0, 5, 1 }, (int64_t[]){ 0, 5, 1 });
		finish(&c);
	}
	/* fp32 M = 1: the OpenBLAS gemv path, both weight layouts */
	assert_int_equal(run_case(&c, "MatMulV3", "1,9;4,9", "DT_FLOAT;DT_FLOAT", "", "1,4", "DT_FLOAT"), 0);
	check_gemm(&c, 1, 1, 4, 9, (int64_t[]){ 0, 9, 1 }, (int64_t[]){ 0, 1, 9 }, (int64_t[]){ 0, 4, 1 });
	finish(&c);
	assert_int_equal(run_case(&c, "MatMulV3", "1,9;9,4", "DT_FLOAT;DT_FLOAT", "", "1,4", "DT_FLOAT"), 0);
	check_gemm(&c, 1, 1, 4, 9, (int64_t[]){ 0, 9, 1 }, (int64_t[]){ 0, 4, 1 }, (int64_t[]){ 0, 4, 1 });
	finish(&c);
	/* bf16 inputs, fp32 output */
	assert_int_equal(run_case(&c, "MatMulV2", "2,16;8,16", "DT_BF16;DT_BF16", "", "2,8", "DT_FLOAT"), 0);
	check_gemm(&c, 1, 2, 8, 16, (int64_t[]){ 0, 16, 1 }, (int64_t[]){ 0, 1, 16 }, (int64_t[]){ 0, 8, 1 });
	finish(&c);
	/* shapes the op cannot take */
	assert_true(run_case(&c, "MatMulV2", "3,7;5,6", "DT_FLOAT;DT_FLOAT", "", "3,5", "DT_FLOAT") < 0);
	assert_true(run_case(&c, "MatMulV2", "3,7", "DT_FLOAT", "", "3,5", "DT_FLOAT") < 0);
}

/*
 * The 16-bit float GEMMs on every ISA level: where oneDNN has no bf16/fp16
 * matmul (bf16 below AVX-512, the level ONEDNN_MAX_CPU_ISA leaves it) the
 * fp32 one runs on converted operands, and Kernel Used says which ran.
 */
static int ends_f32(const char *k)
{
	size_t n = strlen(k);
	return n >= 4 && strcmp(k + n - 4, "+f32") == 0;
}

static void test_matmul_half_fallback(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
	int bf16_native = (isa & (unsigned)dnnl_cpu_isa_avx512_core) == (unsigned)dnnl_cpu_isa_avx512_core;
	const char *dts[] = { "DT_FLOAT;DT_FLOAT", "DT_BF16;DT_BF16", "DT_FLOAT16;DT_FLOAT16" };
	const char *ods[] = { "DT_FLOAT", "DT_BF16", "DT_FLOAT16" };
	for (int d = 0; d < 3; d++) {
		/* M = 1 and M = 40, weight recorded (N,K): transposed */
		for (int m = 1; m <= 40; m += 39) {
			char ins[32], outs[16];
			snprintf(ins, sizeof(ins), "%d,24;17,24", m);
			snprintf(outs, sizeof(outs), "%d,17", m);
			assert_int_equal(run_case(&c, "MatMulV2", ins, dts[d], "", outs, ods[d]), 0);
			check_gemm(&c, 1, m, 17, 24, (int64_t[]){ 0, 24, 1 }, (int64_t[]){ 0, 1, 24 },
				   (int64_t[]){ 0, 17, 1 });
			assert_int_equal(strncmp(c.kernel, "onednn:", 7), 0);
			if (d == 0)
				assert_false(ends_f32(c.kernel));
			if (d == 1)
				assert_int_equal(ends_f32(c.kernel), !bf16_native);
			finish(&c);
		}
		/* TransposeBatchMatMul: A strided (M,B,K), converted with its strides */
		assert_int_equal(run_case(&c, "TransposeBatchMatMul", "3,2,8;2,8,5", dts[d], "", "3,2,5", ods[d]), 0);
		check_gemm(&c, 2, 3, 5, 8, (int64_t[]){ 8, 16, 1 }, (int64_t[]){ 40, 5, 1 }, (int64_t[]){ 5, 10, 1 });
		finish(&c);
	}
}

static void test_matmul_batched(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* BatchMatMulV2: (2,3,4) x (2,4,5) */
	assert_int_equal(run_case(&c, "BatchMatMulV2", "2,3,4;2,4,5", "DT_FLOAT;DT_FLOAT", "", "2,3,5", "DT_FLOAT"), 0);
	check_gemm(&c, 2, 3, 5, 4, (int64_t[]){ 12, 4, 1 }, (int64_t[]){ 20, 5, 1 }, (int64_t[]){ 15, 5, 1 });
	finish(&c);
	/* BatchMatMulV2 with b (B,N,K) */
	assert_int_equal(run_case(&c, "BatchMatMulV2", "2,3,4;2,5,4", "DT_BF16;DT_BF16", "", "2,3,5", "DT_BF16"), 0);
	check_gemm(&c, 2, 3, 5, 4, (int64_t[]){ 12, 4, 1 }, (int64_t[]){ 20, 1, 4 }, (int64_t[]){ 15, 5, 1 });
	finish(&c);
	/* TransposeBatchMatMul: x (M,B,K) = (3,2,4), w (B,K,N) = (2,4,5), out (M,B,N) */
	assert_int_equal(run_case(&c, "TransposeBatchMatMul", "3,2,4;2,4,5", "DT_FLOAT;DT_FLOAT", "", "3,2,5",
				  "DT_FLOAT"), 0);
	check_gemm(&c, 2, 3, 5, 4, (int64_t[]){ 4, 8, 1 }, (int64_t[]){ 20, 5, 1 }, (int64_t[]){ 5, 10, 1 });
	finish(&c);
	/* TransposeBatchMatMul as the grid writes it: x (B,M,K) = (2,3,4), w (B,K,N), out (M,B,N) = (3,2,5) */
	assert_int_equal(run_case(&c, "TransposeBatchMatMul", "2,3,4;2,4,5", "DT_BF16;DT_BF16", "", "3,2,5",
				  "DT_BF16"), 0);
	check_gemm(&c, 2, 3, 5, 4, (int64_t[]){ 12, 4, 1 }, (int64_t[]){ 20, 5, 1 }, (int64_t[]){ 5, 10, 1 });
	finish(&c);
}

/* ---- element-wise and norm ops vs plain loops ---- */

static const char *const fdt[] = { "DT_FLOAT", "DT_BF16", "DT_FLOAT16" };

static void test_add(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[64];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s", fdt[d], fdt[d]);
		assert_int_equal(run_case(&c, "Add", "3,1100;1100", dt, "", "3,1100", fdt[d]), 0);
		for (size_t i = 0; i < 3300; i++)
			near(cpu_ld(&c.out[0], i), cpu_ld(&c.in[0], i) + cpu_ld(&c.in[1], i % 1100), tol_of(c.out[0].dtype));
		finish(&c);
	}
	assert_true(run_case(&c, "Add", "3,4;5", "DT_FLOAT;DT_FLOAT", "", "3,4", "DT_FLOAT") < 0);
}

/* Integer Add (the graph's position arithmetic): wraps like the device; broadcast as for floats */
static void test_add_int(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "Add", "4;1", "INT64;INT64", "", "4", "INT64"), 0);
	const int64_t *a = c.in[0].data, *b = c.in[1].data, *o = c.out[0].data;
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(o[i], a[i] + b[0]);
	finish(&c);
	assert_int_equal(run_case(&c, "Add", "3,5;5", "DT_INT32;DT_INT32", "", "3,5", "DT_INT32"), 0);
	const int32_t *x = c.in[0].data, *y = c.in[1].data, *z = c.out[0].data;
	for (size_t i = 0; i < 15; i++)
		assert_int_equal(z[i], x[i] + y[i % 5]);
	finish(&c);
	/* mixed integer and float dtypes are refused */
	assert_true(run_case(&c, "Add", "4;4", "INT64;DT_FLOAT", "", "4", "INT64") < 0);
}

static void test_swiglu(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	for (int d = 0; d < 3; d++) {
		assert_int_equal(run_case(&c, "SwiGlu", "2,6", fdt[d], "", "2,3", fdt[d]), 0);
		for (size_t r = 0; r < 2; r++)
			for (size_t j = 0; j < 3; j++) {
				float a = cpu_ld(&c.in[0], r * 6 + j), b = cpu_ld(&c.in[0], r * 6 + 3 + j);
				near(cpu_ld(&c.out[0], r * 3 + j), a / (1 + expf(-a)) * b, tol_of(c.out[0].dtype));
			}
		finish(&c);
	}
	assert_true(run_case(&c, "SwiGlu", "2,5", "DT_FLOAT", "", "2,2", "DT_FLOAT") < 0);
	/* a scalar output ("," is a present tensor of no dims): refused, its
	 * last dim never read (fuzz_case_build's finding: dims[-1]) */
	assert_true(run_case(&c, "SwiGlu", "2", "DT_FLOAT", "", ",", "DT_FLOAT") < 0);
}

static void test_rmsnorm(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[64];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s", fdt[d], fdt[d]);
		assert_int_equal(run_case(&c, "RmsNorm", "3,37;37", dt, "", "3,37;3,1",
					  d == 0 ? "DT_FLOAT;DT_FLOAT" : d == 1 ? "DT_BF16;DT_FLOAT" : "DT_FLOAT16;DT_FLOAT"), 0);
		for (size_t r = 0; r < 3; r++) {
			double ss = 0;
			for (size_t j = 0; j < 37; j++)
				ss += (double)cpu_ld(&c.in[0], r * 37 + j) * cpu_ld(&c.in[0], r * 37 + j);
			float rstd = (float)(1.0 / sqrt(ss / 37 + 1e-6));
			near(cpu_ld(&c.out[1], r), rstd, 1e-4f);
			for (size_t j = 0; j < 37; j++)
				near(cpu_ld(&c.out[0], r * 37 + j),
				     cpu_ld(&c.in[0], r * 37 + j) * rstd * cpu_ld(&c.in[1], j), tol_of(c.out[0].dtype) * 2);
		}
		finish(&c);
	}
	assert_true(run_case(&c, "RmsNorm", "3,8;7", "DT_FLOAT;DT_FLOAT", "", "3,8", "DT_FLOAT") < 0);
}

static void test_add_rms_norm_bias(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "AddRmsNormBias", "2,5;2,5;5;5", "DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_FLOAT", "",
				  "2,5;2,1;2,5", "DT_FLOAT;DT_FLOAT;DT_FLOAT"), 0);
	for (size_t r = 0; r < 2; r++) {
		float x[5];
		double ss = 0;
		for (size_t j = 0; j < 5; j++) {
			x[j] = cpu_ld(&c.in[0], r * 5 + j) + cpu_ld(&c.in[1], r * 5 + j);
			ss += (double)x[j] * x[j];
			near(cpu_ld(&c.out[2], r * 5 + j), x[j], 1e-6f);
		}
		float rstd = (float)(1.0 / sqrt(ss / 5 + 1e-6));
		for (size_t j = 0; j < 5; j++)
			near(cpu_ld(&c.out[0], r * 5 + j), x[j] * rstd * cpu_ld(&c.in[2], j) + cpu_ld(&c.in[3], j), 1e-5f);
	}
	finish(&c);
}

static void test_softmax(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	for (int d = 0; d < 3; d++) {
		assert_int_equal(run_case(&c, "SoftmaxV2", "4,19", fdt[d], "", "4,19", fdt[d]), 0);
		for (size_t r = 0; r < 4; r++) {
			double s = 0;
			for (size_t j = 0; j < 19; j++)
				s += exp(cpu_ld(&c.in[0], r * 19 + j));
			for (size_t j = 0; j < 19; j++)
				near(cpu_ld(&c.out[0], r * 19 + j), (float)(exp(cpu_ld(&c.in[0], r * 19 + j)) / s),
				     tol_of(c.out[0].dtype));
		}
		finish(&c);
	}
}

/* ---- data movement ---- */

static void test_gather(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* a 5-row table and 6 indices: filled in [0,8) and folded into [0,5) by prepare */
	assert_int_equal(run_case(&c, "GatherV2", "5,3;6", "DT_BF16;DT_INT64", "", "6,3", "DT_BF16"), 0);
	const int64_t *ix = c.in[1].data;
	for (size_t i = 0; i < 6; i++) {
		assert_true(ix[i] >= 0 && ix[i] < 5);
		for (size_t j = 0; j < 3; j++)
			assert_true(cpu_ld(&c.out[0], i * 3 + j) == cpu_ld(&c.in[0], (size_t)ix[i] * 3 + j));
	}
	finish(&c);
	assert_true(run_case(&c, "GatherV2", "5,3;6", "DT_BF16;DT_FLOAT", "", "6,3", "DT_BF16") < 0);
}

/* Row conversions (vectorised for 16 lanes, scalar tails) vs the element functions. */
static void test_bf16_rows(void **state)
{
	(void)state;
	enum { N = 53 };
	float src[N], back[N];
	uint16_t h[N];
	uint32_t bits[] = { 0x7fc00001u, 0xff800000u, 0x7f800000u, 0x7f800001u, 0x3f808000u, 0x3f818000u,
			    0x3f807fffu, 0x7f7fffffu, 0x80000000u, 0x00000001u, 0xffffffffu };
	for (size_t i = 0; i < N; i++) {
		if (i < sizeof(bits) / sizeof(bits[0]))
			memcpy(&src[i], &bits[(i * 5) % (sizeof(bits) / sizeof(bits[0]))], 4);
		else
			src[i] = (float)i * 0.37f - 9.1f;
	}
	struct perfdb_tensor t = { .present = true, .dtype = PERFDB_DTYPE_BF16, .ndims = 1, .numel = N, .data = h };
	/* offset 3: unaligned start; lengths cover full vectors and tails */
	for (size_t off = 0; off < 4; off += 3) {
		size_t n = N - off;
		cpu_store_row(&t, off, n, src + off);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(h[off + i], perfdb_bf16_from_float(src[off + i]));
		cpu_load_row(&t, off, n, back);
		for (size_t i = 0; i < n; i++) {
			float want = perfdb_bf16_to_float(h[off + i]);
			assert_memory_equal(&back[i], &want, 4);
		}
	}
}

static void test_transpose(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* (2,3,4) -> (2,4,3): dims 1 and 2 swapped */
	assert_int_equal(run_case(&c, "Transpose", "2,3,4", "DT_FLOAT", "", "2,4,3", "DT_FLOAT"), 0);
	for (size_t a = 0; a < 2; a++)
		for (size_t i = 0; i < 3; i++)
			for (size_t j = 0; j < 4; j++)
				assert_true(cpu_ld(&c.out[0], a * 12 + j * 3 + i) == cpu_ld(&c.in[0], a * 12 + i * 4 + j));
	finish(&c);
	/* (3,2,5) -> (5,2,3): dims 0 and 2 */
	assert_int_equal(run_case(&c, "Transpose", "3,2,5", "DT_FLOAT16", "", "5,2,3", "DT_FLOAT16"), 0);
	for (size_t i = 0; i < 3; i++)
		for (size_t m = 0; m < 2; m++)
			for (size_t j = 0; j < 5; j++)
				assert_true(cpu_ld(&c.out[0], j * 6 + m * 3 + i) == cpu_ld(&c.in[0], i * 10 + m * 5 + j));
	finish(&c);
	/* 2-D, last two dims: below one 64x64 tile, odd edges, several tiles (bf16, fp32) */
	static const struct { const char *in, *out, *dt; size_t r, k; } tc[] = {
		{ "5,7", "7,5", "DT_BF16", 5, 7 },
		{ "1,40", "40,1", "DT_BF16", 1, 40 },
		{ "33,70", "70,33", "DT_BF16", 33, 70 },
		{ "64,32", "32,64", "DT_BF16", 64, 32 },
		{ "45,37", "37,45", "DT_FLOAT", 45, 37 },
		{ "96,65", "65,96", "DT_FLOAT", 96, 65 },
		{ "130,129", "129,130", "DT_BF16", 130, 129 },
		/* a multiple of 8 rows: kern_transpose.c's kernel, ordinary stores; full and partial tiles, a tail */
		{ "72,300", "300,72", "DT_BF16", 72, 300 },
		{ "16,520", "520,16", "DT_FLOAT16", 16, 520 },
	};
	for (size_t t = 0; t < sizeof(tc) / sizeof(tc[0]); t++) {
		assert_int_equal(run_case(&c, "Transpose", tc[t].in, tc[t].dt, "", tc[t].out, tc[t].dt), 0);
		for (size_t i = 0; i < tc[t].r; i++)
			for (size_t j = 0; j < tc[t].k; j++)
				assert_true(cpu_ld(&c.out[0], j * tc[t].r + i) == cpu_ld(&c.in[0], i * tc[t].k + j));
		finish(&c);
	}
	assert_true(run_case(&c, "Transpose", "2,3", "DT_FLOAT", "", "2,4", "DT_FLOAT") < 0);
}

static void test_slice_move_fill(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "Slice", "3,4,5", "DT_FLOAT", "", "2,3,2", "DT_FLOAT"), 0);
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < 3; j++)
			for (size_t k = 0; k < 2; k++)
				assert_true(cpu_ld(&c.out[0], i * 6 + j * 2 + k) == cpu_ld(&c.in[0], i * 20 + j * 5 + k));
	finish(&c);
	assert_true(run_case(&c, "Slice", "3,4", "DT_FLOAT", "", "4,4", "DT_FLOAT") < 0);
	assert_int_equal(run_case(&c, "TensorMove", "7,3", "DT_BF16", "", "7,3", "DT_BF16"), 0);
	assert_memory_equal(c.out[0].data, c.in[0].data, 42);
	finish(&c);
	assert_int_equal(run_case(&c, "MaskedFill", "4,6;6;1", "DT_FLOAT;DT_BOOL;DT_FLOAT", "", "4,6", "DT_FLOAT"), 0);
	const uint8_t *mask = c.in[1].data;
	float v = cpu_ld(&c.in[2], 0);
	for (size_t i = 0; i < 24; i++)
		assert_true(cpu_ld(&c.out[0], i) == (mask[i % 6] ? v : cpu_ld(&c.in[0], i)));
	finish(&c);
}

static void test_argmax_sort(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* argmax over dim 1 of (2,5,3) -> (2,3) */
	assert_int_equal(run_case(&c, "ArgMaxV2", "2,5,3", "DT_FLOAT", "", "2,3", "DT_INT64"), 0);
	const int64_t *am = c.out[0].data;
	for (size_t o = 0; o < 2; o++)
		for (size_t i = 0; i < 3; i++) {
			size_t best = 0;
			for (size_t k = 1; k < 5; k++)
				if (cpu_ld(&c.in[0], o * 15 + k * 3 + i) > cpu_ld(&c.in[0], o * 15 + best * 3 + i))
					best = k;
			assert_int_equal(am[o * 3 + i], best);
		}
	finish(&c);
	assert_true(run_case(&c, "ArgMaxV2", "2,5,3", "DT_FLOAT", "", "4", "DT_INT64") < 0);
	/* sort rows of 9 ascending, with indices */
	assert_int_equal(run_case(&c, "Sort", "3,9", "DT_BF16", "", "3,9;3,9", "DT_BF16;DT_INT32"), 0);
	const int32_t *si = c.out[1].data;
	for (size_t r = 0; r < 3; r++)
		for (size_t j = 0; j < 9; j++) {
			if (j)
				assert_true(cpu_ld(&c.out[0], r * 9 + j - 1) <= cpu_ld(&c.out[0], r * 9 + j));
			assert_true(cpu_ld(&c.out[0], r * 9 + j) == cpu_ld(&c.in[0], r * 9 + (size_t)si[r * 9 + j]));
		}
	finish(&c);
}

static void test_index_pad_scatter(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* Index: x (6,4), sizes, strides, indices (5) -> (5,4) */
	assert_int_equal(run_case(&c, "Index", "6,4;1;1;5", "DT_FLOAT;DT_INT64;DT_INT64;DT_INT64", "", "5,4",
				  "DT_FLOAT"), 0);
	const int64_t *ix = c.in[3].data;
	for (size_t i = 0; i < 5; i++) {
		assert_true(ix[i] >= 0 && ix[i] < 6);
		for (size_t j = 0; j < 4; j++)
			assert_true(cpu_ld(&c.out[0], i * 4 + j) == cpu_ld(&c.in[0], (size_t)ix[i] * 4 + j));
	}
	finish(&c);
	/* Index as the grid writes it: x (6,4); (1,); indices (5,); (1,) -> (5,4): the indices are slot 2 */
	assert_int_equal(run_case(&c, "Index", "6,4;1;5;1", "DT_FLOAT;DT_INT64;DT_INT64;DT_INT64", "", "5,4",
				  "DT_FLOAT"), 0);
	ix = c.in[2].data;
	for (size_t i = 0; i < 5; i++) {
		assert_true(ix[i] >= 0 && ix[i] < 6);
		for (size_t j = 0; j < 4; j++)
			assert_true(cpu_ld(&c.out[0], i * 4 + j) == cpu_ld(&c.in[0], (size_t)ix[i] * 4 + j));
	}
	finish(&c);
	/* the grid's row grown from a 2-dtype template: slots 2 and 3 default to DT_FLOAT (spec §4) */
	assert_int_equal(run_case(&c, "Index", "6,4;1;5;1", "DT_BF16;DT_INT64", "", "5,4", "DT_BF16"), 0);
	assert_int_equal(c.in[2].dtype, PERFDB_DTYPE_FLOAT);
	for (size_t i = 0; i < 5; i++) {
		float f = ((const float *)c.in[2].data)[i];
		assert_true(f >= 0 && f < 6 && f == (float)(int)f);
		for (size_t j = 0; j < 4; j++)
			assert_true(cpu_ld(&c.out[0], i * 4 + j) == cpu_ld(&c.in[0], (size_t)f * 4 + j));
	}
	finish(&c);
	/* PadV3: (2,3) into (3,5), zeros elsewhere */
	assert_int_equal(run_case(&c, "PadV3", "2,3;4", "DT_FLOAT;DT_INT64", "", "3,5", "DT_FLOAT"), 0);
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 5; j++)
			assert_true(cpu_ld(&c.out[0], i * 5 + j) == (i < 2 && j < 3 ? cpu_ld(&c.in[0], i * 3 + j) : 0.0f));
	finish(&c);
	assert_true(run_case(&c, "PadV3", "2,3", "DT_FLOAT", "", "1,5", "DT_FLOAT") < 0);
	/* ScatterNdUpdate: var (8,2), indices (3,1), updates (3,2); 3 <= 8 rows: distinct indices */
	assert_int_equal(run_case(&c, "ScatterNdUpdate", "8,2;3,1;3,2", "DT_FLOAT;DT_INT32;DT_FLOAT", "", "8,2",
				  "DT_FLOAT"), 0);
	const int32_t *si = c.in[1].data;
	for (size_t i = 0; i < 3; i++) {
		assert_true(si[i] >= 0 && si[i] < 8);
		for (size_t k = i + 1; k < 3; k++)
			assert_true(si[k] != si[i]);
		for (size_t j = 0; j < 2; j++)
			assert_true(cpu_ld(&c.in[0], (size_t)si[i] * 2 + j) == cpu_ld(&c.in[2], i * 2 + j));
	}
	finish(&c);
	/* more updates than rows: repeats, the last write of a row wins */
	assert_int_equal(run_case(&c, "ScatterNdUpdate", "4,2;9,1;9,2", "DT_FLOAT;DT_INT64;DT_FLOAT", "", "4,2",
				  "DT_FLOAT"), 0);
	const int64_t *sl = c.in[1].data;
	for (size_t i = 0; i < 9; i++) {
		assert_true(sl[i] >= 0 && sl[i] < 4);
		int later = 0;
		for (size_t k = i + 1; k < 9; k++)
			later |= sl[k] == sl[i];
		for (size_t j = 0; j < 2 && !later; j++)
			assert_true(cpu_ld(&c.in[0], (size_t)sl[i] * 2 + j) == cpu_ld(&c.in[2], i * 2 + j));
	}
	finish(&c);
	assert_true(run_case(&c, "ScatterNdUpdate", "8,2;3,2;3,2", "DT_FLOAT;DT_INT32;DT_FLOAT", "", "8,2",
			     "DT_FLOAT") < 0);
}

/*
 * --threads: each own kernel split over 3 threads (uneven ranges, more than
 * the machine's cores is fine) gives exactly the bytes of the 1-thread run
 * on the same inputs; shapes are above CPU_PAR_MIN so the split happens.
 */
static void run_threads(const char *op, const char *ins, const char *idt, const char *outs, const char *odt,
			int threads, void **out, size_t *bytes)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", &c, &err), 0);
	c.threads = threads;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_int_equal(perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err), 0);
	assert_int_equal(perfdb_engine_alloc_case(&pool, &c, 7, &err), 0);
	if (impl->prepare)
		assert_int_equal(impl->prepare(with_ctx(&c), &err), 0);
	memset(c.out[0].data, 0x5a, c.out[0].bytes);   /* nothing left over from the last run */
	assert_int_equal(impl->run(&c, &err), 0);
	*bytes = c.out[0].bytes;
	*out = malloc(*bytes);
	assert_non_null(*out);
	memcpy(*out, c.out[0].data, *bytes);
	finish(&c);
}

static void test_threads(void **state)
{
	(void)state;
	static const char *const cases[][5] = {
		{ "RmsNorm", "300,257;257", "DT_BF16;DT_BF16", "300,257", "DT_BF16" },
		{ "AddRmsNormBias", "300,257;300,257;257;257", "DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_FLOAT", "300,257",
		  "DT_FLOAT" },
		{ "SoftmaxV2", "300,257", "DT_FLOAT16", "300,257", "DT_FLOAT16" },
		{ "SoftmaxV2", "300,257", "DT_BF16", "300,257", "DT_BF16" },
		{ "SwiGlu", "300,514", "DT_BF16", "300,257", "DT_BF16" },
		{ "Add", "70001;70001", "DT_BF16;DT_BF16", "70001", "DT_BF16" },
		{ "SwiGlu", "300,514", "DT_FLOAT", "300,257", "DT_FLOAT" },
		{ "TensorMove", "100003", "DT_FLOAT", "100003", "DT_FLOAT" },
		{ "GatherV2", "1000,300;300", "DT_BF16;DT_INT64", "300,300", "DT_BF16" },
		{ "Transpose", "3,301,257", "DT_BF16", "3,257,301", "DT_BF16" },
		{ "Transpose", "3,72,300", "DT_BF16", "3,300,72", "DT_BF16" },   /* kern_transpose.c */
		{ "Transpose", "5,300,7,60", "DT_FLOAT", "5,60,7,300", "DT_FLOAT" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(cpu_par_threads(2, CPU_PAR_MIN, 3) > 1);
		void *one, *three;
		size_t n1, n3;
		run_threads(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], 1, &one, &n1);
		run_threads(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], 3, &three, &n3);
		assert_int_equal(n1, n3);
		if (memcmp(one, three, n1) != 0)
			fail_msg("%s %s: 3 threads differ from 1", cases[i][0], cases[i][1]);
		free(one);
		free(three);
	}
}

/*
 * A bf16 transpose whose output is above the LLC takes the streaming-store
 * path (kern_transpose.c): checked element by element against the
 * definition, on 1 and 3 threads, over an output filled with 0xff first.
 * Shapes: a row count that leaves a partial band of tiles (2056 = 32 x 64 +
 * 8, 2104 = 32 x 64 + 56), column counts that are not a multiple of 8
 * (element-wise tail) and one (4004) whose last tile is narrower than the
 * 256-column tile (160 columns: the short copy and a short prefetch), and
 * thread ranges that cross from one matrix to the next.
 */
static void test_transpose_streaming(void **state)
{
	(void)state;
	static const struct { size_t a, b; const char *in, *out; } sh[] = {
		{ 2056, 4100, "2,2056,4100", "2,4100,2056" },   /* 2 x 2056 x 4100 x 2 B = 33.7 MB */
		{ 2104, 4004, "2,2104,4004", "2,4004,2104" },   /* 33.7 MB */
	};
	const size_t n = 2;
	for (size_t s = 0; s < sizeof(sh) / sizeof(sh[0]); s++)
		for (int threads = 1; threads <= 3; threads += 2) {
			struct perfdb_op_case c;
			struct perfdb_err err;
			perfdb_err_clear(&err);
			assert_int_equal(perfdb_engine_build_case("Transpose", sh[s].in, "DT_BF16", "", sh[s].out,
								  "DT_BF16", "", &c, &err), 0);
			c.threads = threads;
			const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op("Transpose");
			assert_int_equal(perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err), 0);
			assert_int_equal(perfdb_engine_alloc_case(&pool, &c, 3, &err), 0);
			assert_true(c.out[0].bytes >= (size_t)32 << 20);
			memset(c.out[0].data, 0xff, c.out[0].bytes);
			assert_int_equal(impl->run(&c, &err), 0);
			const uint16_t *x = c.in[0].data, *o = c.out[0].data;
			size_t a = sh[s].a, b = sh[s].b, bad = 0;
			for (size_t m = 0; m < n; m++)
				for (size_t i = 0; i < a; i++)
					for (size_t j = 0; j < b; j++)
						bad += o[m * a * b + j * a + i] != x[m * a * b + i * b + j];
			assert_int_equal(bad, 0);
			finish(&c);
		}
}

/*
 * The 2-byte transpose kernel itself (kern_transpose.c) with both tile
 * copies (AVX2 and the SSE2 one other CPUs take) and both stores
 * (streaming and ordinary), on sub-matrices (row strides wider than the
 * rows, so a write outside the (b, a) window shows as a changed sentinel)
 * and sizes around its 8-element blocks and 64 x 256 tiles.
 */
static void test_transpose_kernel_copies(void **state)
{
	(void)state;
	static const size_t as[] = { 8, 64, 72, 200 }, bs[] = { 3, 8, 13, 256, 300, 520 };
	const size_t ldx = 536, ldo = 216;   /* >= every b and a; ldo a multiple of 8 */
	uint16_t *x = malloc(200 * ldx * 2), *o = aligned_alloc(64, 520 * ldo * 2);
	assert_non_null(x);
	assert_non_null(o);
	for (size_t i = 0; i < 200 * ldx; i++)
		x[i] = (uint16_t)(i * 40503u + 7);
	for (int k = 0; k < 4; k++)
		for (size_t ai = 0; ai < sizeof(as) / sizeof(as[0]); ai++)
			for (size_t bi = 0; bi < sizeof(bs) / sizeof(bs[0]); bi++) {
				size_t a = as[ai], b = bs[bi], bad = 0;
				int avx2 = k & 1, nt = k >> 1;
				assert_true(cpu_transpose_u16_ok(o, a, ldo, nt));
				memset(o, 0xab, 520 * ldo * 2);
				cpu_transpose_u16_isa(x, o, a, b, ldx, ldo, nt, avx2);
				for (size_t j = 0; j < 520; j++)
					for (size_t i = 0; i < ldo; i++)
						bad += o[j * ldo + i] != (j < b && i < a ? x[i * ldx + j] : 0xabab);
				if (bad)
					fail_msg("a %zu b %zu avx2 %d nt %d: %zu wrong elements", a, b, avx2, nt, bad);
			}
	free(x);
	free(o);
}

/*
 * The bf16 row kernels (RmsNorm through kern_rows.c's table; on CPUs with
 * AVX512_BF16, SoftmaxV2 and SwiGlu through kern_bf16.c) at widths
 * around their 16- and 32-lane steps and a model width, against the
 * definitions computed in double from the same bf16 inputs.
 */
static void test_bf16_row_kernels(void **state)
{
	(void)state;
	static const size_t widths[] = { 5, 16, 31, 32, 33, 1000, 5120 };
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		size_t h = widths[w], rows = 3;
		char ins[64], outs[64];
		struct perfdb_op_case c;
		snprintf(ins, sizeof(ins), "%zu,%zu;%zu", rows, h, h);
		snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1", rows, h, rows);
		assert_int_equal(run_case(&c, "RmsNorm", ins, "DT_BF16;DT_BF16", "", outs, "DT_BF16;DT_FLOAT"), 0);
		for (size_t r = 0; r < rows; r++) {
			double ss = 0;
			for (size_t j = 0; j < h; j++)
				ss += (double)cpu_ld(&c.in[0], r * h + j) * cpu_ld(&c.in[0], r * h + j);
			double rstd = 1.0 / sqrt(ss / (double)h + 1e-6);
			near(cpu_ld(&c.out[1], r), (float)rstd, 1e-4f);
			for (size_t j = 0; j < h; j++)
				near(cpu_ld(&c.out[0], r * h + j),
				     (float)(cpu_ld(&c.in[0], r * h + j) * rstd * cpu_ld(&c.in[1], j)), 1e-2f);
		}
		finish(&c);
		snprintf(ins, sizeof(ins), "%zu,%zu", rows, h);
		assert_int_equal(run_case(&c, "SoftmaxV2", ins, "DT_BF16", "", ins, "DT_BF16"), 0);
		for (size_t r = 0; r < rows; r++) {
			double mx = -1e30, sum = 0;
			for (size_t j = 0; j < h; j++)
				mx = fmax(mx, cpu_ld(&c.in[0], r * h + j));
			for (size_t j = 0; j < h; j++)
				sum += exp(cpu_ld(&c.in[0], r * h + j) - mx);
			for (size_t j = 0; j < h; j++)
				near(cpu_ld(&c.out[0], r * h + j), (float)(exp(cpu_ld(&c.in[0], r * h + j) - mx) / sum),
				     1e-2f);
		}
		finish(&c);
		snprintf(ins, sizeof(ins), "%zu,%zu", rows, 2 * h);
		snprintf(outs, sizeof(outs), "%zu,%zu", rows, h);
		assert_int_equal(run_case(&c, "SwiGlu", ins, "DT_BF16", "", outs, "DT_BF16"), 0);
		for (size_t r = 0; r < rows; r++)
			for (size_t j = 0; j < h; j++) {
				double g = cpu_ld(&c.in[0], r * 2 * h + j), u = cpu_ld(&c.in[0], r * 2 * h + h + j);
				near(cpu_ld(&c.out[0], r * h + j), (float)(g / (1 + exp(-g)) * u), 1e-2f);
			}
		finish(&c);
	}
}

/*
 * bf16 RmsNorm and SoftmaxV2 whose output is above the LLC write it with
 * streaming stores (kern_rows.c, kern_bf16.c, CPU_NT_MIN_BYTES): on 1 thread
 * every element checked against the definitions in double; on 3 threads (row
 * ranges that start anywhere) the output must be the 1-thread one byte for
 * byte, as each row is one thread's whole (the double reference, computed
 * once per op, was most of this test's time under qemu).  Each output is
 * filled with 0xff first, so a row or vector left unwritten shows.
 */
static void test_bf16_rows_streaming(void **state)
{
	(void)state;
	const size_t rows = 2051, h = 8192;   /* 2051 x 8192 x 2 B = 33.6 MB */
	uint16_t *one = malloc(rows * h * sizeof(uint16_t));   /* an op's 1-thread output */
	assert_non_null(one);
	for (int op = 0; op < 2; op++)
		for (int threads = 1; threads <= 3; threads += 2) {
			struct perfdb_op_case c;
			struct perfdb_err err;
			perfdb_err_clear(&err);
			const char *name = op ? "SoftmaxV2" : "RmsNorm";
			assert_int_equal(perfdb_engine_build_case(name, op ? "2051,8192" : "2051,8192;8192",
								  op ? "DT_BF16" : "DT_BF16;DT_BF16", "",
								  op ? "2051,8192" : "2051,8192;2051,1",
								  op ? "DT_BF16" : "DT_BF16;DT_FLOAT", "", &c, &err), 0);
			c.threads = threads;
			const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(name);
			assert_int_equal(perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err), 0);
			assert_int_equal(perfdb_engine_alloc_case(&pool, &c, 5, &err), 0);
			assert_true(c.out[0].bytes >= CPU_NT_MIN_BYTES);
			assert_int_equal(impl->prepare ? impl->prepare(with_ctx(&c), &err) : 0, 0);
			memset(c.out[0].data, 0xff, c.out[0].bytes);
			assert_int_equal(impl->run(&c, &err), 0);
			assert_int_equal(c.out[0].bytes, rows * h * sizeof(uint16_t));
			if (threads > 1) {
				assert_memory_equal(c.out[0].data, one, c.out[0].bytes);
				finish(&c);
				continue;
			}
			memcpy(one, c.out[0].data, c.out[0].bytes);
			size_t bad = 0;
			for (size_t r = 0; r < rows; r++) {
				double a = 0, b = 0;   /* RmsNorm: sum of squares; softmax: max, sum */
				if (op) {
					a = -1e30;
					for (size_t j = 0; j < h; j++)
						a = fmax(a, cpu_ld(&c.in[0], r * h + j));
					for (size_t j = 0; j < h; j++)
						b += exp(cpu_ld(&c.in[0], r * h + j) - a);
				} else {
					for (size_t j = 0; j < h; j++)
						a += (double)cpu_ld(&c.in[0], r * h + j) * cpu_ld(&c.in[0], r * h + j);
					a = 1.0 / sqrt(a / (double)h + 1e-6);
				}
				for (size_t j = 0; j < h; j++) {
					double x = cpu_ld(&c.in[0], r * h + j);
					double want = op ? exp(x - a) / b : x * a * cpu_ld(&c.in[1], j);
					double got = cpu_ld(&c.out[0], r * h + j);
					/* bf16 output: 2^-8 relative, plus an absolute floor for near-zero values */
					bad += !(fabs(got - want) <= fabs(want) / 256 + 1e-6);
				}
			}
			assert_int_equal(bad, 0);
			finish(&c);
		}
	free(one);
}

/* In-place outputs (the definition's inplace): no buffer of their own, not counted against the row's memory */
static void test_inplace_alias(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("ReshapeAndCacheNdKernel", "4,2,8;4,2,8;6,16,2,8;6,16,2,8;4",
						  "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_INT32", "",
						  "6,16,2,8;6,16,2,8", "DT_BF16;DT_BF16", "", &c, &err), 0);
	size_t all = perfdb_engine_case_bytes(&c);
	const struct perfdb_opdef *def = perfdb_opdef_find("ReshapeAndCacheNdKernel");
	assert_non_null(def);
	assert_non_null(def->inplace);
	for (size_t i = 0; i < c.nout; i++)
		c.out[i].alias_in = def->inplace(&c, i) + 1;
	assert_int_equal(c.out[0].alias_in, 3);
	assert_int_equal(c.out[1].alias_in, 4);
	assert_int_equal(perfdb_engine_case_bytes(&c), all - c.out[0].bytes - c.out[1].bytes);
	assert_int_equal(perfdb_engine_alloc_case(&pool, &c, 1, &err), 0);
	assert_ptr_equal(c.out[0].data, c.in[2].data);
	assert_ptr_equal(c.out[1].data, c.in[3].data);
}

static void test_backend_registry(void **state)
{
	(void)state;
	assert_ptr_equal(perfdb_backend_find("cpu"), &perfdb_backend_cpu);
	assert_null(perfdb_backend_find("nope"));
	assert_true(perfdb_backend_cpu.supports_op("MatMulV2"));
	/* FusedInferAttentionScore is implemented now (ops_attention.c); a name no table holds is not */
	assert_true(perfdb_backend_cpu.supports_op("FusedInferAttentionScore"));
	assert_false(perfdb_backend_cpu.supports_op("NotAKernel"));
	assert_null(perfdb_backend_cpu.find_op("NotAKernel"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_row_conversions_exact),
		cmocka_unit_test(test_build_case),
		cmocka_unit_test(test_matmul_rotation_copies),
		cmocka_unit_test(test_matmul_2d),
		cmocka_unit_test(test_matmul_batched),
		cmocka_unit_test(test_matmul_half_fallback),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_add_int),
		cmocka_unit_test(test_swiglu),
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_add_rms_norm_bias),
		cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_bf16_rows_streaming),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_bf16_rows),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_slice_move_fill),
		cmocka_unit_test(test_argmax_sort),
		cmocka_unit_test(test_index_pad_scatter),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_bf16_row_kernels),
		cmocka_unit_test(test_transpose_streaming),
		cmocka_unit_test(test_transpose_kernel_copies),
		cmocka_unit_test(test_inplace_alias),
		cmocka_unit_test(test_backend_registry),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
