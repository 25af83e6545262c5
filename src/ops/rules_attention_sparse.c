/*
 * The row rules and shape-level plans of the DeepSeek-V3.2 / MLA kernels
 * (docs/ops.md "DeepSeek-V3.2 / MLA kernels"): SparseFlashAttention and
 * LightningIndexer (the Ascend IR input order) and RINGMLAPrefillBF16Kernel
 * (torch_npu.atb.npu_ring_mla's).  Only the CPU backend runs them; the
 * float dtypes its kernels take stay its check, the rest is the op's.
 */
#include <stdlib.h>

#include "perfdb/schema.h"
#include "ops/attention.h"
#include "ops/rules.h"

#define MAX_LIST ((int64_t)1 << 28)    /* selected positions kept by SparseFlashAttention */

static const struct perfdb_tensor *slot(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present ? &c->in[i] : NULL;
}

static int need(const struct perfdb_op_case *c, size_t i, const char *what, struct perfdb_err *err)
{
	if (!slot(c, i))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: slot %s is empty", c->op, what);
	return 0;
}

void perfdb_attn_qk_release(struct perfdb_attn_qk *x)
{
	free(x->qlen);
	x->qlen = x->kvlen = x->qst = x->kvst = NULL;
}

static int qk_plan(const struct perfdb_op_case *c, struct perfdb_attn_qk *x, const struct perfdb_tensor *q,
		   const struct perfdb_tensor *k, const struct perfdb_tensor *bt, const struct perfdb_tensor *qlens,
		   struct perfdb_err *err)
{
	if (q->ndims != 3 && q->ndims != 4)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: query must be (B,S,N,D) or (T,N,D)", c->op);
	x->tnd = q->ndims == 3;
	x->n1 = q->dims[q->ndims - 2];
	x->d = q->dims[q->ndims - 1];
	x->bt = bt;
	x->paged = bt != NULL;
	if (k->ndims != 3 && k->ndims != 4)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: key must be (B,S,N,D), (T,N,D) or (blocks,block,N,D)",
				      c->op);
	x->n2 = k->dims[k->ndims - 2];
	if (k->dims[k->ndims - 1] != x->d)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: key head dim %lld differs from the query's %lld", c->op,
				      (long long)k->dims[k->ndims - 1], (long long)x->d);
	if (x->n2 < 1 || x->n1 % x->n2 != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %lld query heads are not a multiple of %lld kv heads",
				      c->op, (long long)x->n1, (long long)x->n2);
	if (x->paged) {
		if (bt->ndims != 2 || perfdb_dtype_is_float(bt->dtype) || k->ndims != 4)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "%s: a block table needs a 2-D integer table and a (blocks,block,N,D) key",
					      c->op);
		x->nblk = k->dims[0];
		x->bs = k->dims[1];
		x->btc = bt->dims[1];
	} else {
		x->kv_tnd = k->ndims == 3;
	}
	if (x->tnd) {
		x->t = q->dims[0];
		x->nb = perfdb_attn_count(c, PERFDB_COL_RT_SEQ_VALUES, qlens ? qlens->numel : x->paged ? bt->dims[0] : 1);
	} else {
		x->nb = q->dims[0];
		x->s1 = q->dims[1];
	}
	if (x->nb < 1 || x->nb > PERFDB_ATTN_MAX_BATCH)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: batch %lld outside 1..%d", c->op, (long long)x->nb,
				      PERFDB_ATTN_MAX_BATCH);
	if (x->paged && bt->dims[0] != x->nb)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: block_table has %lld rows for %lld batches", c->op,
				      (long long)bt->dims[0], (long long)x->nb);
	if (!x->paged && !x->kv_tnd) {
		if (k->dims[0] != x->nb)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: key batch differs from the query's", c->op);
		x->s2 = k->dims[1];
	} else if (!x->paged) {
		x->t2 = k->dims[0];
	}
	PERFDB_TRY(perfdb_attn_batches_alloc(x->nb, &x->qlen, &x->kvlen, &x->qst, &x->kvst, err));
	PERFDB_TRY(perfdb_attn_lengths(c, PERFDB_COL_RT_SEQ_VALUES, x->tnd, x->nb, x->t, x->s1, x->qlen, err));
	PERFDB_TRY(perfdb_attn_lengths(c, PERFDB_COL_RT_SEQ_KV_VALUES, !x->paged && x->kv_tnd, x->nb, x->t2,
				 x->paged ? x->btc * x->bs : x->s2, x->kvlen, err));
	for (int64_t b = 1; b < x->nb; b++) {
		x->qst[b] = x->qst[b - 1] + x->qlen[b - 1];
		x->kvst[b] = x->kvst[b - 1] + x->kvlen[b - 1];
	}
	return 0;
}

static int sparse_mode_of(const struct perfdb_op_case *c, int *mode, struct perfdb_err *err)
{
	int64_t v;
	int r = perfdb_attn_cell_int(c, PERFDB_COL_RT_SPARSE_MODE, &v);
	if (r < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: bad Runtime sparse_mode", c->op);
	*mode = r ? (int)v : 3;
	if (*mode != 0 && *mode != 3)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: sparse_mode %d not supported (0, 3)", c->op, *mode);
	return 0;
}

int perfdb_sfa_plan(const struct perfdb_op_case *c, struct perfdb_sfa_plan *f, struct perfdb_err *err)
{
	*f = (struct perfdb_sfa_plan){ 0 };
	PERFDB_TRY(need(c, 0, "0 (query)", err));
	PERFDB_TRY(need(c, 1, "1 (key)", err));
	PERFDB_TRY(need(c, 2, "2 (value)", err));
	const struct perfdb_tensor *q = slot(c, 0), *k = slot(c, 1), *v = slot(c, 2), *idx = slot(c, 3),
				   *qr = slot(c, 7), *kr = slot(c, 8), *o = c->nout ? &c->out[0] : NULL;
	if (!idx || perfdb_dtype_is_float(idx->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: slot 3 (sparse_indices) must be an integer tensor", c->op);
	if (!o || !o->present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be a float tensor", c->op);
	PERFDB_TRY(qk_plan(c, &f->x, q, k, slot(c, 4), slot(c, 5), err));
	if (!!qr != !!kr)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: query_rope (7) and key_rope (8) go together", c->op);
	if (qr) {
		f->dr = perfdb_rules_last(qr);   /* a scalar's rank differs from q's: refused below */
		int ok = qr->ndims == q->ndims && kr->ndims == k->ndims && f->dr > 0 &&
			 kr->dims[kr->ndims - 1] == f->dr;
		for (size_t i = 0; ok && i + 1 < q->ndims; i++)
			ok = qr->dims[i] == q->dims[i];
		for (size_t i = 0; ok && i + 1 < k->ndims; i++)
			ok = kr->dims[i] == k->dims[i];
		if (!ok)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: rope shapes must match query/key but for the last dim",
					      c->op);
	}
	int ok = v->ndims == k->ndims;
	for (size_t i = 0; ok && i + 1 < k->ndims; i++)
		ok = v->dims[i] == k->dims[i];
	if (!ok)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: value must match the key but for its head dim", c->op);
	f->dv = v->dims[v->ndims - 1];
	/* indices: the query's leading dims, then N2, K */
	ok = idx->ndims == q->ndims && idx->dims[idx->ndims - 2] == f->x.n2;
	for (size_t i = 0; ok && i + 2 < q->ndims; i++)
		ok = idx->dims[i] == q->dims[i];
	if (!ok)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: sparse_indices must be (%s,%lld,K)", c->op,
				      f->x.tnd ? "T" : "B,S1", (long long)f->x.n2);
	f->kk = idx->dims[idx->ndims - 1];
	int64_t x;
	int r = perfdb_attn_cell_int(c, "Runtime sparse_block_size", &x);
	if (r < 0 || (r && x < 1))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: bad Runtime sparse_block_size", c->op);
	f->sbs = r ? x : 1;
	PERFDB_TRY(sparse_mode_of(c, &f->mode, err));
	int64_t ntok = f->x.tnd ? f->x.t : f->x.nb * f->x.s1;
	if (f->kk < 1 || f->kk * f->sbs * ntok * f->x.n2 > MAX_LIST)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %lld x %lld selected positions is too many", c->op,
				      (long long)ntok, (long long)(f->kk * f->sbs));
	if (o->numel != ntok * f->x.n1 * f->dv)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must hold %lld x %lld heads x %lld", c->op,
				      (long long)ntok, (long long)f->x.n1, (long long)f->dv);
	return 0;
}

int perfdb_li_plan(const struct perfdb_op_case *c, struct perfdb_li_plan *f, struct perfdb_err *err)
{
	*f = (struct perfdb_li_plan){ 0 };
	PERFDB_TRY(need(c, 0, "0 (query)", err));
	PERFDB_TRY(need(c, 1, "1 (key)", err));
	PERFDB_TRY(need(c, 2, "2 (weights)", err));
	const struct perfdb_tensor *q = slot(c, 0), *k = slot(c, 1), *w = slot(c, 2),
				   *o = c->nout ? &c->out[0] : NULL;
	if (!o || !o->present || perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be an integer tensor", c->op);
	PERFDB_TRY(qk_plan(c, &f->x, q, k, slot(c, 5), slot(c, 3), err));
	int64_t ntok = f->x.tnd ? f->x.t : f->x.nb * f->x.s1;
	if (w->numel != ntok * f->x.n1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weights must hold one value per query head", c->op);
	int ok = o->ndims == q->ndims && o->dims[o->ndims - 2] == f->x.n2;
	for (size_t i = 0; ok && i + 2 < q->ndims; i++)
		ok = o->dims[i] == q->dims[i];
	if (!ok)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be (%s,%lld,K)", c->op,
				      f->x.tnd ? "T" : "B,S1", (long long)f->x.n2);
	f->kk = o->dims[o->ndims - 1];
	f->g = f->x.n1 / f->x.n2;
	return sparse_mode_of(c, &f->mode, err);
}

void perfdb_ring_plan_release(struct perfdb_ring_plan *p)
{
	free(p->qlen);
	p->qlen = p->kvlen = p->qst = p->kvst = NULL;
}

int perfdb_ring_plan(const struct perfdb_op_case *c, struct perfdb_ring_plan *f, struct perfdb_err *err)
{
	*f = (struct perfdb_ring_plan){ 0 };
	static const char *const name[] = { "0 (q_nope)", "1 (q_rope)", "2 (k_nope)", "3 (k_rope)", "4 (value)" };
	for (size_t i = 0; i < 5; i++) {
		PERFDB_TRY(need(c, i, name[i], err));
		if (c->in[i].ndims != 3)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: slot %s must be (tokens,heads,dim)", c->op, name[i]);
	}
	const struct perfdb_tensor *qn = &c->in[0], *qr = &c->in[1], *kn = &c->in[2], *kr = &c->in[3],
				   *v = &c->in[4], *sl = slot(c, 6), *po = slot(c, 7), *pl = slot(c, 8);
	f->t = qn->dims[0];
	f->n = qn->dims[1];
	f->dn = qn->dims[2];
	f->dr = qr->dims[2];
	f->t2 = kn->dims[0];
	f->nkv = kn->dims[1];
	if (qr->dims[0] != f->t || qr->dims[1] != f->n || kn->dims[2] != f->dn || kr->dims[0] != f->t2 ||
	    kr->dims[1] != f->nkv || kr->dims[2] != f->dr || v->dims[0] != f->t2 || v->dims[1] != f->nkv)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s: q_rope, k_nope, k_rope, value must match q_nope's tokens/heads and each other",
				      c->op);
	f->dv = v->dims[2];
	if (f->nkv < 1 || f->n % f->nkv != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %lld heads are not a multiple of %lld kv heads", c->op,
				      (long long)f->n, (long long)f->nkv);
	const struct perfdb_tensor *o = c->nout ? &c->out[0] : NULL;
	if (!o || !o->present || o->numel != f->t * f->n * f->dv)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be (%lld,%lld,%lld)", c->op,
				      (long long)f->t, (long long)f->n, (long long)f->dv);
	if (c->nout > 1 && c->out[1].present && (c->out[1].dtype != PERFDB_DTYPE_FLOAT || c->out[1].numel != f->n * f->t))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 1 (softmax_lse) must be fp32 (%lld,%lld)", c->op,
				      (long long)f->n, (long long)f->t);
	f->merge = po && pl;
	if (!!po != !!pl)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: prev_out (7) and prev_lse (8) go together", c->op);
	if (f->merge && (po->numel != o->numel || pl->dtype != PERFDB_DTYPE_FLOAT || pl->numel != f->n * f->t))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: prev_out must match the output, prev_lse be fp32 (N,T)",
				      c->op);
	f->causal = slot(c, 5) != NULL;
	int two = sl && sl->ndims == 2 && sl->dims[0] == 2;
	f->two = two;
	f->nb = sl ? (two ? sl->dims[1] : sl->numel) : 1;
	f->nb = perfdb_attn_count(c, "Runtime seqlen_values", f->nb * (two ? 2 : 1)) / (two ? 2 : 1);
	if (f->nb < 1 || f->nb > PERFDB_ATTN_MAX_BATCH)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: batch %lld outside 1..%d", c->op, (long long)f->nb,
				      PERFDB_ATTN_MAX_BATCH);
	PERFDB_TRY(perfdb_attn_batches_alloc(f->nb, &f->qlen, &f->kvlen, &f->qst, &f->kvst, err));
	/* Runtime seqlen_values: q lengths, then (two rows) kv lengths; else even splits */
	const char *cell = perfdb_case_cell(c, "Runtime seqlen_values");
	if (cell) {
		int64_t *tmp = malloc((size_t)f->nb * 2 * sizeof(int64_t));
		if (!tmp)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		int64_t n = perfdb_attn_parse_list(cell, tmp, f->nb * 2);
		for (int64_t b = 0; b < f->nb && n >= f->nb; b++) {
			f->qlen[b] = tmp[b];
			f->kvlen[b] = two ? tmp[f->nb + b] : tmp[b];
		}
		free(tmp);
		if (n != f->nb * (two ? 2 : 1))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: Runtime seqlen_values must list %lld integers",
					      c->op, (long long)(f->nb * (two ? 2 : 1)));
	} else {
		for (int64_t b = 0; b < f->nb; b++) {
			f->qlen[b] = f->t / f->nb + (b == f->nb - 1 ? f->t % f->nb : 0);
			f->kvlen[b] = f->t2 / f->nb + (b == f->nb - 1 ? f->t2 % f->nb : 0);
		}
	}
	int64_t sq = 0, sk = 0;
	for (int64_t b = 0; b < f->nb; b++) {
		if (f->qlen[b] < 0 || f->kvlen[b] < 0 || (f->causal && f->kvlen[b] < f->qlen[b]))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: bad lengths of batch %lld (causal needs kv >= q)",
					      c->op, (long long)b);
		if (b) {
			f->qst[b] = f->qst[b - 1] + f->qlen[b - 1];
			f->kvst[b] = f->kvst[b - 1] + f->kvlen[b - 1];
		}
		sq += f->qlen[b];
		sk += f->kvlen[b];
	}
	if (sq > f->t || sk > f->t2)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: lengths sum past the tokens", c->op);
	return 0;
}

/* ---- the definitions' checks: the plan, discarded ---- */

int perfdb_rules_sfa(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_sfa_plan p;
	int rc = perfdb_sfa_plan(c, &p, err);
	perfdb_attn_qk_release(&p.x);
	return rc;
}

int perfdb_rules_li(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_li_plan p;
	int rc = perfdb_li_plan(c, &p, err);
	perfdb_attn_qk_release(&p.x);
	return rc;
}

int perfdb_rules_ring(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_ring_plan p;
	int rc = perfdb_ring_plan(c, &p, err);
	perfdb_ring_plan_release(&p);
	return rc;
}
