/*
 * The fp32 products of the CPU attention kernel (ops_attention_internal.h),
 * written once on 16-lane GCC vectors and compiled for AVX-512, AVX2 and
 * portable code by CPU_CLONES (picked at load time).
 *
 * Lane-per-query layout (ops_attention_prefill.c): the item's query rows
 * transposed, one per lane, so both products broadcast one key/value
 * element against 16 query lanes (S = K·Qt, O += Vᵀ·P) from row-major
 * tiles, with no transpose of K or V.  Decode layout
 * (ops_attention_decode.c): lanes along the head dim, one query row
 * against the tile.
 */
#include <string.h>

#include "ops_attention_internal.h"

/*
 * St[j][c] = Σ_d K[j][d]·Qt[d][c] for key rows j0..j0+R-1 and lane chunks
 * c0..c0+NC-1: R x NC accumulators, one chunk load and R broadcasts per d.
 */
static inline __attribute__((always_inline)) void
mk_qk(const float *K, size_t dk, const float *Qt, size_t mp, float *St, size_t j0, size_t c0,
      const int R, const int NC)
{
	v16 acc[8][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			acc[r][c] = bc(0.0f);
	for (size_t d = 0; d < dk; d++) {
		v16 q[4];
		for (int c = 0; c < NC; c++)
			q[c] = *(const v16 *)(Qt + d * mp + (c0 + (size_t)c) * 16);
		for (int r = 0; r < R; r++) {
			float k = K[(j0 + (size_t)r) * dk + d];
			for (int c = 0; c < NC; c++)
				acc[r][c] += k * q[c];
		}
	}
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			*(v16 *)(St + (j0 + (size_t)r) * mp + (c0 + (size_t)c) * 16) = acc[r][c];
}

/* Ot[d][c] = Ot[d][c]·alpha[c] + Σ_j V[j][d]·P[j][c] for d0..d0+R-1, chunks c0..c0+NC-1. */
static inline __attribute__((always_inline)) void
mk_pv(const float *V, size_t dv, const float *P, size_t mp, size_t nk, float *Ot, const float *alpha,
      size_t d0, size_t c0, const int R, const int NC)
{
	v16 acc[8][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			acc[r][c] = *(const v16 *)(Ot + (d0 + (size_t)r) * mp + (c0 + (size_t)c) * 16) *
				    *(const v16 *)(alpha + (c0 + (size_t)c) * 16);
	for (size_t j = 0; j < nk; j++) {
		v16 pv[4];
		for (int c = 0; c < NC; c++)
			pv[c] = *(const v16 *)(P + j * mp + (c0 + (size_t)c) * 16);
		for (int r = 0; r < R; r++) {
			float v = V[j * dv + d0 + (size_t)r];
			for (int c = 0; c < NC; c++)
				acc[r][c] += v * pv[c];
		}
	}
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			*(v16 *)(Ot + (d0 + (size_t)r) * mp + (c0 + (size_t)c) * 16) = acc[r][c];
}

static inline __attribute__((always_inline)) void
gemm_qk(const float *K, size_t dk, const float *Qt, size_t mp, float *St, size_t nk)
{
	size_t nc = mp / 16;
	for (size_t c0 = 0; c0 < nc; c0 += 4) {
		size_t w = nc - c0 < 4 ? nc - c0 : 4;
		for (size_t j0 = 0; j0 < nk; j0 += 8) {
			switch (w) {
			case 4: mk_qk(K, dk, Qt, mp, St, j0, c0, 4, 4); mk_qk(K, dk, Qt, mp, St, j0 + 4, c0, 4, 4); break;
			case 3: mk_qk(K, dk, Qt, mp, St, j0, c0, 4, 3); mk_qk(K, dk, Qt, mp, St, j0 + 4, c0, 4, 3); break;
			case 2: mk_qk(K, dk, Qt, mp, St, j0, c0, 8, 2); break;
			default: mk_qk(K, dk, Qt, mp, St, j0, c0, 8, 1); break;
			}
		}
	}
}

static inline __attribute__((always_inline)) void
gemm_pv(const float *V, size_t dv, const float *P, size_t mp, size_t nk, float *Ot, const float *alpha)
{
	size_t nc = mp / 16;
	for (size_t c0 = 0; c0 < nc; c0 += 4) {
		size_t w = nc - c0 < 4 ? nc - c0 : 4;
		size_t d0 = 0;
		for (; d0 + 8 <= dv; d0 += 8) {
			switch (w) {
			case 4: mk_pv(V, dv, P, mp, nk, Ot, alpha, d0, c0, 4, 4);
				mk_pv(V, dv, P, mp, nk, Ot, alpha, d0 + 4, c0, 4, 4); break;
			case 3: mk_pv(V, dv, P, mp, nk, Ot, alpha, d0, c0, 4, 3);
				mk_pv(V, dv, P, mp, nk, Ot, alpha, d0 + 4, c0, 4, 3); break;
			case 2: mk_pv(V, dv, P, mp, nk, Ot, alpha, d0, c0, 8, 2); break;
			default: mk_pv(V, dv, P, mp, nk, Ot, alpha, d0, c0, 8, 1); break;
			}
		}
		for (; d0 < dv; d0++)
			for (size_t c = c0; c < c0 + w; c++)
				mk_pv(V, dv, P, mp, nk, Ot, alpha, d0, c, 1, 1);
	}
}

CPU_CLONES void attn_qk_tile(const float *K, size_t dk, const float *Qt, size_t mp, float *St, size_t nk)
{
	gemm_qk(K, dk, Qt, mp, St, nk);
}

CPU_CLONES void attn_pv_tile(const float *V, size_t dv, const float *P, size_t mp, size_t nk, float *Ot,
			     const float *alpha)
{
	gemm_pv(V, dv, P, mp, nk, Ot, alpha);
}

/*
 * ---- decode layout ---------------------------------------------------
 * Each score is a dot product of a query row (held in registers) with a
 * key row, 16 keys are reduced into one vector of 16 scores by a
 * transposing add tree, and each output row (in registers) takes p·v over
 * the tile's value rows.
 */
#ifdef __clang__
#define SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUF(a, b, ...) __builtin_shuffle(a, b, (v16i){ __VA_ARGS__ })
#endif

/* The 16 lane sums of x[0..15], in order, as one vector. */
static inline v16 hsum16(v16 *x)
{
	v16 t[8], u[4], w[2];
	for (int k = 0; k < 8; k++)
		t[k] = SHUF(x[2 * k], x[2 * k + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
		       SHUF(x[2 * k], x[2 * k + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
	for (int k = 0; k < 4; k++)
		u[k] = SHUF(t[2 * k], t[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
		       SHUF(t[2 * k], t[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
	for (int k = 0; k < 2; k++)
		w[k] = SHUF(u[2 * k], u[2 * k + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
		       SHUF(u[2 * k], u[2 * k + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
	return SHUF(w[0], w[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
	       SHUF(w[0], w[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

/* Scores of query row q against keys K[0..nk16) (nk16 a multiple of 16), NQ = dk/16 chunks in registers. */
static inline __attribute__((always_inline)) void
rows_qk(const float *q, const float *K, size_t dk, size_t nk16, float *S, const int NQ)
{
	v16 qv[8];
	for (int c = 0; c < NQ; c++)
		memcpy(&qv[c], q + (size_t)c * 16, sizeof(v16));
	for (size_t jb = 0; jb < nk16; jb += 16) {
		/* 8 keys at a time: 8 independent FMA chains hide the FMA latency */
		v16 acc[16];
		for (int half = 0; half < 16; half += 8) {
			v16 a[8];
			for (int j = 0; j < 8; j++)
				a[j] = bc(0.0f);
			for (int c = 0; c < NQ; c++)
				for (int j = 0; j < 8; j++) {
					v16 k;
					memcpy(&k, K + (jb + (size_t)(half + j)) * dk + (size_t)c * 16, sizeof(v16));
					a[j] += qv[c] * k;
				}
			for (int j = 0; j < 8; j++)
				acc[half + j] = a[j];
		}
		v16 r = hsum16(acc);
		memcpy(S + jb, &r, sizeof(v16));
	}
}

/* Same without the register limit (dk/16 > 8 or not a constant): q from memory. */
static inline void rows_qk_any(const float *q, const float *K, size_t dk, size_t nk16, float *S)
{
	for (size_t jb = 0; jb < nk16; jb += 16) {
		v16 acc[16];
		for (int j = 0; j < 16; j++) {
			const float *kr = K + (jb + (size_t)j) * dk;
			v16 a = bc(0.0f), k, qq;
			for (size_t c = 0; c < dk; c += 16) {
				memcpy(&k, kr + c, sizeof(v16));
				memcpy(&qq, q + c, sizeof(v16));
				a += qq * k;
			}
			acc[j] = a;
		}
		v16 r = hsum16(acc);
		memcpy(S + jb, &r, sizeof(v16));
	}
}

/* o[0..16·NV) = o·alpha + Σ_j P[j]·V[j][0..16·NV) over nk keys, o in registers. */
static inline __attribute__((always_inline)) void
rows_pv(float *o, float alpha, const float *P, const float *V, size_t dv, size_t nk, const int NV)
{
	v16 acc[8];
	for (int c = 0; c < NV; c++) {
		memcpy(&acc[c], o + (size_t)c * 16, sizeof(v16));
		acc[c] *= alpha;
	}
	for (size_t j = 0; j < nk; j++) {
		float pj = P[j];
		const float *vr = V + j * dv;
		for (int c = 0; c < NV; c++) {
			v16 v;
			memcpy(&v, vr + (size_t)c * 16, sizeof(v16));
			acc[c] += pj * v;
		}
	}
	for (int c = 0; c < NV; c++)
		memcpy(o + (size_t)c * 16, &acc[c], sizeof(v16));
}

CPU_CLONES void attn_rows_qk(const float *q, const float *K, size_t dk, size_t nk16, float *S)
{
	if (dk == 128)
		rows_qk(q, K, dk, nk16, S, 8);
	else if (dk == 64)
		rows_qk(q, K, dk, nk16, S, 4);
	else
		rows_qk_any(q, K, dk, nk16, S);
}

CPU_CLONES void attn_rows_pv(float *o, float alpha, const float *P, const float *V, size_t dv, size_t nk)
{
	size_t c0 = 0;
	for (; c0 + 128 <= dv; c0 += 128)
		rows_pv(o + c0, alpha, P, V + c0, dv, nk, 8);
	for (; c0 < dv; c0 += 16)
		rows_pv(o + c0, alpha, P, V + c0, dv, nk, 1);
}
