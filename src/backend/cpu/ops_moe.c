/*
 * CPU backend, MoE family (docs/spec/replay.md §4; docs/ops.md "MoE and grouped
 * matmul"): GroupedMatmul, GroupedMatmulSwigluQuant, MoeGatingTopK,
 * MoeTokenPermute, MoeTokenUnpermute.
 *
 * Grouped GEMMs run one oneDNN primitive per distinct group size (the
 * group list splits the tokens evenly, so one or two sizes) over strided
 * row ranges of x, each group's weight reordered once in prepare.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_quant.h"
#include "ops/moe.h"

/* Write an integer into element i of t, in t's dtype (index-like inputs). */
static void st_int(struct perfdb_tensor *t, size_t i, int64_t v)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
	case PERFDB_DTYPE_UINT8:
	case PERFDB_DTYPE_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
	case PERFDB_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
	case PERFDB_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	case PERFDB_DTYPE_INT64: ((int64_t *)t->data)[i] = v; break;
	default: {
		float f = (float)v;
		cpu_store_row(t, i, 1, &f);
	}
	}
}

static int is_int_dtype(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_UINT8 || d == PERFDB_DTYPE_INT16 ||
	       d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64;
}

/* ---- GroupedMatmul / GroupedMatmulSwigluQuant ------------------------- */
/*
 * Slots (spec §4, grid.md grouped_matmul): x0 (T,K), w1 (E weights of K x N
 * in any 2-/3-/4-D shape with E*K*N elements, NZ or ND, read as (E,K,N)),
 * scale3 (E,N) per-channel weight scale, group_list7 (E,) cumulative,
 * per_token_scale8 (T,); out0 (T,N) (SwigluQuant: (T,N/2) int8, or the
 * grid template's (T,N) whose first N/2 columns get the values), out1 (T,)
 * SwigluQuant's scales.
 */

#define GMM_MAXM 8                       /* distinct group sizes handled */

struct gmm_plan {
	int64_t t, k, n, e;
	int int8;                             /* int8 kernel (x INT8, or SwigluQuant) */
	int swq;                              /* GroupedMatmulSwigluQuant */
	const struct perfdb_tensor *scale, *glist, *ptok;
};

struct gmm_state {
	struct gmm_plan p;
	struct cpu_mm mm[GMM_MAXM];
	int nmm;
	dnnl_memory_t *w;                     /* per group, NULL for an empty group */
	int64_t *bound;                       /* group list when the row has none (E) */
	void *xs;                             /* x converted (fp16 -> fp32, or float -> int8) */
	float *cs;                            /* fp32 output scratch (output neither bf16 nor fp32), T x N */
	int32_t *acc;                         /* int8 kernel: s32 block, max group rows x N */
	float *row, *wscale;                  /* one output row; (E,N) weight scales */
	dnnl_data_type_t at;
};

/* The operator's shape (moe.h, shared with the definitions), then what the CPU kernels take. */
static int gmm_plan(const struct perfdb_op_case *c, struct gmm_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	struct perfdb_gmm_shape sh;
	PERFDB_TRY(perfdb_gmm_shape(c, &sh, err));
	p->t = sh.t;
	p->k = sh.k;
	p->n = sh.n;
	p->e = sh.e;
	p->swq = sh.swq;
	p->scale = sh.scale;
	p->glist = sh.glist;
	p->ptok = sh.ptok;
	const struct perfdb_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out[0];
	p->int8 = p->swq || x->dtype == PERFDB_DTYPE_INT8;
	if (x->dtype != PERFDB_DTYPE_INT8 && !perfdb_dtype_is_float(x->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x dtype %s not supported", c->op, perfdb_dtype_name(x->dtype));
	if (w->dtype != PERFDB_DTYPE_INT8 && !perfdb_dtype_is_float(w->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weight dtype %s not supported", c->op,
				      perfdb_dtype_name(w->dtype));
	if (!cpu_is_q_target(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output dtype %s not supported", c->op,
				      perfdb_dtype_name(o->dtype));
	if (p->scale && (p->scale->numel != p->e * p->n || !perfdb_dtype_is_float(p->scale->dtype)))
		p->scale = NULL;   /* the float path's scale is all ones in the reference; a foreign shape is ignored */
	if (p->ptok && (p->ptok->numel != p->t || !perfdb_dtype_is_float(p->ptok->dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: per_token_scale (slot 8) must be float (T,) = (%lld,)",
				      c->op, (long long)p->t);
	if (p->glist && !is_int_dtype(p->glist->dtype) && !perfdb_dtype_is_float(p->glist->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: group_list dtype %s not supported", c->op,
				      perfdb_dtype_name(p->glist->dtype));
	return 0;
}

static int gmm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gmm_plan p;
	return gmm_plan(c, &p, err);
}

static void gmm_release(struct perfdb_op_case *c)
{
	struct gmm_state *s = c->priv;
	if (!s)
		return;
	for (int i = 0; i < s->nmm; i++)
		cpu_mm_release(&s->mm[i]);
	if (s->w)
		for (int64_t g = 0; g < s->p.e; g++)
			if (s->w[g])
				dnnl_memory_destroy(s->w[g]);
	free(s->w);
	free(s->bound);
	free(s->xs);
	free(s->cs);
	free(s->acc);
	free(s->row);
	free(s->wscale);
	free(s);
	c->priv = NULL;
}

/* End row of group g, as the run reads it from the (rewritten) group list. */
static int64_t gmm_end(const struct gmm_state *s, int64_t g)
{
	return s->p.glist ? cpu_ld_int(s->p.glist, (size_t)g) : s->bound[g];
}

static struct cpu_mm *gmm_find(struct gmm_state *s, int64_t m)
{
	for (int i = 0; i < s->nmm; i++)
		if (s->mm[i].m == m)
			return &s->mm[i];
	return NULL;
}

static dnnl_data_type_t dnnl_dt(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_BF16 ? dnnl_bf16 : d == PERFDB_DTYPE_FLOAT16 ? dnnl_f16 :
	       d == PERFDB_DTYPE_INT8 ? dnnl_s8 : dnnl_f32;
}

static int gmm_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gmm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(gmm_plan(c, &s->p, err));
	struct gmm_plan *p = &s->p;
	const struct perfdb_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out[0];
	size_t e = (size_t)p->e, n = (size_t)p->n, k = (size_t)p->k;
	/* the group list: tokens split evenly, cumulative (group_list_type 0) */
	if (p->glist) {
		for (size_t g = 0; g < e; g++)
			st_int(&c->in[7], g, perfdb_even_group_end(p->t, p->e, (int64_t)g));
	} else {
		if (!(s->bound = malloc(e * sizeof(int64_t))))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (size_t g = 0; g < e; g++)
			s->bound[g] = perfdb_even_group_end(p->t, p->e, (int64_t)g);
	}
	s->w = calloc(e, sizeof(*s->w));
	s->row = malloc(n * sizeof(float));
	s->wscale = malloc(e * n * sizeof(float));
	if (!s->w || !s->row || !s->wscale)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < e * n; i++)
		s->wscale[i] = p->scale ? cpu_ld(p->scale, i) : 1.0f;
	/* operand dtypes */
	dnnl_data_type_t wt, ct;
	int64_t maxm = 0;
	for (int64_t g = 0, prev = 0; g < p->e; prev = gmm_end(s, g), g++)
		maxm = gmm_end(s, g) - prev > maxm ? gmm_end(s, g) - prev : maxm;
	if (p->int8) {
		s->at = wt = dnnl_s8;
		ct = dnnl_s32;
		if (x->dtype != PERFDB_DTYPE_INT8) {
			if (!(s->xs = malloc((size_t)x->numel)))
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			cpu_to_s8(x, s->xs);
		}
		if (!(s->acc = malloc((size_t)(maxm ? maxm : 1) * n * sizeof(int32_t))))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	} else {
		/* bf16 and fp32 compute natively; fp16 is converted to fp32 per call */
		s->at = wt = x->dtype == PERFDB_DTYPE_BF16 ? dnnl_bf16 : dnnl_f32;
		if (x->dtype == PERFDB_DTYPE_FLOAT16 && !(s->xs = malloc((size_t)x->numel * sizeof(float))))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		if (o->dtype == PERFDB_DTYPE_BF16 || o->dtype == PERFDB_DTYPE_FLOAT) {
			ct = dnnl_dt(o->dtype);
		} else {
			ct = dnnl_f32;
			if (!(s->cs = malloc((size_t)p->t * n * sizeof(float))))
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
	}
	/* weights as int8 when the kernel is int8 and the table stored another dtype */
	int8_t *wq = NULL;
	if (p->int8 && w->dtype != PERFDB_DTYPE_INT8) {
		if (!(wq = malloc((size_t)w->numel)))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		cpu_to_s8(w, wq);
	}
	int rc = 0;
	size_t wes = wq ? 1 : perfdb_dtype_bytes(w->dtype, 1);
	const char *wbase = wq ? (const char *)wq : (const char *)w->data;
	for (int64_t g = 0, prev = 0; g < p->e && rc == 0; prev = gmm_end(s, g), g++) {
		int64_t m = gmm_end(s, g) - prev;
		if (m <= 0)
			continue;
		struct cpu_mm *mm = gmm_find(s, m);
		if (!mm) {
			if (s->nmm == GMM_MAXM) {
				rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: more than %d distinct group sizes", c->op, GMM_MAXM);
				break;
			}
			mm = &s->mm[s->nmm];
			rc = cpu_mm_init(mm, c->backend_ctx, m, p->k, p->n, s->at, p->k, wt, ct, p->n, err);
			if (rc < 0)
				break;
			s->nmm++;
		}
		rc = cpu_mm_weight(mm, wbase + (size_t)g * k * n * wes, wq ? dnnl_s8 : dnnl_dt(w->dtype), 0, &s->w[g], err);
	}
	free(wq);
	return rc;
}

CPU_CLONES static void gmm_dequant(const int32_t *acc, const float *ws, float pt, float *out, size_t n)
{
	for (size_t j = 0; j < n; j++)
		out[j] = (float)acc[j] * ws[j] * pt;
}

/* SwiGlu over a row of 2h values in place: x[j] = silu(x[j]) * x[h + j]. */
CPU_CLONES static void swiglu_row(float *x, size_t h)
{
	for (size_t j = 0; j < h; j++) {
		float a = x[j];
		x[j] = a / (1.0f + cpu_expf(-a)) * x[h + j];
	}
}

static int gmm_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gmm_state *s = c->priv;
	struct gmm_plan *p = &s->p;
	const struct perfdb_tensor *x = &c->in[0];
	struct perfdb_tensor *o = &c->out[0];
	struct perfdb_tensor *qs = p->swq && c->nout > 1 && c->out[1].present ? &c->out[1] : NULL;
	size_t n = (size_t)p->n, k = (size_t)p->k, ocols = (size_t)o->dims[1];
	const char *xa = x->data;
	if (!p->int8 && s->xs) {
		cpu_load_row(x, 0, (size_t)x->numel, s->xs);
		xa = s->xs;
	} else if (p->int8 && s->xs) {
		xa = s->xs;
	}
	size_t xes = s->at == dnnl_s8 ? 1 : s->at == dnnl_bf16 ? 2 : 4;
	int64_t prev = 0;
	for (int64_t g = 0; g < p->e; g++) {
		int64_t end = gmm_end(s, g), m = end - prev;
		if (m < 0 || end > p->t)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: group list is not cumulative within T", c->op);
		if (m == 0)
			continue;
		struct cpu_mm *mm = gmm_find(s, m);
		if (!mm || !s->w[g])
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: group %lld changed size after prepare", c->op,
					      (long long)g);
		const char *a = xa + (size_t)prev * k * xes;
		if (!p->int8) {
			void *dst = s->cs ? (void *)(s->cs + (size_t)prev * n)
					  : (void *)((char *)o->data + perfdb_dtype_bytes(o->dtype, (size_t)prev * n));
			PERFDB_TRY(cpu_mm_run(mm, a, s->w[g], dst, err));
			if (s->cs)
				for (int64_t r = prev; r < end; r++)
					cpu_store_row(o, (size_t)r * n, n, s->cs + (size_t)r * n);
		} else {
			PERFDB_TRY(cpu_mm_run(mm, a, s->w[g], s->acc, err));
			for (int64_t r = 0; r < m; r++) {
				size_t row = (size_t)(prev + r);
				float pt = p->ptok ? cpu_ld(p->ptok, row) : 1.0f;
				gmm_dequant(s->acc + (size_t)r * n, s->wscale + (size_t)g * n, pt, s->row, n);
				if (p->swq) {
					swiglu_row(s->row, n / 2);
					float sc = cpu_quant_row(s->row, n / 2);
					cpu_store_q(o, row * ocols, n / 2, s->row);
					if (qs)
						cpu_store_row(qs, row, 1, &sc);
				} else {
					cpu_store_row(o, row * n, n, s->row);
				}
			}
		}
		prev = end;
	}
	return 0;
}

/* ---- MoeGatingTopK --------------------------------------------------- */
/*
 * npu_moe_gating_top_k as DeepSeek-V3 calls it (norm_type 1 sigmoid,
 * group_select_mode 1, renorm 0, routed_scaling_factor 1, eps 1e-20):
 * in0 x (T,E), in1 bias (E,) optional (added for the selection only);
 * experts in group_count = 8 groups when E % 8 == 0 (else 1), the k_group =
 * 4 groups (1 of 1) with the largest sum of their top-2 scores kept, then
 * the top k experts of those groups.  out0 y (T,k) = sigmoid of the chosen
 * experts / (their sum + eps); out1 expert ids (T,k); out2: (T,E) the
 * sigmoid scores, or (T,) the sum of the chosen scores before the norm.
 */

#define GT_MAXE 1024

struct gt_plan {
	int64_t t, e, k, groups, kgroup;
};

/* After the definition's rules (rules_moe.c: the slots, x a float (T,E)): the CPU's expert bound, then the rest. */
static int gt_plan(const struct perfdb_op_case *c, struct gt_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	const struct perfdb_tensor *x = &c->in[0], *y = &c->out[0], *id = &c->out[1];
	p->t = x->dims[0];
	p->e = x->dims[1];
	if (p->e < 1 || p->e > GT_MAXE)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %lld experts (1..%d supported)", c->op, (long long)p->e,
				      GT_MAXE);
	if (y->ndims != 2 || y->dims[0] != p->t || !perfdb_dtype_is_float(y->dtype) || !perfdb_tensor_same_dims(y, id))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: outputs 0 and 1 must be (T,k), y float", c->op);
	p->k = y->dims[1];
	p->groups = p->e % 8 == 0 && p->e >= 16 ? 8 : 1;
	p->kgroup = p->groups == 8 ? 4 : 1;
	if (p->k < 1 || p->k > p->kgroup * (p->e / p->groups))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: k = %lld exceeds the %lld experts of the %lld kept groups",
				      c->op, (long long)p->k, (long long)(p->kgroup * (p->e / p->groups)),
				      (long long)p->kgroup);
	if (!is_int_dtype(id->dtype) && !perfdb_dtype_is_float(id->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: expert_idx dtype %s not supported", c->op,
				      perfdb_dtype_name(id->dtype));
	if (c->nin > 1 && c->in[1].present && (c->in[1].numel != p->e || !perfdb_dtype_is_float(c->in[1].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: bias must be a float (E,)", c->op);
	if (c->nout > 2 && c->out[2].present &&
	    ((c->out[2].numel != p->t && c->out[2].numel != p->t * p->e) || !perfdb_dtype_is_float(c->out[2].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 2 must be float (T,E) or (T,)", c->op);
	return 0;
}

static int gt_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gt_plan p;
	return gt_plan(c, &p, err);
}

struct gt_state {
	struct gt_plan p;
	float *bias;                          /* E, zeros when absent */
};

static void gt_release(struct perfdb_op_case *c)
{
	struct gt_state *s = c->priv;
	if (s)
		free(s->bias);
	free(s);
	c->priv = NULL;
}

static int gt_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gt_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(gt_plan(c, &s->p, err));
	if (!(s->bias = calloc((size_t)s->p.e, sizeof(float))))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (c->nin > 1 && c->in[1].present)
		cpu_load_row(&c->in[1], 0, (size_t)s->p.e, s->bias);
	return 0;
}

CPU_CLONES static void sigmoid_row(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 1.0f / (1.0f + cpu_expf(-x[i]));
}

static int gt_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct gt_state *s = c->priv;
	const struct gt_plan *p = &s->p;
	size_t e = (size_t)p->e, k = (size_t)p->k, per = e / (size_t)p->groups;
	float sc[GT_MAXE], sel[GT_MAXE], gs[8], y[GT_MAXE];
	int keep[8];
	struct perfdb_tensor *o2 = c->nout > 2 && c->out[2].present ? &c->out[2] : NULL;
	for (size_t t = 0; t < (size_t)p->t; t++) {
		cpu_load_row(&c->in[0], t * e, e, sc);
		sigmoid_row(sc, e);
		for (size_t i = 0; i < e; i++)
			sel[i] = sc[i] + s->bias[i];
		/* group score: the sum of its top-2 biased scores (one expert per group: itself) */
		for (size_t g = 0; g < (size_t)p->groups; g++) {
			float a = -INFINITY, b = -INFINITY;
			for (size_t i = g * per; i < (g + 1) * per; i++) {
				if (sel[i] > a) {
					b = a;
					a = sel[i];
				} else if (sel[i] > b) {
					b = sel[i];
				}
			}
			gs[g] = p->groups == 1 ? a : a + (per > 1 ? b : 0);
			keep[g] = 0;
		}
		for (int64_t j = 0; j < p->kgroup; j++) {
			size_t best = 0;
			float bv = -INFINITY;
			for (size_t g = 0; g < (size_t)p->groups; g++)
				if (!keep[g] && (gs[g] > bv || bv == -INFINITY)) {
					bv = gs[g];
					best = g;
				}
			keep[best] = 1;
		}
		for (size_t g = 0; g < (size_t)p->groups; g++)
			if (!keep[g])
				for (size_t i = g * per; i < (g + 1) * per; i++)
					sel[i] = -INFINITY;
		/* top k of the kept experts, the lower id first on ties */
		float sum = 0;
		for (size_t j = 0; j < k; j++) {
			size_t best = 0;
			float bv = -INFINITY;
			int found = 0;
			for (size_t i = 0; i < e; i++)
				if (sel[i] != -INFINITY && (!found || sel[i] > bv)) {
					bv = sel[i];
					best = i;
					found = 1;
				}
			sel[best] = -INFINITY;
			y[j] = sc[best];
			sum += sc[best];
			st_int(&c->out[1], t * k + j, (int64_t)best);
		}
		float inv = 1.0f / (sum + 1e-20f);
		for (size_t j = 0; j < k; j++)
			y[j] *= inv;
		cpu_store_row(&c->out[0], t * k, k, y);
		if (o2 && o2->numel == p->t)
			cpu_store_row(o2, t, 1, &sum);
		else if (o2)
			cpu_store_row(o2, t * e, e, sc);
	}
	return 0;
}

/* ---- MoeTokenPermute / MoeTokenUnpermute ------------------------------ */
/*
 * npu_moe_token_permute(tokens (T,H), indices (T,k)): the T*k (token,
 * choice) pairs stably sorted by expert id; out0 (R,H) the token row of each
 * sorted pair (R <= T*k: num_out_tokens keeps the first R), out1 (T*k,)
 * sorted_indices (the flat pair index t*k+j of each position).
 * npu_moe_token_unpermute(permuted (T*k,H), sorted_indices (T*k,), probs
 * (T,k) optional): out0 (T,H), out[t] = sum_j probs[t,j] * permuted[pos of
 * pair t*k+j] (probs absent: weight 1).
 * The index inputs are rewritten in prepare: expert ids (t*k + j) % 8, and
 * sorted_indices the stable sort of those ids.
 */

#define PERM_EXPERTS 8

static size_t row_bytes(const struct perfdb_tensor *t)
{
	return t->ndims ? perfdb_dtype_bytes(t->dtype, (size_t)t->dims[t->ndims - 1]) : 0;
}

/* Stable counting sort of the pairs by expert id: order[i] = flat pair index at position i. */
static int sort_pairs(const struct perfdb_tensor *ids, size_t npairs, int64_t nexp, int32_t *order,
		      int64_t *count)
{
	memset(count, 0, (size_t)(nexp + 1) * sizeof(int64_t));
	for (size_t i = 0; i < npairs; i++) {
		int64_t v = cpu_ld_int(ids, i);
		if (v < 0 || v >= nexp)
			return -1;
		count[v + 1]++;
	}
	for (int64_t v = 0; v < nexp; v++)
		count[v + 1] += count[v];
	for (size_t i = 0; i < npairs; i++)
		order[count[cpu_ld_int(ids, i)]++] = (int32_t)i;
	return 0;
}

struct perm_state {
	int32_t *order;
	int64_t *count;
	float *acc, *row;
};

static void perm_release(struct perfdb_op_case *c)
{
	struct perm_state *s = c->priv;
	if (s) {
		free(s->order);
		free(s->count);
		free(s->acc);
		free(s->row);
	}
	free(s);
	c->priv = NULL;
}

static int perm_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	struct perfdb_tensor *id = &c->in[1];
	size_t n = (size_t)id->numel;
	s->order = malloc((n ? n : 1) * sizeof(int32_t));
	s->count = malloc((PERM_EXPERTS + 1) * sizeof(int64_t));
	if (!s->order || !s->count)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		st_int(id, i, (int64_t)(i % PERM_EXPERTS));
	return 0;
}

static int perm_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perm_state *s = c->priv;
	const struct perfdb_tensor *x = &c->in[0], *id = &c->in[1];
	struct perfdb_tensor *o = &c->out[0];
	size_t npairs = (size_t)id->numel, k = npairs / (size_t)(x->dims[0] ? x->dims[0] : 1), rb = row_bytes(x);
	if (sort_pairs(id, npairs, PERM_EXPERTS, s->order, s->count) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: an expert id is outside 0..%d", c->op, PERM_EXPERTS - 1);
	for (size_t i = 0; i < (size_t)o->dims[0]; i++)
		memcpy((char *)o->data + i * rb, (const char *)x->data + (size_t)s->order[i] / k * rb, rb);
	if (c->nout > 1 && c->out[1].present)
		for (size_t i = 0; i < npairs; i++)
			st_int(&c->out[1], i, s->order[i]);
	return 0;
}

static int unperm_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	size_t npairs = (size_t)c->in[1].numel, h = (size_t)c->out[0].dims[1];
	s->order = malloc((npairs ? npairs : 1) * sizeof(int32_t));
	s->count = malloc((PERM_EXPERTS + 1) * sizeof(int64_t));
	s->acc = malloc((h ? h : 1) * sizeof(float));
	s->row = malloc((h ? h : 1) * sizeof(float));
	if (!s->order || !s->count || !s->acc || !s->row)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	/* sorted_indices as permute would give for expert ids (t*k + j) % 8 */
	int32_t *id = malloc((npairs ? npairs : 1) * sizeof(int32_t));
	if (!id)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct perfdb_tensor ids = { .present = true, .dtype = PERFDB_DTYPE_INT32, .ndims = 1,
				     .dims = { (int64_t)npairs }, .numel = (int64_t)npairs, .data = id };
	for (size_t i = 0; i < npairs; i++)
		id[i] = (int32_t)(i % PERM_EXPERTS);
	sort_pairs(&ids, npairs, PERM_EXPERTS, s->order, s->count);
	free(id);
	for (size_t i = 0; i < npairs; i++)
		st_int(&c->in[1], i, s->order[i]);
	return 0;
}

CPU_CLONES static void axpy(float *acc, float a, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acc[i] += a * x[i];
}

static int unperm_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perm_state *s = c->priv;
	const struct perfdb_tensor *x = &c->in[0], *si = &c->in[1];
	const struct perfdb_tensor *pr = c->nin > 2 && c->in[2].present ? &c->in[2] : NULL;
	struct perfdb_tensor *o = &c->out[0];
	size_t npairs = (size_t)si->numel, t = (size_t)o->dims[0], k = npairs / t, h = (size_t)o->dims[1];
	/* position of each pair: the inverse of sorted_indices */
	for (size_t i = 0; i < npairs; i++)
		s->order[i] = -1;
	for (size_t i = 0; i < npairs; i++) {
		int64_t f = cpu_ld_int(si, i);
		if (f < 0 || (size_t)f >= npairs || s->order[f] >= 0)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: sorted_indices is not a permutation of 0..%zu",
					      c->op, npairs - 1);
		s->order[f] = (int32_t)i;
	}
	for (size_t r = 0; r < t; r++) {
		memset(s->acc, 0, h * sizeof(float));
		for (size_t j = 0; j < k; j++) {
			cpu_load_row(x, (size_t)s->order[r * k + j] * h, h, s->row);
			axpy(s->acc, pr ? cpu_ld(pr, r * k + j) : 1.0f, s->row, h);
		}
		cpu_store_row(o, r * h, h, s->acc);
	}
	return 0;
}

const struct perfdb_op_impl cpu_ops_moe[] = {
	{ .name = "GroupedMatmul", .check = gmm_check, .prepare = gmm_prepare, .run = gmm_run,
	  .release = gmm_release },
	{ .name = "GroupedMatmulSwigluQuant", .check = gmm_check, .prepare = gmm_prepare, .run = gmm_run,
	  .release = gmm_release },
	{ .name = "MoeGatingTopK", .check = gt_check, .prepare = gt_prepare, .run = gt_run,
	  .release = gt_release },
	{ .name = "MoeTokenPermute", .check = cpu_no_limits, .prepare = perm_prepare, .run = perm_run,
	  .release = perm_release },
	{ .name = "MoeTokenUnpermute", .check = cpu_no_limits, .prepare = unperm_prepare, .run = unperm_run,
	  .release = perm_release },
	{ .name = NULL },
};
