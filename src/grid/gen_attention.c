/*
 * FusedInferAttentionScore rows (docs/spec/grid.md §3 "fused_attention",
 * reference generators/fused_attention.py): prefill and decode scenes per
 * model, 31 input slots, and the 15 `Runtime …` columns that replay needs.
 *
 * With block size B (128), nb = max(1, ceil(L/B)) and TB = max(min_blocks,
 * b*nb), slots (others empty):
 *   dense prefill  0 (T,Hq,D) 1,2 (T,Hkv,D) 4 mask 5,6 (b,)     -> (T,Hq,D)
 *                  T = b*s; TND, sparse 3; q and kv lengths cumulative [s]*b
 *   dense decode   0 (b,Hq,D) 1,2 (TB,Hkv,B,D) 4 mask 5,6 (b,) 14 (b,nb)
 *                  -> (b,Hq,D); q lengths cumulative [1]*b, kv [avg]*b
 *   MLA prefill    0 (b,H,s,kvl) 1,2 (TB,1,B,kvl) 4 mask 5,6 (b,) 14 (b,nb)
 *                  24 (b,H,s,rope) 25 (TB,1,B,rope) -> (H,b,s,kvl);
 *                  BNSD_NBSD, sparse 3, kv heads 1, lengths [s]*b
 *   MLA decode     as MLA prefill with s = 1, no mask, sparse 0,
 *                  q lengths [1]*b, kv [avg]*b
 * Dense (Hq,Hkv) per tp: dense_pairs below.
 * MLA uses the untiled heads.  Slot dtypes (only when the slot is not
 * empty): 0,1,2,24,25 DT_BF16; 4 INT8; 5,6 INT64; 14 INT32; formats ND;
 * every other slot DT_UNDEFINED / NULL.  A row whose shapes repeat an
 * earlier row (any model) is dropped: dedupe is on shapes and dtypes only,
 * so the Runtime columns of the first row win.
 */
#include "grid_internal.h"
#include "perfdb/schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSLOTS 31

const char *const grid_fia_runtime_cols[GRID_FIA_NRUNTIME] = {
	PERFDB_COL_RT_SOURCE_PROFILE, PERFDB_COL_RT_SEQ_SHAPE,
	PERFDB_COL_RT_SEQ_VALUES, PERFDB_COL_RT_SEQ_KV_SHAPE,
	PERFDB_COL_RT_SEQ_KV_VALUES, PERFDB_COL_RT_AVG_SEQ_LEN,
	PERFDB_COL_RT_BLOCK_TABLE_SHAPE, PERFDB_COL_RT_BLOCK_TABLE_VALID,
	PERFDB_COL_RT_NUM_HEADS, PERFDB_COL_RT_NUM_KV_HEADS, PERFDB_COL_RT_SPARSE_MODE,
	PERFDB_COL_RT_INPUT_LAYOUT, PERFDB_COL_RT_BLOCK_SIZE, PERFDB_COL_RT_COMPLETENESS,
	PERFDB_COL_RT_INPUT_SHAPES_RAW,
};

struct fctx {
	const struct grid_gen_ctx *g;
	struct grid_cand c;
	struct perfdb_strbuf vals[2 + GRID_FIA_NRUNTIME];
	struct perfdb_strbuf key;
	struct perfdb_sig_index seen;
	grid_emit_fn emit;
	void *arg;
	struct perfdb_err *err;
};

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void shape(struct grid_cand *c, size_t slot, size_t nd, int64_t a, int64_t b,
		  int64_t x, int64_t d)
{
	int64_t v[4] = { a, b, x, d };
	grid_shape_set(&c->in[slot], nd, v);
}

static int add_list(struct perfdb_strbuf *sb, int64_t v, int64_t n, bool cumulative)
{
	int64_t total = 0;
	for (int64_t i = 0; i < n; i++) {
		total = cumulative ? total + v : v;
		PERFDB_TRY(perfdb_strbuf_addf(sb, "%s%" PRId64, i ? "," : "", total));
	}
	return 0;
}

struct scene_row {
	const char *scene;          /* source profile */
	int64_t avg, heads, kv_heads, sparse;
	const char *layout;
	int64_t q_len, kv_len, b;   /* lengths: value, count b */
	bool q_cum, kv_cum;
	int64_t bt_b, bt_nb;        /* block table shape, 0 = none */
};

static int emit_row(struct fctx *f, const struct scene_row *r)
{
	struct grid_cand *c = &f->c;
	/* dtypes and formats of the 31 slots */
	struct perfdb_strbuf *dt = &f->vals[0], *fm = &f->vals[1];
	perfdb_strbuf_reset(dt);
	perfdb_strbuf_reset(fm);
	for (size_t i = 0; i < NSLOTS; i++) {
		const char *d = "DT_UNDEFINED", *fo = "NULL";
		if (c->in[i].nd) {
			if (i <= 2 || i == 24 || i == 25)
				d = "DT_BF16", fo = "ND";
			else if (i == 4)
				d = "INT8", fo = "ND";
			else if (i == 5 || i == 6)
				d = "INT64", fo = "ND";
			else if (i == 14)
				d = "INT32", fo = "ND";
		}
		PERFDB_TRY(perfdb_strbuf_addf(dt, "%s%s", i ? ";" : "", d));
		PERFDB_TRY(perfdb_strbuf_addf(fm, "%s%s", i ? ";" : "", fo));
	}
	/* generator-level dedupe on shapes (dtypes follow from them) */
	perfdb_strbuf_reset(&f->key);
	PERFDB_TRY(grid_shape_text(c->in, c->nin, &f->key));
	PERFDB_TRY(perfdb_strbuf_addch(&f->key, '|'));
	PERFDB_TRY(grid_shape_text(c->out, c->nout, &f->key));
	if (perfdb_sig_index_find(&f->seen, f->key.buf))
		return 0;
	if (perfdb_sig_index_add(&f->seen, f->key.buf, 0) < 0)
		return perfdb_err_set(f->err, PERFDB_ENOMEM, "out of memory");

	struct perfdb_strbuf *v = &f->vals[2];
	for (size_t i = 0; i < GRID_FIA_NRUNTIME; i++)
		perfdb_strbuf_reset(&v[i]);
	PERFDB_TRY(perfdb_strbuf_addstr(&v[0], r->scene));
	PERFDB_TRY(perfdb_strbuf_addf(&v[1], "%" PRId64, r->b));
	PERFDB_TRY(add_list(&v[2], r->q_len, r->b, r->q_cum));
	PERFDB_TRY(perfdb_strbuf_addf(&v[3], "%" PRId64, r->b));
	PERFDB_TRY(add_list(&v[4], r->kv_len, r->b, r->kv_cum));
	PERFDB_TRY(perfdb_strbuf_addf(&v[5], "%.6f", (double)r->avg));
	if (r->bt_b) {
		PERFDB_TRY(perfdb_strbuf_addf(&v[6], "%" PRId64 ",%" PRId64, r->bt_b, r->bt_nb));
		PERFDB_TRY(add_list(&v[7], r->bt_nb, r->bt_b, false));
	}
	PERFDB_TRY(perfdb_strbuf_addf(&v[8], "%" PRId64, r->heads));
	PERFDB_TRY(perfdb_strbuf_addf(&v[9], "%" PRId64, r->kv_heads));
	PERFDB_TRY(perfdb_strbuf_addf(&v[10], "%" PRId64, r->sparse));
	PERFDB_TRY(perfdb_strbuf_addstr(&v[11], r->layout));
	PERFDB_TRY(perfdb_strbuf_addf(&v[12], "%" PRId64, f->g->p->block_size));
	PERFDB_TRY(perfdb_strbuf_addstr(&v[13], "shape_grid_scene_generated"));
	PERFDB_TRY(grid_shape_text(c->in, NSLOTS, &v[14]));
	c->nextra = 2 + GRID_FIA_NRUNTIME;
	c->extra_col[0] = PERFDB_COL_IN_DTYPES;
	c->extra_col[1] = PERFDB_COL_IN_FORMATS;
	for (size_t i = 0; i < 2 + GRID_FIA_NRUNTIME; i++) {
		if (i >= 2)
			c->extra_col[i] = grid_fia_runtime_cols[i - 2];
		c->extra_val[i] = f->vals[i].buf;
	}
	return f->emit(f->arg, c, f->err);
}

static const struct grid_scene *scene_for(const struct grid_pattern *p, const char *key)
{
	const struct grid_scene *def = NULL;
	for (size_t i = 0; i < p->nscenes; i++) {
		if (strcmp(p->scenes[i].key, key) == 0)
			return &p->scenes[i];
		if (strcmp(p->scenes[i].key, "default") == 0)
			def = &p->scenes[i];
	}
	return def;
}

static int mla(struct fctx *f, const struct perfdb_grid_model *m, const struct grid_scene *s)
{
	const struct grid_pattern *p = f->g->p;
	struct grid_cand *c = &f->c;
	int64_t B = p->block_size, H = m->heads, kvl = m->kv_lora, rope = m->rope;
	char scene[600];
	for (int decode = 0; decode < 2; decode++) {
		const struct grid_axis *ba = decode ? &s->decode_batches : &s->prefill_batches;
		const struct grid_axis *la = decode ? &s->decode_avg_seqs : &s->prefill_seqs;
		snprintf(scene, sizeof(scene), "%s_mla_%s", m->key, decode ? "decode" : "prefill");
		for (size_t i = 0; i < ba->n; i++)
			for (size_t j = 0; j < la->n; j++) {
				int64_t b = ba->v[i], L = la->v[j], sq = decode ? 1 : L;
				int64_t nb = max64(1, ceil_div(L, B)), TB = max64(p->min_blocks, b * nb);
				memset(c->in, 0, sizeof(c->in[0]) * NSLOTS);
				shape(c, 0, 4, b, H, sq, kvl);
				shape(c, 1, 4, TB, 1, B, kvl);
				shape(c, 2, 4, TB, 1, B, kvl);
				if (!decode)
					shape(c, 4, 2, p->mask[0], p->mask[1], 0, 0);
				shape(c, 5, 1, b, 0, 0, 0);
				shape(c, 6, 1, b, 0, 0, 0);
				shape(c, 14, 2, b, nb, 0, 0);
				shape(c, 24, 4, b, H, sq, rope);
				shape(c, 25, 4, TB, 1, B, rope);
				int64_t o[4] = { H, b, sq, kvl };
				grid_shape_set(&c->out[0], 4, o);
				struct scene_row r = {
					.scene = scene, .avg = L, .heads = H, .kv_heads = 1,
					.sparse = decode ? 0 : 3, .layout = "BNSD_NBSD",
					.q_len = decode ? 1 : L, .kv_len = L, .b = b,
					.bt_b = b, .bt_nb = nb,
				};
				PERFDB_TRY(emit_row(f, &r));
			}
	}
	return 0;
}

/*
 * A dense model's (tp, Hq, Hkv) per tp: heads % tp == 0; Hkv = kv/tp when
 * kv >= tp (and kv % tp == 0), 1 when tp % kv == 0; a repeated (Hq, Hkv)
 * keeps its first tp.  Returns the count.
 */
static size_t dense_pairs(const struct perfdb_grid_model *m, int64_t pairs[][3])
{
	size_t np = 0;
	for (size_t t = 0; t < m->ntp; t++) {
		int64_t tp = m->tp[t], hkv;
		if (m->heads % tp != 0)
			continue;
		if (m->kv_heads >= tp) {
			if (m->kv_heads % tp != 0)
				continue;
			hkv = m->kv_heads / tp;
		} else if (tp % m->kv_heads == 0) {
			hkv = 1;
		} else {
			continue;
		}
		int64_t hq = m->heads / tp;
		bool dup = false;
		for (size_t k = 0; k < np; k++)
			dup |= pairs[k][1] == hq && pairs[k][2] == hkv;
		if (!dup) {
			pairs[np][0] = tp;
			pairs[np][1] = hq;
			pairs[np][2] = hkv;
			np++;
		}
	}
	return np;
}

static int dense(struct fctx *f, const struct perfdb_grid_model *m, const struct grid_scene *s)
{
	const struct grid_pattern *p = f->g->p;
	struct grid_cand *c = &f->c;
	int64_t B = p->block_size, D = m->head_dim;
	int64_t pairs[PERFDB_GRID_MAX_PAR][3];
	size_t np = dense_pairs(m, pairs);
	char scene[600];
	for (size_t k = 0; k < np; k++) {
		int64_t tp = pairs[k][0], hq = pairs[k][1], hkv = pairs[k][2];
		for (int decode = 0; decode < 2; decode++) {
			const struct grid_axis *ba = decode ? &s->decode_batches : &s->prefill_batches;
			const struct grid_axis *la = decode ? &s->decode_avg_seqs : &s->prefill_seqs;
			snprintf(scene, sizeof(scene), "%s_dense_%s_tp%" PRId64, m->key,
				 decode ? "decode" : "prefill", tp);
			for (size_t i = 0; i < ba->n; i++)
				for (size_t j = 0; j < la->n; j++) {
					int64_t b = ba->v[i], L = la->v[j];
					memset(c->in, 0, sizeof(c->in[0]) * NSLOTS);
					struct scene_row r = {
						.scene = scene, .avg = L, .heads = hq, .kv_heads = hkv,
						.sparse = 3, .layout = "TND", .b = b,
					};
					if (!decode) {
						int64_t T = b * L;
						shape(c, 0, 3, T, hq, D, 0);
						shape(c, 1, 3, T, hkv, D, 0);
						shape(c, 2, 3, T, hkv, D, 0);
						int64_t o[3] = { T, hq, D };
						grid_shape_set(&c->out[0], 3, o);
						r.q_len = r.kv_len = L;
						r.q_cum = r.kv_cum = true;
					} else {
						int64_t nb = max64(1, ceil_div(L, B));
						int64_t TB = max64(p->min_blocks, b * nb);
						shape(c, 0, 3, b, hq, D, 0);
						shape(c, 1, 4, TB, hkv, B, D);
						shape(c, 2, 4, TB, hkv, B, D);
						shape(c, 14, 2, b, nb, 0, 0);
						int64_t o[3] = { b, hq, D };
						grid_shape_set(&c->out[0], 3, o);
						r.q_len = 1;
						r.q_cum = true;
						r.kv_len = L;
						r.bt_b = b;
						r.bt_nb = nb;
					}
					shape(c, 4, 2, p->mask[0], p->mask[1], 0, 0);
					shape(c, 5, 1, b, 0, 0, 0);
					shape(c, 6, 1, b, 0, 0, 0);
					PERFDB_TRY(emit_row(f, &r));
				}
		}
	}
	return 0;
}

/*
 * layout: aten — PyTorch's scaled-dot-product attention rows (the aten
 * sdpa tables): the dense models' (Hq, Hkv) pairs and scenes as above, in
 * aten's (B, N, S, D) layout: query (b,Hq,s,D), key and value (b,Hkv,L,D)
 * with s = L in prefill and 1 in decode, output (b,Hq,s,D).  The key and
 * value are the whole sequence (sdpa takes no paged cache), Hkv < Hq as
 * sdpa's enable_gqa runs it.  MLA models are left out: their attention is
 * not one sdpa call of the model's shapes.  Dtypes and formats are the
 * table's template row's; no Runtime columns.
 */
static int dense_aten(struct fctx *f, const struct perfdb_grid_model *m, const struct grid_scene *s)
{
	struct grid_cand *c = &f->c;
	int64_t D = m->head_dim;
	int64_t pairs[PERFDB_GRID_MAX_PAR][3];
	size_t np = dense_pairs(m, pairs);
	for (size_t k = 0; k < np; k++) {
		int64_t hq = pairs[k][1], hkv = pairs[k][2];
		for (int decode = 0; decode < 2; decode++) {
			const struct grid_axis *ba = decode ? &s->decode_batches : &s->prefill_batches;
			const struct grid_axis *la = decode ? &s->decode_avg_seqs : &s->prefill_seqs;
			for (size_t i = 0; i < ba->n; i++)
				for (size_t j = 0; j < la->n; j++) {
					int64_t b = ba->v[i], L = la->v[j], sq = decode ? 1 : L;
					memset(c->in, 0, sizeof(c->in[0]) * 3);
					shape(c, 0, 4, b, hq, sq, D);
					shape(c, 1, 4, b, hkv, L, D);
					shape(c, 2, 4, b, hkv, L, D);
					int64_t o[4] = { b, hq, sq, D };
					grid_shape_set(&c->out[0], 4, o);
					perfdb_strbuf_reset(&f->key);
					PERFDB_TRY(grid_shape_text(c->in, 3, &f->key));
					if (perfdb_sig_index_find(&f->seen, f->key.buf))
						continue;
					if (perfdb_sig_index_add(&f->seen, f->key.buf, 0) < 0)
						return perfdb_err_set(f->err, PERFDB_ENOMEM, "out of memory");
					PERFDB_TRY(f->emit(f->arg, c, f->err));
				}
		}
	}
	return 0;
}

int grid_gen_fia(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err)
{
	struct fctx *f = calloc(1, sizeof(*f));
	if (!f)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	f->g = g;
	f->emit = emit;
	f->arg = arg;
	f->err = err;
	f->c.nin = g->p->aten_bnsd ? 3 : NSLOTS;
	f->c.nout = 1;
	for (size_t i = 0; i < 2 + GRID_FIA_NRUNTIME; i++)
		perfdb_strbuf_init(&f->vals[i]);
	perfdb_strbuf_init(&f->key);
	perfdb_sig_index_init(&f->seen);
	int rc = 0;
	for (size_t i = 0; i < g->models->n && rc == 0; i++) {
		const struct perfdb_grid_model *m = &g->models->v[i];
		const struct grid_scene *s = scene_for(g->p, m->key);
		if (g->p->aten_bnsd)
			rc = grid_model_is_mla(m) ? 0 : dense_aten(f, m, s);
		else
			rc = grid_model_is_mla(m) ? mla(f, m, s) : dense(f, m, s);
	}
	if (rc == -PERFDB_ENOMEM && !err->code)
		perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < 2 + GRID_FIA_NRUNTIME; i++)
		perfdb_strbuf_release(&f->vals[i]);
	perfdb_strbuf_release(&f->key);
	perfdb_sig_index_release(&f->seen);
	free(f);
	return rc;
}
