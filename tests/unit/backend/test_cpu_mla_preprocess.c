/*
 * CPU backend mla_preprocess_0_mix_aic (docs/ops.md "MLA pre-processing")
 * against a plain double-precision reference on small shapes: T=3 tokens,
 * hidden 64, q_lora 32, 2 heads of nope 16 + rope 8, kv_lora 32, caches of
 * 4 blocks of 4 slots.  The reference is written from the documented
 * computation (aclnnMlaPreprocess): RmsNorm, quantisation
 * q = round_half_even(x / scale + offset) saturated to int8 (or per token,
 * symmetric), exact integer GEMMs, dequantisation, the activation-dtype
 * rounding of the two GEMM results, the per-head q_nope · wuk product and
 * RoPE as each (x[j], x[j + d/2]) pair turned by its angle.
 *
 * Tolerances: given the same int8 values (the test data keeps every
 * quantiser input at least 1e-3 away from a rounding boundary, checked
 * below, while fp32 and double differ by far less), both GEMM results are
 * exact integers dequantised by one fp32 product, so the reference
 * reproduces them bit for bit up to the dtype rounding; what remains is the
 * fp32 arithmetic of the norms, RoPE and the q_nope · wuk sums (relative
 * 1e-5 of the sum of |terms|) and the final rounding to bf16 (2^-9
 * relative) or fp16 (2^-11): we allow 2^-8 (bf16) / 2^-10 (fp16) of |value|
 * plus 1e-5 of the sum of |terms|.
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

#define OP "mla_preprocess_0_mix_aic"
enum { T = 3, H = 64, QL = 32, N = 2, NOPE = 16, RD = 8, KV = 32, HD = NOPE + RD, NQ = N * HD,
       D0 = KV + RD + QL, SLOTS = 16 };

static struct perfdb_engine_pool pool;

/* Runtime cells of the case (unit tests have no table row). */
static const char *cell_quant_mode, *cell_cache_mode;

static const char *cell(const void *ctx, const char *column)
{
	(void)ctx;
	if (!strcmp(column, "Runtime quant_mode"))
		return cell_quant_mode;
	if (!strcmp(column, "Runtime cache_mode"))
		return cell_cache_mode;
	return NULL;
}

static int build(struct perfdb_op_case *c, const char *ins, const char *idt, const char *outs, const char *odt,
		 struct perfdb_err *err)
{
	perfdb_err_clear(err);
	assert_int_equal(perfdb_engine_build_case(OP, ins, idt, "", outs, odt, "", c, err), 0);
	c->cell = cell;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(OP);
	assert_non_null(impl);
	return perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, err);
}

static void put(struct perfdb_tensor *t, size_t i, double v)
{
	if (perfdb_dtype_is_float(t->dtype)) {
		float f = (float)v;
		cpu_store_row(t, i, 1, &f);
	} else if (t->dtype == PERFDB_DTYPE_INT8) {
		((int8_t *)t->data)[i] = (int8_t)v;
	} else {
		((int32_t *)t->data)[i] = (int32_t)v;
	}
}

static double get(const struct perfdb_tensor *t, size_t i)
{
	return perfdb_dtype_is_float(t->dtype) ? (double)cpu_ld(t, i) : (double)cpu_ld_int(t, i);
}

static uint64_t rng = 12345;

/* uniform in [lo, hi) */
static double uni(double lo, double hi)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

static void fill(struct perfdb_tensor *t, double lo, double hi, int integer)
{
	for (size_t i = 0; i < (size_t)t->numel; i++)
		put(t, i, integer ? floor(uni(lo, hi)) : uni(lo, hi));
}

/* The value rounded to the activation dtype. */
static double to_act(double v, enum perfdb_dtype d)
{
	float f = (float)v;
	return d == PERFDB_DTYPE_BF16 ? perfdb_bf16_to_float(perfdb_bf16_from_float(f)) : perfdb_fp16_to_float(perfdb_fp16_from_float(f));
}

/* round half to even, saturated, refusing inputs too close to a boundary (see the header) */
static double quant(double v)
{
	if (v > -128.5 - 1e-3 && v < 127.5 + 1e-3) {
		double fr = v - floor(v);
		if (fabs(fr - 0.5) < 1e-3)
			fail_msg("test data: quantiser input %.6f within 1e-3 of a rounding boundary", v);
	}
	double r = nearbyint(v);
	return r < -128 ? -128 : r > 127 ? 127 : r;
}

/* x (n) -> x · rsqrt(mean(x²) + 1e-5) · g (+ b) */
static void rms(double *x, size_t n, const struct perfdb_tensor *g, const struct perfdb_tensor *b)
{
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	double r = 1.0 / sqrt(ss / (double)n + 1e-5);
	for (size_t i = 0; i < n; i++)
		x[i] = x[i] * r * get(g, i) + (b ? get(b, i) : 0);
}

/* quantise n values (per tensor: scale, offset; per token: max|x| / 127) into q; returns the dequant factor */
static double quant_row(const double *x, size_t n, int per_token, double scale, double offset, double *q)
{
	if (per_token) {
		double m = 0;
		for (size_t i = 0; i < n; i++)
			m = fabs(x[i]) > m ? fabs(x[i]) : m;
		float inv = (float)(127.0 / m);   /* the kernel's fp32 factor, exactly */
		for (size_t i = 0; i < n; i++)
			q[i] = quant(x[i] * inv);
		return (float)(m / 127.0);
	}
	for (size_t i = 0; i < n; i++)
		q[i] = quant(x[i] / scale + offset);
	return 1;
}

/* y[j] = (Σ q[i]·w[j][i] + bias[j]) · descale[j] · pt, rounded to act (w stored (n, k)) */
static void qgemm(const double *q, size_t k, size_t n, const struct perfdb_tensor *w, const struct perfdb_tensor *ds,
		  const struct perfdb_tensor *bias, double pt, enum perfdb_dtype act, double *y)
{
	for (size_t j = 0; j < n; j++) {
		int64_t acc = 0;
		for (size_t i = 0; i < k; i++)
			acc += (int64_t)q[i] * cpu_ld_int(w, j * k + i);
		double v = (double)((float)acc + (bias ? (float)get(bias, j) : 0.0f)) * get(ds, j);
		y[j] = to_act(v * pt, act);
	}
}

/*
 * Float weights: y[j] = Σ act(a[i])·w[j][i] rounded to act, w stored (n, k).
 * The test's float weights select one ±power-of-two entry per output, so the
 * sum is exact in any precision and order and the reference matches the
 * kernel's intermediates bit for bit, as with int8.
 */
static void fgemm(const double *a, size_t k, size_t n, const struct perfdb_tensor *w, enum perfdb_dtype act,
		  double *y)
{
	for (size_t j = 0; j < n; j++) {
		double s = 0;
		for (size_t i = 0; i < k; i++)
			s += to_act(a[i], act) * get(w, j * k + i);
		y[j] = to_act(s, act);
	}
}

/*
 * w (n, k): row j holds ±2^(j mod 3 - 1) at column (a·j + b) mod k, zeros
 * elsewhere (not symmetric: a wrong orientation shows).
 */
static void select_weight(struct perfdb_tensor *w, size_t n, size_t k, size_t a, size_t b)
{
	for (size_t i = 0; i < n * k; i++)
		put(w, i, 0);
	for (size_t j = 0; j < n; j++)
		put(w, j * k + (a * j + b) % k, (j % 2 ? -1 : 1) * ldexp(1.0, (int)(j % 3) - 1));
}

/*
 * RoPE of the pair (x[k], x[k + d/2]) of token t with the row's own cos/sin
 * values (as stored, in the activation dtype): x·cos + rotate_half(x)·sin.
 */
static void turn(const struct perfdb_op_case *c, size_t t, size_t k, double a, double b, double *ra, double *rb)
{
	double c0 = get(&c->in[16], t * RD + k), s0 = get(&c->in[17], t * RD + k);
	double c1 = get(&c->in[16], t * RD + k + RD / 2), s1 = get(&c->in[17], t * RD + k + RD / 2);
	*ra = a * c0 - b * s0;
	*rb = b * c1 + a * s1;
}

static double ang(size_t t, size_t k)
{
	return 0.3 + 0.7 * (double)t + 1.1 * (double)k;
}

static void near(double got, double want, double rel, double abs_scale, const char *what, size_t i)
{
	double tol = rel * fabs(want) + 1e-5 * abs_scale + 1e-6;
	if (!(fabs(got - want) <= tol))
		fail_msg("%s[%zu]: got %.7g, want %.7g (tol %.3g)", what, i, got, want, tol);
}

/* The 24 input dtypes: act for the float slots; kv_cache's replaced by kvc when given; fw: float weights. */
static void dtypes(char *buf, size_t n, const char *act, const char *kvc, int fw)
{
	static const char *const fixed[24] = {
		NULL, NULL, NULL, NULL, "DT_INT8", "DT_INT8", "DT_FLOAT", "DT_INT32", NULL, NULL, NULL, "DT_INT8",
		"DT_INT8", "DT_FLOAT", "DT_INT32", NULL, NULL, NULL, NULL, NULL, NULL, "DT_INT32", NULL, NULL,
	};
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < 24; i++) {
		const char *d = i == 19 && kvc ? kvc : (i == 5 || i == 12) && fw ? act : fixed[i] ? fixed[i] : act;
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ";" : "", d);
		assert_true(len < n);
	}
}

struct variant {
	const char *act;   /* "DT_BF16" or "DT_FLOAT16" */
	int per_token, split;
	int fw;            /* bf16 wdqkv and wuq: the float path, no quantisation */
	uint64_t seed;     /* of the data: one that keeps the quantiser inputs off the boundaries */
};

static void run_variant(const struct variant *v)
{
	char ins[512], idt[512], outs[128], odt[128];
	const char *a = v->act;
	int qw = v->split ? KV : KV + RD, crow = qw;
	snprintf(ins, sizeof(ins),
		 "%d,%d;%d;%d;1;1;%d,%d;%d;%d;%d;%d;1;1;%d,%d;%d;%d;%d;%d,%d;%d,%d;%d,%d,%d;4,4,1,%d;%s;%d;1;%d",
		 T, H, H, H, D0, H, D0, D0, QL, QL, NQ, QL, NQ, NQ, KV, T, RD, T, RD, N, NOPE, KV, crow,
		 v->split ? "4,4,1,8" : "", T, N);
	dtypes(idt, sizeof(idt), a, NULL, v->fw);
	if (v->split) {
		snprintf(outs, sizeof(outs), "%d,%d,%d;4,4,1,%d;%d,%d,%d;4,4,1,%d", T, N, KV, KV, T, N, RD, RD);
		snprintf(odt, sizeof(odt), "%s;%s;%s;%s", a, a, a, a);
	} else {
		snprintf(outs, sizeof(outs), "%d,%d,%d;4,4,1,%d", T, N, KV + RD, KV + RD);
		snprintf(odt, sizeof(odt), "%s;%s", a, a);
	}
	cell_quant_mode = v->per_token ? "per_token_quant_symm" : NULL;
	cell_cache_mode = v->split ? "krope_ctkv" : "0";
	struct perfdb_op_case c;
	struct perfdb_err err;
	int rc = build(&c, ins, idt, outs, odt, &err);
	if (rc < 0)
		fail_msg("check: %s", err.msg);
	assert_int_equal(perfdb_engine_alloc_case(&pool, &c, 3, &err), 0);
	enum perfdb_dtype act = c.in[0].dtype;
	rng = v->seed;
	if (getenv("MLAPO_SEED"))
		rng = strtoull(getenv("MLAPO_SEED"), NULL, 10);
	/* data: values in ranges that use the int8 range without saturating it all */
	fill(&c.in[0], -1, 1, 0);
	fill(&c.in[1], 0.5, 1.5, 0);
	fill(&c.in[2], -0.1, 0.1, 0);
	put(&c.in[3], 0, 0.03125);
	put(&c.in[4], 0, 3);
	if (v->fw)
		select_weight(&c.in[5], D0, H, 7, 3);
	else
		fill(&c.in[5], -8, 8, 1);
	fill(&c.in[6], 2e-4, 1e-3, 0);
	fill(&c.in[7], -20, 20, 1);
	fill(&c.in[8], 0.5, 1.5, 0);
	fill(&c.in[9], -0.1, 0.1, 0);
	put(&c.in[10], 0, 0.0625);
	put(&c.in[11], 0, -2);
	if (v->fw)
		select_weight(&c.in[12], NQ, QL, 5, 1);
	else
		fill(&c.in[12], -8, 8, 1);
	fill(&c.in[13], 1e-3, 4e-3, 0);
	fill(&c.in[14], -20, 20, 1);
	fill(&c.in[15], 0.5, 1.5, 0);
	for (size_t t = 0; t < T; t++)
		for (size_t k = 0; k < RD; k++) {
			put(&c.in[16], t * RD + k, cos(ang(t, k % (RD / 2))));
			put(&c.in[17], t * RD + k, sin(ang(t, k % (RD / 2))));
		}
	fill(&c.in[18], -1, 1, 0);
	struct perfdb_tensor *kc = &c.in[19], *kr = v->split ? &c.in[20] : NULL;
	void *kc0 = malloc(kc->bytes), *kr0 = kr ? malloc(kr->bytes) : NULL;
	memcpy(kc0, kc->data, kc->bytes);
	if (kr)
		memcpy(kr0, kr->data, kr->bytes);

	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(OP);
	assert_int_equal(impl->prepare(with_ctx(&c), &err), 0);
	assert_int_equal(impl->run(&c, &err), 0);
	assert_int_equal(impl->run(&c, &err), 0);   /* a replay repeats the call: same result */

	int64_t slot[T];
	for (size_t t = 0; t < T; t++) {
		slot[t] = cpu_ld_int(&c.in[21], t);
		assert_true(slot[t] >= 0 && slot[t] < SLOTS);
		for (size_t u = 0; u < t; u++)
			assert_true(slot[u] != slot[t]);
	}
	double rel = act == PERFDB_DTYPE_BF16 ? 1.0 / 256 : 1.0 / 1024;
	int written[SLOTS] = { 0 };
	for (size_t t = 0; t < T; t++) {
		double x[H], q[H], y0[D0], y1[NQ];
		for (size_t i = 0; i < H; i++)
			x[i] = get(&c.in[0], t * H + i);
		rms(x, H, &c.in[1], &c.in[2]);
		if (v->fw) {
			fgemm(x, H, D0, &c.in[5], act, y0);
		} else {
			double pt = quant_row(x, H, v->per_token, get(&c.in[3], 0), get(&c.in[4], 0), q);
			qgemm(q, H, D0, &c.in[5], &c.in[6], &c.in[7], pt, act, y0);
		}
		/* q path */
		double qa[QL], qq[QL];
		memcpy(qa, y0 + KV + RD, sizeof(qa));
		rms(qa, QL, &c.in[8], &c.in[9]);
		if (v->fw) {
			fgemm(qa, QL, NQ, &c.in[12], act, y1);
		} else {
			double pt = quant_row(qa, QL, v->per_token, get(&c.in[10], 0), get(&c.in[11], 0), qq);
			qgemm(qq, QL, NQ, &c.in[12], &c.in[13], &c.in[14], pt, act, y1);
		}
		for (size_t h = 0; h < N; h++) {
			size_t row = t * N + h;
			for (size_t j = 0; j < KV; j++) {
				double s = 0, sa = 0;
				for (size_t d = 0; d < NOPE; d++) {
					double p = y1[h * HD + d] * get(&c.in[18], (h * NOPE + d) * KV + j);
					s += p;
					sa += fabs(p);
				}
				near(get(&c.out[0], row * (size_t)qw + j), s, rel, sa, "q_out0", row * (size_t)qw + j);
			}
			const double *qr = y1 + h * HD + NOPE;
			for (size_t k = 0; k < RD / 2; k++) {
				double ra, rb;
				turn(&c, t, k, qr[k], qr[k + RD / 2], &ra, &rb);
				const struct perfdb_tensor *o = v->split ? &c.out[2] : &c.out[0];
				size_t base = v->split ? row * RD : row * (size_t)qw + KV;
				near(get(o, base + k), ra, rel, fabs(qr[k]) + fabs(qr[k + RD / 2]), "q_rope", base + k);
				near(get(o, base + k + RD / 2), rb, rel, fabs(qr[k]) + fabs(qr[k + RD / 2]), "q_rope",
				     base + k + RD / 2);
			}
		}
		/* kv path, at the token's slot */
		size_t s = (size_t)slot[t];
		written[s] = 1;
		double kvn[KV];
		memcpy(kvn, y0, sizeof(kvn));
		rms(kvn, KV, &c.in[15], NULL);
		for (size_t j = 0; j < KV; j++)
			near(get(kc, s * (size_t)crow + j), kvn[j], rel, fabs(kvn[j]), "kv_cache", s * (size_t)crow + j);
		const double *k_pe = y0 + KV;
		for (size_t k = 0; k < RD / 2; k++) {
			double ra, rb;
			turn(&c, t, k, k_pe[k], k_pe[k + RD / 2], &ra, &rb);
			const struct perfdb_tensor *o = kr ? kr : kc;
			size_t base = kr ? s * RD : s * (size_t)crow + KV;
			double sc = fabs(k_pe[k]) + fabs(k_pe[k + RD / 2]);
			near(get(o, base + k), ra, rel, sc, "k_rope", base + k);
			near(get(o, base + k + RD / 2), rb, rel, sc, "k_rope", base + k + RD / 2);
		}
	}
	/* rows of other slots: untouched, byte for byte */
	size_t es = perfdb_dtype_bytes(kc->dtype, 1);
	for (size_t s = 0; s < SLOTS; s++) {
		if (written[s])
			continue;
		assert_memory_equal((char *)kc->data + s * (size_t)crow * es, (char *)kc0 + s * (size_t)crow * es,
				    (size_t)crow * es);
		if (kr)
			assert_memory_equal((char *)kr->data + s * RD * es, (char *)kr0 + s * RD * es, RD * es);
	}
	free(kc0);
	free(kr0);
	impl->release(&c);
	cell_quant_mode = cell_cache_mode = NULL;
}

static void test_bf16_per_tensor(void **state)
{
	(void)state;
	const struct variant v = { "DT_BF16", 0, 1, 0, 4 };
	run_variant(&v);
}

static void test_fp16_per_tensor(void **state)
{
	(void)state;
	const struct variant v = { "DT_FLOAT16", 0, 1, 0, 4 };
	run_variant(&v);
}

static void test_bf16_per_token(void **state)
{
	(void)state;
	const struct variant v = { "DT_BF16", 1, 1, 0, 4 };
	run_variant(&v);
}

static void test_bf16_float_weights(void **state)
{
	(void)state;
	const struct variant v = { "DT_BF16", 0, 1, 1, 4 };
	run_variant(&v);
}

static void test_bf16_one_cache(void **state)
{
	(void)state;
	const struct variant v = { "DT_BF16", 0, 0, 0, 4 };
	run_variant(&v);
}

/* check's answer for a case that must be refused: the message must name what is wrong. */
static void refused(const char *ins, const char *idt, const char *outs, const char *want)
{
	struct perfdb_op_case c;
	struct perfdb_err err;
	assert_true(build(&c, ins, idt, outs, "DT_BF16;DT_BF16;DT_BF16;DT_BF16", &err) < 0);
	if (!strstr(err.msg, want))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_refused(void **state)
{
	(void)state;
	cell_quant_mode = cell_cache_mode = NULL;
	char idt[512], idt8[512];
	dtypes(idt, sizeof(idt), "DT_BF16", NULL, 0);
	dtypes(idt8, sizeof(idt8), "DT_BF16", "DT_INT8", 0);   /* an int8 kv_cache: the int8_nzcache layout */
	const char *outs = "3,2,32;4,4,1,32;3,2,8;4,4,1,8";
	/* the good case passes check */
	struct perfdb_op_case c;
	struct perfdb_err err;
	if (build(&c, "3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		  outs, "DT_BF16;DT_BF16;DT_BF16;DT_BF16", &err) < 0)
		fail_msg("check: %s", err.msg);
	refused("3,64;64;64;1;1;72,60;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "in5 wdqkv has K=60, expected 64");
	refused("3,64;64;64;1;1;72,64;70;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "in6 descale0 has 70 elements, expected 72");
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,15,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "in18 wuk");
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;47,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "in12 wuq");
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;4;1;2", idt,
		outs, "in21 slot_mapping");
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;1,2,1,32;1,2,1,8;3;1;2", idt,
		"3,2,32;1,2,1,32;3,2,8;1,2,1,8", "2 slots for 3 tokens");
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		"3,2,30;4,4,1,32;3,2,8;4,4,1,8", "out0 q_out");
	cell_cache_mode = "int8_nzcache";
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "cache_mode 'int8_nzcache' is not supported");
	cell_cache_mode = NULL;
	cell_quant_mode = "per_token_quant_asymm";
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt,
		outs, "quant_mode 'per_token_quant_asymm' is not supported");
	cell_quant_mode = NULL;
	refused("3,64;64;64;1;1;72,64;72;72;32;32;1;1;48,32;48;48;32;3,8;3,8;2,16,32;4,4,1,32;4,4,1,8;3;1;2", idt8,
		outs, "INT8 kv_cache");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16_per_tensor),
		cmocka_unit_test(test_fp16_per_tensor),
		cmocka_unit_test(test_bf16_per_token),
		cmocka_unit_test(test_bf16_one_cache),
		cmocka_unit_test(test_bf16_float_weights),
		cmocka_unit_test(test_refused),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
