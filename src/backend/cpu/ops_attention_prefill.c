/*
 * Lane-per-query items of the CPU attention kernel (ops_attention_internal.h):
 * any item the decode kernels do not take (prefill, wide GQA groups).
 *
 * The item's M query rows are kept transposed, one row per lane: Qt
 * (dk x Mp), the score tile St (BK x Mp) and the output Ot (dv x Mp).  Both
 * products (ops_attention_fp32.c, or ops_attention_avx512bf16.c on bf16
 * inputs) then work from row-major key and value tiles, and the softmax's
 * row maxima and sums are plain lane-wise vector ops.
 */
#include <math.h>
#include <string.h>

#include "ops_attention_internal.h"

CPU_CLONES void attn_run_prefill(const struct attn_problem *p, const struct item *it, struct scr *s, int bf)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), mp = al16(M), dq = (size_t)p->dq, dr = (size_t)p->dr,
	       dk = dq + dr, dv = (size_t)p->dv;
	int64_t kvlen = p->kvlen[b], mine = kvlen, maxe = 0;
	/* queries, scaled, transposed to lanes; padding lanes are zero and see no key */
	memset(s->qt, 0, dk * mp * sizeof(float));
	for (size_t i = 0; i < mp; i++)
		s->end[i] = 0;
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		int64_t qr = p->q_row(p->ctx, b, h, si);
		cpu_load_row(p->q, (size_t)qr * dq, dq, s->row);
		if (dr)
			cpu_load_row(p->qr, (size_t)qr * dr, dr, s->row + dq);
		if (bf) {   /* (d, d+1) bf16 pairs per lane */
			uint32_t *q2 = (uint32_t *)s->qt;
			for (size_t d = 0; d < dk; d += 2)
				q2[d / 2 * mp + i] = perfdb_bf16_from_float(s->row[d] * p->scale) |
						     (uint32_t)perfdb_bf16_from_float(s->row[d + 1] * p->scale) << 16;
		} else {
			for (size_t d = 0; d < dk; d++)
				s->qt[d * mp + i] = s->row[d] * p->scale;
		}
		int64_t e = p->kv_end(p->ctx, b, g, si);
		e = e < 0 ? 0 : e > kvlen ? kvlen : e;
		s->end[i] = (int32_t)e;
		mine = e < mine ? e : mine;
		maxe = e > maxe ? e : maxe;
	}
	if (M < mp)
		mine = 0;
	memset(s->ot, 0, dv * mp * sizeof(float));
	for (size_t i = 0; i < mp; i++) {
		s->m[i] = NEG_BIG;
		s->l[i] = 0.0f;
	}
	size_t nc = mp / 16;
	for (int64_t j0 = 0; j0 < maxe; j0 += ATTN_BK) {
		size_t nk = (size_t)(maxe - j0 < ATTN_BK ? maxe - j0 : ATTN_BK), nk8 = (nk + 7) & ~(size_t)7;
#ifdef ATTN_BF16
		if (bf) {   /* bf16 tiles as stored: key rows raw, value rows interleaved by pairs */
			uint16_t *kb = (uint16_t *)s->k;
			const uint16_t *vsrc[2] = { NULL, NULL };
			for (size_t j = 0; j < nk8; j++) {
				if (j >= nk) {
					memset(kb + j * dk, 0, dk * sizeof(uint16_t));
					vsrc[j & 1] = NULL;
				} else {
					int64_t kr = p->kv_row(p->ctx, b, g, it->s0, j0 + (int64_t)j);
					memcpy(kb + j * dk, (const uint16_t *)p->k->data + (size_t)kr * dq, dq * 2);
					if (dr)
						memcpy(kb + j * dk + dq, (const uint16_t *)p->kr->data + (size_t)kr * dr, dr * 2);
					vsrc[j & 1] = (const uint16_t *)p->v->data + (size_t)kr * dv;
				}
				if (j & 1) {
					if (vsrc[0])
						attn_pack_v_bf16((uint32_t *)s->v + j / 2 * dv, vsrc[0], vsrc[1], dv);
					else
						memset((uint32_t *)s->v + j / 2 * dv, 0, dv * sizeof(uint32_t));
				}
			}
			attn_qk_tile_bf16(kb, dk, (const uint32_t *)s->qt, mp, s->st, nk8);
		} else
#endif
		{
			attn_load_kv_tile(p, it, j0, nk, s);
			/* the microkernels take 8 keys at a time: the padding keys are zero and masked */
			memset(s->k + nk * dk, 0, (nk8 - nk) * dk * sizeof(float));
			memset(s->v + nk * dv, 0, (nk8 - nk) * dv * sizeof(float));
			attn_qk_tile(s->k, dk, s->qt, mp, s->st, nk8);
		}
		int masked = j0 + (int64_t)nk8 > mine;
		for (size_t c = 0; c < nc; c++) {
			v16 *m = (v16 *)(s->m + c * 16), *l = (v16 *)(s->l + c * 16);
			v16i e = *(const v16i *)(s->end + c * 16);
			v16 mx = *m, sum = bc(0.0f);
			if (masked)
				for (size_t j = 0; j < nk8; j++) {
					v16 *x = (v16 *)(s->st + j * mp + c * 16);
					v16i jv = (v16i){ 0 } + (int32_t)(j0 + (int64_t)j);
					*x = vsel(jv < e, *x, bc(NEG_BIG));
					mx = vmax(mx, *x);
				}
			else
				for (size_t j = 0; j < nk8; j++)
					mx = vmax(mx, *(const v16 *)(s->st + j * mp + c * 16));
			for (size_t j = 0; j < nk8; j++) {
				v16 *x = (v16 *)(s->st + j * mp + c * 16);
				v16 pe = vexp(*x - mx);
				if (masked) {
					v16i jv = (v16i){ 0 } + (int32_t)(j0 + (int64_t)j);
					pe = vsel(jv < e, pe, bc(0.0f));
				}
				*x = pe;
				sum += pe;
			}
			v16 a = vexp(*m - mx);
			*(v16 *)(s->alpha + c * 16) = a;
			*l = *l * a + sum;
			*m = mx;
		}
#ifdef ATTN_BF16
		if (bf) {
			attn_pack_p_bf16(s->st, mp, nk8);
			attn_pv_tile_bf16((const uint32_t *)s->v, dv, (const uint32_t *)s->st, mp, nk8, s->ot, s->alpha);
		} else
#endif
			attn_pv_tile(s->v, dv, s->st, mp, nk8, s->ot, s->alpha);
	}
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		float inv = s->l[i] > 0.0f ? 1.0f / s->l[i] : 0.0f;
		for (size_t d = 0; d < dv; d++)
			s->row[d] = s->ot[d * mp + i] * inv;
		cpu_store_row(p->out, (size_t)p->o_row(p->ctx, b, h, si) * dv, dv, s->row);
		if (p->lse) {
			float v = s->l[i] > 0.0f ? s->m[i] + logf(s->l[i]) : -INFINITY;
			cpu_store_row(p->lse, (size_t)p->lse_at(p->ctx, b, h, si), 1, &v);
		}
	}
}
