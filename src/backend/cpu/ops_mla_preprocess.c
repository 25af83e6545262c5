/*
 * CPU backend, vllm-ascend's fused MLA pre-processing kernel
 * mla_preprocess_0_mix_aic (aclnnMlaPreprocess, torch_npu.npu_mla_preprocess;
 * docs/spec/replay.md §4; docs/ops.md "MLA pre-processing").  The DeepSeek-V3
 * attention prologue of one decode step, per token:
 *
 *   x --RmsNorm(gamma0)+beta0, quantise--> int8 GEMM wdqkv, dequant --> y0 = [kv | k_rope | q]
 *   q    --RmsNorm(gamma1)+beta1, quantise--> int8 GEMM wuq, dequant --> per head [q_nope | q_rope]
 *   q_nope · wuk[head] --> q_out0;  RoPE(q_rope) --> q_out1
 *   RmsNorm(kv, gamma2) --> kv_cache[slot];  RoPE(k_rope) --> kv_cache_rope[slot]
 *
 * Slots are the aclnn parameter order (no recorded row fixes another):
 * in0 input, in1 gamma0, in2 beta0, in3 quant_scale0, in4 quant_offset0,
 * in5 wdqkv, in6 descale0, in7 bias0, in8 gamma1, in9 beta1,
 * in10 quant_scale1, in11 quant_offset1, in12 wuq, in13 descale1,
 * in14 bias1, in15 gamma2, in16 cos, in17 sin, in18 wuk, in19 kv_cache,
 * in20 kv_cache_rope, in21 slot_mapping, in22 ctkv_scale, in23
 * q_nope_scale; out0 q_out, out1 kv_cache_out (= in19), out2 q_rope_out,
 * out3 kr_cache_out (= in20).
 *
 * The two GEMMs go through oneDNN (cpu_gemm.h, weights reordered once in
 * prepare); the per-head wuk products are one small oneDNN GEMM per head
 * over strided views (no copies).  The row work (norms, quantisation, RoPE,
 * cache writes) is split over tokens with cpu_parallel.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_quant.h"
#include "cpu_rope.h"
#include "ops/mla.h"

#define OP "mla_preprocess_0_mix_aic"

static int present(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present;
}

/* ---- state ------------------------------------------------------------ */

/* One quantised (or float) GEMM: y(T, n) = dequant(quant(x(T, k)) · Wᵀ). */
struct stage {
	int q8;                       /* int8 weights: quantise, s8 x s8 -> s32, dequantise */
	int64_t k, n;
	struct cpu_mm mm;
	dnnl_memory_t w;
	float *descale, *bias;        /* n */
	float inv_scale, offset;      /* per-tensor: q = round(x / scale + offset) */
	float *tok;                   /* per-token scales (T) */
	void *a;                      /* T x k: int8, bf16 or fp32 */
	void *acc;                    /* T x n: s32 (q8) or fp32 */
	int abf16;                    /* float stage: A is bf16 */
};

struct state {
	struct perfdb_mla_plan p;
	struct stage s0, s1;
	struct cpu_mm uk;             /* (T, nope) · (nope, kv), one head */
	dnnl_memory_t *wuk;           /* n reordered heads */
	float *g0, *b0, *g1, *b1, *g2;
	float *xs;                    /* T x h normalised input */
	float *y0, *y1;               /* T x d0, T x n·hd (rounded to the activation dtype) */
	uint16_t *y1h;                /* y1 as bf16: the wuk GEMM's A (bf16 activations) */
	float *qn;                    /* T x n x kv: q_nope · wuk */
	int64_t *slots;
};

static void stage_release(struct stage *s)
{
	cpu_mm_release(&s->mm);
	if (s->w)
		dnnl_memory_destroy(s->w);
	free(s->descale);
	free(s->bias);
	free(s->tok);
	free(s->a);
	free(s->acc);
	memset(s, 0, sizeof(*s));
}

static void release(struct perfdb_op_case *c)
{
	struct state *s = c->priv;
	if (!s)
		return;
	stage_release(&s->s0);
	stage_release(&s->s1);
	cpu_mm_release(&s->uk);
	if (s->wuk)
		for (int64_t h = 0; h < s->p.n; h++)
			if (s->wuk[h])
				dnnl_memory_destroy(s->wuk[h]);
	free(s->wuk);
	free(s->g0);
	free(s->b0);
	free(s->g1);
	free(s->b1);
	free(s->g2);
	free(s->xs);
	free(s->y0);
	free(s->y1);
	free(s->y1h);
	free(s->qn);
	free(s->slots);
	free(s);
	c->priv = NULL;
}

/* An element of a scale/offset/bias input as float: floats as such, integers by value. */
static float val_at(const struct perfdb_tensor *t, size_t i)
{
	return perfdb_dtype_is_float(t->dtype) ? cpu_ld(t, i) : (float)cpu_ld_int(t, i);
}

/* A descale element: float, or an INT32/INT64 whose low 32 bits hold the fp32 (npu_trans_quant_param). */
static float descale_at(const struct perfdb_tensor *t, size_t i)
{
	if (t->dtype == PERFDB_DTYPE_INT64 || t->dtype == PERFDB_DTYPE_INT32) {
		uint32_t u = (uint32_t)cpu_ld_int(t, i);
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	return val_at(t, i);
}

/* A float input as fp32 (absent: fill). */
static float *load_vec(const struct perfdb_op_case *c, size_t i, int64_t n, float fill)
{
	float *v = malloc((size_t)n * sizeof(float));
	if (!v)
		return NULL;
	if (present(c, i))
		cpu_load_row(&c->in[i], 0, (size_t)n, v);
	else
		for (int64_t j = 0; j < n; j++)
			v[j] = fill;
	return v;
}

/*
 * Reorder a (K, N) weight (trans: stored (N, K)) of tensor t for mm, starting
 * at element off: bf16 as stored when mm computes in bf16, anything else
 * through fp32 (oneDNN reorders fp32 to the primitive's dtype).
 */
static int weight_of(const struct cpu_mm *mm, const struct perfdb_tensor *t, size_t off, int bf16, int trans,
		     dnnl_memory_t *out, struct perfdb_err *err)
{
	size_t n = (size_t)(mm->k * mm->n);
	if (t->dtype == PERFDB_DTYPE_INT8)
		return cpu_mm_weight(mm, (const int8_t *)t->data + off, dnnl_s8, trans, out, err);
	if (bf16 && t->dtype == PERFDB_DTYPE_BF16)
		return cpu_mm_weight(mm, (const uint16_t *)t->data + off, dnnl_bf16, trans, out, err);
	float *f = malloc(n * sizeof(float));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	cpu_load_row(t, off, n, f);
	int rc = cpu_mm_weight(mm, f, dnnl_f32, trans, out, err);
	free(f);
	return rc;
}

static int stage_init(struct stage *s, const struct perfdb_op_case *c, const struct perfdb_mla_plan *p, size_t w, size_t ds,
		      size_t bs, size_t qs, size_t qo, int64_t k, int64_t n, struct perfdb_err *err)
{
	const struct perfdb_tensor *wt = &c->in[w];
	size_t t = (size_t)p->t;
	s->k = k;
	s->n = n;
	s->q8 = wt->dtype == PERFDB_DTYPE_INT8;
	s->abf16 = !s->q8 && p->act == PERFDB_DTYPE_BF16 && wt->dtype == PERFDB_DTYPE_BF16;
	size_t aes = s->q8 ? 1 : s->abf16 ? 2 : 4;
	s->a = malloc(t * (size_t)k * aes);
	s->acc = malloc(t * (size_t)n * 4);
	s->tok = malloc(t * sizeof(float));
	if (!s->a || !s->acc || !s->tok)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (s->q8) {
		s->descale = malloc((size_t)n * sizeof(float));
		s->bias = calloc((size_t)n, sizeof(float));
		if (!s->descale || !s->bias)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (size_t j = 0; j < (size_t)n; j++) {
			s->descale[j] = descale_at(&c->in[ds], j);
			if (present(c, bs))
				s->bias[j] = val_at(&c->in[bs], j);
		}
		if (!p->per_token) {
			float sc = val_at(&c->in[qs], 0);
			s->inv_scale = sc != 0 ? 1.0f / sc : 0.0f;
			s->offset = val_at(&c->in[qo], 0);
		}
		PERFDB_TRY(cpu_mm_init(&s->mm, c->backend_ctx, p->t, k, n, dnnl_s8, k, dnnl_s8, dnnl_s32, n, err));
	} else {
		dnnl_data_type_t dt = s->abf16 ? dnnl_bf16 : dnnl_f32;
		PERFDB_TRY(cpu_mm_init(&s->mm, c->backend_ctx, p->t, k, n, dt, k, dt, dnnl_f32, n, err));
	}
	return weight_of(&s->mm, wt, 0, s->abf16, 1, &s->w, err);
}

static int prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(perfdb_mla_plan(c, &s->p, err));   /* complete: both checks passed */
	const struct perfdb_mla_plan *p = &s->p;
	size_t t = (size_t)p->t, nq = (size_t)(p->n * p->hd);
	s->g0 = load_vec(c, PERFDB_MLA_GAMMA0, p->h, 1);
	s->b0 = load_vec(c, PERFDB_MLA_BETA0, p->h, 0);
	s->g1 = load_vec(c, PERFDB_MLA_GAMMA1, p->ql, 1);
	s->b1 = load_vec(c, PERFDB_MLA_BETA1, p->ql, 0);
	s->g2 = load_vec(c, PERFDB_MLA_GAMMA2, p->kv, 1);
	s->xs = malloc(t * (size_t)p->h * sizeof(float));
	s->y0 = malloc(t * (size_t)p->d0 * sizeof(float));
	s->y1 = malloc(t * nq * sizeof(float));
	s->y1h = malloc(t * nq * sizeof(uint16_t));
	s->qn = malloc(t * (size_t)(p->n * p->kv) * sizeof(float));
	s->slots = malloc(t * sizeof(int64_t));
	s->wuk = calloc((size_t)p->n, sizeof(*s->wuk));
	if (!s->g0 || !s->b0 || !s->g1 || !s->b1 || !s->g2 || !s->xs || !s->y0 || !s->y1 || !s->y1h || !s->qn ||
	    !s->slots || !s->wuk)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	cpu_slots_distinct(s->slots, t, p->nslots, p->block);
	cpu_store_index(&c->in[PERFDB_MLA_SLOTS], s->slots, t);
	PERFDB_TRY(stage_init(&s->s0, c, p, PERFDB_MLA_WDQKV, PERFDB_MLA_DESCALE0, PERFDB_MLA_BIAS0, PERFDB_MLA_QSCALE0, PERFDB_MLA_QOFFSET0, p->h, p->d0, err));
	PERFDB_TRY(stage_init(&s->s1, c, p, PERFDB_MLA_WUQ, PERFDB_MLA_DESCALE1, PERFDB_MLA_BIAS1, PERFDB_MLA_QSCALE1, PERFDB_MLA_QOFFSET1, p->ql, (int64_t)nq, err));
	/* wuk per head: A = the head's q_nope columns of y1, C = its columns of qn */
	int bf16 = p->act == PERFDB_DTYPE_BF16;
	dnnl_data_type_t dt = bf16 ? dnnl_bf16 : dnnl_f32;
	PERFDB_TRY(cpu_mm_init(&s->uk, c->backend_ctx, p->t, p->nope, p->kv, dt, (int64_t)nq, dt, dnnl_f32, p->n * p->kv, err));
	for (int64_t h = 0; h < p->n; h++)
		PERFDB_TRY(weight_of(&s->uk, &c->in[PERFDB_MLA_WUK], (size_t)(h * p->nope * p->kv), bf16, 0, &s->wuk[h], err));
	return 0;
}

/* ---- row kernels ------------------------------------------------------ */

/* y = x · rsqrt(mean(x²) + eps) · g (+ b), in place. */
CPU_CLONES static void rms_row(float *x, const float *g, const float *b, size_t n, float eps)
{
	float ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	float r = 1.0f / sqrtf(ss / (float)n + eps);
	if (b)
		for (size_t i = 0; i < n; i++)
			x[i] = x[i] * r * g[i] + b[i];
	else
		for (size_t i = 0; i < n; i++)
			x[i] = x[i] * r * g[i];
}

/* Round to the activation dtype's precision (the kernel's intermediates are of that dtype). */
static void round_act(float *x, size_t n, enum perfdb_dtype act)
{
	if (act == PERFDB_DTYPE_BF16)
		for (size_t i = 0; i < n; i++)
			x[i] = perfdb_bf16_to_float(perfdb_bf16_from_float(x[i]));
	else
		for (size_t i = 0; i < n; i++)
			x[i] = perfdb_fp16_to_float(perfdb_fp16_from_float(x[i]));
}

CPU_CLONES static void quant_affine(const float *x, int8_t *q, size_t n, float inv, float off)
{
	for (size_t i = 0; i < n; i++)
		q[i] = (int8_t)cpu_q8(x[i] * inv + off);
}

/* The stage's A row r from x (n = k floats; x is scratch and may be changed). */
static void stage_in(struct stage *s, size_t r, float *x, int per_token)
{
	size_t k = (size_t)s->k;
	if (s->q8) {
		int8_t *q = (int8_t *)s->a + r * k;
		if (per_token) {
			s->tok[r] = cpu_quant_row(x, k);
			quant_affine(x, q, k, 1.0f, 0.0f);
		} else {
			quant_affine(x, q, k, s->inv_scale, s->offset);
		}
	} else if (s->abf16) {
		uint16_t *a = (uint16_t *)s->a + r * k;
		for (size_t i = 0; i < k; i++)
			a[i] = perfdb_bf16_from_float(x[i]);
	} else {
		memcpy((float *)s->a + r * k, x, k * sizeof(float));
	}
}

/* Row r of the stage's result into y (n floats). */
CPU_CLONES static void stage_out(const struct stage *s, size_t r, float *y, int per_token)
{
	size_t n = (size_t)s->n;
	if (!s->q8) {
		memcpy(y, (const float *)s->acc + r * n, n * sizeof(float));
		return;
	}
	const int32_t *a = (const int32_t *)s->acc + r * n;
	float pt = per_token ? s->tok[r] : 1.0f;
	for (size_t j = 0; j < n; j++)
		y[j] = ((float)a[j] + s->bias[j]) * s->descale[j] * pt;
}

struct job {
	struct perfdb_op_case *c;
	struct state *s;
};

/* Tokens [lo, hi): RmsNorm(gamma0) + beta0 of the input, into GEMM 1's A. */
static void phase_in(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct job *j = ctx;
	struct state *s = j->s;
	size_t h = (size_t)s->p.h;
	for (size_t r = lo; r < hi; r++) {
		float *x = s->xs + r * h;
		cpu_load_row(&j->c->in[PERFDB_MLA_X], r * h, h, x);
		rms_row(x, s->g0, s->b0, h, s->p.eps);
		stage_in(&s->s0, r, x, s->p.per_token);
	}
}

/* cos/sin of token r as fp32 rows. */
static void cos_sin(const struct perfdb_op_case *c, size_t r, size_t d, float *cs, float *sn)
{
	cpu_load_row(&c->in[PERFDB_MLA_COS], r * d, d, cs);
	cpu_load_row(&c->in[PERFDB_MLA_SIN], r * d, d, sn);
}

/*
 * Tokens [lo, hi) after GEMM 1: y0 = dequant (rounded to the activation
 * dtype); the q part through RmsNorm(gamma1) + beta1 into GEMM 2's A; the
 * kv part normalised into kv_cache and the k_rope part rotated into its
 * cache at the token's slot.
 */
static void phase_mid(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct job *j = ctx;
	struct perfdb_op_case *c = j->c;
	struct state *s = j->s;
	const struct perfdb_mla_plan *p = &s->p;
	size_t d0 = (size_t)p->d0, kv = (size_t)p->kv, rd = (size_t)p->rope, crow = (size_t)p->crow;
	float cs[CPU_ROPE_MAX_D], sn[CPU_ROPE_MAX_D], kr[CPU_ROPE_MAX_D];
	for (size_t r = lo; r < hi; r++) {
		float *y = s->y0 + r * d0;
		stage_out(&s->s0, r, y, p->per_token);
		round_act(y, d0, p->act);
		float *q = y + kv + rd;
		rms_row(q, s->g1, s->b1, (size_t)p->ql, p->eps);
		stage_in(&s->s1, r, q, p->per_token);
		size_t slot = (size_t)s->slots[r];
		rms_row(y, s->g2, NULL, kv, p->eps);
		cpu_store_row(&c->in[PERFDB_MLA_KVCACHE], slot * crow, kv, y);
		cos_sin(c, r, rd, cs, sn);
		cpu_rope_neox(y + kv, cs, sn, kr, rd);
		if (p->split)
			cpu_store_row(&c->in[PERFDB_MLA_KRCACHE], slot * rd, rd, kr);
		else
			cpu_store_row(&c->in[PERFDB_MLA_KVCACHE], slot * crow + kv, rd, kr);
	}
}

/* Tokens [lo, hi) after GEMM 2: y1 = dequant (rounded), its bf16 copy, and q_rope rotated into its output. */
static void phase_q(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct job *j = ctx;
	struct perfdb_op_case *c = j->c;
	struct state *s = j->s;
	const struct perfdb_mla_plan *p = &s->p;
	size_t nq = (size_t)(p->n * p->hd), rd = (size_t)p->rope, hd = (size_t)p->hd;
	float cs[CPU_ROPE_MAX_D], sn[CPU_ROPE_MAX_D], qr[CPU_ROPE_MAX_D];
	for (size_t r = lo; r < hi; r++) {
		float *y = s->y1 + r * nq;
		stage_out(&s->s1, r, y, p->per_token);
		round_act(y, nq, p->act);
		if (p->act == PERFDB_DTYPE_BF16)
			for (size_t i = 0; i < nq; i++)
				s->y1h[r * nq + i] = perfdb_bf16_from_float(y[i]);
		cos_sin(c, r, rd, cs, sn);
		for (size_t h = 0; h < (size_t)p->n; h++) {
			cpu_rope_neox(y + h * hd + (size_t)p->nope, cs, sn, qr, rd);
			size_t row = r * (size_t)p->n + h;
			if (p->split)
				cpu_store_row(&c->out[PERFDB_MLA_QROPE], row * rd, rd, qr);
			else
				cpu_store_row(&c->out[PERFDB_MLA_QOUT], row * (size_t)p->qw + (size_t)p->kv, rd, qr);
		}
	}
}

static int run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct state *s = c->priv;
	const struct perfdb_mla_plan *p = &s->p;
	struct job j = { c, s };
	size_t t = (size_t)p->t, nq = (size_t)(p->n * p->hd), kv = (size_t)p->kv;
	cpu_parallel(t, t * (size_t)p->h, c->threads, phase_in, &j);
	PERFDB_TRY(cpu_mm_run(&s->s0.mm, s->s0.a, s->s0.w, s->s0.acc, err));
	cpu_parallel(t, t * (size_t)p->d0, c->threads, phase_mid, &j);
	PERFDB_TRY(cpu_mm_run(&s->s1.mm, s->s1.a, s->s1.w, s->s1.acc, err));
	cpu_parallel(t, t * nq, c->threads, phase_q, &j);
	int bf16 = p->act == PERFDB_DTYPE_BF16;
	for (int64_t h = 0; h < p->n; h++) {
		size_t off = (size_t)(h * p->hd);
		const void *a = bf16 ? (const void *)(s->y1h + off) : (const void *)(s->y1 + off);
		PERFDB_TRY(cpu_mm_run(&s->uk, a, s->wuk[h], s->qn + (size_t)h * kv, err));
	}
	if (p->split) {
		cpu_store_row(&c->out[PERFDB_MLA_QOUT], 0, t * (size_t)p->n * kv, s->qn);
	} else {
		for (size_t row = 0; row < t * (size_t)p->n; row++)
			cpu_store_row(&c->out[PERFDB_MLA_QOUT], row * (size_t)p->qw, kv, s->qn + row * kv);
	}
	return 0;
}

/*
 * The CPU's limits, after the definition's rules (src/ops/rules_mla.c):
 * the Runtime modes and the cache layout it implements, and the dims its
 * kernels take (the rope dim rotated in CPU_ROPE_MAX_D-wide row buffers).
 */
static int check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	const char *cm = perfdb_case_cell(c, "Runtime cache_mode");
	const char *qm = perfdb_case_cell(c, "Runtime quant_mode");
	if (cm && strcmp(cm, "krope_ctkv") && strcmp(cm, "1") && strcmp(cm, "0"))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": cache_mode '%s' is not supported (krope_ctkv and 0 are)",
				      cm);
	if (qm && strcmp(qm, "per_token_quant_symm") && strcmp(qm, "1") && strcmp(qm, "per_tensor_quant_asymm") &&
	    strcmp(qm, "0"))
		return perfdb_err_set(err, PERFDB_EINVAL,
				      OP ": quant_mode '%s' is not supported (per_tensor_quant_asymm and per_token_quant_symm are)",
				      qm);
	const struct perfdb_tensor *kc = &c->in[PERFDB_MLA_KVCACHE];
	if (kc->format == PERFDB_FORMAT_FRACTAL_NZ || kc->dtype == PERFDB_DTYPE_INT8)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      OP ": FRACTAL_NZ or INT8 kv_cache (cache_mode int8_nzcache/nzcache) is not supported");
	int64_t kv = c->in[PERFDB_MLA_GAMMA2].numel, ql = c->in[PERFDB_MLA_GAMMA1].numel;
	const struct perfdb_tensor *cs = &c->in[PERFDB_MLA_COS];
	int64_t rope = cs->ndims ? cs->dims[cs->ndims - 1] : 1;
	if (kv < 1 || ql < 1 || rope < 2 || rope % 2 || rope > CPU_ROPE_MAX_D)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": bad dims kv_lora=%lld (gamma2), q_lora=%lld (gamma1), "
				      "rope=%lld (cos: even, at most %d)", (long long)kv, (long long)ql, (long long)rope,
				      CPU_ROPE_MAX_D);
	return 0;
}

const struct perfdb_op_impl cpu_ops_mla_preprocess[] = {
	{ .name = OP, .check = check, .prepare = prepare, .run = run, .release = release },
	{ .name = NULL },
};
