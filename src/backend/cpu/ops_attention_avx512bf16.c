/*
 * The bf16 products of the lane-per-query items (ops_attention_prefill.c)
 * on CPUs with AVX512_BF16 (ops_attention_internal.h).
 *
 * vdpbf16ps multiplies bf16 pairs and accumulates in fp32 (two products per
 * lane and instruction, twice the fp32 FMA rate), as the NPU's cube unit
 * takes bf16 operands with fp32 accumulation.  The pairs run along the
 * reduction dim: for S = K·Qt along d (a key's two neighbouring bf16
 * elements are one 32-bit broadcast straight from the cache row, the
 * queries are packed (d, d+1) per lane once per item); for O += Vᵀ·P along
 * the keys (P rounded to bf16 and packed (j, j+1) per lane, V rows j and
 * j+1 interleaved per tile).  The softmax stays fp32.
 */
#include <string.h>

#include "ops_attention_internal.h"

#ifdef ATTN_BF16
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

TBF void attn_qk_tile_bf16(const uint16_t *K, size_t dk, const uint32_t *Qt2, size_t mp, float *St, size_t nk)
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

TBF void attn_pv_tile_bf16(const uint32_t *Vp, size_t dv, const uint32_t *P2, size_t mp, size_t nk, float *Ot,
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

TBF void attn_pack_v_bf16(uint32_t *dst, const uint16_t *r0, const uint16_t *r1, size_t dv)
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

TBF void attn_pack_p_bf16(float *St, size_t mp, size_t nk)
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
