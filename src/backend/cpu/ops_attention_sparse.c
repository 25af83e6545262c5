/*
 * CPU backend, the DeepSeek-V3.2 / MLA attention kernels of vllm-ascend
 * (docs/ops.md "Attention"): SparseFlashAttention, LightningIndexer,
 * RINGMLAPrefillBF16Kernel.  The grid generates no rows for them, so their
 * slot layouts follow the operators' published definitions: the Ascend IR
 * input order of SparseFlashAttention and LightningIndexer (ops-transformer
 * REG_OP), and the argument order of torch_npu.atb.npu_ring_mla for the
 * ATB ring-MLA prefill kernel.  Attributes that a row does not record
 * (sparse_block_size, scale_value, the lengths) come from `Runtime …`
 * cells when present, else the documented defaults.  Their row rules and
 * shape-level plans are the operator layer's (ops/attention.h,
 * rules_attention_sparse.c); this file adds the float dtypes its kernels
 * take and their scratch.
 */
#include <math.h>
#include <stdio.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "ops_attention_kernel.h"
#include "ops/attention.h"

static const struct perfdb_tensor *slot(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present ? &c->in[i] : NULL;
}

/* The kernels' limit: a present slot is fp32, bf16 or fp16 (its presence is the definition's rule). */
static int need_float(const struct perfdb_op_case *c, const struct perfdb_tensor *t, const char *what,
		      struct perfdb_err *err)
{
	if (t && !perfdb_dtype_is_float(t->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %s dtype %s not supported (fp32, bf16, fp16)", c->op,
				      what, perfdb_dtype_name(t->dtype));
	return 0;
}

/* Token index of query (b, s): its row over the N1 heads starts at token * N1. */
static int64_t qk_token(const struct perfdb_attn_qk *x, int64_t b, int64_t s)
{
	return x->tnd ? x->qst[b] + s : b * x->s1 + s;
}

/* Row (x D) of key position pos of batch b, kv head g. */
static int64_t qk_kv_row(const struct perfdb_attn_qk *x, int64_t b, int64_t g, int64_t pos)
{
	if (x->paged) {
		int64_t blk = cpu_ld_int(x->bt, (size_t)(b * x->btc + pos / x->bs));
		return (blk * x->bs + pos % x->bs) * x->n2 + g;
	}
	return (x->kv_tnd ? x->kvst[b] + pos : b * x->s2 + pos) * x->n2 + g;
}

/* Keys visible to query s of batch b: all of the sequence, or causal from the bottom right (mode 3). */
static int64_t qk_visible(const struct perfdb_attn_qk *x, int mode, int64_t b, int64_t s)
{
	int64_t L = x->kvlen[b];
	if (mode != 3)
		return L;
	int64_t e = s + 1 + L - x->qlen[b];
	return e < 0 ? 0 : e > L ? L : e;
}

/* Fill the length inputs with the lengths used (cumulative in TND, per batch for a paged key). */
static void qk_write_lengths(const struct perfdb_attn_qk *x, struct perfdb_tensor *ql, struct perfdb_tensor *kl)
{
	int64_t acc = 0;
	for (int64_t b = 0; ql && b < x->nb && b < ql->numel; b++) {
		acc = x->tnd ? acc + x->qlen[b] : x->qlen[b];
		attn_st_int(ql, (size_t)b, acc);
	}
	acc = 0;
	for (int64_t b = 0; kl && b < x->nb && b < kl->numel; b++) {
		acc = !x->paged && x->kv_tnd ? acc + x->kvlen[b] : x->kvlen[b];
		attn_st_int(kl, (size_t)b, acc);
	}
}

/* ==== SparseFlashAttention ============================================ */
/*
 * in: 0 query, 1 key, 2 value, 3 sparse_indices (B,S1,N2,K) or (T,N2,K)
 * int32, 4 block_table, 5 actual_seq_lengths_query, 6 actual_seq_lengths_kv,
 * 7 query_rope, 8 key_rope (9 sinks: not read); out 0 attention_out.
 * Query token (b, s), kv head g attends to the positions of the selected
 * blocks idx*sbs .. idx*sbs+sbs-1 (idx != -1; sbs = sparse_block_size),
 * those past the sequence or (mode 3) past s + kv_len - q_len dropped.
 */
struct sfa {
	struct perfdb_sfa_plan s;   /* the operator layer's plan */
	int32_t *pos;          /* per (token, g): up to kk*sbs positions */
	int32_t *cnt;          /* per (token, g) */
	int64_t *maxlen;       /* per batch: kk*sbs, the kernel's key bound */
	struct attn_problem p;
	struct attn_plan *plan;
};

static void sfa_free(struct sfa *f)
{
	if (!f)
		return;
	attn_plan_free(f->plan);
	perfdb_attn_qk_release(&f->s.x);
	free(f->pos);
	free(f->cnt);
	free(f->maxlen);
	free(f);
}

static int64_t sfa_q_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct sfa *f = ctx;
	return qk_token(&f->s.x, b, s) * f->s.x.n1 + h;
}

static int64_t sfa_kv_row(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j)
{
	const struct sfa *f = ctx;
	size_t li = (size_t)(qk_token(&f->s.x, b, s) * f->s.x.n2 + g);
	return qk_kv_row(&f->s.x, b, g, f->pos[li * (size_t)(f->s.kk * f->s.sbs) + (size_t)j]);
}

static int64_t sfa_kv_end(const void *ctx, int64_t b, int64_t g, int64_t s)
{
	const struct sfa *f = ctx;
	return f->cnt[qk_token(&f->s.x, b, s) * f->s.x.n2 + g];
}

/* The kernel's float dtypes, then the definition's plan. */
static int sfa_plan(const struct perfdb_op_case *c, struct sfa *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *o = c->nout && c->out[0].present ? &c->out[0] : NULL;
	PERFDB_TRY(need_float(c, slot(c, 0), "0 (query)", err));
	PERFDB_TRY(need_float(c, slot(c, 1), "1 (key)", err));
	PERFDB_TRY(need_float(c, slot(c, 2), "2 (value)", err));
	if (o && !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be a float tensor", c->op);
	if (slot(c, 7) && slot(c, 8)) {
		PERFDB_TRY(need_float(c, slot(c, 7), "7 (query_rope)", err));
		PERFDB_TRY(need_float(c, slot(c, 8), "8 (key_rope)", err));
	}
	return perfdb_sfa_plan(c, &f->s, err);
}

static int sfa_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct sfa *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = sfa_plan(c, f, err);
	sfa_free(f);
	return rc;
}

/*
 * The indices a lightning indexer would give: for each query, min(K, visible
 * blocks) distinct blocks of the visible range in a deterministic shuffled
 * order, then -1; and the positions they select.
 */
static int sfa_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct sfa *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = f;
	PERFDB_TRY(sfa_plan(c, f, err));
	struct perfdb_attn_qk *x = &f->s.x;
	qk_write_lengths(x, &c->in[5], &c->in[6]);
	if (x->paged)
		PERFDB_TRY(attn_fill_table(&c->in[4], x->nblk, err));
	int64_t ntok = x->tnd ? x->t : x->nb * x->s1, per = f->s.kk * f->s.sbs;
	size_t nl = (size_t)(ntok * x->n2);
	int64_t maxvis = 0;
	for (int64_t b = 0; b < x->nb; b++)
		maxvis = x->kvlen[b] > maxvis ? x->kvlen[b] : maxvis;
	int64_t nbmax = (maxvis + f->s.sbs - 1) / f->s.sbs;
	f->pos = malloc(nl * (size_t)per * sizeof(int32_t));
	f->cnt = calloc(nl, sizeof(int32_t));
	f->maxlen = malloc((size_t)x->nb * sizeof(int64_t));
	int32_t *pool = malloc((size_t)(nbmax > 0 ? nbmax : 1) * sizeof(int32_t));
	if (!f->pos || !f->cnt || !f->maxlen || !pool) {
		free(pool);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory (sparse positions)");
	}
	struct perfdb_tensor *idx = &c->in[3];
	uint64_t st = 0x2545f4914f6cdd1du;
	for (int64_t b = 0; b < x->nb; b++) {
		f->maxlen[b] = per;
		for (int64_t s = 0; s < x->qlen[b]; s++) {
			int64_t vis = qk_visible(x, f->s.mode, b, s), nbv = (vis + f->s.sbs - 1) / f->s.sbs;
			for (int64_t g = 0; g < x->n2; g++) {
				size_t li = (size_t)(qk_token(x, b, s) * x->n2 + g);
				int64_t take = nbv < f->s.kk ? nbv : f->s.kk, n = 0;
				for (int64_t i = 0; i < nbv; i++)
					pool[i] = (int32_t)i;
				for (int64_t i = 0; i < f->s.kk; i++) {
					int64_t blk = -1;
					if (i < take) {   /* partial Fisher-Yates: pool[i] becomes a fresh random block */
						st = st * 6364136223846793005u + 1442695040888963407u;
						int64_t j = i + (int64_t)((st >> 33) % (uint64_t)(nbv - i));
						int32_t t = pool[i];
						pool[i] = pool[j];
						pool[j] = t;
						blk = pool[i];
						for (int64_t e = 0; e < f->s.sbs; e++) {
							int64_t p = blk * f->s.sbs + e;
							if (p < vis)
								f->pos[li * (size_t)per + (size_t)n++] = (int32_t)p;
						}
					}
					attn_st_int(idx, li * (size_t)f->s.kk + (size_t)i, blk);
				}
				f->cnt[li] = (int32_t)n;
			}
		}
	}
	free(pool);
	const struct perfdb_tensor *qr = slot(c, 7);
	f->p = (struct attn_problem){
		.q = &c->in[0], .qr = qr, .k = &c->in[1], .kr = qr ? &c->in[8] : NULL, .v = &c->in[2],
		.out = &c->out[0], .nb = x->nb, .hq = x->n1, .hkv = x->n2, .dq = x->d, .dr = f->s.dr, .dv = f->s.dv,
		.qlen = x->qlen, .kvlen = f->maxlen, .q_row = sfa_q_row, .o_row = sfa_q_row, .kv_row = sfa_kv_row,
		.kv_end = sfa_kv_end, .ctx = f, .per_query = true,
	};
	double sc;
	const char *cell = perfdb_case_cell(c, "Runtime scale_value");
	f->p.scale = cell && sscanf(cell, "%lf", &sc) == 1 ? (float)sc : 1.0f / sqrtf((float)(x->d + f->s.dr));
	return attn_plan_new(&f->plan, &f->p, c, err);
}

static int sfa_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct sfa *f = c->priv;
	return attn_plan_run(f->plan, err);
}

static void sfa_release(struct perfdb_op_case *c)
{
	sfa_free(c->priv);
	c->priv = NULL;
}

/* ==== LightningIndexer ================================================= */
/*
 * in: 0 query (B,S1,N1,D)/(T,N1,D), 1 key (B,S2,N2,D)/(T2,N2,D)/(blocks,
 * block,N2,D), 2 weights (B,S1,N1)/(T,N1), 3 actual_seq_lengths_query,
 * 4 actual_seq_lengths_key, 5 block_table; out 0 sparse_indices
 * (B,S1,N2,K)/(T,N2,K) int32.  For query (b, s) and kv head g:
 * score[j] = Σ_h∈g w[h]·relu(q_h·k_j) over the visible keys j, and the
 * output lists the K best j (highest score first, ties by position), -1
 * past the visible keys.
 */
struct ranked {
	float s;
	int32_t i;
};

/* One thread's scratch. */
struct li_scr {
	float *qt, *kt, *st, *w, *score;
	int32_t *order;
	struct ranked *rk;
};

struct li {
	struct perfdb_li_plan s;   /* the operator layer's plan */
	int64_t gp;            /* heads per kv head, padded to 16 (the scratch's lanes) */
	int threads;
	struct li_scr *scr;    /* threads of them */
	int64_t *tok0;         /* first linear query index of each batch (nb + 1) */
};

static void li_free(struct li *f)
{
	if (!f)
		return;
	perfdb_attn_qk_release(&f->s.x);
	for (int t = 0; f->scr && t < f->threads; t++) {
		struct li_scr *z = &f->scr[t];
		free(z->qt);
		free(z->kt);
		free(z->st);
		free(z->w);
		free(z->score);
		free(z->order);
		free(z->rk);
	}
	free(f->scr);
	free(f->tok0);
	free(f);
}

/* The kernel's float dtypes, then the definition's plan. */
static int li_plan(const struct perfdb_op_case *c, struct li *f, struct perfdb_err *err)
{
	PERFDB_TRY(need_float(c, slot(c, 0), "0 (query)", err));
	PERFDB_TRY(need_float(c, slot(c, 1), "1 (key)", err));
	PERFDB_TRY(need_float(c, slot(c, 2), "2 (weights)", err));
	PERFDB_TRY(perfdb_li_plan(c, &f->s, err));
	f->gp = (f->s.g + 15) & ~(int64_t)15;
	return 0;
}

static int li_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct li *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = li_plan(c, f, err);
	li_free(f);
	return rc;
}

static int li_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct li *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = f;
	PERFDB_TRY(li_plan(c, f, err));
	qk_write_lengths(&f->s.x, &c->in[3], &c->in[4]);
	if (f->s.x.paged)
		PERFDB_TRY(attn_fill_table(&c->in[5], f->s.x.nblk, err));
	int64_t maxl = 1;
	for (int64_t b = 0; b < f->s.x.nb; b++)
		maxl = f->s.x.kvlen[b] > maxl ? f->s.x.kvlen[b] : maxl;
	size_t d = (size_t)f->s.x.d, gp = (size_t)f->gp;
	if (d > 1024)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: head dim %zu over 1024", c->op, d);
	f->threads = c->threads > 1 ? c->threads : 1;
	f->scr = calloc((size_t)f->threads, sizeof(*f->scr));
	f->tok0 = malloc((size_t)(f->s.x.nb + 1) * sizeof(int64_t));
	if (!f->scr || !f->tok0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	f->tok0[0] = 0;
	for (int64_t b = 0; b < f->s.x.nb; b++)
		f->tok0[b + 1] = f->tok0[b] + f->s.x.qlen[b];
	for (int t = 0; t < f->threads; t++) {
		struct li_scr *z = &f->scr[t];
		z->qt = aligned_alloc(64, d * gp * sizeof(float));
		z->kt = aligned_alloc(64, ATTN_BK * d * sizeof(float));
		z->st = aligned_alloc(64, ATTN_BK * gp * sizeof(float));
		z->w = aligned_alloc(64, gp * sizeof(float));
		z->score = malloc((size_t)maxl * sizeof(float));
		z->order = malloc((size_t)maxl * sizeof(int32_t));
		z->rk = malloc((size_t)(f->s.kk > 0 ? f->s.kk : 1) * sizeof(struct ranked));
		if (!z->qt || !z->kt || !z->st || !z->w || !z->score || !z->order || !z->rk)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		memset(z->qt, 0, d * gp * sizeof(float));
		memset(z->w, 0, gp * sizeof(float));
	}
	return 0;
}

/* Higher score first, then lower position. */
static int better(const float *sc, int32_t a, int32_t b)
{
	return sc[a] > sc[b] || (sc[a] == sc[b] && a < b);
}

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;
	if (a->s != b->s)
		return a->s > b->s ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* Move the k best of idx[0..n) to the front (quickselect), then order those k (r: k entries of scratch). */
static void top_k(const float *sc, int32_t *idx, int64_t n, int64_t k, struct ranked *r)
{
	int64_t lo = 0, hi = n - 1;
	while (lo < hi && k < n) {
		int32_t piv = idx[lo + (hi - lo) / 2];
		int64_t i = lo, j = hi;
		while (i <= j) {
			while (better(sc, idx[i], piv))
				i++;
			while (better(sc, piv, idx[j]))
				j--;
			if (i <= j) {
				int32_t t = idx[i];
				idx[i++] = idx[j];
				idx[j--] = t;
			}
		}
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
	int64_t m = k < n ? k : n;
	for (int64_t a = 0; a < m; a++)
		r[a] = (struct ranked){ sc[idx[a]], idx[a] };
	qsort(r, (size_t)m, sizeof(*r), cmp_ranked);
	for (int64_t a = 0; a < m; a++)
		idx[a] = r[a].i;
}

CPU_CLONES static void li_scores(struct li *f, struct li_scr *z, struct perfdb_op_case *c, int64_t b, int64_t g,
				      int64_t vis)
{
	struct perfdb_attn_qk *x = &f->s.x;
	size_t d = (size_t)x->d, gp = (size_t)f->gp;
	for (int64_t j0 = 0; j0 < vis; j0 += ATTN_BK) {
		size_t nk = (size_t)(vis - j0 < ATTN_BK ? vis - j0 : ATTN_BK), nk8 = (nk + 7) & ~(size_t)7;
		for (size_t j = 0; j < nk; j++)
			cpu_load_row(&c->in[1], (size_t)qk_kv_row(x, b, g, j0 + (int64_t)j) * d, d, z->kt + j * d);
		memset(z->kt + nk * d, 0, (nk8 - nk) * d * sizeof(float));
		attn_qk_tile(z->kt, d, z->qt, gp, z->st, nk8);
		for (size_t j = 0; j < nk; j++) {
			const float *r = z->st + j * gp;
			float acc = 0.0f;
			for (size_t h = 0; h < gp; h++)
				acc += (r[h] > 0.0f ? r[h] : 0.0f) * z->w[h];
			z->score[j0 + (int64_t)j] = acc;
		}
	}
}

/* Query q (linear over the batches) for every kv head, with thread t's scratch. */
static void li_query(struct li *f, struct perfdb_op_case *c, int64_t q, int t)
{
	struct perfdb_attn_qk *x = &f->s.x;
	struct li_scr *z = &f->scr[t];
	size_t d = (size_t)x->d, gp = (size_t)f->gp;
	float tmp[1024];   /* d <= 1024: li_prepare */
	int64_t b = 0;
	while (f->tok0[b + 1] <= q)
		b++;
	int64_t s = q - f->tok0[b], tok = qk_token(x, b, s), vis = qk_visible(x, f->s.mode, b, s);
	for (int64_t g = 0; g < x->n2; g++) {
		for (int64_t h = 0; h < f->s.g; h++) {
			int64_t qh = g * f->s.g + h;
			cpu_load_row(&c->in[0], (size_t)(tok * x->n1 + qh) * d, d, tmp);
			for (size_t i = 0; i < d; i++)
				z->qt[i * gp + (size_t)h] = tmp[i];
			cpu_load_row(&c->in[2], (size_t)(tok * x->n1 + qh), 1, &z->w[h]);
		}
		li_scores(f, z, c, b, g, vis);
		for (int64_t j = 0; j < vis; j++)
			z->order[j] = (int32_t)j;
		top_k(z->score, z->order, vis, f->s.kk, z->rk);
		size_t base = (size_t)((tok * x->n2 + g) * f->s.kk);
		for (int64_t i = 0; i < f->s.kk; i++)
			attn_st_int(&c->out[0], base + (size_t)i, i < vis ? z->order[i] : -1);
	}
}

/*
 * Queries are independent (each writes its own K slots per kv head), so
 * they are dealt to the threads one at a time: under a causal mask a later
 * query sees more keys, and equal ranges of queries would not be equal work.
 */
static int li_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct li *f = c->priv;
	int64_t nq = f->tok0[f->s.x.nb];
	if (f->threads <= 1) {
		for (int64_t q = 0; q < nq; q++)
			li_query(f, c, q, 0);
		return 0;
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(f->threads)
	for (int64_t q = 0; q < nq; q++)
		li_query(f, c, q, omp_get_thread_num());
	return 0;
}

static void li_release(struct perfdb_op_case *c)
{
	li_free(c->priv);
	c->priv = NULL;
}

/* ==== RINGMLAPrefillBF16Kernel ========================================= */
/*
 * torch_npu.atb.npu_ring_mla's arguments: in 0 q_nope (T,N,Dn), 1 q_rope
 * (T,N,Dr), 2 k_nope (T2,Nkv,Dn), 3 k_rope (T2,Nkv,Dr), 4 value
 * (T2,Nkv,Dv), 5 mask (present: mask_type_triu, causal; empty: no_mask),
 * 6 seqlen (B,) or (2,B) int32 (q lengths, kv lengths), 7 prev_out
 * (T,N,Dv) and 8 prev_lse (N,T) fp32 (both present: calc_type_default, the
 * result merged with the previous ring step's by log-sum-exp); out 0
 * output (T,N,Dv), out 1 softmax_lse (N,T) fp32.
 */
struct ring {
	struct perfdb_ring_plan s;      /* the operator layer's plan */
	struct perfdb_tensor lse;       /* the kernel's log-sum-exp (out 1, or scratch) */
	void *lse_mem;
	float *row, *row2;
	struct attn_problem p;
	struct attn_plan *plan;
};

static void ring_free(struct ring *f)
{
	if (!f)
		return;
	attn_plan_free(f->plan);
	perfdb_ring_plan_release(&f->s);
	free(f->lse_mem);
	free(f->row);
	free(f);
}

static int64_t ring_q_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct ring *f = ctx;
	return (f->s.qst[b] + s) * f->s.n + h;
}

static int64_t ring_kv_row(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j)
{
	const struct ring *f = ctx;
	(void)s;
	return (f->s.kvst[b] + j) * f->s.nkv + g;
}

static int64_t ring_kv_end(const void *ctx, int64_t b, int64_t g, int64_t s)
{
	const struct ring *f = ctx;
	(void)g;
	return f->s.causal ? s + 1 + f->s.kvlen[b] - f->s.qlen[b] : f->s.kvlen[b];
}

static int64_t ring_lse_at(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct ring *f = ctx;
	return h * f->s.t + f->s.qst[b] + s;
}

/* The kernel's float dtypes around the definition's plan (the output's message needs its sizes). */
static int ring_plan(const struct perfdb_op_case *c, struct ring *f, struct perfdb_err *err)
{
	static const char *const name[] = { "0 (q_nope)", "1 (q_rope)", "2 (k_nope)", "3 (k_rope)", "4 (value)" };
	for (size_t i = 0; i < 5; i++)
		PERFDB_TRY(need_float(c, slot(c, i), name[i], err));
	PERFDB_TRY(perfdb_ring_plan(c, &f->s, err));
	const struct perfdb_ring_plan *s = &f->s;
	if (!perfdb_dtype_is_float(c->out[0].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be (%lld,%lld,%lld)", c->op,
				      (long long)s->t, (long long)s->n, (long long)s->dv);
	if (s->merge && !perfdb_dtype_is_float(c->in[7].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: prev_out must match the output, prev_lse be fp32 (N,T)",
				      c->op);
	return 0;
}

static int ring_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct ring *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = ring_plan(c, f, err);
	ring_free(f);
	return rc;
}

static int ring_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct ring *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = f;
	PERFDB_TRY(ring_plan(c, f, err));
	struct perfdb_tensor *sl = &c->in[6];
	if (slot(c, 6)) {
		int two = f->s.two;
		for (int64_t b = 0; b < f->s.nb; b++) {
			attn_st_int(sl, (size_t)b, f->s.qlen[b]);
			if (two)
				attn_st_int(sl, (size_t)(f->s.nb + b), f->s.kvlen[b]);
		}
	}
	if (c->nout > 1 && c->out[1].present) {
		f->p.lse = &c->out[1];
	} else if (f->s.merge) {
		f->lse_mem = malloc((size_t)(f->s.n * f->s.t) * sizeof(float));
		if (!f->lse_mem)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		f->lse = (struct perfdb_tensor){ .present = true, .dtype = PERFDB_DTYPE_FLOAT, .ndims = 2,
						 .dims = { f->s.n, f->s.t }, .numel = f->s.n * f->s.t, .data = f->lse_mem,
						 .bytes = (size_t)(f->s.n * f->s.t) * sizeof(float) };
		f->p.lse = &f->lse;
	}
	if (f->s.merge) {
		/* a previous step's lse: finite, as the first ring step leaves it */
		float *pl = c->in[8].data;
		for (int64_t i = 0; i < c->in[8].numel; i++)
			pl[i] = (float)(i % 7) * 0.25f;
		f->row = malloc((size_t)f->s.dv * 2 * sizeof(float));
		if (!f->row)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		f->row2 = f->row + f->s.dv;
	}
	f->p.q = &c->in[0];
	f->p.qr = &c->in[1];
	f->p.k = &c->in[2];
	f->p.kr = &c->in[3];
	f->p.v = &c->in[4];
	f->p.out = &c->out[0];
	f->p.nb = f->s.nb;
	f->p.hq = f->s.n;
	f->p.hkv = f->s.nkv;
	f->p.dq = f->s.dn;
	f->p.dr = f->s.dr;
	f->p.dv = f->s.dv;
	double sc;
	const char *cell = perfdb_case_cell(c, "Runtime qk_scale");
	f->p.scale = cell && sscanf(cell, "%lf", &sc) == 1 ? (float)sc : 1.0f / sqrtf((float)(f->s.dn + f->s.dr));
	f->p.qlen = f->s.qlen;
	f->p.kvlen = f->s.kvlen;
	f->p.q_row = ring_q_row;
	f->p.o_row = ring_q_row;
	f->p.kv_row = ring_kv_row;
	f->p.kv_end = ring_kv_end;
	f->p.lse_at = ring_lse_at;
	f->p.ctx = f;
	return attn_plan_new(&f->plan, &f->p, c, err);
}

/* out = (e^(l1-m)·prev + e^(l2-m)·new) / (e^(l1-m) + e^(l2-m)), lse = m + log(...), m = max(l1, l2). */
static void ring_merge(struct ring *f, struct perfdb_op_case *c)
{
	const float *pl = c->in[8].data;
	float *lse = f->p.lse->data;
	size_t dv = (size_t)f->s.dv;
	for (int64_t b = 0; b < f->s.nb; b++)
		for (int64_t s = 0; s < f->s.qlen[b]; s++)
			for (int64_t h = 0; h < f->s.n; h++) {
				size_t li = (size_t)ring_lse_at(f, b, h, s), ro = (size_t)ring_q_row(f, b, h, s) * dv;
				float l1 = pl[li], l2 = lse[li], m = l1 > l2 ? l1 : l2;
				if (m == -INFINITY)
					continue;
				float w1 = expf(l1 - m), w2 = expf(l2 - m), inv = 1.0f / (w1 + w2);
				cpu_load_row(&c->in[7], ro, dv, f->row);
				cpu_load_row(&c->out[0], ro, dv, f->row2);
				for (size_t i = 0; i < dv; i++)
					f->row2[i] = (w1 * f->row[i] + w2 * f->row2[i]) * inv;
				cpu_store_row(&c->out[0], ro, dv, f->row2);
				lse[li] = m + logf(w1 + w2);
			}
}

static int ring_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct ring *f = c->priv;
	PERFDB_TRY(attn_plan_run(f->plan, err));
	if (f->s.merge)
		ring_merge(f, c);
	return 0;
}

static void ring_release(struct perfdb_op_case *c)
{
	ring_free(c->priv);
	c->priv = NULL;
}

const struct perfdb_op_impl cpu_ops_attention_sparse[] = {
	{ .name = "LightningIndexer", .check = li_check, .prepare = li_prepare, .run = li_run,
	  .release = li_release },
	{ .name = "RINGMLAPrefillBF16Kernel", .check = ring_check, .prepare = ring_prepare, .run = ring_run,
	  .release = ring_release },
	{ .name = "SparseFlashAttention", .check = sfa_check, .prepare = sfa_prepare, .run = sfa_run,
	  .release = sfa_release },
	{ .name = NULL },
};
