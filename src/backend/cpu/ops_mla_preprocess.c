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

#define OP "mla_preprocess_0_mix_aic"

enum {
	X, GAMMA0, BETA0, QSCALE0, QOFFSET0, WDQKV, DESCALE0, BIAS0, GAMMA1, BETA1, QSCALE1, QOFFSET1,
	WUQ, DESCALE1, BIAS1, GAMMA2, COS, SIN, WUK, KVCACHE, KRCACHE, SLOTS, NIN_MIN
};
enum { QOUT, KVOUT, QROPE, KROUT };

static const char *const IN_NAME[NIN_MIN] = {
	"input", "gamma0", "beta0", "quant_scale0", "quant_offset0", "wdqkv", "descale0", "bias0",
	"gamma1", "beta1", "quant_scale1", "quant_offset1", "wuq", "descale1", "bias1", "gamma2",
	"cos", "sin", "wuk", "kv_cache", "kv_cache_rope", "slot_mapping",
};

/* What the row's shapes and Runtime cells say. */
struct plan {
	int64_t t, h;                 /* tokens, hidden size */
	int64_t kv, rope, ql, d0;     /* kv_lora, rope dim, q_lora; d0 = kv + rope + ql */
	int64_t n, nope, hd;          /* heads, nope dim, hd = nope + rope */
	int64_t qw;                   /* q_out0's last dim: kv (krope_ctkv) or kv + rope (mode 0) */
	int64_t crow;                 /* kv_cache row: kv or kv + rope */
	int64_t nslots, block;
	int split;                    /* cache_mode krope_ctkv: separate rope cache and q_rope output */
	int per_token;                /* quant_mode per_token_quant_symm */
	float eps;
	enum perfdb_dtype act;
};

static int64_t last_dim(const struct perfdb_tensor *t)
{
	return t->ndims ? t->dims[t->ndims - 1] : 1;
}

static int present(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present;
}

static int need(const struct perfdb_op_case *c, size_t i, struct perfdb_err *err)
{
	if (!present(c, i))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s is missing", i, IN_NAME[i]);
	return 0;
}

/* A float vector input of n elements (gamma/beta). */
static int vec(const struct perfdb_op_case *c, size_t i, int64_t n, struct perfdb_err *err)
{
	const struct perfdb_tensor *t = &c->in[i];
	if (!cpu_is_float(t->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has dtype %s, expected a float dtype", i,
				      IN_NAME[i], perfdb_dtype_name(t->dtype));
	if (t->numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", i,
				      IN_NAME[i], (long long)t->numel, (long long)n);
	return 0;
}

/* The Runtime cells: accepted by name or by the aclnn number. */
static int modes(const struct perfdb_op_case *c, struct plan *p, int *cache_mode, struct perfdb_err *err)
{
	const char *cm = perfdb_case_cell(c, "Runtime cache_mode");
	const char *qm = perfdb_case_cell(c, "Runtime quant_mode");
	const char *ep = perfdb_case_cell(c, "Runtime epsilon");
	*cache_mode = -1;
	if (cm) {
		if (!strcmp(cm, "krope_ctkv") || !strcmp(cm, "1"))
			*cache_mode = 1;
		else if (!strcmp(cm, "0"))
			*cache_mode = 0;
		else
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": cache_mode '%s' is not supported (krope_ctkv and 0 are)", cm);
	}
	p->per_token = 0;
	if (qm) {
		if (!strcmp(qm, "per_token_quant_symm") || !strcmp(qm, "1"))
			p->per_token = 1;
		else if (strcmp(qm, "per_tensor_quant_asymm") && strcmp(qm, "0"))
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": quant_mode '%s' is not supported (per_tensor_quant_asymm and per_token_quant_symm are)",
					      qm);
	}
	p->eps = 1e-5f;
	if (ep) {
		char *end;
		double e = strtod(ep, &end);
		if (end == ep || *end || !(e >= 0))
			return perfdb_err_set(err, PERFDB_EINVAL, OP ": bad Runtime epsilon '%s'", ep);
		p->eps = (float)e;
	}
	return 0;
}

/* A GEMM stage's weight (stored (n, k), as transposeWdq/transposeWuq = true) and its scales. */
static int stage_check(const struct perfdb_op_case *c, size_t w, size_t ds, size_t bs, size_t qs, size_t qo,
		       int64_t k, int64_t n, int per_token, struct perfdb_err *err)
{
	const struct perfdb_tensor *t = &c->in[w];
	if (t->format != PERFDB_FORMAT_FRACTAL_NZ && t->ndims == 2 && t->dims[1] != k)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has K=%lld, expected %lld", w, IN_NAME[w],
				      (long long)t->dims[1], (long long)k);
	if (t->numel != k * n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld x %lld", w,
				      IN_NAME[w], (long long)t->numel, (long long)n, (long long)k);
	if (cpu_is_float(t->dtype))
		return 0;   /* float weights: a float GEMM, no quantisation */
	if (t->dtype != PERFDB_DTYPE_INT8)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has dtype %s, expected INT8, BF16 or FLOAT16",
				      w, IN_NAME[w], perfdb_dtype_name(t->dtype));
	PERFDB_TRY(need(c, ds, err));
	if (c->in[ds].numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", ds,
				      IN_NAME[ds], (long long)c->in[ds].numel, (long long)n);
	if (present(c, bs) && c->in[bs].numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", bs,
				      IN_NAME[bs], (long long)c->in[bs].numel, (long long)n);
	if (!per_token) {
		PERFDB_TRY(need(c, qs, err));
		PERFDB_TRY(need(c, qo, err));
		if (c->in[qs].numel != 1 || c->in[qo].numel != 1)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": in%zu %s and in%zu %s must hold one value (per-tensor quantisation)",
					      qs, IN_NAME[qs], qo, IN_NAME[qo]);
	}
	return 0;
}

static int plan_of(const struct perfdb_op_case *c, struct plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	int cache_mode;
	PERFDB_TRY(modes(c, p, &cache_mode, err));
	if (c->nin < NIN_MIN || c->nout < 2)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": needs %d inputs and 2-4 outputs, the row has %zu and %zu",
				      NIN_MIN, c->nin, c->nout);
	static const size_t required[] = { X, GAMMA0, WDQKV, GAMMA1, WUQ, GAMMA2, COS, SIN, WUK, KVCACHE, SLOTS };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		PERFDB_TRY(need(c, required[i], err));
	if (!c->out[QOUT].present)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out is missing");
	const struct perfdb_tensor *x = &c->in[X], *q = &c->out[QOUT], *kc = &c->in[KVCACHE];
	if (x->ndims != 2 || x->dims[0] < 1 || x->dims[1] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in0 input must be (tokens, hidden)");
	p->act = x->dtype;
	if (p->act != PERFDB_DTYPE_BF16 && p->act != PERFDB_DTYPE_FLOAT16)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in0 input has dtype %s, expected BF16 or FLOAT16",
				      perfdb_dtype_name(p->act));
	p->t = x->dims[0];
	p->h = x->dims[1];
	if (kc->format == PERFDB_FORMAT_FRACTAL_NZ || kc->dtype == PERFDB_DTYPE_INT8)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      OP ": FRACTAL_NZ or INT8 kv_cache (cache_mode int8_nzcache/nzcache) is not supported");
	p->kv = c->in[GAMMA2].numel;
	p->ql = c->in[GAMMA1].numel;
	p->rope = last_dim(&c->in[COS]);
	if (p->kv < 1 || p->ql < 1 || p->rope < 2 || p->rope % 2 || p->rope > CPU_ROPE_MAX_D)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": bad dims kv_lora=%lld (gamma2), q_lora=%lld (gamma1), "
				      "rope=%lld (cos: even, at most %d)", (long long)p->kv, (long long)p->ql,
				      (long long)p->rope, CPU_ROPE_MAX_D);
	p->d0 = p->kv + p->rope + p->ql;
	/* cache mode: the Runtime cell, else the shapes (a rope cache: krope_ctkv) */
	p->split = cache_mode >= 0 ? cache_mode : present(c, KRCACHE);
	p->qw = p->split ? p->kv : p->kv + p->rope;
	p->crow = p->qw;
	if (q->ndims != 3 || q->dims[0] != p->t || q->dims[2] != p->qw || q->dims[1] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out must be (%lld, heads, %lld)%s", (long long)p->t,
				      (long long)p->qw, p->split ? "" : " (cache mode 0: kv_lora + rope)");
	if (q->dtype != p->act)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out must have the input's dtype");
	p->n = q->dims[1];
	PERFDB_TRY(vec(c, GAMMA0, p->h, err));
	PERFDB_TRY(vec(c, GAMMA1, p->ql, err));
	PERFDB_TRY(vec(c, GAMMA2, p->kv, err));
	if (present(c, BETA0))
		PERFDB_TRY(vec(c, BETA0, p->h, err));
	if (present(c, BETA1))
		PERFDB_TRY(vec(c, BETA1, p->ql, err));
	PERFDB_TRY(stage_check(c, WDQKV, DESCALE0, BIAS0, QSCALE0, QOFFSET0, p->h, p->d0, p->per_token, err));
	const struct perfdb_tensor *wuq = &c->in[WUQ];
	int64_t nq = wuq->numel % p->ql ? -1 : wuq->numel / p->ql;
	if (nq < 1 || nq % p->n || nq / p->n <= p->rope)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      OP ": in12 wuq has %lld elements, expected q_lora %lld x heads %lld x (nope + rope %lld)",
				      (long long)wuq->numel, (long long)p->ql, (long long)p->n, (long long)p->rope);
	p->hd = nq / p->n;
	p->nope = p->hd - p->rope;
	PERFDB_TRY(stage_check(c, WUQ, DESCALE1, BIAS1, QSCALE1, QOFFSET1, p->ql, nq, p->per_token, err));
	const struct perfdb_tensor *wuk = &c->in[WUK];
	if (!cpu_is_float(wuk->dtype) || wuk->numel != p->n * p->nope * p->kv)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in18 wuk must be a float (%lld, %lld, %lld)", (long long)p->n,
				      (long long)p->nope, (long long)p->kv);
	for (size_t i = COS; i <= SIN; i++)
		if (!cpu_is_float(c->in[i].dtype) || c->in[i].numel != p->t * p->rope)
			return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s must be a float (%lld, %lld)", i,
					      IN_NAME[i], (long long)p->t, (long long)p->rope);
	if (c->in[SLOTS].numel != p->t || cpu_is_float(c->in[SLOTS].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in21 slot_mapping must be an integer (%lld,)",
				      (long long)p->t);
	if (!cpu_is_float(kc->dtype) || kc->numel % p->crow)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in19 kv_cache must be a float (blocks, block_size, 1, %lld)",
				      (long long)p->crow);
	p->nslots = kc->numel / p->crow;
	p->block = kc->ndims == 4 ? kc->dims[1] : 1;
	if (p->nslots < p->t)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in19 kv_cache has %lld slots for %lld tokens",
				      (long long)p->nslots, (long long)p->t);
	if (p->split) {
		PERFDB_TRY(need(c, KRCACHE, err));
		const struct perfdb_tensor *kr = &c->in[KRCACHE];
		if (kr->format == PERFDB_FORMAT_FRACTAL_NZ || !cpu_is_float(kr->dtype) ||
		    kr->numel != p->nslots * p->rope)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": in20 kv_cache_rope must be a float ND cache of %lld slots x %lld",
					      (long long)p->nslots, (long long)p->rope);
		if (c->nout <= QROPE || !c->out[QROPE].present || c->out[QROPE].numel != p->t * p->n * p->rope ||
		    c->out[QROPE].dtype != p->act)
			return perfdb_err_set(err, PERFDB_EINVAL, OP ": out2 q_rope_out must be (%lld, %lld, %lld) of the input's dtype",
					      (long long)p->t, (long long)p->n, (long long)p->rope);
	}
	return 0;
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
	struct plan p;
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
	return cpu_is_float(t->dtype) ? cpu_ld(t, i) : (float)cpu_ld_int(t, i);
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

static int stage_init(struct stage *s, const struct perfdb_op_case *c, const struct plan *p, size_t w, size_t ds,
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
	PERFDB_TRY(plan_of(c, &s->p, err));
	const struct plan *p = &s->p;
	size_t t = (size_t)p->t, nq = (size_t)(p->n * p->hd);
	s->g0 = load_vec(c, GAMMA0, p->h, 1);
	s->b0 = load_vec(c, BETA0, p->h, 0);
	s->g1 = load_vec(c, GAMMA1, p->ql, 1);
	s->b1 = load_vec(c, BETA1, p->ql, 0);
	s->g2 = load_vec(c, GAMMA2, p->kv, 1);
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
	cpu_store_index(&c->in[SLOTS], s->slots, t);
	PERFDB_TRY(stage_init(&s->s0, c, p, WDQKV, DESCALE0, BIAS0, QSCALE0, QOFFSET0, p->h, p->d0, err));
	PERFDB_TRY(stage_init(&s->s1, c, p, WUQ, DESCALE1, BIAS1, QSCALE1, QOFFSET1, p->ql, (int64_t)nq, err));
	/* wuk per head: A = the head's q_nope columns of y1, C = its columns of qn */
	int bf16 = p->act == PERFDB_DTYPE_BF16;
	dnnl_data_type_t dt = bf16 ? dnnl_bf16 : dnnl_f32;
	PERFDB_TRY(cpu_mm_init(&s->uk, c->backend_ctx, p->t, p->nope, p->kv, dt, (int64_t)nq, dt, dnnl_f32, p->n * p->kv, err));
	for (int64_t h = 0; h < p->n; h++)
		PERFDB_TRY(weight_of(&s->uk, &c->in[WUK], (size_t)(h * p->nope * p->kv), bf16, 0, &s->wuk[h], err));
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
		cpu_load_row(&j->c->in[X], r * h, h, x);
		rms_row(x, s->g0, s->b0, h, s->p.eps);
		stage_in(&s->s0, r, x, s->p.per_token);
	}
}

/* cos/sin of token r as fp32 rows. */
static void cos_sin(const struct perfdb_op_case *c, size_t r, size_t d, float *cs, float *sn)
{
	cpu_load_row(&c->in[COS], r * d, d, cs);
	cpu_load_row(&c->in[SIN], r * d, d, sn);
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
	const struct plan *p = &s->p;
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
		cpu_store_row(&c->in[KVCACHE], slot * crow, kv, y);
		cos_sin(c, r, rd, cs, sn);
		cpu_rope_neox(y + kv, cs, sn, kr, rd);
		if (p->split)
			cpu_store_row(&c->in[KRCACHE], slot * rd, rd, kr);
		else
			cpu_store_row(&c->in[KVCACHE], slot * crow + kv, rd, kr);
	}
}

/* Tokens [lo, hi) after GEMM 2: y1 = dequant (rounded), its bf16 copy, and q_rope rotated into its output. */
static void phase_q(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct job *j = ctx;
	struct perfdb_op_case *c = j->c;
	struct state *s = j->s;
	const struct plan *p = &s->p;
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
				cpu_store_row(&c->out[QROPE], row * rd, rd, qr);
			else
				cpu_store_row(&c->out[QOUT], row * (size_t)p->qw + (size_t)p->kv, rd, qr);
		}
	}
}

static int run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct state *s = c->priv;
	const struct plan *p = &s->p;
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
		cpu_store_row(&c->out[QOUT], 0, t * (size_t)p->n * kv, s->qn);
	} else {
		for (size_t row = 0; row < t * (size_t)p->n; row++)
			cpu_store_row(&c->out[QOUT], row * (size_t)p->qw, kv, s->qn + row * kv);
	}
	return 0;
}

static int check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct plan p;
	return plan_of(c, &p, err);
}

const struct perfdb_op_impl cpu_ops_mla_preprocess[] = {
	{ .name = OP, .check = check, .prepare = prepare, .run = run, .release = release },
	{ .name = NULL },
};
