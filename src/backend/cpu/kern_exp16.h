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

#endif
