/*
 * Flash attention on the CPU (ops_attention_kernel.h): online softmax over
 * tiles of ATTN_BK keys, so memory stays bounded whatever the sequence.
 *
 * A work item is (batch b, kv head g, a run of query positions) with all
 * G = hq/hkv query heads of g, so every key tile is loaded and converted to
 * fp32 once for the G·positions rows that use it (GQA, MLA's one kv head).
 * The item's M query rows are kept transposed, one row per lane: Qt
 * (dk x Mp), the score tile St (BK x Mp) and the output Ot (dv x Mp).  Both
 * products then broadcast one key/value element against 16 query lanes
 * (S = K·Qt, O += Vᵀ·P) from row-major tiles, with no transpose of K or V,
 * and the softmax's row maxima and sums are plain lane-wise vector ops.
 * 16-lane GCC vector types compile to AVX-512 (AVX2, SSE) in the clones
 * of CPU_CLONES.  Items are shared between threads through an atomic
 * counter (causal items differ in cost).
 */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "ops_attention_kernel.h"

/* the 16-lane helpers are static and inlined: no call passes a vector across an ABI boundary */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
/* -std=c17 turns contraction off; the products below are meant as fused multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

#define NEG_BIG (-1e30f)
#define MAX_ROWS 128          /* query rows per item (M) */

struct item {
	int64_t b, g, s0, ns;
};

struct attn_plan {
	const struct attn_problem *p;
	struct item *items;
	size_t nitems;
	int threads;
	size_t mp, dk, scratch;   /* floats per thread */
	float *mem;
	atomic_size_t next;
	int64_t bq;
	int rows_path;            /* decode-shaped items take run_item_rows */
	int bf16;                 /* bf16 tiles and vdpbf16ps (ATTN_BF16) */
};

/*
 * A scalar as 16 lanes.  Written as vector + scalar: GCC builds a 16-element
 * literal (or a shuffle) through the stack, but broadcasts the scalar
 * operand of a vector operation in a register.  These helpers are always
 * inlined: an out-of-line copy (GCC makes one at -O1, the sanitizer build)
 * would return a 64-byte vector from a function compiled without AVX-512,
 * which -Wpsabi rejects.
 */
static inline __attribute__((always_inline)) v16 bc(float x)
{
	return (v16){ 0 } + x;
}

static inline __attribute__((always_inline)) v16 vsel(v16i m, v16 a, v16 b)
{
	return (v16)(((v16i)a & m) | ((v16i)b & ~m));
}

static inline __attribute__((always_inline)) v16 vmax(v16 a, v16 b)
{
	return vsel(a > b, a, b);
}

/* cpu_expf over 16 lanes (same polynomial, same clamps, without the +inf case: scores stay finite). */
static inline __attribute__((always_inline)) v16 vexp(v16 x)
{
	x = vmax(x, bc(-87.3f));
	x = vsel(x < bc(88.7f), x, bc(88.7f));
	v16 n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
	v16 r = x - n * 0.693145752f - n * 1.42860677e-6f;
	v16 p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
		r * (8.33333377e-3f + r * 1.38888892e-3f)))));
	v16i e = __builtin_convertvector(n, v16i) + 127;
	e &= e > 0;
	return p * (v16)(e << 23);
}

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

/*
 * ---- bf16 inputs on CPUs with AVX512_BF16 ------------------------------
 * vdpbf16ps multiplies bf16 pairs and accumulates in fp32 (two products per
 * lane and instruction, twice the fp32 FMA rate), as the NPU's cube unit
 * takes bf16 operands with fp32 accumulation.  The pairs run along the
 * reduction dim: for S = K·Qt along d (a key's two neighbouring bf16
 * elements are one 32-bit broadcast straight from the cache row, the
 * queries are packed (d, d+1) per lane once per item); for O += Vᵀ·P along
 * the keys (P rounded to bf16 and packed (j, j+1) per lane, V rows j and
 * j+1 interleaved per tile).  The softmax stays fp32.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define ATTN_BF16 1
#define TBF __attribute__((target("avx512f,avx512bw,avx512bf16")))

static inline __attribute__((always_inline)) TBF void
mkb_qk(const uint16_t *K, size_t dk, const uint32_t *Qt2, size_t mp, float *St, size_t j0, size_t c0,
       const int R, const int NC)
{
	__m512 acc[8][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			acc[r][c] = _mm512_setzero_ps();
	for (size_t q = 0; q < dk / 2; q++) {
		__m512bh qv[4];
		for (int c = 0; c < NC; c++)
			qv[c] = (__m512bh)_mm512_load_si512(Qt2 + q * mp + (c0 + (size_t)c) * 16);
		for (int r = 0; r < R; r++) {
			uint32_t w;
			memcpy(&w, K + (j0 + (size_t)r) * dk + 2 * q, 4);
			__m512bh kb = (__m512bh)_mm512_set1_epi32((int)w);
			for (int c = 0; c < NC; c++)
				acc[r][c] = _mm512_dpbf16_ps(acc[r][c], kb, qv[c]);
		}
	}
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			_mm512_store_ps(St + (j0 + (size_t)r) * mp + (c0 + (size_t)c) * 16, acc[r][c]);
}

static TBF void gemm_qk_bf16(const uint16_t *K, size_t dk, const uint32_t *Qt2, size_t mp, float *St, size_t nk)
{
	size_t nc = mp / 16;
	for (size_t c0 = 0; c0 < nc; c0 += 4) {
		size_t w = nc - c0 < 4 ? nc - c0 : 4;
		for (size_t j0 = 0; j0 < nk; j0 += 8) {
			switch (w) {
			case 4: mkb_qk(K, dk, Qt2, mp, St, j0, c0, 4, 4); mkb_qk(K, dk, Qt2, mp, St, j0 + 4, c0, 4, 4); break;
			case 3: mkb_qk(K, dk, Qt2, mp, St, j0, c0, 4, 3); mkb_qk(K, dk, Qt2, mp, St, j0 + 4, c0, 4, 3); break;
			case 2: mkb_qk(K, dk, Qt2, mp, St, j0, c0, 8, 2); break;
			default: mkb_qk(K, dk, Qt2, mp, St, j0, c0, 8, 1); break;
			}
		}
	}
}

static inline __attribute__((always_inline)) TBF void
mkb_pv(const uint32_t *Vp, size_t dv, const uint32_t *P2, size_t mp, size_t nk, float *Ot, const float *alpha,
       size_t d0, size_t c0, const int R, const int NC)
{
	__m512 acc[8][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			acc[r][c] = _mm512_mul_ps(_mm512_load_ps(Ot + (d0 + (size_t)r) * mp + (c0 + (size_t)c) * 16),
						  _mm512_load_ps(alpha + (c0 + (size_t)c) * 16));
	for (size_t q = 0; q < nk / 2; q++) {
		__m512bh pv[4];
		for (int c = 0; c < NC; c++)
			pv[c] = (__m512bh)_mm512_load_si512(P2 + q * mp + (c0 + (size_t)c) * 16);
		for (int r = 0; r < R; r++) {
			__m512bh vb = (__m512bh)_mm512_set1_epi32((int)Vp[q * dv + d0 + (size_t)r]);
			for (int c = 0; c < NC; c++)
				acc[r][c] = _mm512_dpbf16_ps(acc[r][c], vb, pv[c]);
		}
	}
	for (int r = 0; r < R; r++)
		for (int c = 0; c < NC; c++)
			_mm512_store_ps(Ot + (d0 + (size_t)r) * mp + (c0 + (size_t)c) * 16, acc[r][c]);
}

static TBF void gemm_pv_bf16(const uint32_t *Vp, size_t dv, const uint32_t *P2, size_t mp, size_t nk, float *Ot,
			     const float *alpha)
{
	size_t nc = mp / 16;
	for (size_t c0 = 0; c0 < nc; c0 += 4) {
		size_t w = nc - c0 < 4 ? nc - c0 : 4;
		size_t d0 = 0;
		for (; d0 + 8 <= dv; d0 += 8) {
			switch (w) {
			case 4: mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0, c0, 4, 4);
				mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0 + 4, c0, 4, 4); break;
			case 3: mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0, c0, 4, 3);
				mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0 + 4, c0, 4, 3); break;
			case 2: mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0, c0, 8, 2); break;
			default: mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0, c0, 8, 1); break;
			}
		}
		for (; d0 < dv; d0++)
			for (size_t c = c0; c < c0 + w; c++)
				mkb_pv(Vp, dv, P2, mp, nk, Ot, alpha, d0, c, 1, 1);
	}
}

/* Vp[q][d] = V[2q][d] | V[2q+1][d] << 16 from two bf16 rows (r1 NULL: zeros). */
static TBF void pack_v(uint32_t *dst, const uint16_t *r0, const uint16_t *r1, size_t dv)
{
	size_t d = 0;
	for (; d + 16 <= dv; d += 16) {
		__m512i a = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(r0 + d)));
		__m512i b = r1 ? _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(r1 + d)))
			       : _mm512_setzero_si512();
		_mm512_storeu_si512(dst + d, _mm512_or_si512(a, _mm512_slli_epi32(b, 16)));
	}
	for (; d < dv; d++)
		dst[d] = r0[d] | (uint32_t)(r1 ? r1[d] : 0) << 16;
}

/* P2 row q (in place over St row q) = bf16(St[2q]) | bf16(St[2q+1]) << 16, rounded to nearest even. */
static TBF void pack_p(float *St, size_t mp, size_t nk)
{
	const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1),
		      hi = _mm512_set1_epi32((int)0xffff0000u);
	for (size_t q = 0; q < nk / 2; q++)
		for (size_t c = 0; c < mp; c += 16) {
			__m512i u0 = _mm512_castps_si512(_mm512_load_ps(St + 2 * q * mp + c));
			__m512i u1 = _mm512_castps_si512(_mm512_load_ps(St + (2 * q + 1) * mp + c));
			__m512i r0 = _mm512_add_epi32(u0, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u0, 16), one)));
			__m512i r1 = _mm512_add_epi32(u1, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u1, 16), one)));
			__m512i w = _mm512_or_si512(_mm512_srli_epi32(r0, 16), _mm512_and_si512(r1, hi));
			_mm512_store_si512((__m512i *)(St + q * mp + c), w);
		}
}
#endif


/* Scratch layout of one thread (floats, every part 64-byte aligned). */
struct scr {
	float *qt, *k, *v, *st, *ot, *m, *l, *alpha, *row;
	int32_t *end;
};

static size_t al16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static size_t scr_floats(size_t mp, size_t dk, size_t dv)
{
	size_t w = dk > dv ? dk : dv;
	return al16(dk * mp) + al16(ATTN_BK * dk) + al16(ATTN_BK * dv) + al16(ATTN_BK * mp) +
	       al16(dv * mp) + 5 * al16(mp) + al16(w);
}

static struct scr scr_at(float *base, size_t mp, size_t dk, size_t dv)
{
	struct scr s;
	float *p = base;
	s.qt = p; p += al16(dk * mp);
	s.k = p; p += al16(ATTN_BK * dk);
	s.v = p; p += al16(ATTN_BK * dv);
	s.st = p; p += al16(ATTN_BK * mp);
	s.ot = p; p += al16(dv * mp);
	s.m = p; p += al16(mp);
	s.l = p; p += al16(mp);
	s.alpha = p; p += al16(mp);
	s.end = (int32_t *)p; p += al16(mp);
	p += al16(mp);
	s.row = p;
	return s;
}

CPU_CLONES static void run_item(const struct attn_problem *p, const struct item *it, struct scr *s, int bf)
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
				q2[d / 2 * mp + i] = cpu_f32_to_bf16(s->row[d] * p->scale) |
						     (uint32_t)cpu_f32_to_bf16(s->row[d + 1] * p->scale) << 16;
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
						pack_v((uint32_t *)s->v + j / 2 * dv, vsrc[0], vsrc[1], dv);
					else
						memset((uint32_t *)s->v + j / 2 * dv, 0, dv * sizeof(uint32_t));
				}
			}
			gemm_qk_bf16(kb, dk, (const uint32_t *)s->qt, mp, s->st, nk8);
		} else
#endif
		{
			for (size_t j = 0; j < nk; j++) {
				int64_t kr = p->kv_row(p->ctx, b, g, it->s0, j0 + (int64_t)j);
				cpu_load_row(p->k, (size_t)kr * dq, dq, s->k + j * dk);
				if (dr)
					cpu_load_row(p->kr, (size_t)kr * dr, dr, s->k + j * dk + dq);
				cpu_load_row(p->v, (size_t)kr * dv, dv, s->v + j * dv);
			}
			/* the microkernels take 8 keys at a time: the padding keys are zero and masked */
			memset(s->k + nk * dk, 0, (nk8 - nk) * dk * sizeof(float));
			memset(s->v + nk * dv, 0, (nk8 - nk) * dv * sizeof(float));
			gemm_qk(s->k, dk, s->qt, mp, s->st, nk8);
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
			pack_p(s->st, mp, nk8);
			gemm_pv_bf16((const uint32_t *)s->v, dv, (const uint32_t *)s->st, mp, nk8, s->ot, s->alpha);
		} else
#endif
			gemm_pv(s->v, dv, s->st, mp, nk8, s->ot, s->alpha);
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

CPU_CLONES void attn_qk_tile(const float *K, size_t dk, const float *Qt, size_t mp, float *St, size_t nk)
{
	gemm_qk(K, dk, Qt, mp, St, nk);
}

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

/*
 * ---- few query rows (decode: M <= 16) -------------------------------
 * With one query token and G <= 16 heads the lane-per-query layout leaves
 * lanes empty and spends 2·dk FMAs per key.  Here the lanes run along the
 * head dim instead: each score is a dot product of a query row (held in
 * registers) with a key row, 16 keys are reduced into one vector of 16
 * scores by a transposing add tree, and each output row (in registers)
 * takes p·v over the tile's value rows: dk + dv lane-FMAs per key and row.
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

static inline float hred(v16 x, int max)
{
	float r = x[0];
	for (int i = 1; i < 16; i++)
		r = max ? (x[i] > r ? x[i] : r) : r + x[i];
	return r;
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

CPU_CLONES static void run_item_rows(const struct attn_problem *p, const struct item *it, struct scr *s)
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
	for (int64_t j0 = 0; j0 < maxe; j0 += ATTN_BK) {
		size_t nk = (size_t)(maxe - j0 < ATTN_BK ? maxe - j0 : ATTN_BK), nk16 = (nk + 15) & ~(size_t)15;
		prefetch_tile(p, b, g, it->s0, j0 + ATTN_BK, maxe);
		for (size_t j = 0; j < nk; j++) {
			int64_t kr = p->kv_row(p->ctx, b, g, it->s0, j0 + (int64_t)j);
			cpu_load_row(p->k, (size_t)kr * dq, dq, s->k + j * dk);
			if (dr)
				cpu_load_row(p->kr, (size_t)kr * dr, dr, s->k + j * dk + dq);
			cpu_load_row(p->v, (size_t)kr * dv, dv, s->v + j * dv);
		}
		memset(s->k + nk * dk, 0, (nk16 - nk) * dk * sizeof(float));
		for (size_t i = 0; i < M; i++) {
			float *S = s->st + i * ATTN_BK;
			if (dk == 128)
				rows_qk(Q + i * dk, s->k, dk, nk16, S, 8);
			else if (dk == 64)
				rows_qk(Q + i * dk, s->k, dk, nk16, S, 4);
			else
				rows_qk_any(Q + i * dk, s->k, dk, nk16, S);
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
			float *o = O + i * dv;
			size_t c0 = 0;
			for (; c0 + 128 <= dv; c0 += 128)
				rows_pv(o + c0, alpha, S, s->v + c0, dv, nk, 8);
			for (; c0 < dv; c0 += 16)
				rows_pv(o + c0, alpha, S, s->v + c0, dv, nk, 1);
		}
	}
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		float inv = s->l[i] > 0.0f ? 1.0f / s->l[i] : 0.0f;
		for (size_t d = 0; d < dv; d++)
			O[i * dv + d] *= inv;
		cpu_store_row(p->out, (size_t)p->o_row(p->ctx, b, h, si) * dv, dv, O + i * dv);
		if (p->lse) {
			float v = s->l[i] > 0.0f ? s->m[i] + logf(s->l[i]) : -INFINITY;
			cpu_store_row(p->lse, (size_t)p->lse_at(p->ctx, b, h, si), 1, &v);
		}
	}
}

#ifdef ATTN_BF16
/*
 * The decode kernel: run_item_rows for bf16 on AVX512_BF16.  Both products
 * are small GEMMs on vdpbf16ps with a broadcast operand.  Scores: the key
 * tile transposed by dword pairs (kt_block), so a broadcast query pair times
 * one Kt row gives 16 keys' partial scores, with no horizontal sums.
 * p·v: value rows interleaved by key pairs with vpunpck{l,h}wd, which work
 * inside 128-bit lanes, so a 32-dim chunk's lanes hold its dims in
 * vlane_dim() order and each output row is put back in order once, when
 * stored.  Both run 4 query rows at a time: a vector loaded serves 4 rows,
 * and 16 independent accumulators cover the vdpbf16ps latency.  A fully
 * visible tile's softmax takes its row maxima from the score kernel and
 * needs no masks.  The next tile streams in through the prefetch queue.
 */

/* rows[t] = the row of key j0 + t, t < n. */
static void tile_rows(const struct attn_problem *p, int64_t b, int64_t g, int64_t s0, int64_t j0, int64_t n,
		      int64_t *rows)
{
	if (p->kv_rows) {
		p->kv_rows(p->ctx, b, g, s0, j0, n, rows);
		return;
	}
	for (int64_t t = 0; t < n; t++)
		rows[t] = p->kv_row(p->ctx, b, g, s0, j0 + t);
}

/*
 * The next tile's cache lines, prefetched two per step of the q·k and p·v
 * loops (GQA 8 rows, d 128: 512 lines over 256 steps), so memory streams
 * while the core computes; what is left goes at the tile's end.
 * Prefetching a tile in bursts (per tile, per 16 keys) stalled on the
 * core's miss buffers and left the arithmetic phases without memory traffic.
 */
#define PFQ_LINES (ATTN_BK * 32)   /* dk <= 256 and dv <= 512 bf16: 24 lines a key */
struct pfq {
	const char *a[PFQ_LINES];
	size_t i, n;
};

static inline __attribute__((always_inline)) void pfq_step(struct pfq *q)
{
	for (size_t k = 0; k < 2 && q->i < q->n; k++)
		__builtin_prefetch(q->a[q->i++]);
}

static void pfq_flush(struct pfq *q)
{
	while (q->i < q->n)
		__builtin_prefetch(q->a[q->i++]);
}

/* The lines of the K (K rope) and V rows rows[0..n). */
static void pfq_fill(struct pfq *q, const struct attn_problem *p, const int64_t *rows, int64_t n)
{
	size_t nk = (size_t)p->dq * 2, nr = (size_t)p->dr * 2, nvb = (size_t)p->dv * 2;
	q->i = q->n = 0;
	for (int64_t t = 0; t < n; t++) {
		const char *kp = (const char *)p->k->data + (size_t)rows[t] * nk;
		const char *vpp = (const char *)p->v->data + (size_t)rows[t] * nvb;
		const char *rp = nr ? (const char *)p->kr->data + (size_t)rows[t] * nr : NULL;
		for (size_t o = 0; o < nk && q->n < PFQ_LINES; o += 64)
			q->a[q->n++] = kp + o;
		for (size_t o = 0; o < nr && q->n < PFQ_LINES; o += 64)
			q->a[q->n++] = rp + o;
		for (size_t o = 0; o < nvb && q->n < PFQ_LINES; o += 64)
			q->a[q->n++] = vpp + o;
	}
}

/* Vp[q] = bf16 rows 2q, 2q+1 interleaved per 32-dim chunk (r1 NULL: zeros). */
static TBF void pack_v_lanes(uint32_t *dst, const uint16_t *r0, const uint16_t *r1, size_t dv)
{
	for (size_t d = 0; d < dv; d += 32) {
		__m512i a = _mm512_loadu_si512(r0 + d);
		__m512i b = r1 ? _mm512_loadu_si512(r1 + d) : _mm512_setzero_si512();
		_mm512_storeu_si512(dst + d, _mm512_unpacklo_epi16(a, b));
		_mm512_storeu_si512(dst + d + 16, _mm512_unpackhi_epi16(a, b));
	}
}

/* The dim held by lane l (0..31) of a 32-dim chunk packed by pack_v_lanes. */
static inline size_t vlane_dim(size_t l)
{
	return l % 16 / 4 * 8 + l / 16 * 4 + l % 4;
}

/*
 * Both products of the decode kernel: acc[r][c] += Σ_k pair(a[r·as + k])·B[k·bs + 16c ..] for R rows and
 * W vectors (constants), a broadcast dword pair of a against a row of B, two prefetches per step.
 */
static inline __attribute__((always_inline)) TBF void
bcast_gemm(__m512 acc[4][4], const uint32_t *a, size_t as, const uint32_t *bm, size_t bs, size_t nk,
	   struct pfq *pq, const int R, const int W)
{
	for (size_t k = 0; k < nk; k++) {
		pfq_step(pq);
		__m512bh bv[4];
		for (int c = 0; c < W; c++)
			bv[c] = (__m512bh)_mm512_loadu_si512(bm + k * bs + (size_t)c * 16);
		for (int r = 0; r < R; r++) {
			__m512bh ab = (__m512bh)_mm512_set1_epi32((int)a[(size_t)r * as + k]);
			for (int c = 0; c < W; c++)
				acc[r][c] = _mm512_dpbf16_ps(acc[r][c], ab, bv[c]);
		}
	}
}

/* O rows [0, R), lanes [0, 16·W): o = o·alpha + Σ_q pair(p_2q, p_2q+1)·Vp[q] (R, W constants). */
static inline __attribute__((always_inline)) TBF void
rows_pv_bf16(float *O, size_t dv, const float *alpha, const uint32_t *pw, size_t pws, const uint32_t *vp,
	     size_t npairs, struct pfq *pq, const int R, const int W)
{
	__m512 acc[4][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			acc[r][c] = _mm512_mul_ps(_mm512_loadu_ps(O + (size_t)r * dv + (size_t)c * 16),
						  _mm512_set1_ps(alpha[r]));
	bcast_gemm(acc, pw, pws, vp, dv, npairs, pq, R, W);
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			_mm512_storeu_ps(O + (size_t)r * dv + (size_t)c * 16, acc[r][c]);
}

#define PV_ROWS(R)                                                                                      \
	do {                                                                                            \
		size_t c0 = 0;                                                                          \
		for (; c0 + 4 <= nv; c0 += 4)                                                           \
			rows_pv_bf16(O + r0 * dv + c0 * 16, dv, s->alpha + r0, pw0 + r0 * ATTN_BK, ATTN_BK, \
				     vp + c0 * 16, np, pq, R, 4);                                           \
		for (; c0 < nv; c0 += 2)                                                                \
			rows_pv_bf16(O + r0 * dv + c0 * 16, dv, s->alpha + r0, pw0 + r0 * ATTN_BK, ATTN_BK, \
				     vp + c0 * 16, np, pq, R, 2);                                           \
	} while (0)

/*
 * The scores as a GEMM like p·v: the key tile transposed by dword pairs,
 * Kt[dp][j] = (K[j][2dp], K[j][2dp+1]), so a broadcast query pair times one
 * Kt row gives 16 keys' partial scores at once, with no horizontal sums.
 * One 16x16 dword block per call: rows r[k] = dwords d0..d0+15 of key k.
 */
static inline __attribute__((always_inline)) TBF void tr16x16(__m512i r[16])
{
	__m512i t[16];
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	/* r[4i+m], 128-bit lane L: column 4L+m of rows 4i..4i+3 */
	for (int i = 0; i < 4; i++) {
		r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int m = 0; m < 4; m++) {
		t[m] = _mm512_shuffle_i32x4(r[m], r[4 + m], 0x88);
		t[4 + m] = _mm512_shuffle_i32x4(r[m], r[4 + m], 0xdd);
		t[8 + m] = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0x88);
		t[12 + m] = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0xdd);
	}
	for (int m = 0; m < 4; m++) {
		r[m] = _mm512_shuffle_i32x4(t[m], t[8 + m], 0x88);
		r[8 + m] = _mm512_shuffle_i32x4(t[m], t[8 + m], 0xdd);
		r[4 + m] = _mm512_shuffle_i32x4(t[4 + m], t[12 + m], 0x88);
		r[12 + m] = _mm512_shuffle_i32x4(t[4 + m], t[12 + m], 0xdd);
	}
}

/* Kt[dp][jb..jb+16) for dp in [0, dk/2) from 16 key rows (NULL: zeros). */
static TBF void kt_block(uint32_t *kt, size_t jb, const uint16_t *const *rows, size_t dk)
{
	for (size_t d0 = 0; d0 < dk / 2; d0 += 16) {
		__m512i r[16];
		for (int k = 0; k < 16; k++)
			r[k] = rows[k] ? _mm512_loadu_si512(rows[k] + 2 * d0) : _mm512_setzero_si512();
		tr16x16(r);
		for (int m = 0; m < 16; m++)
			_mm512_storeu_si512(kt + (d0 + (size_t)m) * ATTN_BK + jb, r[m]);
	}
}

/* S rows [0, R) (stride ATTN_BK), keys [0, 16·W): Σ_dp pair(q[2dp], q[2dp+1])·Kt[dp] (R, W constants). */
static inline __attribute__((always_inline)) TBF void
rows_qk_bf16(const uint32_t *q2, size_t qs, const uint32_t *kt, float *S, size_t ndp, struct pfq *pq, float *mx16,
	     const int R, const int W)
{
	__m512 acc[4][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			acc[r][c] = _mm512_setzero_ps();
	bcast_gemm(acc, q2, qs, kt, ATTN_BK, ndp, pq, R, W);
	for (int r = 0; r < R; r++) {
		__m512 m = acc[r][0];
		for (int c = 0; c < W; c++) {
			_mm512_storeu_ps(S + (size_t)r * ATTN_BK + (size_t)c * 16, acc[r][c]);
			m = _mm512_max_ps(m, acc[r][c]);
		}
		/* the row's lane maxima: the softmax of a fully visible tile needs no pass of its own */
		_mm512_storeu_ps(mx16 + (size_t)r * 16, m);
	}
}

#define QK_ROWS(R)                                                                                  \
	do {                                                                                        \
		const uint32_t *q2 = (const uint32_t *)(Q + r0 * dk);                               \
		float *Sr = s->st + r0 * ATTN_BK;                                                   \
		switch (nk16 / 16) {                                                                \
		case 1: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 1); break;                      \
		case 2: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 2); break;                      \
		case 3: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 3); break;                      \
		default: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 4); break;                     \
		}                                                                                   \
	} while (0)

TBF static void run_item_rows_bf16(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	size_t nv = dv / 16;
	int64_t kvlen = p->kvlen[b], maxe = 0;
	/* s->k: the staged [k | k_rope] rows (first half) and the transposed tile Kt (second half) */
	uint16_t *Q = (uint16_t *)s->qt, *kb = (uint16_t *)s->k;
	uint32_t *kt = (uint32_t *)(kb + ATTN_BK * dk);
	uint32_t *vp = (uint32_t *)s->v, *pw0 = (uint32_t *)s->st;
	float *O = s->ot;
	const uint16_t *krow[ATTN_BK];
	int64_t rows[2][ATTN_BK];
	float mx16[16 * 16];   /* M <= 16 */
	struct pfq pfq_mem, *pq = &pfq_mem;
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		int64_t qr = p->q_row(p->ctx, b, h, si);
		cpu_load_row(p->q, (size_t)qr * dq, dq, s->row);
		if (dr)
			cpu_load_row(p->qr, (size_t)qr * dr, dr, s->row + dq);
		for (size_t d = 0; d < dk; d++)
			Q[i * dk + d] = cpu_f32_to_bf16(s->row[d] * p->scale);
		int64_t e = p->kv_end(p->ctx, b, g, si);
		e = e < 0 ? 0 : e > kvlen ? kvlen : e;
		s->end[i] = (int32_t)e;
		maxe = e > maxe ? e : maxe;
		s->m[i] = NEG_BIG;
		s->l[i] = 0.0f;
	}
	memset(O, 0, M * dv * sizeof(float));
	const v16i iota = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	/* the first tile has nothing ahead of it to hide behind */
	tile_rows(p, b, g, it->s0, 0, maxe < ATTN_BK ? maxe : ATTN_BK, rows[0]);
	pfq_fill(pq, p, rows[0], maxe < ATTN_BK ? maxe : ATTN_BK);
	pfq_flush(pq);
	for (int64_t j0 = 0; j0 < maxe; j0 += ATTN_BK) {
		const int64_t *cur = rows[j0 / ATTN_BK % 2];
		int64_t *next = rows[(j0 / ATTN_BK + 1) % 2];
		size_t nk = (size_t)(maxe - j0 < ATTN_BK ? maxe - j0 : ATTN_BK), nk16 = (nk + 15) & ~(size_t)15;
		size_t np = nk16 / 2;
		int64_t nnext = j0 + 2 * ATTN_BK < maxe ? ATTN_BK : maxe - j0 - ATTN_BK;
		if (nnext > 0)
			tile_rows(p, b, g, it->s0, j0 + ATTN_BK, nnext, next);
		pfq_fill(pq, p, next, nnext > 0 ? nnext : 0);
		const uint16_t *vsrc[2] = { NULL, NULL };
		for (size_t j = 0; j < nk16; j++) {
			if (j >= nk) {
				krow[j] = NULL;
				vsrc[j & 1] = NULL;
			} else {
				int64_t kr = cur[j];
				krow[j] = (const uint16_t *)p->k->data + (size_t)kr * dq;
				/* with a rope part, [k | k_rope] is staged */
				if (dr) {
					memcpy(kb + j * dk, krow[j], dq * 2);
					memcpy(kb + j * dk + dq, (const uint16_t *)p->kr->data + (size_t)kr * dr, dr * 2);
					krow[j] = kb + j * dk;
				}
				vsrc[j & 1] = (const uint16_t *)p->v->data + (size_t)kr * dv;
			}
			if (j & 1) {
				if (vsrc[0])
					pack_v_lanes(vp + j / 2 * dv, vsrc[0], vsrc[1], dv);
				else
					memset(vp + j / 2 * dv, 0, dv * sizeof(uint32_t));
			}
			if (j % 16 == 15)
				kt_block(kt, j - 15, krow + j - 15, dk);
		}
		size_t r0 = 0;
		for (; r0 + 4 <= M; r0 += 4)
			QK_ROWS(4);
		switch (M - r0) {
		case 3: QK_ROWS(3); break;
		case 2: QK_ROWS(2); break;
		case 1: QK_ROWS(1); break;
		default: break;
		}
		for (size_t i = 0; i < M; i++) {
			float *S = s->st + i * ATTN_BK;
			v16i e = (v16i){ 0 } + s->end[i];
			v16 mxv = bc(s->m[i]);
			/* every key of the tile visible to row i (the common case): no masks */
			int whole = j0 + (int64_t)nk16 <= (int64_t)s->end[i];
			if (whole) {
				v16 m16;
				memcpy(&m16, mx16 + i * 16, sizeof(v16));
				mxv = vmax(mxv, m16);
			} else {
				for (size_t jb = 0; jb < nk16; jb += 16) {
					v16 x;
					memcpy(&x, S + jb, sizeof(v16));
					x = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, x, bc(NEG_BIG));
					memcpy(S + jb, &x, sizeof(v16));
					mxv = vmax(mxv, x);
				}
			}
			float mx = _mm512_reduce_max_ps((__m512)mxv);
			v16 sum = bc(0.0f);
			/* the weights as bf16 pairs over S's own row: keys 2q and 2q+1 side by side are word q
			 * (word q lies at or before float 2q, which is read before it is overwritten) */
			uint32_t *pw = pw0 + i * ATTN_BK;
			for (size_t jb = 0; jb < nk16; jb += 16) {
				v16 x;
				memcpy(&x, S + jb, sizeof(v16));
				v16 pe = vexp(x - mx);
				if (!whole)
					pe = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, pe, bc(0.0f));
				sum += pe;
				__m512i u = (__m512i)pe;
				__m512i rr = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
							_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)))), 16);
				_mm256_storeu_si256((__m256i *)(pw + jb / 2), _mm512_cvtepi32_epi16(rr));
			}
			float alpha = vexp(bc(s->m[i] - mx))[0];
			s->l[i] = s->l[i] * alpha + _mm512_reduce_add_ps((__m512)sum);
			s->m[i] = mx;
			s->alpha[i] = alpha;
		}
		for (r0 = 0; r0 + 4 <= M; r0 += 4)
			PV_ROWS(4);
		switch (M - r0) {
		case 3: PV_ROWS(3); break;
		case 2: PV_ROWS(2); break;
		case 1: PV_ROWS(1); break;
		default: break;
		}
		pfq_flush(pq);
	}
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		float inv = s->l[i] > 0.0f ? 1.0f / s->l[i] : 0.0f;
		for (size_t d0 = 0; d0 < dv; d0 += 32)
			for (size_t l = 0; l < 32; l++)
				s->row[d0 + vlane_dim(l)] = O[i * dv + d0 + l] * inv;
		cpu_store_row(p->out, (size_t)p->o_row(p->ctx, b, h, si) * dv, dv, s->row);
		if (p->lse) {
			float v = s->l[i] > 0.0f ? s->m[i] + logf(s->l[i]) : -INFINITY;
			cpu_store_row(p->lse, (size_t)p->lse_at(p->ctx, b, h, si), 1, &v);
		}
	}
}
#undef PV_ROWS
#undef QK_ROWS
#endif


int attn_plan_new(struct attn_plan **out, const struct attn_problem *p, int threads,
		  struct perfdb_err *err)
{
	*out = NULL;
	if (p->hkv < 1 || p->hq % p->hkv != 0 || p->dq < 1 || p->dv < 1 || p->dr < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "attention: bad head counts or dims");
	int64_t G = p->hq / p->hkv;
	if (G > MAX_ROWS)
		return perfdb_err_set(err, PERFDB_EINVAL, "attention: %lld query heads per kv head (at most %d)",
				      (long long)G, MAX_ROWS);
	struct attn_plan *pl = calloc(1, sizeof(*pl));
	if (!pl)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	pl->p = p;
	pl->bq = p->per_query ? 1 : MAX_ROWS / G;
	size_t n = 0;
	for (int64_t b = 0; b < p->nb; b++)
		n += (size_t)(p->hkv * ((p->qlen[b] + pl->bq - 1) / pl->bq));
	pl->items = malloc((n ? n : 1) * sizeof(*pl->items));
	if (!pl->items) {
		free(pl);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* later query tiles first: under a causal mask they cost the most */
	for (int64_t b = 0; b < p->nb; b++)
		for (int64_t s0 = ((p->qlen[b] + pl->bq - 1) / pl->bq - 1) * pl->bq; s0 >= 0; s0 -= pl->bq)
			for (int64_t g = 0; g < p->hkv; g++) {
				int64_t ns = p->qlen[b] - s0 < pl->bq ? p->qlen[b] - s0 : pl->bq;
				pl->items[pl->nitems++] = (struct item){ b, g, s0, ns };
			}
	pl->threads = threads < 1 ? 1 : threads;
	if ((size_t)pl->threads > pl->nitems)
		pl->threads = pl->nitems ? (int)pl->nitems : 1;
	pl->mp = al16((size_t)(pl->bq * G));
	pl->rows_path = (p->dq + p->dr) % 16 == 0 && p->dv % 16 == 0;
#ifdef ATTN_BF16
	pl->bf16 = __builtin_cpu_supports("avx512bf16") && p->q->dtype == PERFDB_DTYPE_BF16 &&
		   p->k->dtype == PERFDB_DTYPE_BF16 && p->v->dtype == PERFDB_DTYPE_BF16 &&
		   (!p->dr || (p->qr->dtype == PERFDB_DTYPE_BF16 && p->kr->dtype == PERFDB_DTYPE_BF16)) &&
		   p->dq % 2 == 0 && p->dr % 2 == 0 && !getenv("PERFDB_ATTN_FP32");
#endif
	pl->dk = (size_t)(p->dq + p->dr);
	pl->scratch = scr_floats(pl->mp, pl->dk, (size_t)p->dv);
	pl->mem = aligned_alloc(64, pl->scratch * sizeof(float) * (size_t)pl->threads);
	if (!pl->mem) {
		attn_plan_free(pl);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory (attention scratch)");
	}
	memset(pl->mem, 0, pl->scratch * sizeof(float) * (size_t)pl->threads);
	*out = pl;
	return 0;
}

/* Work items until none is left, with thread t's scratch. */
static void work(struct attn_plan *pl, int t)
{
	struct scr s = scr_at(pl->mem + pl->scratch * (size_t)t, pl->mp, pl->dk, (size_t)pl->p->dv);
	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		if (i >= pl->nitems)
			break;
		const struct item *it = &pl->items[i];
		int rows = pl->rows_path && it->ns * (pl->p->hq / pl->p->hkv) <= 16;
#ifdef ATTN_BF16
		if (rows && pl->bf16 && (pl->p->dq + pl->p->dr) % 32 == 0 && pl->p->dq + pl->p->dr <= 256 &&
		    pl->p->dv % 32 == 0 && pl->p->dv <= 512)
			run_item_rows_bf16(pl->p, it, &s);
		else
#endif
		if (rows)
			run_item_rows(pl->p, it, &s);
		else
			run_item(pl->p, it, &s, pl->bf16);
	}
}

/*
 * The items are shared through an atomic counter by the OpenMP team the
 * other kernels of the backend use (cpu_parallel): threads created per call
 * cost tens of microseconds on a decode row, and a second pool would spin
 * against the first on the same cores.
 */
int attn_plan_run(struct attn_plan *pl, struct perfdb_err *err)
{
	(void)err;
	atomic_store(&pl->next, 0);
	if (pl->threads <= 1) {
		work(pl, 0);
		return 0;
	}
#pragma omp parallel num_threads(pl->threads)
	work(pl, omp_get_thread_num());
	return 0;
}

void attn_plan_free(struct attn_plan *pl)
{
	if (!pl)
		return;
	free(pl->items);
	free(pl->mem);
	free(pl);
}

/* ---- helpers of the attention ops ---------------------------------- */

/* "a,b,c" (quotes and spaces ignored) into v; returns the count or -1. */
int64_t attn_parse_list(const char *s, int64_t *v, int64_t max)
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

int attn_cell_int(const struct perfdb_op_case *c, const char *col, int64_t *v)
{
	const char *s = perfdb_case_cell(c, col);
	if (!s)
		return 0;
	return attn_parse_list(s, v, 1) == 1 ? 1 : -1;
}

void attn_st_int(struct perfdb_tensor *t, size_t i, int64_t v)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_INT64: ((int64_t *)t->data)[i] = v; break;
	case PERFDB_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	default: break;
	}
}

int attn_fill_table(struct perfdb_tensor *bt, int64_t nblocks, struct perfdb_err *err)
{
	int64_t n = nblocks > 0 ? nblocks : 1;
	int64_t *perm = malloc((size_t)n * sizeof(int64_t));
	if (!perm)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	uint64_t st = 0x9e3779b97f4a7c15u;
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		st = st * 6364136223846793005u + 1442695040888963407u;
		int64_t j = (int64_t)((st >> 33) % (uint64_t)(i + 1)), tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (int64_t i = 0; i < bt->numel; i++)
		attn_st_int(bt, (size_t)i, perm[i % n]);
	free(perm);
	return 0;
}
