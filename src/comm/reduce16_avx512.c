/*
 * The 16-bit reductions at ISA levels avx512 and avx512_bf16 (reduce16.h):
 * 16 floats a vector, 32 elements a step, the tail under a mask.
 *
 * bf16 is rounded back by the reference's integer add (avx512), or by
 * vcvtneps2bf16 (avx512_bf16), which rounds the same way and quietens NaNs
 * the same way but flushes fp32 subnormal inputs to zero: a vector holding
 * one (a sum of tiny values) takes the integer rounding instead, so both
 * levels give half.h's bits.  fp16 uses vcvtph2ps / vcvtps2ph, exact IEEE
 * conversions with round to nearest even.
 */
#include "reduce16.h"

#ifdef PERFDB_R16_X86
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define T512BF __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#define INL static inline __attribute__((always_inline)) T512
#define INLBF static inline __attribute__((always_inline)) T512BF

INL __m512 bf16_widen(__m256i h)
{
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

INL __m256i bf16_narrow(__m512 f)
{
	__m512i u = _mm512_castps_si512(f);
	__m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
	__m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
	__mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
	r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
	return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

INLBF __m256i bf16_narrow_bf(__m512 f)
{
	/* vfpclassps class 0x20: subnormal (rare: a branch, not a blend) */
	if (_mm512_fpclass_ps_mask(f, 0x20))
		return bf16_narrow(f);
	return (__m256i)_mm512_cvtneps_pbh(f);
}

INL __m512 fp16_widen(__m256i h)
{
	return _mm512_cvtph_ps(h);
}

INL __m256i fp16_narrow(__m512 f)
{
	return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* comm.h's max: x (from in) if x is NaN or x > y, else y */
INL __m512 max_f(__m512 x, __m512 y)
{
	__mmask16 take = _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
	return _mm512_mask_blend_ps(take, y, x);
}

INL __m256i bf16_sum16(__m256i x, __m256i y)
{
	return bf16_narrow(_mm512_add_ps(bf16_widen(x), bf16_widen(y)));
}

INL __m256i bf16_max16(__m256i x, __m256i y)
{
	return bf16_narrow(max_f(bf16_widen(x), bf16_widen(y)));
}

INLBF __m256i bf16_sum16_bf(__m256i x, __m256i y)
{
	return bf16_narrow_bf(_mm512_add_ps(bf16_widen(x), bf16_widen(y)));
}

INLBF __m256i bf16_max16_bf(__m256i x, __m256i y)
{
	return bf16_narrow_bf(max_f(bf16_widen(x), bf16_widen(y)));
}

INL __m256i fp16_sum16(__m256i x, __m256i y)
{
	return fp16_narrow(_mm512_add_ps(fp16_widen(x), fp16_widen(y)));
}

INL __m256i fp16_max16(__m256i x, __m256i y)
{
	return fp16_narrow(max_f(fp16_widen(x), fp16_widen(y)));
}

#define LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ST(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))

#define KERNEL(name, attr, op16)                                                \
	attr void name(const uint16_t *in, uint16_t *inout, size_t n)          \
	{                                                                       \
		size_t i = 0;                                                   \
		for (; i + 32 <= n; i += 32) {                                  \
			__m256i a = op16(LD(in + i), LD(inout + i));            \
			__m256i b = op16(LD(in + i + 16), LD(inout + i + 16));  \
			ST(inout + i, a);                                       \
			ST(inout + i + 16, b);                                  \
		}                                                               \
		for (; i < n; i += 16) {                                        \
			size_t left = n - i;                                    \
			__mmask16 m = left >= 16 ? (__mmask16)0xffff            \
						 : (__mmask16)((1u << left) - 1u); \
			__m256i x = _mm256_maskz_loadu_epi16(m, in + i);        \
			__m256i y = _mm256_maskz_loadu_epi16(m, inout + i);     \
			_mm256_mask_storeu_epi16(inout + i, m, op16(x, y));     \
		}                                                               \
	}

KERNEL(perfdb_r16_bf16_sum_avx512, T512, bf16_sum16)
KERNEL(perfdb_r16_bf16_max_avx512, T512, bf16_max16)
KERNEL(perfdb_r16_fp16_sum_avx512, T512, fp16_sum16)
KERNEL(perfdb_r16_fp16_max_avx512, T512, fp16_max16)
KERNEL(perfdb_r16_bf16_sum_avx512bf16, T512BF, bf16_sum16_bf)
KERNEL(perfdb_r16_bf16_max_avx512bf16, T512BF, bf16_max16_bf)
#endif
