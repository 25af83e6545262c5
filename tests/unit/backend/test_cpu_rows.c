/*
 * The fp32/fp16/bf16 row kernels (src/backend/cpu/kern_rows.c, docs/ops.md
 * "Normalisation" and "SwiGlu"): RmsNorm, AddRmsNormBias, SoftmaxV2 and
 * SwiGlu through the ops at widths around the vector length, their
 * streaming-store size on 1 and 3 threads, and the kernels called directly
 * for bf16 (what a CPU without AVX512_BF16 runs) and for the conversions.
 * Expected values are the definitions computed in double from the same
 * stored inputs; the op tests hold for the generic path as well.
 *
 * Tolerance, |got - want| <= u + a * scale:
 *   u  the output's rounding: half an ulp of the binade of |want| + a * scale
 *      (fp32 24 significant bits, fp16 11, bf16 8), at least 2^-25 for fp16
 *      (half its subnormal spacing: small softmax values);
 *   a  the fp32 arithmetic: each of the 16-32 lane sums adds at most
 *      h/16 + 8 positive terms (relative error <= that many 2^-24), exp and
 *      the reciprocal add < 1e-6; scale is |want|, or for a biased RmsNorm
 *      |x * rstd * gamma| + |bias| (the addition may cancel);
 *   and for fp16 5e-6 more in a: the fp16 softmax's degree-5 exp
 *   (kern_rows.c: its bound); for SwiGlu with a 16-bit result 9e-5 more:
 *   its cheaper sigmoid (kern_exp16.h: sigmoid16_lp's bound).
 * xsum (x1 + x2 rounded once to the dtype) must match the scalar
 * conversions of cpu_internal.h bit for bit.
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

/* around the 16-lane vectors, kern_bf16.c SwiGlu's 32-element steps (50, 81: a 16-step after them), a model width */
static const size_t widths[] = { 5, 16, 31, 32, 33, 50, 81, 1000, 5120 };
#define NWIDTHS (sizeof(widths) / sizeof(widths[0]))

static const char *dtname(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_FLOAT ? "DT_FLOAT" : d == PERFDB_DTYPE_FLOAT16 ? "DT_FLOAT16" : "DT_BF16";
}

static double arith(size_t h)
{
	return (double)(h / 16 + 8) * 0x1p-24 + 1e-6;
}

/* extra: a kernel's own relative error on top of arith(h) (SIGMOID_LP for the 16-bit SwiGlu rows). */
static int close_to_x(double got, double want, double scale, enum perfdb_dtype d, size_t h, double extra)
{
	int bits = d == PERFDB_DTYPE_FLOAT ? 24 : d == PERFDB_DTYPE_FLOAT16 ? 11 : 8;
	double a = (arith(h) + extra + (d == PERFDB_DTYPE_FLOAT16 ? 5e-6 : 0.0)) * scale;
	int e;
	(void)frexp(fabs(want) + a, &e);                  /* the binade the fp32 result may reach */
	double half_ulp = ldexp(1.0, e - 1 - bits);
	if (d == PERFDB_DTYPE_FLOAT16 && half_ulp < 0x1p-25)
		half_ulp = 0x1p-25;
	return fabs(got - want) <= half_ulp + a;   /* false for NaN */
}

static int close_to(double got, double want, double scale, enum perfdb_dtype d, size_t h)
{
	return close_to_x(got, want, scale, d, h, 0.0);
}

/*
 * SwiGlu with a 16-bit result uses kern_exp16.h's sigmoid16_lp: relative
 * error below 9e-5 (its degree-4 exp; the Newton-refined reciprocal adds
 * ~1e-8), fp32 the full exp.
 */
#define SIGMOID_LP 9e-5
static int silu_close(double got, double want, enum perfdb_dtype d, size_t h)
{
	return close_to_x(got, want, fabs(want), d, h, d == PERFDB_DTYPE_FLOAT ? 0.0 : SIGMOID_LP);
}

/* Build, check, allocate/fill (seed), prepare on `threads`; the output pre-filled with 0xff; run. */
static void run_case(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt, const char *outs,
		     const char *odt, int threads, uint64_t seed)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", c, &err), 0);
	c->threads = threads;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_non_null(impl);
	assert_int_equal(perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err), 0);
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, seed, &err), 0);
	if (impl->prepare)
		assert_int_equal(impl->prepare(with_ctx(c), &err), 0);
	for (size_t i = 0; i < c->nout; i++)   /* NaN in every float dtype: an element left unwritten shows */
		if (c->out[i].present)
			memset(c->out[i].data, 0xff, c->out[i].bytes);
	assert_int_equal(impl->run(c, &err), 0);
}

static void finish(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->release)
		impl->release(c);
}

/* Elements of RmsNorm (x = in0) rows [0, rows) out of tolerance; rstd (out1) checked too. */
static size_t bad_rms(const struct perfdb_op_case *c, size_t rows, size_t h)
{
	size_t bad = 0;
	for (size_t r = 0; r < rows; r++) {
		double ss = 0;
		for (size_t j = 0; j < h; j++)
			ss += (double)cpu_ld(&c->in[0], r * h + j) * cpu_ld(&c->in[0], r * h + j);
		double rstd = 1.0 / sqrt(ss / (double)h + 1e-6);
		if (c->nout > 1 && c->out[1].present)
			bad += !close_to(cpu_ld(&c->out[1], r), rstd, rstd, PERFDB_DTYPE_FLOAT, h);
		for (size_t j = 0; j < h; j++) {
			double want = cpu_ld(&c->in[0], r * h + j) * rstd * cpu_ld(&c->in[1], j);
			bad += !close_to(cpu_ld(&c->out[0], r * h + j), want, fabs(want), c->out[0].dtype, h);
		}
	}
	return bad;
}

static size_t bad_softmax(const struct perfdb_op_case *c, size_t rows, size_t h)
{
	size_t bad = 0;
	for (size_t r = 0; r < rows; r++) {
		double mx = -INFINITY, sum = 0;
		for (size_t j = 0; j < h; j++)
			mx = fmax(mx, cpu_ld(&c->in[0], r * h + j));
		for (size_t j = 0; j < h; j++)
			sum += exp(cpu_ld(&c->in[0], r * h + j) - mx);
		for (size_t j = 0; j < h; j++) {
			double want = exp(cpu_ld(&c->in[0], r * h + j) - mx) / sum;
			bad += !close_to(cpu_ld(&c->out[0], r * h + j), want, want, c->out[0].dtype, h);
		}
	}
	return bad;
}

/*
 * AddRmsNormBias rows: y = (x * rstd) * gamma (+ bias), x = x1 + x2; rstd
 * (out1) to tolerance; xsum (out2, when present) bitwise the fp32 sum
 * rounded by the scalar conversion.
 */
static size_t bad_arnb(const struct perfdb_op_case *c, size_t rows, size_t h)
{
	int has_bias = c->nin > 3 && c->in[3].present, has_xs = c->nout > 2 && c->out[2].present;
	size_t bad = 0;
	for (size_t r = 0; r < rows; r++) {
		double ss = 0;
		for (size_t j = 0; j < h; j++) {
			double x = (double)cpu_ld(&c->in[0], r * h + j) + cpu_ld(&c->in[1], r * h + j);
			ss += x * x;
		}
		double rstd = 1.0 / sqrt(ss / (double)h + 1e-6);
		bad += !close_to(cpu_ld(&c->out[1], r), rstd, rstd, PERFDB_DTYPE_FLOAT, h);
		for (size_t j = 0; j < h; j++) {
			double x = (double)cpu_ld(&c->in[0], r * h + j) + cpu_ld(&c->in[1], r * h + j);
			double v = x * rstd * cpu_ld(&c->in[2], j), b = has_bias ? cpu_ld(&c->in[3], j) : 0.0;
			bad += !close_to(cpu_ld(&c->out[0], r * h + j), v + b, fabs(v) + fabs(b), c->out[0].dtype, h);
			if (!has_xs)
				continue;
			float xf = cpu_ld(&c->in[0], r * h + j) + cpu_ld(&c->in[1], r * h + j);
			const struct perfdb_tensor *xs = &c->out[2];
			if (xs->dtype == PERFDB_DTYPE_FLOAT)
				bad += memcmp(&xf, (const float *)xs->data + r * h + j, 4) != 0;
			else
				bad += ((const uint16_t *)xs->data)[r * h + j] !=
				       (xs->dtype == PERFDB_DTYPE_FLOAT16 ? perfdb_fp16_from_float(xf) : perfdb_bf16_from_float(xf));
		}
	}
	return bad;
}

/* fp32 and fp16 RmsNorm, SoftmaxV2 and SwiGlu at every width, 3 rows (row starts off the vector grid). */
static void test_rows_ops(void **state)
{
	(void)state;
	const enum perfdb_dtype dts[] = { PERFDB_DTYPE_FLOAT, PERFDB_DTYPE_FLOAT16 };
	for (size_t di = 0; di < 2; di++)
		for (size_t w = 0; w < NWIDTHS; w++) {
			size_t h = widths[w], rows = 3;
			const char *t = dtname(dts[di]);
			char ins[64], outs[64], idt[64];
			struct perfdb_op_case c;
			snprintf(ins, sizeof(ins), "%zu,%zu;%zu", rows, h, h);
			snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1", rows, h, rows);
			snprintf(idt, sizeof(idt), "%s;%s", t, t);
			char odt[64];
			snprintf(odt, sizeof(odt), "%s;DT_FLOAT", t);
			run_case(&c, "RmsNorm", ins, idt, outs, odt, 1, 42 + w);
			assert_int_equal(bad_rms(&c, rows, h), 0);
			finish(&c);
			snprintf(ins, sizeof(ins), "%zu,%zu", rows, h);
			run_case(&c, "SoftmaxV2", ins, t, ins, t, 1, 43 + w);
			assert_int_equal(bad_softmax(&c, rows, h), 0);
			finish(&c);
			snprintf(ins, sizeof(ins), "%zu,%zu", rows, 2 * h);
			snprintf(outs, sizeof(outs), "%zu,%zu", rows, h);
			run_case(&c, "SwiGlu", ins, t, outs, t, 1, 44 + w);
			size_t bad = 0;
			for (size_t r = 0; r < rows; r++)
				for (size_t j = 0; j < h; j++) {
					double g = cpu_ld(&c.in[0], r * 2 * h + j);
					double want = g / (1 + exp(-g)) * cpu_ld(&c.in[0], r * 2 * h + h + j);
					bad += !silu_close(cpu_ld(&c.out[0], r * h + j), want, dts[di], h);
				}
			assert_int_equal(bad, 0);
			finish(&c);
		}
}

/* AddRmsNormBias in fp32, fp16 and bf16 at every width: with and without bias, with and without xsum. */
static void test_rows_add_rms_norm_bias(void **state)
{
	(void)state;
	const enum perfdb_dtype dts[] = { PERFDB_DTYPE_FLOAT, PERFDB_DTYPE_FLOAT16, PERFDB_DTYPE_BF16 };
	for (size_t di = 0; di < 3; di++)
		for (size_t w = 0; w < NWIDTHS; w++)
			for (int v = 0; v < 4; v++) {
				int bias = v & 1, xsum = v >> 1;
				size_t h = widths[w], rows = 3;
				const char *t = dtname(dts[di]);
				char ins[96], idt[96], outs[96], odt[96];
				struct perfdb_op_case c;
				if (bias) {
					snprintf(ins, sizeof(ins), "%zu,%zu;%zu,%zu;%zu;%zu", rows, h, rows, h, h, h);
					snprintf(idt, sizeof(idt), "%s;%s;%s;%s", t, t, t, t);
				} else {
					snprintf(ins, sizeof(ins), "%zu,%zu;%zu,%zu;%zu", rows, h, rows, h, h);
					snprintf(idt, sizeof(idt), "%s;%s;%s", t, t, t);
				}
				if (xsum) {
					snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1;%zu,%zu", rows, h, rows, rows, h);
					snprintf(odt, sizeof(odt), "%s;DT_FLOAT;%s", t, t);
				} else {
					snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1", rows, h, rows);
					snprintf(odt, sizeof(odt), "%s;DT_FLOAT", t);
				}
				run_case(&c, "AddRmsNormBias", ins, idt, outs, odt, 1, 50 + w * 4 + (size_t)v);
				assert_int_equal(c.nin > 3 && c.in[3].present, bias);
				assert_int_equal(c.nout > 2 && c.out[2].present, xsum);
				assert_int_equal(bad_arnb(&c, rows, h), 0);
				finish(&c);
			}
}

/* Deterministic values in [-1, 1) stored in dtype d (an LCG: the test needs no engine buffers). */
static void fill(enum perfdb_dtype d, void *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		float f = (float)(seed >> 8) * 0x1p-23f - 1.0f;
		if (d == PERFDB_DTYPE_FLOAT)
			((float *)p)[i] = f;
		else
			((uint16_t *)p)[i] = d == PERFDB_DTYPE_FLOAT16 ? perfdb_fp16_from_float(f) : perfdb_bf16_from_float(f);
	}
}

static double get(enum perfdb_dtype d, const void *p, size_t i)
{
	if (d == PERFDB_DTYPE_FLOAT)
		return ((const float *)p)[i];
	uint16_t v = ((const uint16_t *)p)[i];
	return d == PERFDB_DTYPE_FLOAT16 ? perfdb_fp16_to_float(v) : perfdb_bf16_to_float(v);
}

/*
 * The row-kernel tables this CPU may run under the ISA ceiling
 * (PERFDB_MAX_CPU_ISA): kern_rows.c's on AVX-512, kern_rows_avx2.c's on
 * AVX2 and up.  Fills k[] and returns how many; 0 skips the test.
 */
static size_t row_kerns(const struct cpu_rows_kern *k[2])
{
	size_t n = 0;
	enum perfdb_cpu_isa isa = perfdb_cpu_isa();
	if (cpu_has_avx512(isa) && cpu_rows_avx512.rms)
		k[n++] = &cpu_rows_avx512;
	if (isa >= PERFDB_ISA_AVX2 && cpu_rows_avx2.rms)
		k[n++] = &cpu_rows_avx2;
	return n;
}

/* Whether kernel table k takes format f (vcvtneps2bf16: kern_rows.c on a CPU with AVX512_BF16 only). */
static int kern_takes(const struct cpu_rows_kern *k, enum cpu_row_fmt f)
{
	return f != CPU_ROW_BF16_CVT || (k == &cpu_rows_avx512 && cpu_has_avx512bf16(perfdb_cpu_isa()));
}

/*
 * SwiGlu's 16-bit rows over the whole input range, where fill()'s [-1, 1)
 * never goes: gates from -87 (exp(-g) near fp32's top: the capped
 * exponent) to 1e4, against the definition in double; below -88 exp(-g)
 * is past fp32 and the rows give a value below 1e-30 in magnitude (the
 * exact one is smaller still, or 0 in bf16/fp16).  48 elements: kern_bf16.c's
 * 32-element step, its 16-element step, and both kern_rows.c steps.
 */
static void test_rows_swiglu_range(void **state)
{
	(void)state;
	const struct cpu_rows_kern *kerns[2];
	size_t nk = row_kerns(kerns);
	if (!nk)
		skip();
	static const float gs[] = { -87.0f, -60.0f, -30.0f, -17.0f, -9.5f, -3.0f, -0.75f, 0.0f, 0.75f, 3.0f, 9.5f,
				    17.0f, 30.0f, 60.0f, 100.0f, 10000.0f };
	static const float far[] = { -88.5f, -90.0f, -100.0f, -200.0f, -500.0f, -1000.0f, -30000.0f, -60000.0f };
	static const float us[] = { 1.0f, -2.5f, 0.3125f };
	const size_t h = 48, nfar = sizeof(far) / sizeof(far[0]);
	uint16_t x[96], y[49];
	for (int k = 0; k < 3 * (int)nk; k++) {
		const struct cpu_rows_kern *kern = kerns[k / 3];
		enum perfdb_dtype d = k % 3 == 0 ? PERFDB_DTYPE_FLOAT16 : PERFDB_DTYPE_BF16;
		enum cpu_row_fmt f = k % 3 == 0 ? CPU_ROW_F16 : k % 3 == 1 ? CPU_ROW_BF16 : CPU_ROW_BF16_CVT;
		if (!kern_takes(kern, f))
			continue;
		for (size_t j = 0; j < h; j++) {
			float g = j < h - nfar ? gs[j % 16] : far[j - (h - nfar)], u = us[j % 3];
			x[j] = d == PERFDB_DTYPE_FLOAT16 ? perfdb_fp16_from_float(g) : perfdb_bf16_from_float(g);
			x[h + j] = d == PERFDB_DTYPE_FLOAT16 ? perfdb_fp16_from_float(u) : perfdb_bf16_from_float(u);
		}
		for (int kb = 0; kb < (f == CPU_ROW_BF16_CVT ? 2 : 1); kb++) {
			memset(y, 0xff, sizeof(y));
			if (kb)
				cpu_swiglu_row_bf16(x, y, h);
			else
				kern->swiglu(f, x, y, h);
			size_t bad = 0;
			for (size_t j = 0; j < h; j++) {
				double g = get(d, x, j), u = get(d, x, h + j), got = get(d, y, j);
				if (j < h - nfar)
					bad += !silu_close(got, g / (1 + exp(-g)) * u, d, h);
				else
					bad += !(fabs(got) < 1e-30);
			}
			if (bad)
				fail_msg("%s, format %d, kern_bf16 %d: %zu wrong elements", kern->name, (int)f, kb, bad);
			assert_int_equal(y[h], 0xffff);   /* nothing written past the row */
		}
	}
}

/*
 * kern_rows.c in bf16, both roundings (integer: what RmsNorm, SoftmaxV2 and
 * SwiGlu run on an AVX-512 CPU without AVX512_BF16, whose ops here take
 * kern_bf16.c; vcvtneps2bf16 where the CPU has it), called directly at
 * every width, one row (softmax: two).
 */
static void test_rows_bf16_direct(void **state)
{
	(void)state;
	const struct cpu_rows_kern *kerns[2];
	size_t nk = row_kerns(kerns);
	if (!nk)
		skip();
	const enum perfdb_dtype d = PERFDB_DTYPE_BF16;
	for (size_t k = 0; k < 2 * NWIDTHS * nk; k++) {
		const struct cpu_rows_kern *kern = kerns[k / (2 * NWIDTHS)];
		enum cpu_row_fmt f = k % (2 * NWIDTHS) < NWIDTHS ? CPU_ROW_BF16 : CPU_ROW_BF16_CVT;
		if (!kern_takes(kern, f))
			continue;
		size_t h = widths[k % NWIDTHS], w = k % NWIDTHS;
		uint16_t *x = malloc(2 * h * 2), *y = malloc(2 * h * 2);
		float *gam = malloc(h * 4), *e = malloc(h * 4);
		assert_true(x && y && gam && e);
		fill(d, x, 2 * h, 7 + (uint32_t)w);
		fill(PERFDB_DTYPE_FLOAT, gam, h, 99);
		memset(y, 0xff, 2 * h * 2);
		float rstd = kern->rms(f, x, NULL, NULL, y, gam, NULL, h, 1e-6f, 0);
		double ss = 0;
		for (size_t j = 0; j < h; j++)
			ss += get(d, x, j) * get(d, x, j);
		double rs = 1.0 / sqrt(ss / (double)h + 1e-6);
		assert_true(close_to(rstd, rs, rs, PERFDB_DTYPE_FLOAT, h));
		size_t bad = 0;
		for (size_t j = 0; j < h; j++) {
			double want = get(d, x, j) * rs * gam[j];
			bad += !close_to(get(d, y, j), want, fabs(want), d, h);
		}
		assert_int_equal(bad, 0);
		memset(y, 0xff, 2 * h * 2);
		kern->softmax(f, x, y, e, h, 2, 0);
		for (size_t r = 0; r < 2; r++) {
			double mx = -INFINITY, sum = 0;
			for (size_t j = 0; j < h; j++)
				mx = fmax(mx, get(d, x, r * h + j));
			for (size_t j = 0; j < h; j++)
				sum += exp(get(d, x, r * h + j) - mx);
			for (size_t j = 0; j < h; j++) {
				double want = exp(get(d, x, r * h + j) - mx) / sum;
				bad += !close_to(get(d, y, r * h + j), want, want, d, h);
			}
		}
		assert_int_equal(bad, 0);
		memset(y, 0xff, 2 * h * 2);
		/* kern_rows.c's row, and with AVX512_BF16 also kern_bf16.c's (what the bf16 op runs there) */
		for (int kb = 0; kb < (f == CPU_ROW_BF16_CVT ? 2 : 1); kb++) {
			memset(y, 0xff, 2 * h * 2);
			if (kb)
				cpu_swiglu_row_bf16(x, y, h);
			else
				kern->swiglu(f, x, y, h);
			for (size_t j = 0; j < h; j++) {
				double g = get(d, x, j), u = get(d, x, h + j), want = g / (1 + exp(-g)) * u;
				bad += !silu_close(get(d, y, j), want, d, h);
			}
			assert_int_equal(get(d, y, h) != get(d, y, h), 1);   /* nothing written past the row */
			assert_int_equal(bad, 0);
		}
		free(x);
		free(y);
		free(gam);
		free(e);
	}
}

/*
 * The vector conversions against perfdb_fp16_from_float/perfdb_bf16_from_float, every
 * 16-bit pattern: x1 runs over all of them, x2 over a permutation, and
 * xsum = x1 + x2 (one fp32 addition, then one rounding) must equal the
 * scalar conversion of the same fp32 sum: ties, fp16 subnormals, overflow
 * to inf (65504 + 16 and above), signed zeros, inf - inf included.  NaN
 * operands only in x1 and only in bf16: fp16 NaN payloads differ by
 * design (kern_rows.c), and with two NaN operands which one propagates
 * depends on the operand order the compiler picks.  bf16 y also gets NaN
 * biases with low bits set, which rounding as numbers would corrupt.
 * vcvtneps2bf16 (CPU_ROW_BF16_CVT) the same but for fp32 denormal sums,
 * which it flushes to a zero of their sign.
 */
static void test_rows_conversions(void **state)
{
	(void)state;
	const struct cpu_rows_kern *kerns[2];
	size_t nk = row_kerns(kerns);
	if (!nk)
		skip();
	const size_t n = 65536;
	uint16_t *x1 = malloc(n * 2), *x2 = malloc(n * 2), *xs = malloc(n * 2), *y = malloc(n * 2);
	float *gam = calloc(n, 4), *nanb = calloc(n, 4);
	assert_true(x1 && x2 && xs && y && gam && nanb);
	for (size_t i = 0; i < n; i += 3) {   /* bf16 y: NaNs whose low bits would carry if rounded as numbers */
		uint32_t u = i % 2 ? 0x7fffffffu : 0xffc0ffffu;
		memcpy(&nanb[i], &u, 4);
	}
	const enum cpu_row_fmt fmts[] = { CPU_ROW_F16, CPU_ROW_BF16, CPU_ROW_BF16_CVT };
	for (int k = 0; k < 3 * (int)nk; k++) {
		const struct cpu_rows_kern *kern = kerns[k / 3];
		enum cpu_row_fmt f = fmts[k % 3];
		int di = f != CPU_ROW_F16, cvt = f == CPU_ROW_BF16_CVT;
		if (!kern_takes(kern, f))
			continue;
		enum perfdb_dtype d = di ? PERFDB_DTYPE_BF16 : PERFDB_DTYPE_FLOAT16;
		for (size_t i = 0; i < n; i++) {
			uint16_t a = (uint16_t)i, b = (uint16_t)(i * 40503u + 12345u);
			int nan_a = di ? (a & 0x7fffu) > 0x7f80u : (a & 0x7fffu) > 0x7c00u;
			int nan_b = di ? (b & 0x7fffu) > 0x7f80u : (b & 0x7fffu) > 0x7c00u;
			x1[i] = nan_a && !di ? 0 : a;
			x2[i] = nan_b ? 0 : b;
		}
		memset(xs, 0xff, n * 2);
		(void)kern->rms(f, x1, x2, xs, y, gam, NULL, n, 1e-6f, 0);
		size_t bad = 0, denormals = 0;
		for (size_t i = 0; i < n; i++) {
			float s = (float)get(d, x1, i) + (float)get(d, x2, i);
			if (cvt && fpclassify(s) == FP_SUBNORMAL) {
				denormals++;
				s = copysignf(0.0f, s);
			}
			bad += xs[i] != (di ? perfdb_bf16_from_float(s) : perfdb_fp16_from_float(s));
		}
		assert_int_equal(bad, 0);
		assert_true(!cvt || denormals > 0);
		if (!di)
			continue;
		/* x = 0, gamma = 0: y = 0 + bias, the bias's NaNs as they are (already quiet) */
		uint16_t *zero = calloc(n, 2);
		assert_non_null(zero);
		(void)kern->rms(f, zero, zero, NULL, y, gam, nanb, n, 1e-6f, 0);
		for (size_t i = 0; i < n; i++)
			bad += y[i] != perfdb_bf16_from_float(nanb[i]);
		free(zero);
		assert_int_equal(bad, 0);
	}
	free(x1);
	free(x2);
	free(xs);
	free(y);
	free(gam);
	free(nanb);
}

/*
 * fp32 and fp16 RmsNorm and SoftmaxV2, and fp16 AddRmsNormBias with bias and
 * xsum, whose outputs are above the LLC (CPU_NT_MIN_BYTES: streaming
 * stores): every element checked on 1 and 3 threads (row ranges that start
 * anywhere) over outputs pre-filled with 0xff.  Skipped on an emulated CPU
 * (PERFDB_TEST_EMULATED, set by tests/foreign_cpu/qemu.sh).
 */
static void test_rows_streaming(void **state)
{
	(void)state;
	/* under CPU emulation (tests/foreign_cpu/qemu.sh) ten 34 MB cases take minutes; the same
	 * kernels' streaming stores run natively under PERFDB_MAX_CPU_ISA (tests/CMakeLists.txt) */
	if (getenv("PERFDB_TEST_EMULATED"))
		skip();
	const size_t rows = 2051;
	for (int threads = 1; threads <= 3; threads += 2)
		for (int k = 0; k < 5; k++) {
			int f16 = k & 1;
			size_t h = f16 ? 8192 : 4096;   /* 2051 x h x (2 or 4) B = 33.6 MB */
			const char *t = f16 ? "DT_FLOAT16" : "DT_FLOAT";
			char ins[96], idt[96], outs[96], odt[96];
			struct perfdb_op_case c;
			if (k < 2) {
				snprintf(ins, sizeof(ins), "%zu,%zu;%zu", rows, h, h);
				snprintf(idt, sizeof(idt), "%s;%s", t, t);
				snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1", rows, h, rows);
				snprintf(odt, sizeof(odt), "%s;DT_FLOAT", t);
				run_case(&c, "RmsNorm", ins, idt, outs, odt, threads, 5);
				assert_true(c.out[0].bytes >= CPU_NT_MIN_BYTES);
				assert_int_equal(bad_rms(&c, rows, h), 0);
			} else if (k < 4) {
				snprintf(ins, sizeof(ins), "%zu,%zu", rows, h);
				run_case(&c, "SoftmaxV2", ins, t, ins, t, threads, 6);
				assert_true(c.out[0].bytes >= CPU_NT_MIN_BYTES);
				assert_int_equal(bad_softmax(&c, rows, h), 0);
			} else {
				h = 8192;
				snprintf(ins, sizeof(ins), "%zu,%zu;%zu,%zu;%zu;%zu", rows, h, rows, h, h, h);
				snprintf(outs, sizeof(outs), "%zu,%zu;%zu,1;%zu,%zu", rows, h, rows, rows, h);
				run_case(&c, "AddRmsNormBias", ins, "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;DT_FLOAT16", outs,
					 "DT_FLOAT16;DT_FLOAT;DT_FLOAT16", threads, 7);
				assert_true(c.out[0].bytes >= CPU_NT_MIN_BYTES);
				assert_int_equal(bad_arnb(&c, rows, h), 0);
			}
			finish(&c);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_ops),
		cmocka_unit_test(test_rows_add_rms_norm_bias),
		cmocka_unit_test(test_rows_bf16_direct),
		cmocka_unit_test(test_rows_swiglu_range),
		cmocka_unit_test(test_rows_conversions),
		cmocka_unit_test(test_rows_streaming),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
