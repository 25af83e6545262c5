/*
 * The 16-bit reductions at ISA level avx2 (reduce16.h): AVX2 for bf16
 * (widening is a shift; rounding the reference's integer add of 0x7fff +
 * the kept bit's parity, NaNs quietened), F16C for fp16 (vcvtph2ps /
 * vcvtps2ph round to nearest even and handle subnormals, as half.h does).
 * 16 elements a step; the last < 8 go through the same vector code from a
 * zero-padded copy, so every element takes one path.
 */
#include "reduce16.h"

#ifdef PERFDB_R16_X86
#include <immintrin.h>
#include <string.h>

#define T2 __attribute__((target("avx2,fma,f16c")))
#define INL static inline __attribute__((always_inline)) T2

INL __m256 bf16_widen(__m128i h)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

INL __m128i bf16_narrow(__m256 f)
{
	__m256i u = _mm256_castps_si256(f);
	__m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
	__m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
	__m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
	r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
	r = _mm256_srli_epi32(r, 16);
	return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

INL __m256 fp16_widen(__m128i h)
{
	return _mm256_cvtph_ps(h);
}

INL __m128i fp16_narrow(__m256 f)
{
	return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* comm.h's max: x (from in) if x is NaN or x > y, else y */
INL __m256 max_f(__m256 x, __m256 y)
{
	__m256 take = _mm256_or_ps(_mm256_cmp_ps(x, y, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
	return _mm256_blendv_ps(y, x, take);
}

INL __m128i bf16_sum8(__m128i x, __m128i y)
{
	return bf16_narrow(_mm256_add_ps(bf16_widen(x), bf16_widen(y)));
}

INL __m128i bf16_max8(__m128i x, __m128i y)
{
	return bf16_narrow(max_f(bf16_widen(x), bf16_widen(y)));
}

INL __m128i fp16_sum8(__m128i x, __m128i y)
{
	return fp16_narrow(_mm256_add_ps(fp16_widen(x), fp16_widen(y)));
}

INL __m128i fp16_max8(__m128i x, __m128i y)
{
	return fp16_narrow(max_f(fp16_widen(x), fp16_widen(y)));
}

#define LD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

#define KERNEL(name, op8)                                                       \
	T2 void name(const uint16_t *in, uint16_t *inout, size_t n)            \
	{                                                                       \
		size_t i = 0;                                                   \
		for (; i + 16 <= n; i += 16) {                                  \
			__m128i a = op8(LD(in + i), LD(inout + i));             \
			__m128i b = op8(LD(in + i + 8), LD(inout + i + 8));     \
			ST(inout + i, a);                                       \
			ST(inout + i + 8, b);                                   \
		}                                                               \
		for (; i + 8 <= n; i += 8)                                      \
			ST(inout + i, op8(LD(in + i), LD(inout + i)));          \
		if (i < n) {                                                    \
			uint16_t x[8] = { 0 }, y[8] = { 0 };                    \
			memcpy(x, in + i, (n - i) * sizeof(uint16_t));          \
			memcpy(y, inout + i, (n - i) * sizeof(uint16_t));       \
			ST(y, op8(LD(x), LD(y)));                               \
			memcpy(inout + i, y, (n - i) * sizeof(uint16_t));       \
		}                                                               \
	}

KERNEL(perfdb_r16_bf16_sum_avx2, bf16_sum8)
KERNEL(perfdb_r16_bf16_max_avx2, bf16_max8)
KERNEL(perfdb_r16_fp16_sum_avx2, fp16_sum8)
KERNEL(perfdb_r16_fp16_max_avx2, fp16_max8)
#endif
