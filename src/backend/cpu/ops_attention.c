/*
 * CPU backend, FusedInferAttentionScore (docs/spec/replay.md §4 table; slot
 * layout docs/spec/grid.md §3 and src/grid/gen_attention.c; docs/ops.md
 * "Attention").  The row's shapes and `Runtime …` cells become an
 * attn_problem for the flash kernel (ops_attention_kernel.h); this file
 * only maps (batch, head, position) to rows of the stored tensors.
 *
 * Slots: q0 k1 v2 atten_mask4 actual_seq_lengths5 actual_seq_lengths_kv6
 * block_table14 query_rope24 key_rope25; out0 attention_out.
 * Layouts: TND (q (T,N,D), lengths cumulative) and BNSD (q (B,N,S,D)),
 * output BNSD or NBSD (BNSD_NBSD).  KV: contiguous in q's layout, or paged
 * through the block table: (blocks, N_kv, block_size, D) or
 * (blocks, block_size, N_kv*D), lengths per batch.  Sparse modes 0 (no
 * mask), 2 (causal from the top left: key j visible to query s when
 * j <= s) and 3 (causal from the bottom right: j <= s + kv_len - q_len),
 * as Ascend's FIA defines them; the causal structure is derived from the
 * positions, the mask's contents are not read (modes 2/3 take a fixed
 * 2048x2048 compressed mask).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "ops_attention_kernel.h"

#define MAX_BATCH 65536

enum { L_TND, L_BNSD };

struct fia {
	int layout, out_nbsd, paged, kv3d, sparse;
	int64_t nb, hq, hkv, dq, dr, dv, t, sq, tkv, skv, bs, nblk, btc;
	int64_t *qlen, *kvlen, *qst, *kvst;
	bool qlen_given, kvlen_given;
	const struct perfdb_tensor *bt;
	struct attn_problem p;
	struct attn_plan *plan;
};

static void fia_free(struct fia *f)
{
	if (!f)
		return;
	attn_plan_free(f->plan);
	free(f->qlen);
	free(f);
}

static const struct perfdb_tensor *slot(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present ? &c->in[i] : NULL;
}

static int64_t q_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct fia *f = ctx;
	return f->layout == L_TND ? (f->qst[b] + s) * f->hq + h : (b * f->hq + h) * f->sq + s;
}

static int64_t o_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct fia *f = ctx;
	if (f->layout == L_BNSD && f->out_nbsd)
		return (h * f->nb + b) * f->sq + s;
	return q_row(ctx, b, h, s);
}

static int64_t kv_row(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j)
{
	const struct fia *f = ctx;
	(void)s;
	if (f->paged) {
		int64_t blk = cpu_ld_int(f->bt, (size_t)(b * f->btc + j / f->bs)), o = j % f->bs;
		return f->kv3d ? (blk * f->bs + o) * f->hkv + g : (blk * f->hkv + g) * f->bs + o;
	}
	return f->layout == L_TND ? (f->kvst[b] + j) * f->hkv + g : (b * f->hkv + g) * f->skv + j;
}

static void kv_rows(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j0, int64_t n, int64_t *rows)
{
	const struct fia *f = ctx;
	if (!f->paged) {
		for (int64_t t = 0; t < n; t++)
			rows[t] = kv_row(ctx, b, g, s, j0 + t);
		return;
	}
	/* one block-table lookup per block: the rows of a block are consecutive (kv3d: hkv apart) */
	int64_t step = f->kv3d ? f->hkv : 1;
	for (int64_t t = 0; t < n;) {
		int64_t j = j0 + t, o = j % f->bs, r = kv_row(ctx, b, g, s, j);
		int64_t run = f->bs - o < n - t ? f->bs - o : n - t;
		for (int64_t u = 0; u < run; u++)
			rows[t + u] = r + u * step;
		t += run;
	}
}

static int64_t kv_end(const void *ctx, int64_t b, int64_t g, int64_t s)
{
	const struct fia *f = ctx;
	(void)g;
	switch (f->sparse) {
	case 2: return s + 1;
	case 3: return s + 1 + f->kvlen[b] - f->qlen[b];
	default: return f->kvlen[b];
	}
}

#define BAD(...) perfdb_err_set(err, PERFDB_EINVAL, "FusedInferAttentionScore: " __VA_ARGS__)

/* Per-batch lengths from a Runtime list (cumulative or not) or an even split of total. */
static int lengths(const struct perfdb_op_case *c, const char *col, int cumulative, int64_t nb,
		   int64_t total, int64_t each_max, int64_t *len, bool *given, struct perfdb_err *err)
{
	const char *s = perfdb_case_cell(c, col);
	*given = s != NULL;
	if (!s) {
		for (int64_t b = 0; b < nb; b++)
			len[b] = cumulative ? total / nb + (b == nb - 1 ? total % nb : 0) : each_max;
		return 0;
	}
	if (attn_parse_list(s, len, nb) != nb)
		return BAD("%s must list %lld integers", col, (long long)nb);
	int64_t prev = 0;
	for (int64_t b = 0; b < nb; b++) {
		int64_t v = len[b];
		if (cumulative) {
			if (v < prev)
				return BAD("%s is not cumulative", col);
			len[b] = v - prev;
			prev = v;
		} else if (v < 0 || v > each_max) {
			return BAD("%s value %lld outside 0..%lld", col, (long long)v, (long long)each_max);
		}
	}
	if (cumulative && prev > total)
		return BAD("%s ends at %lld, past the %lld tokens", col, (long long)prev, (long long)total);
	return 0;
}

static int float_slot(const struct perfdb_tensor *t, const char *what, struct perfdb_err *err)
{
	if (!t)
		return BAD("slot %s is empty", what);
	if (!cpu_is_float(t->dtype))
		return BAD("%s dtype %s not supported (fp32, bf16, fp16)", what, perfdb_dtype_name(t->dtype));
	return 0;
}

/* The problem of a row, from its shapes and Runtime cells (no tensor data). */
static int fia_plan(const struct perfdb_op_case *c, struct fia *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = slot(c, 0), *k = slot(c, 1), *v = slot(c, 2), *mask = slot(c, 4),
				   *qr = slot(c, 24), *kr = slot(c, 25), *o = c->nout ? &c->out[0] : NULL;
	PERFDB_TRY(float_slot(q, "0 (query)", err));
	PERFDB_TRY(float_slot(k, "1 (key)", err));
	PERFDB_TRY(float_slot(v, "2 (value)", err));
	if (!o || !o->present || !cpu_is_float(o->dtype))
		return BAD("output 0 must be a float tensor");
	if (!!qr != !!kr)
		return BAD("query_rope (24) and key_rope (25) must be given together");
	if (qr) {
		PERFDB_TRY(float_slot(qr, "24 (query_rope)", err));
		PERFDB_TRY(float_slot(kr, "25 (key_rope)", err));
	}
	const char *lay = perfdb_case_cell(c, "Runtime input_layout");
	if (lay) {
		if (strcmp(lay, "TND") == 0) {
			f->layout = L_TND;
		} else if (strcmp(lay, "BNSD") == 0 || strcmp(lay, "BNSD_NBSD") == 0) {
			f->layout = L_BNSD;
			f->out_nbsd = strcmp(lay, "BNSD_NBSD") == 0;
		} else {
			return BAD("input_layout %s not supported (TND, BNSD, BNSD_NBSD)", lay);
		}
	} else {
		f->layout = q->ndims == 4 ? L_BNSD : L_TND;
		/* the reference's inferred 4-D layout is BNSD_NBSD; a BNSD-shaped output is taken as BNSD */
		f->out_nbsd = f->layout == L_BNSD && !(o->ndims == 4 && o->dims[0] == q->dims[0] &&
						       o->dims[1] == q->dims[1]);
	}
	if (q->ndims != (f->layout == L_TND ? 3u : 4u))
		return BAD("query must be %s for layout %s", f->layout == L_TND ? "(T,N,D)" : "(B,N,S,D)",
			   f->layout == L_TND ? "TND" : "BNSD");
	f->hq = q->dims[1];
	f->dq = q->dims[q->ndims - 1];
	int64_t x;
	int r;
	if ((r = attn_cell_int(c, "Runtime num_heads", &x)) < 0 || (r && x != f->hq))
		return BAD("Runtime num_heads disagrees with the query's %lld heads", (long long)f->hq);
	f->bt = slot(c, 14);
	f->paged = f->bt != NULL;
	if (f->paged) {
		if (f->bt->ndims != 2 || cpu_is_float(f->bt->dtype))
			return BAD("block_table (14) must be a 2-D integer tensor");
		f->btc = f->bt->dims[1];
		f->kv3d = k->ndims == 3;
		if (k->ndims != 3 && k->ndims != 4)
			return BAD("paged key must be (blocks,N,block,D) or (blocks,block,N*D)");
		f->nblk = k->dims[0];
		f->bs = f->kv3d ? k->dims[1] : k->dims[2];
		if ((r = attn_cell_int(c, "Runtime block_size", &x)) < 0 || (r && x != f->bs))
			return BAD("Runtime block_size disagrees with the key cache's block of %lld", (long long)f->bs);
		if (f->kv3d) {
			if ((r = attn_cell_int(c, "Runtime num_key_value_heads", &x)) < 0)
				return BAD("bad Runtime num_key_value_heads");
			f->hkv = r ? x : (f->dq > 0 && k->dims[2] % f->dq == 0 ? k->dims[2] / f->dq : 0);
		} else {
			f->hkv = k->dims[1];
		}
	} else {
		if (k->ndims != q->ndims)
			return BAD("key must have the query's rank without a block table");
		f->hkv = k->dims[1];
		if (f->layout == L_TND)
			f->tkv = k->dims[0];
		else if (k->dims[0] != q->dims[0])
			return BAD("key batch %lld differs from the query's %lld", (long long)k->dims[0],
				   (long long)q->dims[0]);
		else
			f->skv = k->dims[2];
	}
	if (f->hkv < 1 || f->hq % f->hkv != 0)
		return BAD("%lld query heads are not a multiple of %lld kv heads", (long long)f->hq, (long long)f->hkv);
	if ((r = attn_cell_int(c, "Runtime num_key_value_heads", &x)) < 0 || (r && x != f->hkv))
		return BAD("Runtime num_key_value_heads disagrees with the key's %lld heads", (long long)f->hkv);
	/* a row of the kv tensors: its width, and the dims it must share with k */
	int64_t kw = f->kv3d ? k->dims[2] / f->hkv : k->dims[k->ndims - 1];
	if (kw != f->dq || f->kv3d * (k->dims[2] % f->hkv) != 0)
		return BAD("key head dim %lld differs from the query's %lld", (long long)kw, (long long)f->dq);
	if (v->ndims != k->ndims || v->dims[0] != k->dims[0] || v->dims[1] != k->dims[1] ||
	    (!f->kv3d && v->dims[2] != k->dims[2]))
		return BAD("value must match the key but for its head dim");
	f->dv = f->kv3d ? v->dims[2] / f->hkv : v->dims[v->ndims - 1];
	if (f->dv < 1 || (f->kv3d && v->dims[2] % f->hkv != 0))
		return BAD("bad value head dim");
	if (qr) {
		f->dr = qr->dims[qr->ndims - 1];
		int ok = qr->ndims == q->ndims && kr->ndims == k->ndims;
		for (size_t i = 0; ok && i + 1 < q->ndims; i++)
			ok = qr->dims[i] == q->dims[i];
		for (size_t i = 0; ok && i + 1 < k->ndims; i++)
			ok = kr->dims[i] == k->dims[i];
		if (ok && f->kv3d)
			ok = kr->dims[2] == f->hkv * f->dr;
		else if (ok)
			ok = kr->dims[k->ndims - 1] == f->dr;
		if (!ok || f->dr < 1)
			return BAD("query_rope/key_rope must match query/key but for the rope dim");
	}
	/* batches and lengths */
	int64_t nq;
	if (f->layout == L_BNSD) {
		f->nb = q->dims[0];
		f->sq = q->dims[2];
	} else {
		f->t = q->dims[0];
		const char *qs = perfdb_case_cell(c, "Runtime actual_seq_lengths_values");
		int64_t *tmp = malloc(MAX_BATCH * sizeof(int64_t));
		if (!tmp)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		nq = qs ? attn_parse_list(qs, tmp, MAX_BATCH) : -1;
		free(tmp);
		f->nb = nq > 0 ? nq : slot(c, 5) ? slot(c, 5)->numel : f->paged ? f->bt->dims[0] : 1;
	}
	if (f->nb < 1 || f->nb > MAX_BATCH)
		return BAD("batch %lld outside 1..%d", (long long)f->nb, MAX_BATCH);
	if (f->paged && f->bt->dims[0] != f->nb)
		return BAD("block_table has %lld rows for %lld batches", (long long)f->bt->dims[0], (long long)f->nb);
	f->qlen = calloc((size_t)f->nb * 4, sizeof(int64_t));
	if (!f->qlen)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	f->kvlen = f->qlen + f->nb;
	f->qst = f->kvlen + f->nb;
	f->kvst = f->qst + f->nb;
	int tnd = f->layout == L_TND;
	PERFDB_TRY(lengths(c, "Runtime actual_seq_lengths_values", tnd, f->nb, f->t, f->sq, f->qlen,
			   &f->qlen_given, err));
	int kvcum = tnd && !f->paged;
	int64_t kvmax = f->paged ? f->btc * f->bs : f->skv;
	PERFDB_TRY(lengths(c, "Runtime actual_seq_lengths_kv_values", kvcum, f->nb, f->tkv, kvmax, f->kvlen,
			   &f->kvlen_given, err));
	for (int64_t b = 1; b < f->nb; b++) {
		f->qst[b] = f->qst[b - 1] + f->qlen[b - 1];
		f->kvst[b] = f->kvst[b - 1] + f->kvlen[b - 1];
	}
	/* sparse mode */
	if ((r = attn_cell_int(c, "Runtime sparse_mode", &x)) < 0)
		return BAD("bad Runtime sparse_mode");
	f->sparse = r ? (int)x : mask ? 3 : 0;
	if (f->sparse != 0 && f->sparse != 2 && f->sparse != 3)
		return BAD("sparse_mode %d not supported (0, 2, 3)", f->sparse);
	if (f->sparse == 0 && mask)
		return BAD("an explicit atten_mask (sparse_mode 0) is not supported");
	for (int64_t b = 0; b < f->nb && f->sparse == 3; b++)
		if (f->kvlen[b] < f->qlen[b])
			return BAD("sparse_mode 3 needs kv length >= q length (batch %lld)", (long long)b);
	/* output */
	int64_t want[4] = { f->t, f->hq, f->dv, 0 };
	size_t nd = 3;
	if (!tnd) {
		nd = 4;
		want[0] = f->out_nbsd ? f->hq : f->nb;
		want[1] = f->out_nbsd ? f->nb : f->hq;
		want[2] = f->sq;
		want[3] = f->dv;
	}
	int ok = o->ndims == nd;
	for (size_t i = 0; ok && i < nd; i++)
		ok = o->dims[i] == want[i];
	if (!ok)
		return BAD("output 0 must be (%lld,%lld,%lld%s%lld)", (long long)want[0], (long long)want[1],
			   (long long)want[2], nd == 4 ? "," : "", nd == 4 ? (long long)want[3] : 0LL);
	f->p = (struct attn_problem){
		.q = q, .qr = qr, .k = k, .kr = kr, .v = v,   /* .out: set by prepare */
		.nb = f->nb, .hq = f->hq, .hkv = f->hkv, .dq = f->dq, .dr = f->dr, .dv = f->dv,
		.scale = 1.0f / sqrtf((float)(f->dq + f->dr)),
		.qlen = f->qlen, .kvlen = f->kvlen,
		.q_row = q_row, .o_row = o_row, .kv_row = kv_row, .kv_rows = kv_rows, .kv_end = kv_end, .ctx = f,
	};
	return 0;
}

static int fia_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct fia *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = fia_plan(c, f, err);
	fia_free(f);
	return rc;
}

static int fia_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct fia *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = f;
	PERFDB_TRY(fia_plan(c, f, err));
	f->p.out = &c->out[0];
	/* the index inputs get the lengths used (cumulative in TND) */
	int tnd = f->layout == L_TND;
	for (int s = 5; s <= 6; s++) {
		struct perfdb_tensor *t = &c->in[s];
		if (!slot(c, (size_t)s))
			continue;
		const int64_t *len = s == 5 ? f->qlen : f->kvlen;
		int cum = s == 5 ? tnd : tnd && !f->paged;
		int64_t acc = 0;
		for (int64_t b = 0; b < f->nb && b < t->numel; b++) {
			acc = cum ? acc + len[b] : len[b];
			attn_st_int(t, (size_t)b, acc);
		}
	}
	if (f->paged) {
		PERFDB_TRY(attn_fill_table(&c->in[14], f->nblk, err));
	}
	return attn_plan_new(&f->plan, &f->p, c->threads, err);
}

static int fia_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct fia *f = c->priv;
	return attn_plan_run(f->plan, err);
}

static void fia_release(struct perfdb_op_case *c)
{
	fia_free(c->priv);
	c->priv = NULL;
}

const struct perfdb_op_impl cpu_ops_attention[] = {
	{ .name = "FusedInferAttentionScore", .check = fia_check, .prepare = fia_prepare, .run = fia_run,
	  .release = fia_release },
	{ .name = NULL },
};
