/*
 * bf16 row kernels for CPUs with AVX512_BF16 (Zen 4/5, Sapphire Rapids):
 * softmax and SwiGlu rows read straight from the bf16 tensor and write
 * through vcvtneps2bf16, with no fp32 copy of the row in between.  The
 * generic path (cpu_load_row → fp32 scratch → passes → cpu_store_row) costs
 * about three times the instructions per element and was the bottleneck of
 * these memory-bound ops on one thread (RmsNorm 31-37 %, SoftmaxV2 16-17 %
 * of a STREAM triad).  Arithmetic is fp32 throughout, as in the generic
 * path; vcvtneps2bf16 rounds to nearest even like perfdb_bf16_from_float (it
 * flushes fp32 denormals to zero, far below what a bf16 result keeps).
 *
 * RmsNorm had a row kernel here too, until it ran on a Sapphire Rapids
 * Xeon (2026-12-04, tests/device/run.sh --cpu): 8192x5120 at 92 % of a
 * triad on one thread and 56 % on 16, where the table kernel of
 * kern_rows.c (the same vcvtneps2bf16, plus a prefetch of the next row
 * while this one is scaled) ran AddRmsNormBias bf16 at 135 % and 126 %.
 * bf16 RmsNorm now takes that table (ops_norm.c).
 */
#include "cpu_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#include "kern_exp16.h"

#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

int cpu_has_avx512bf16(enum perfdb_cpu_isa isa)
{
	return isa >= PERFDB_ISA_AVX512_BF16;
}

BF16_TARGET static inline __m512 ld16(const uint16_t *p)
{
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

BF16_TARGET static inline __m512 ld16_mask(const uint16_t *p, __mmask16 m)
{
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

BF16_TARGET static inline void st16(uint16_t *p, __m512 v)
{
	_mm256_storeu_si256((__m256i *)p, (__m256i)_mm512_cvtneps_pbh(v));
}

/* st16 with a streaming store when nt (p 32-byte aligned: rows checked by the callers below). */
BF16_TARGET static inline void st16x(uint16_t *p, __m512 v, int nt)
{
	if (nt)
		_mm256_stream_si256((__m256i *)p, (__m256i)_mm512_cvtneps_pbh(v));
	else
		_mm256_storeu_si256((__m256i *)p, (__m256i)_mm512_cvtneps_pbh(v));
}

/* Streaming stores only where every full vector of the row is 32-byte aligned. */
static inline int nt_ok(const uint16_t *y, int nt)
{
	return nt && (uintptr_t)y % 32 == 0;
}

BF16_TARGET static inline void st16_mask(uint16_t *p, __m512 v, __mmask16 m)
{
	_mm256_mask_storeu_epi16(p, m, (__m256i)_mm512_cvtneps_pbh(v));
}

/*
 * exp(x) for x <= 0 whose result is rounded to bf16 (8 significant bits):
 * the same reduction, a degree-4 polynomial (relative error below 5e-5,
 * 2^-14, far under bf16's 2^-9 half-ulp) and no upper clamp.  Softmax's
 * exp(x - max) is all it serves.
 */
BF16_TARGET static inline __m512 exp16_nonpos_bf16(__m512 x)
{
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693147181f), x);
	__m512 p = _mm512_set1_ps(4.16666679e-2f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666672e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, n);
}

BF16_TARGET static float max_row(const uint16_t *x, size_t h)
{
	__m512 mx = _mm512_set1_ps(-INFINITY);
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		mx = _mm512_max_ps(mx, ld16(x + j));
	if (j < h) {
		__mmask16 tail = (__mmask16)((1u << (h - j)) - 1);
		mx = _mm512_mask_max_ps(mx, tail, mx, ld16_mask(x + j, tail));
	}
	return _mm512_reduce_max_ps(mx);
}

/*
 * Rows [0, rows) of width h.  Three passes per row (max; exp and sum into
 * the fp32 scratch e; scale and store), software-pipelined: the max pass of
 * row r+1 runs in the same loop as the store pass of row r, so the next
 * row's reads from memory overlap this row's writes instead of the two
 * streams taking turns.
 * Rows past the LLC are written with streaming stores (nt: 69 -> 103 % of
 * a triad on one thread, the output's lines no longer read before written).
 */
BF16_TARGET void cpu_softmax_rows_bf16(const uint16_t *x, uint16_t *y, float *e, size_t h, size_t rows, int nt)
{
	if (!rows)
		return;
	nt = nt_ok(y, nt) && h % 16 == 0;   /* every row then starts 32-byte aligned */
	float mnext = max_row(x, h);
	size_t full = h / 16 * 16;
	__mmask16 tail = (__mmask16)((1u << (h - full)) - 1);
	for (size_t r = 0; r < rows; r++) {
		const uint16_t *xr = x + r * h, *xn = xr + h;
		uint16_t *yr = y + r * h;
		__m512 m = _mm512_set1_ps(mnext), sum = _mm512_setzero_ps();
		/* while the exp pass computes, the row after next streams into L2 */
		const char *pf = r + 2 < rows ? (const char *)(xr + 2 * h) : NULL;
		size_t j = 0;
		for (; j < full; j += 16) {
			if (pf && (j & 31) == 0)
				_mm_prefetch(pf + 2 * j, _MM_HINT_T1);
			__m512 v = exp16_nonpos_bf16(_mm512_sub_ps(ld16(xr + j), m));
			_mm512_storeu_ps(e + j, v);
			sum = _mm512_add_ps(sum, v);
		}
		if (j < h) {
			__m512 v = _mm512_maskz_mov_ps(tail, exp16_nonpos_bf16(_mm512_sub_ps(ld16_mask(xr + j, tail), m)));
			_mm512_mask_storeu_ps(e + j, tail, v);
			sum = _mm512_add_ps(sum, v);
		}
		__m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
		__m512 mx = _mm512_set1_ps(-INFINITY);
		int more = r + 1 < rows;
		for (j = 0; j < full; j += 16) {
			if (more)
				mx = _mm512_max_ps(mx, ld16(xn + j));
			st16x(yr + j, _mm512_mul_ps(_mm512_loadu_ps(e + j), inv), nt);
		}
		if (j < h) {
			if (more)
				mx = _mm512_mask_max_ps(mx, tail, mx, ld16_mask(xn + j, tail));
			st16_mask(yr + j, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, e + j), inv), tail);
		}
		mnext = more ? _mm512_reduce_max_ps(mx) : 0.0f;
	}
	if (nt)
		_mm_sfence();
}

/*
 * One SwiGlu row: y = silu(g) * u with g = x[:h], u = x[h:], bf16 in and
 * out, silu(g) = g * sigmoid16_lp(g) (kern_exp16.h: accurate to far below
 * a bf16 half-ulp).  32 elements per step without widening loads: a
 * 64-byte load holds 16 (even, odd) pairs, the even elements are the
 * dwords shifted left by 16, the odd ones the dwords with the low half
 * cleared; the two results go back through one vcvtne2ps2bf16 and one
 * vpermw that re-interleaves them.  Against 16 elements per step through
 * vpmovzxwd (two of those per operand) this is 7 instructions fewer per
 * 32 elements; with the cheaper sigmoid, 4096x51200 on one thread went
 * from 68-72 % to 102-104 % of a STREAM triad (docs/measuring.md).  Full
 * vectors use plain loads: masked loads in the main loop measured 2.6x
 * slower, the mask only serves the tail.
 */
BF16_TARGET void cpu_swiglu_row_bf16(const uint16_t *x, uint16_t *y, size_t h)
{
	const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
	/* word k of the result: even result k/2 (words 0..15 of the pack) or odd result k/2 (words 16..31) */
	const __m512i inter = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
					       22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
	const uint16_t *xu = x + h;
	size_t j = 0;
	for (; j + 32 <= h; j += 32) {
		__m512i gw = _mm512_loadu_si512(x + j), uw = _mm512_loadu_si512(xu + j);
		__m512 ge = _mm512_castsi512_ps(_mm512_slli_epi32(gw, 16)), go = _mm512_castsi512_ps(_mm512_and_si512(gw, hi));
		__m512 ue = _mm512_castsi512_ps(_mm512_slli_epi32(uw, 16)), uo = _mm512_castsi512_ps(_mm512_and_si512(uw, hi));
		__m512i packed = (__m512i)_mm512_cvtne2ps_pbh(silu_mul16_lp(go, uo), silu_mul16_lp(ge, ue));
		_mm512_storeu_si512(y + j, _mm512_permutexvar_epi16(inter, packed));
	}
	for (; j + 16 <= h; j += 16)
		st16(y + j, silu_mul16_lp(ld16(x + j), ld16(xu + j)));
	if (j < h) {
		__mmask16 m = (__mmask16)((1u << (h - j)) - 1);
		st16_mask(y + j, silu_mul16_lp(ld16_mask(x + j, m), ld16_mask(xu + j, m)), m);
	}
}

#else

int cpu_has_avx512bf16(enum perfdb_cpu_isa isa)
{
	(void)isa;
	return 0;
}

void cpu_softmax_rows_bf16(const uint16_t *x, uint16_t *y, float *e, size_t h, size_t rows, int nt)
{
	(void)x, (void)y, (void)e, (void)h, (void)rows, (void)nt;
}

void cpu_swiglu_row_bf16(const uint16_t *x, uint16_t *y, size_t h)
{
	(void)x, (void)y, (void)h;
}

#endif
