/*
 * FusedInferAttentionScore's row rules and shape-level plan (docs/ops.md
 * "Attention"; docs/spec/replay.md §4; slots docs/spec/grid.md §3), and
 * the Runtime cells every attention op reads.  The plan (attention.h) is
 * what the CPU backend's check and prepare read.  The definition's check
 * (perfdb_rules_fia) is the part of the plan's rules every backend applies:
 * CUDA's kernel takes TND only, reads the block table by the key's rank and
 * parses its cells with atoi, so only the slots, the layout names, a plain
 * integer sparse mode and num_heads are rules of the op here.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/schema.h"
#include "ops/attention.h"
#include "ops/rules.h"

#define BAD(...) perfdb_err_set(err, PERFDB_EINVAL, "FusedInferAttentionScore: " __VA_ARGS__)

int64_t perfdb_attn_parse_list(const char *s, int64_t *v, int64_t max)
{
	int64_t n = 0;
	while (*s) {
		while (*s == '"' || *s == ' ' || *s == '[' || *s == '(')
			s++;
		if (!*s || *s == ']' || *s == ')')
			break;
		char *e;
		long long x = strtoll(s, &e, 10);
		if (e == s || n >= max)
			return -1;
		v[n++] = x;
		s = e;
		while (*s == '"' || *s == ' ' || *s == ']' || *s == ')')
			s++;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

int perfdb_attn_cell_int(const struct perfdb_op_case *c, const char *col, int64_t *v)
{
	const char *s = perfdb_case_cell(c, col);
	if (!s)
		return 0;
	return perfdb_attn_parse_list(s, v, 1) == 1 ? 1 : -1;
}

/* A cell that is one plain integer, read the same by every backend (strtoll as atoi): 1 with *v, else 0. */
static int plain_int(const struct perfdb_op_case *c, const char *col, int64_t *v)
{
	const char *s = perfdb_case_cell(c, col);
	char *e;
	if (!s)
		return 0;
	long long x = strtoll(s, &e, 10);
	if (e == s || *e)
		return 0;
	*v = x;
	return 1;
}

static const struct perfdb_tensor *slot(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present ? &c->in[i] : NULL;
}

/* q, k, v and the output present. */
static int slots(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	static const char *const what[] = { "0 (query)", "1 (key)", "2 (value)" };
	for (size_t i = 0; i < 3; i++)
		if (!slot(c, i))
			return BAD("slot %s is empty", what[i]);
	if (!c->nout || !c->out[0].present)
		return BAD("output 0 must be a float tensor");
	return 0;
}

/* The Runtime input_layout named (lay non-NULL): TND, BNSD or BNSD_NBSD. */
static int layout_of(const char *lay, int *layout, int *nbsd, struct perfdb_err *err)
{
	if (strcmp(lay, "TND") == 0) {
		*layout = PERFDB_FIA_TND;
		*nbsd = 0;
		return 0;
	}
	if (strcmp(lay, "BNSD") == 0 || strcmp(lay, "BNSD_NBSD") == 0) {
		*layout = PERFDB_FIA_BNSD;
		*nbsd = strcmp(lay, "BNSD_NBSD") == 0;
		return 0;
	}
	return BAD("input_layout %s not supported (TND, BNSD, BNSD_NBSD)", lay);
}

static int sparse_known(int64_t m)
{
	return m == 0 || m == 2 || m == 3;
}

int perfdb_rules_fia(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(slots(c, err));
	const char *lay = perfdb_case_cell(c, PERFDB_COL_RT_INPUT_LAYOUT);
	int layout, nbsd;
	if (lay)
		PERFDB_TRY(layout_of(lay, &layout, &nbsd, err));
	const struct perfdb_tensor *q = &c->in[PERFDB_FIA_Q];
	int64_t x;
	if (q->ndims >= 2 && plain_int(c, PERFDB_COL_RT_NUM_HEADS, &x) && x != q->dims[1])
		return BAD("Runtime num_heads disagrees with the query's %lld heads", (long long)q->dims[1]);
	if (plain_int(c, PERFDB_COL_RT_SPARSE_MODE, &x) && !sparse_known(x))
		return BAD("sparse_mode %d not supported (0, 2, 3)", (int)x);
	return 0;
}

void perfdb_fia_plan_release(struct perfdb_fia_plan *p)
{
	free(p->qlen);
	p->qlen = p->kvlen = p->qst = p->kvst = NULL;
}

/*
 * Per-batch lengths: from a Runtime list (cumulative when cum), else from the
 * slot's count and an even split of total (cum) or each_max.
 */
int perfdb_attn_lengths(const struct perfdb_op_case *c, const char *col, int cum, int64_t nb, int64_t total,
			int64_t each_max, int64_t *len, struct perfdb_err *err)
{
	const char *s = perfdb_case_cell(c, col);
	if (!s) {
		for (int64_t b = 0; b < nb; b++)
			len[b] = cum ? total / nb + (b == nb - 1 ? total % nb : 0) : each_max;
		return 0;
	}
	if (perfdb_attn_parse_list(s, len, nb) != nb)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %s must list %lld integers", c->op, col, (long long)nb);
	int64_t prev = 0;
	for (int64_t b = 0; b < nb; b++) {
		if (cum) {
			if (len[b] < prev)
				return perfdb_err_set(err, PERFDB_EINVAL, "%s: %s is not cumulative", c->op, col);
			int64_t v = len[b];
			len[b] -= prev;
			prev = v;
		} else if (len[b] < 0 || len[b] > each_max) {
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: %s value %lld outside 0..%lld", c->op, col,
					      (long long)len[b], (long long)each_max);
		}
	}
	if (cum && prev > total)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %s ends at %lld, past the %lld tokens", c->op, col,
				      (long long)prev, (long long)total);
	return 0;
}

int perfdb_attn_batches_alloc(int64_t nb, int64_t **qlen, int64_t **kvlen, int64_t **qst, int64_t **kvst,
			      struct perfdb_err *err)
{
	*qlen = calloc((size_t)nb * 4, sizeof(int64_t));
	if (!*qlen)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	*kvlen = *qlen + nb;
	*qst = *kvlen + nb;
	*kvst = *qst + nb;
	return 0;
}

int64_t perfdb_attn_count(const struct perfdb_op_case *c, const char *col, int64_t fallback)
{
	const char *s = perfdb_case_cell(c, col);
	if (!s)
		return fallback;
	int64_t *tmp = malloc(PERFDB_ATTN_MAX_BATCH * sizeof(int64_t));
	int64_t n = tmp ? perfdb_attn_parse_list(s, tmp, PERFDB_ATTN_MAX_BATCH) : -1;
	free(tmp);
	return n > 0 ? n : fallback;
}

/* Heads and kv geometry: hq, dq, paged/kv3d, bs, nblk, btc, hkv, tkv/skv. */
static int heads(const struct perfdb_op_case *c, struct perfdb_fia_plan *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = f->q, *k = f->k;
	f->hq = q->dims[1];
	f->dq = q->dims[q->ndims - 1];
	int64_t x;
	int r;
	if ((r = perfdb_attn_cell_int(c, PERFDB_COL_RT_NUM_HEADS, &x)) < 0 || (r && x != f->hq))
		return BAD("Runtime num_heads disagrees with the query's %lld heads", (long long)f->hq);
	f->bt = slot(c, PERFDB_FIA_BLOCK_TABLE);
	f->paged = f->bt != NULL;
	if (f->paged) {
		if (f->bt->ndims != 2 || perfdb_dtype_is_float(f->bt->dtype))
			return BAD("block_table (14) must be a 2-D integer tensor");
		f->btc = f->bt->dims[1];
		f->kv3d = k->ndims == 3;
		if (k->ndims != 3 && k->ndims != 4)
			return BAD("paged key must be (blocks,N,block,D) or (blocks,block,N*D)");
		f->nblk = k->dims[0];
		f->bs = f->kv3d ? k->dims[1] : k->dims[2];
		if ((r = perfdb_attn_cell_int(c, PERFDB_COL_RT_BLOCK_SIZE, &x)) < 0 || (r && x != f->bs))
			return BAD("Runtime block_size disagrees with the key cache's block of %lld", (long long)f->bs);
		if (f->kv3d) {
			if ((r = perfdb_attn_cell_int(c, PERFDB_COL_RT_NUM_KV_HEADS, &x)) < 0)
				return BAD("bad Runtime num_key_value_heads");
			f->hkv = r ? x : (f->dq > 0 && k->dims[2] % f->dq == 0 ? k->dims[2] / f->dq : 0);
		} else {
			f->hkv = k->dims[1];
		}
	} else {
		if (k->ndims != q->ndims)
			return BAD("key must have the query's rank without a block table");
		f->hkv = k->dims[1];
		if (f->layout == PERFDB_FIA_TND)
			f->tkv = k->dims[0];
		else if (k->dims[0] != q->dims[0])
			return BAD("key batch %lld differs from the query's %lld", (long long)k->dims[0],
				   (long long)q->dims[0]);
		else
			f->skv = k->dims[2];
	}
	if (f->hkv < 1 || f->hq % f->hkv != 0)
		return BAD("%lld query heads are not a multiple of %lld kv heads", (long long)f->hq, (long long)f->hkv);
	if ((r = perfdb_attn_cell_int(c, PERFDB_COL_RT_NUM_KV_HEADS, &x)) < 0 || (r && x != f->hkv))
		return BAD("Runtime num_key_value_heads disagrees with the key's %lld heads", (long long)f->hkv);
	return 0;
}

/* Head dims of key, value and the rope slots: dv, dr. */
static int head_dims(struct perfdb_fia_plan *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = f->q, *k = f->k, *v = f->v, *qr = f->qr, *kr = f->kr;
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
		f->dr = perfdb_rules_last(qr);   /* a scalar's rank differs from q's: refused below */
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
	return 0;
}

/* Batches and per-batch lengths and starts. */
static int batches(const struct perfdb_op_case *c, struct perfdb_fia_plan *f, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = f->q;
	if (f->layout == PERFDB_FIA_BNSD) {
		f->nb = q->dims[0];
		f->sq = q->dims[2];
	} else {
		f->t = q->dims[0];
		const struct perfdb_tensor *seq = slot(c, PERFDB_FIA_SEQ);
		f->nb = perfdb_attn_count(c, PERFDB_COL_RT_SEQ_VALUES, seq ? seq->numel : f->paged ? f->bt->dims[0] : 1);
	}
	if (f->nb < 1 || f->nb > PERFDB_ATTN_MAX_BATCH)
		return BAD("batch %lld outside 1..%d", (long long)f->nb, PERFDB_ATTN_MAX_BATCH);
	if (f->paged && f->bt->dims[0] != f->nb)
		return BAD("block_table has %lld rows for %lld batches", (long long)f->bt->dims[0], (long long)f->nb);
	PERFDB_TRY(perfdb_attn_batches_alloc(f->nb, &f->qlen, &f->kvlen, &f->qst, &f->kvst, err));
	int tnd = f->layout == PERFDB_FIA_TND;
	PERFDB_TRY(perfdb_attn_lengths(c, PERFDB_COL_RT_SEQ_VALUES, tnd, f->nb, f->t, f->sq, f->qlen, err));
	int kvcum = tnd && !f->paged;
	int64_t kvmax = f->paged ? f->btc * f->bs : f->skv;
	PERFDB_TRY(perfdb_attn_lengths(c, PERFDB_COL_RT_SEQ_KV_VALUES, kvcum, f->nb, f->tkv, kvmax, f->kvlen, err));
	for (int64_t b = 1; b < f->nb; b++) {
		f->qst[b] = f->qst[b - 1] + f->qlen[b - 1];
		f->kvst[b] = f->kvst[b - 1] + f->kvlen[b - 1];
	}
	return 0;
}

int perfdb_fia_plan(const struct perfdb_op_case *c, struct perfdb_fia_plan *f, struct perfdb_err *err)
{
	memset(f, 0, sizeof(*f));
	PERFDB_TRY(slots(c, err));
	f->q = slot(c, PERFDB_FIA_Q);
	f->k = slot(c, PERFDB_FIA_K);
	f->v = slot(c, PERFDB_FIA_V);
	f->mask = slot(c, PERFDB_FIA_MASK);
	f->qr = slot(c, PERFDB_FIA_Q_ROPE);
	f->kr = slot(c, PERFDB_FIA_K_ROPE);
	f->out = &c->out[0];
	const struct perfdb_tensor *q = f->q, *o = f->out;
	if (!!f->qr != !!f->kr)
		return BAD("query_rope (24) and key_rope (25) must be given together");
	const char *lay = perfdb_case_cell(c, PERFDB_COL_RT_INPUT_LAYOUT);
	if (lay) {
		PERFDB_TRY(layout_of(lay, &f->layout, &f->out_nbsd, err));
	} else {
		f->layout = q->ndims == 4 ? PERFDB_FIA_BNSD : PERFDB_FIA_TND;
		/* the reference's inferred 4-D layout is BNSD_NBSD; a BNSD-shaped output is taken as BNSD */
		f->out_nbsd = f->layout == PERFDB_FIA_BNSD &&
			      !(o->ndims == 4 && o->dims[0] == q->dims[0] && o->dims[1] == q->dims[1]);
	}
	int tnd = f->layout == PERFDB_FIA_TND;
	if (q->ndims != (tnd ? 3u : 4u))
		return BAD("query must be %s for layout %s", tnd ? "(T,N,D)" : "(B,N,S,D)", tnd ? "TND" : "BNSD");
	PERFDB_TRY(heads(c, f, err));
	PERFDB_TRY(head_dims(f, err));
	PERFDB_TRY(batches(c, f, err));
	int64_t x;
	int r;
	if ((r = perfdb_attn_cell_int(c, PERFDB_COL_RT_SPARSE_MODE, &x)) < 0)
		return BAD("bad Runtime sparse_mode");
	f->sparse = r ? (int)x : f->mask ? 3 : 0;
	if (!sparse_known(f->sparse))
		return BAD("sparse_mode %d not supported (0, 2, 3)", f->sparse);
	for (int64_t b = 0; b < f->nb && f->sparse == 3; b++)
		if (f->kvlen[b] < f->qlen[b])
			return BAD("sparse_mode 3 needs kv length >= q length (batch %lld)", (long long)b);
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
	return 0;
}
