/*
 * Decode items of the CPU attention kernel (ops_attention_internal.h): at
 * most ROWS_MAX query rows (one query token and G <= 16 heads), q·k and
 * value dims multiples of 16, fp32 products (ops_attention_fp32.c).  The
 * bf16 kernel for the same items is ops_attention_decode_avx512bf16.c.
 *
 * With so few rows the lane-per-query layout leaves lanes empty and spends
 * 2·dk FMAs per key.  Here the lanes run along the head dim instead: each
 * score is a dot product of a query row with a key row, and each output
 * row takes p·v over the tile's value rows: dk + dv lane-FMAs per key and
 * row.
 */
#include <math.h>
#include <string.h>

#include "ops_attention_internal.h"

static size_t dtype_bytes(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_BF16 || d == PERFDB_DTYPE_FLOAT16 ? 2 : 4;
}

/*
 * Decode reads every key and value once, from blocks scattered by the block
 * table: each 64-key tile asks for the next tile's rows ahead, so the
 * memory streams while this tile computes.
 */
static void prefetch_tile(const struct attn_problem *p, int64_t b, int64_t g, int64_t s0, int64_t j0, int64_t end)
{
	size_t ek = dtype_bytes(p->k->dtype), ev = dtype_bytes(p->v->dtype);
	for (int64_t j = j0; j < end && j < j0 + ATTN_BK; j++) {
		int64_t r = p->kv_row(p->ctx, b, g, s0, j);
		const char *kp = (const char *)p->k->data + (size_t)r * (size_t)p->dq * ek;
		const char *vp = (const char *)p->v->data + (size_t)r * (size_t)p->dv * ev;
		for (size_t o = 0; o < (size_t)p->dq * ek; o += 64)
			__builtin_prefetch(kp + o);
		for (size_t o = 0; o < (size_t)p->dv * ev; o += 64)
			__builtin_prefetch(vp + o);
	}
}

/* The largest (max) or the sum of x's lanes, in lane order. */
static inline float hred(v16 x, int max)
{
	float r = x[0];
	for (int i = 1; i < 16; i++)
		r = max ? (x[i] > r ? x[i] : r) : r + x[i];
	return r;
}

CPU_CLONES void attn_run_decode(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	int64_t kvlen = p->kvlen[b], maxe = 0;
	float *Q = s->qt, *O = s->ot;
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		int64_t qr = p->q_row(p->ctx, b, h, si);
		cpu_load_row(p->q, (size_t)qr * dq, dq, Q + i * dk);
		if (dr)
			cpu_load_row(p->qr, (size_t)qr * dr, dr, Q + i * dk + dq);
		for (size_t d = 0; d < dk; d++)
			Q[i * dk + d] *= p->scale;
		int64_t e = p->kv_end(p->ctx, b, g, si);
		e = e < 0 ? 0 : e > kvlen ? kvlen : e;
		s->end[i] = (int32_t)e;
		maxe = e > maxe ? e : maxe;
		s->m[i] = NEG_BIG;
		s->l[i] = 0.0f;
	}
	memset(O, 0, M * dv * sizeof(float));
	const v16i iota = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	int64_t kend = maxe < it->k1 ? maxe : it->k1;
	for (int64_t j0 = it->k0; j0 < kend; j0 += ATTN_BK) {
		size_t nk = (size_t)(kend - j0 < ATTN_BK ? kend - j0 : ATTN_BK), nk16 = (nk + 15) & ~(size_t)15;
		prefetch_tile(p, b, g, it->s0, j0 + ATTN_BK, kend);
		attn_load_kv_tile(p, it, j0, nk, s);
		memset(s->k + nk * dk, 0, (nk16 - nk) * dk * sizeof(float));
		for (size_t i = 0; i < M; i++) {
			float *S = s->st + i * ATTN_BK;
			attn_rows_qk(Q + i * dk, s->k, dk, nk16, S);
			v16i e = (v16i){ 0 } + s->end[i];
			v16 mxv = bc(s->m[i]);
			for (size_t jb = 0; jb < nk16; jb += 16) {
				v16 x;
				memcpy(&x, S + jb, sizeof(v16));
				x = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, x, bc(NEG_BIG));
				memcpy(S + jb, &x, sizeof(v16));
				mxv = vmax(mxv, x);
			}
			float mx = hred(mxv, 1);
			v16 sum = bc(0.0f);
			for (size_t jb = 0; jb < nk16; jb += 16) {
				v16 x;
				memcpy(&x, S + jb, sizeof(v16));
				v16 pe = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, vexp(x - mx), bc(0.0f));
				memcpy(S + jb, &pe, sizeof(v16));
				sum += pe;
			}
			float alpha = vexp(bc(s->m[i] - mx))[0];
			s->l[i] = s->l[i] * alpha + hred(sum, 0);
			s->m[i] = mx;
			attn_rows_pv(O + i * dv, alpha, S, s->v, dv, nk);
		}
	}
	for (size_t i = 0; i < M; i++)
		attn_decode_emit(p, it, s, i, s->m[i], s->l[i], O + i * dv);
}

/* Row i of it divided by l and stored, with its log-sum-exp. */
static void store_row(const struct attn_problem *p, const struct item *it, size_t i, float m, float l, float *o)
{
	int64_t G = p->hq / p->hkv, si = it->s0 + (int64_t)i / G, h = it->g * G + (int64_t)i % G;
	size_t dv = (size_t)p->dv;
	float inv = l > 0.0f ? 1.0f / l : 0.0f;
	for (size_t d = 0; d < dv; d++)
		o[d] *= inv;
	cpu_store_row(p->out, (size_t)p->o_row(p->ctx, it->b, h, si) * dv, dv, o);
	if (p->lse) {
		float v = l > 0.0f ? m + logf(l) : -INFINITY;
		cpu_store_row(p->lse, (size_t)p->lse_at(p->ctx, it->b, h, si), 1, &v);
	}
}

/* A part's row i: max, sum, then the dv unnormalised outputs. */
static float *part_row(const struct attn_problem *p, const float *buf, const struct item *it, size_t i)
{
	return (float *)buf + it->part + i * ((size_t)p->dv + 2);
}

void attn_decode_emit(const struct attn_problem *p, const struct item *it, struct scr *s, size_t i, float m,
		      float l, float *o)
{
	if (it->part < 0) {
		store_row(p, it, i, m, l, o);
		return;
	}
	float *r = part_row(p, s->parts, it, i);
	r[0] = m;
	r[1] = l;
	memcpy(r + 2, o, (size_t)p->dv * sizeof(float));
}

/*
 * Flash-decoding's combination: with the row's max m over the parts, each
 * part's sum and outputs scaled by exp(m_part - m) add up to what one pass
 * over all the keys gives (a part that saw none of the row's keys has
 * l = 0 and adds nothing).
 */
void attn_decode_merge(const struct attn_problem *p, const struct item *parts, size_t np, const float *buf,
		       float *row)
{
	size_t M = (size_t)(parts[0].ns * (p->hq / p->hkv)), dv = (size_t)p->dv;
	for (size_t i = 0; i < M; i++) {
		float m = NEG_BIG, l = 0.0f;
		for (size_t q = 0; q < np; q++) {
			const float *r = part_row(p, buf, &parts[q], i);
			if (r[1] > 0.0f && r[0] > m)
				m = r[0];
		}
		memset(row, 0, dv * sizeof(float));
		for (size_t q = 0; q < np; q++) {
			const float *r = part_row(p, buf, &parts[q], i);
			if (!(r[1] > 0.0f))
				continue;
			float a = expf(r[0] - m);
			l += r[1] * a;
			for (size_t d = 0; d < dv; d++)
				row[d] += a * r[2 + d];
		}
		store_row(p, &parts[0], i, m, l, row);
	}
}
