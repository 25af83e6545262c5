/*
 * The attention ops' costs (opdef.h struct perfdb_op_cost, docs/ops.md
 * "Costs"), from the plans every backend runs: Q and O whole, K and V (and
 * their rope parts) for the real per-batch lengths only, since a paged or
 * padded cache holds more tokens than a batch reads; FLOPs the two GEMMs
 * Q·Kᵀ and P·V over the (query, key) pairs the mask lets through.
 */
#include "perfdb/schema.h"
#include "ops/attention.h"
#include "ops/costs.h"

/*
 * A paged cache says how many blocks it has, not how many tokens each
 * batch holds: without the recorded kv lengths (a profile's kernel rows
 * leave them out) the plan would take every batch as full, which is not
 * the row's work.  No cost then.
 */
static int kv_lengths_known(const struct perfdb_op_case *c, int paged, struct perfdb_err *err)
{
	if (!paged || perfdb_case_cell(c, PERFDB_COL_RT_SEQ_KV_VALUES))
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL, "%s: paged KV cache without its lengths (%s empty)", c->op,
			      PERFDB_COL_RT_SEQ_KV_VALUES);
}

/*
 * Visible (query, key) pairs of one batch: all (mode 0), the causal
 * triangle aligned to the first key (mode 2), or to the last (mode 3).
 */
static double pairs_of(int64_t q, int64_t kv, int mode)
{
	double dq = (double)q, dk = (double)kv;
	if (mode == 3 && kv >= q)
		return dq * (dk - dq) + dq * (dq + 1) / 2;
	if (mode == 2)
		return q <= kv ? dq * (dq + 1) / 2 : dk * (dk + 1) / 2 + (dq - dk) * dk;
	return dq * dk;
}

/* The bytes of the key-side tensors beyond the `used` of their `cap` tokens, which the op never reads. */
static double unread(const struct perfdb_tensor *const *kv, size_t n, double used, double cap)
{
	double b = 0;
	for (size_t i = 0; i < n; i++)
		if (kv[i] && kv[i]->present && cap > used)
			b += perfdb_cost_tbytes(kv[i]) * (1 - used / cap);
	return b;
}

static void attention(const struct perfdb_op_case *c, const struct perfdb_tensor *q, double flops, double bytes,
		      struct perfdb_op_cost *w)
{
	w->flops = flops;
	w->bytes = bytes;
	w->unit = PERFDB_OP_UNIT_MATRIX;
	w->dtype = q ? q->dtype : c->in[0].dtype;
}

int perfdb_cost_fia(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_fia_plan p;
	int rc = perfdb_fia_plan(c, &p, err);
	if (rc == 0)
		rc = kv_lengths_known(c, p.paged, err);
	if (rc == 0) {
		double pairs = 0, used = 0;
		for (int64_t b = 0; b < p.nb; b++) {
			pairs += pairs_of(p.qlen[b], p.kvlen[b], p.sparse);
			used += (double)p.kvlen[b];
		}
		double cap = p.paged ? (double)p.nblk * (double)p.bs
				     : p.layout == PERFDB_FIA_TND ? (double)p.tkv : (double)p.nb * (double)p.skv;
		const struct perfdb_tensor *kv[] = { p.k, p.v, p.kr };
		double flops = 2.0 * (double)p.hq * pairs * (double)(p.dq + p.dr + p.dv);
		attention(c, p.q, flops, perfdb_cost_all_bytes(c) - unread(kv, 3, used, cap), w);
	}
	perfdb_fia_plan_release(&p);
	return rc;
}

/* The key side's capacity in tokens: paged blocks, packed tokens, or B·S. */
static double qk_cap(const struct perfdb_attn_qk *x)
{
	return x->paged ? (double)x->nblk * (double)x->bs : x->kv_tnd ? (double)x->t2 : (double)x->nb * (double)x->s2;
}

/* Each query attends to its kk·sbs selected positions (at most the batch's keys); the keys touched are those. */
int perfdb_cost_sfa(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_sfa_plan p;
	int rc = perfdb_sfa_plan(c, &p, err);
	if (rc == 0)
		rc = kv_lengths_known(c, p.x.paged, err);
	if (rc == 0) {
		double pairs = 0, used = 0, sel = (double)p.kk * (double)p.sbs;
		for (int64_t b = 0; b < p.x.nb; b++) {
			double kvb = (double)p.x.kvlen[b], qb = (double)p.x.qlen[b];
			pairs += qb * (sel < kvb ? sel : kvb);
			used += (qb * sel < kvb ? qb * sel : kvb);
		}
		const struct perfdb_tensor *kv[] = { &c->in[1], &c->in[2], c->nin > 8 ? &c->in[8] : NULL };
		double flops = 2.0 * (double)p.x.n1 * pairs * (double)(p.x.d + p.dr + p.dv);
		attention(c, &c->in[0], flops, perfdb_cost_all_bytes(c) - unread(kv, 3, used, qk_cap(&p.x)), w);
	}
	perfdb_attn_qk_release(&p.x);
	return rc;
}

/* Scores q·k for every visible (query, key) pair and query head over the real lengths. */
int perfdb_cost_li(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_li_plan p;
	int rc = perfdb_li_plan(c, &p, err);
	if (rc == 0)
		rc = kv_lengths_known(c, p.x.paged, err);
	if (rc == 0) {
		double pairs = 0, used = 0;
		for (int64_t b = 0; b < p.x.nb; b++) {
			pairs += pairs_of(p.x.qlen[b], p.x.kvlen[b], p.mode);
			used += (double)p.x.kvlen[b];
		}
		const struct perfdb_tensor *kv[] = { &c->in[1] };
		double flops = 2.0 * (double)p.x.n1 * pairs * (double)p.x.d;
		attention(c, &c->in[0], flops, perfdb_cost_all_bytes(c) - unread(kv, 1, used, qk_cap(&p.x)), w);
	}
	perfdb_attn_qk_release(&p.x);
	return rc;
}

/* Packed (tokens, heads, dim) tensors hold exactly the real lengths: every tensor whole. */
int perfdb_cost_ring(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_ring_plan p;
	int rc = perfdb_ring_plan(c, &p, err);
	if (rc == 0) {
		double pairs = 0;
		for (int64_t b = 0; b < p.nb; b++)
			pairs += pairs_of(p.qlen[b], p.kvlen[b], p.causal ? 3 : 0);
		double flops = 2.0 * (double)p.n * pairs * (double)(p.dn + p.dr + p.dv);
		attention(c, &c->in[0], flops, perfdb_cost_all_bytes(c), w);
	}
	perfdb_ring_plan_release(&p);
	return rc;
}
