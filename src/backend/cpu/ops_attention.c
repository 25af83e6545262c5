/*
 * CPU backend, FusedInferAttentionScore (docs/spec/replay.md §4 table; slot
 * layout docs/spec/grid.md §3 and src/grid/gen_attention.c; docs/ops.md
 * "Attention").  The row's shape-level plan is the operator layer's
 * (ops/attention.h: layout, heads, lengths, paged KV); this file
 * adds the kernel's limits (float dtypes, no explicit mask with mode 0),
 * turns the plan into an attn_problem for the flash kernel
 * (ops_attention_kernel.h) and maps (batch, head, position) to rows of the
 * stored tensors.
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
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "ops_attention_kernel.h"
#include "ops/attention.h"

struct fia {
	struct perfdb_fia_plan s;             /* the row's shape-level plan (the operator layer's) */
	struct attn_problem p;
	struct attn_plan *plan;
};

static void fia_free(struct fia *f)
{
	if (!f)
		return;
	attn_plan_free(f->plan);
	perfdb_fia_plan_release(&f->s);
	free(f);
}

static const struct perfdb_tensor *slot(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present ? &c->in[i] : NULL;
}

static int64_t q_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct fia *f = ctx;
	return f->s.layout == PERFDB_FIA_TND ? (f->s.qst[b] + s) * f->s.hq + h : (b * f->s.hq + h) * f->s.sq + s;
}

static int64_t o_row(const void *ctx, int64_t b, int64_t h, int64_t s)
{
	const struct fia *f = ctx;
	if (f->s.layout == PERFDB_FIA_BNSD && f->s.out_nbsd)
		return (h * f->s.nb + b) * f->s.sq + s;
	return q_row(ctx, b, h, s);
}

static int64_t kv_row(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j)
{
	const struct fia *f = ctx;
	(void)s;
	if (f->s.paged) {
		int64_t blk = cpu_ld_int(f->s.bt, (size_t)(b * f->s.btc + j / f->s.bs)), o = j % f->s.bs;
		return f->s.kv3d ? (blk * f->s.bs + o) * f->s.hkv + g : (blk * f->s.hkv + g) * f->s.bs + o;
	}
	return f->s.layout == PERFDB_FIA_TND ? (f->s.kvst[b] + j) * f->s.hkv + g : (b * f->s.hkv + g) * f->s.skv + j;
}

static void kv_rows(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j0, int64_t n, int64_t *rows)
{
	const struct fia *f = ctx;
	if (!f->s.paged) {
		for (int64_t t = 0; t < n; t++)
			rows[t] = kv_row(ctx, b, g, s, j0 + t);
		return;
	}
	/* one block-table lookup per block: the rows of a block are consecutive (kv3d: hkv apart) */
	int64_t step = f->s.kv3d ? f->s.hkv : 1;
	for (int64_t t = 0; t < n;) {
		int64_t j = j0 + t, o = j % f->s.bs, r = kv_row(ctx, b, g, s, j);
		int64_t run = f->s.bs - o < n - t ? f->s.bs - o : n - t;
		for (int64_t u = 0; u < run; u++)
			rows[t + u] = r + u * step;
		t += run;
	}
}

static int64_t kv_end(const void *ctx, int64_t b, int64_t g, int64_t s)
{
	const struct fia *f = ctx;
	(void)g;
	switch (f->s.sparse) {
	case 2: return s + 1;
	case 3: return s + 1 + f->s.kvlen[b] - f->s.qlen[b];
	default: return f->s.kvlen[b];
	}
}

#define BAD(...) perfdb_err_set(err, PERFDB_EINVAL, "FusedInferAttentionScore: " __VA_ARGS__)

static int float_slot(const struct perfdb_tensor *t, const char *what, struct perfdb_err *err)
{
	if (t && !perfdb_dtype_is_float(t->dtype))
		return BAD("%s dtype %s not supported (fp32, bf16, fp16)", what, perfdb_dtype_name(t->dtype));
	return 0;
}

/*
 * The row's problem: the dtypes and mask the kernel takes (its limits),
 * then the operator layer's plan (attention.h), read into an attn_problem.
 */
static int fia_plan(const struct perfdb_op_case *c, struct fia *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *o = c->nout && c->out[0].present ? &c->out[0] : NULL;
	PERFDB_TRY(float_slot(slot(c, 0), "0 (query)", err));
	PERFDB_TRY(float_slot(slot(c, 1), "1 (key)", err));
	PERFDB_TRY(float_slot(slot(c, 2), "2 (value)", err));
	if (o && !perfdb_dtype_is_float(o->dtype))
		return BAD("output 0 must be a float tensor");
	if (slot(c, 24) && slot(c, 25)) {
		PERFDB_TRY(float_slot(slot(c, 24), "24 (query_rope)", err));
		PERFDB_TRY(float_slot(slot(c, 25), "25 (key_rope)", err));
	}
	struct perfdb_fia_plan *s = &f->s;
	PERFDB_TRY(perfdb_fia_plan(c, s, err));
	/* the kernel derives the causal structure from positions; it never reads a mask's contents */
	if (s->sparse == 0 && s->mask)
		return BAD("an explicit atten_mask (sparse_mode 0) is not supported");
	f->p = (struct attn_problem){
		.q = s->q, .qr = s->qr, .k = s->k, .kr = s->kr, .v = s->v,   /* .out: set by prepare */
		.nb = s->nb, .hq = s->hq, .hkv = s->hkv, .dq = s->dq, .dr = s->dr, .dv = s->dv,
		.scale = 1.0f / sqrtf((float)(s->dq + s->dr)),
		.qlen = s->qlen, .kvlen = s->kvlen,
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
	int tnd = f->s.layout == PERFDB_FIA_TND;
	for (int s = 5; s <= 6; s++) {
		struct perfdb_tensor *t = &c->in[s];
		if (!slot(c, (size_t)s))
			continue;
		const int64_t *len = s == 5 ? f->s.qlen : f->s.kvlen;
		int cum = s == 5 ? tnd : tnd && !f->s.paged;
		int64_t acc = 0;
		for (int64_t b = 0; b < f->s.nb && b < t->numel; b++) {
			acc = cum ? acc + len[b] : len[b];
			attn_st_int(t, (size_t)b, acc);
		}
	}
	if (f->s.paged) {
		PERFDB_TRY(attn_fill_table(&c->in[14], f->s.nblk, err));
	}
	return attn_plan_new(&f->plan, &f->p, c, err);
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
