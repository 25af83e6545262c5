/*
 * exp over 16 fp32 lanes with AVX-512F: cpu_expf's reduction and degree-6
 * polynomial (same clamps; underflows to 0).  Shared by the row kernels
 * (kern_bf16.c, kern_rows.c); include only where <immintrin.h> and GCC's
 * target attributes are available (both files' x86-64 GCC sections).
 */
#ifndef PERFDB_CPU_KERN_EXP16_H
#define PERFDB_CPU_KERN_EXP16_H

#include <immintrin.h>

static inline __attribute__((target("avx512f"), always_inline)) __m512 exp16(__m512 x)
{
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
	x = _mm512_min_ps(x, _mm512_set1_ps(88.7f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
	__m512 p = _mm512_set1_ps(1.38888892e-3f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.33333377e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16666679e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666672e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, n);   /* p * 2^n; underflows to 0, overflows to inf */
}

/*
 * 1 / (1 + exp(-g)), the sigmoid of SwiGlu, for results rounded to bf16 or
 * fp16: exp(-g) = 2^n * q(t) with n = round(-g log2 e) and t = g + n ln2 =
 * -r, q the degree-4 Taylor polynomial of exp(-t) (relative error below
 * |r|^5/120 * e^(2|r|) < 9e-5 for |r| <= ln2/2, a fifth of an fp16
 * half-ulp; the sigmoid's relative error is smaller), one-constant reduction (ln2's rounding adds < 1e-6 for the
 * |n| <= 126 here), and the reciprocal as rcp14 refined by one Newton
 * step.  g is raised to -87 first so 1 + exp(-g) stays finite (the Newton
 * step would turn an infinite one into NaN): below that the sigmoid is
 * 1.6e-38 instead of smaller still, so silu(g) = g * sigmoid(g) stays
 * below 1e-30 in magnitude for any finite 16-bit g; no other clamp is
 * needed, scalef underflows to 0.  13 instructions per 16 lanes against
 * 17 for 1 / (1 + exp16(-g)): SwiGlu was compute-bound on one core of a Zen 5 EPYC.
 */
static inline __attribute__((target("avx512f"), always_inline)) __m512 sigmoid16_lp(__m512 g)
{
	g = _mm512_max_ps(g, _mm512_set1_ps(-87.0f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(g, _mm512_set1_ps(-1.44269504f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 t = _mm512_fmadd_ps(n, _mm512_set1_ps(0.693147181f), g);
	__m512 q = _mm512_set1_ps(4.16666679e-2f);
	q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.66666672e-1f));
	q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.5f));
	q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.0f));
	q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
	__m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(q, n));
	__m512 r = _mm512_rcp14_ps(d);
	return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));   /* r (2 - d r) */
}

/* SwiGlu's silu(g) * u for a 16-bit result (kern_bf16.c, kern_rows.c). */
static inline __attribute__((target("avx512f"), always_inline)) __m512 silu_mul16_lp(__m512 g, __m512 u)
{
	return _mm512_mul_ps(_mm512_mul_ps(g, sigmoid16_lp(g)), u);
}

#endif
