/*
 * fp32, fp16 and bf16 row kernels for CPUs with AVX-512 (F, BW, VL):
 * RmsNorm (plain, or AddRmsNormBias's x1 + x2 with optional bias and xsum
 * output), softmax and SwiGlu rows read straight from the tensor and
 * written with one conversion, the bf16 kernels' scheme (kern_bf16.c)
 * generalised to one loader and one storer per dtype.  Each kernel is an
 * always_inline template over a constant dtype, instantiated per dtype by
 * the entry points at the bottom; the generic path (cpu_load_row -> fp32
 * scratch -> passes -> cpu_store_row) stays the fallback for other CPUs.
 *
 * Conversions match cpu_internal.h's scalar ones bit for bit on every
 * non-NaN value (tests/unit/backend/test_cpu_rows.c tries every 16-bit pattern):
 * fp16 loads (vcvtph2ps) are exact; fp16 stores (vcvtps2ph, rounding
 * given in the immediate, MXCSR not consulted) round to nearest even,
 * subnormals included, and overflow to inf as perfdb_fp16_from_float; bf16
 * stores round in integer arithmetic exactly as perfdb_bf16_from_float
 * (CPU_ROW_BF16: no AVX512_BF16 needed) or, where the CPU has
 * AVX512_BF16, through vcvtneps2bf16 (CPU_ROW_BF16_CVT: the same rounding
 * but fp32 denormal results flushed to zero, as in kern_bf16.c; 15 %
 * faster AddRmsNormBias, the integer rounding being 5 more instructions
 * per vector).  NaNs stay NaN (fp16: vcvtps2ph keeps payload bits the
 * scalar code drops).  Arithmetic is fp32 in the generic path's order
 * (x1 + x2, then (x * rstd) * gamma, then + bias; exp(x - max) *
 * (1 / sum); silu(g) * u); only the sums are reassociated (16-lane
 * partial sums), and exp is the 16-lane copy of cpu_expf, except in the
 * fp16 softmax (a degree-5 exp, its bound below; kern_bf16.c's degree-4
 * one is only good enough for bf16 results) and the 16-bit SwiGlu rows
 * (kern_exp16.h's sigmoid16_lp, error bound there).
 */
#include <stdio.h>

#include "cpu_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#include "kern_exp16.h"

#define ROWS_TARGET __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline
#define ROWS_ENTRY __attribute__((target("avx512f,avx512bw,avx512vl"))) static

/* The template's dtype codes are enum cpu_row_fmt's (cpu_internal.h). */
#define D_F32 CPU_ROW_F32
#define D_F16 CPU_ROW_F16
#define D_BF16 CPU_ROW_BF16
#define D_BF16N CPU_ROW_BF16_CVT

int cpu_has_avx512(enum perfdb_cpu_isa isa)
{
	return isa >= PERFDB_ISA_AVX512;
}

/* Element size in bytes of the template dtype. */
#define ESZ(D) ((D) == D_F32 ? 4 : 2)

ROWS_TARGET __m512 ld(int d, const void *base, size_t j)
{
	if (d == D_F32)
		return _mm512_loadu_ps((const float *)base + j);
	__m256i v = _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + j));
	if (d == D_F16)
		return _mm512_cvtph_ps(v);
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

ROWS_TARGET __m512 ld_mask(int d, const void *base, size_t j, __mmask16 m)
{
	if (d == D_F32)
		return _mm512_maskz_loadu_ps(m, (const float *)base + j);
	__m256i v = _mm256_maskz_loadu_epi16(m, (const uint16_t *)base + j);
	if (d == D_F16)
		return _mm512_cvtph_ps(v);
	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

/*
 * 16 fp32 -> 16 halves of dtype d (fp16 or bf16), rounded as the scalar
 * conversions.  D_BF16N: vcvtneps2bf16, written as asm because an
 * intrinsic needs the avx512bf16 target on every function it is inlined
 * through, and these helpers also serve CPUs without it (the callers
 * check cpu_has_avx512bf16() before asking for D_BF16N).
 */
ROWS_TARGET __m256i narrow(int d, __m512 v)
{
	if (d == D_BF16N) {
		__m256i o;
		__asm__("vcvtneps2bf16 %1, %0" : "=v"(o) : "v"(v));
		return o;
	}
	if (d == D_F16)
		return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512i u = _mm512_castps_si512(v);
	__m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
	__m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
	__mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
	r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));   /* quiet NaN */
	return _mm512_cvtepi32_epi16(r);
}

/* Store 16 values; nt: streaming store (p aligned to the vector: 64 bytes fp32, 32 bytes fp16/bf16). */
ROWS_TARGET void st(int d, void *base, size_t j, __m512 v, int nt)
{
	if (d == D_F32) {
		float *p = (float *)base + j;
		if (nt)
			_mm512_stream_ps(p, v);
		else
			_mm512_storeu_ps(p, v);
		return;
	}
	__m256i *p = (__m256i *)((uint16_t *)base + j);
	if (nt)
		_mm256_stream_si256(p, narrow(d, v));
	else
		_mm256_storeu_si256(p, narrow(d, v));
}

ROWS_TARGET void st_mask(int d, void *base, size_t j, __m512 v, __mmask16 m)
{
	if (d == D_F32)
		_mm512_mask_storeu_ps((float *)base + j, m, v);
	else
		_mm256_mask_storeu_epi16((uint16_t *)base + j, m, narrow(d, v));
}

/* Streaming stores only where every full vector of the row is aligned (the tail is a masked store). */
static inline int nt_ok(int d, const void *y, int nt)
{
	return nt && (uintptr_t)y % (d == D_F32 ? 64 : 32) == 0;
}

static inline __mmask16 tail_mask(size_t n)
{
	return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/*
 * exp(x) for x <= 0 whose result is rounded to fp16 (11 significant bits):
 * the same reduction with one ln2 constant, the degree-5 Taylor polynomial
 * (remainder e^|r| r^6 / 6! <= 3.4e-6 for |r| <= ln2/2, relative to e^r >=
 * 0.707: < 5e-6 = 2^-17.6 with the fp32 roundings, 2 % of fp16's half ulp
 * of at least 2^-12: a rounded result moves by at most that past the
 * correctly rounded one) and no upper clamp.  1.24x faster fp16 softmax
 * than the degree-6 exp16 (4.7 against 5.9 ms on 4096x8192, one thread).
 */
ROWS_TARGET __m512 exp16_nonpos_f16(__m512 x)
{
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693147181f), x);
	__m512 p = _mm512_set1_ps(8.33333377e-3f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16666679e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666672e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, n);
}

/*
 * x (plain RmsNorm) or x1 + x2 (add), lanes [j, j+16) or the masked tail.
 * The sum is recomputed in the second pass rather than kept in a scratch
 * row: x1 + x2 in fp32 is the same value both times, and the row is in L1/L2.
 */
ROWS_TARGET __m512 row_x(int d, int add, const void *x1, const void *x2, size_t j)
{
	__m512 v = ld(d, x1, j);
	return add ? _mm512_add_ps(v, ld(d, x2, j)) : v;
}

ROWS_TARGET __m512 row_x_mask(int d, int add, const void *x1, const void *x2, size_t j, __mmask16 m)
{
	__m512 v = ld_mask(d, x1, j, m);
	return add ? _mm512_add_ps(v, ld_mask(d, x2, j, m)) : v;
}

/*
 * One RmsNorm row, y = (x * rstd) * gam (+ bias), x = x1 (+ x2, stored to
 * xsum when not NULL); returns rstd = 1 / sqrt(mean(x^2) + eps).
 */
ROWS_TARGET float rms_row(int d, int add, const void *x1, const void *x2, void *xsum, void *y, const float *gam,
			  const float *bias, size_t h, float eps, int nt)
{
	int nty = nt_ok(d, y, nt), nts = xsum && nt_ok(d, xsum, nt);
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t j = 0;
	for (; j + 32 <= h; j += 32) {
		__m512 a = row_x(d, add, x1, x2, j), b = row_x(d, add, x1, x2, j + 16);
		if (xsum) {
			st(d, xsum, j, a, nts);
			st(d, xsum, j + 16, b, nts);
		}
		acc0 = _mm512_fmadd_ps(a, a, acc0);
		acc1 = _mm512_fmadd_ps(b, b, acc1);
	}
	for (; j < h; j += 16) {
		__mmask16 m = tail_mask(h - j);
		__m512 a = row_x_mask(d, add, x1, x2, j, m);
		if (xsum) {
			if (m == 0xffff)
				st(d, xsum, j, a, nts);
			else
				st_mask(d, xsum, j, a, m);
		}
		acc0 = _mm512_fmadd_ps(a, a, acc0);
	}
	float ss = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
	float rstd = 1.0f / sqrtf(ss / (float)h + eps);
	__m512 rs = _mm512_set1_ps(rstd);
	/* the next row of x (the callers' rows are contiguous) prefetched while this one is scaled, as
	 * kern_rows_avx2.c does; a prefetch past the tensor's end is harmless */
	const char *n1 = (const char *)x1 + h * ESZ(d), *n2 = add ? (const char *)x2 + h * ESZ(d) : NULL;
	for (j = 0; j + 16 <= h; j += 16) {
		if ((j * ESZ(d)) % 64 == 0) {
			_mm_prefetch(n1 + j * ESZ(d), _MM_HINT_T0);
			if (n2)
				_mm_prefetch(n2 + j * ESZ(d), _MM_HINT_T0);
		}
		__m512 v = _mm512_mul_ps(_mm512_mul_ps(row_x(d, add, x1, x2, j), rs), _mm512_loadu_ps(gam + j));
		if (bias)
			v = _mm512_add_ps(v, _mm512_loadu_ps(bias + j));
		st(d, y, j, v, nty);
	}
	if (j < h) {
		__mmask16 m = tail_mask(h - j);
		__m512 v = _mm512_mul_ps(_mm512_mul_ps(row_x_mask(d, add, x1, x2, j, m), rs),
					 _mm512_maskz_loadu_ps(m, gam + j));
		if (bias)
			v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j));
		st_mask(d, y, j, v, m);
	}
	if (nty || nts)
		_mm_sfence();   /* streaming stores are weakly ordered: complete them before returning */
	return rstd;
}

ROWS_TARGET float max_row(int d, const void *x, size_t h)
{
	__m512 mx = _mm512_set1_ps(-INFINITY);
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		mx = _mm512_max_ps(mx, ld(d, x, j));
	if (j < h) {
		__mmask16 m = tail_mask(h - j);
		mx = _mm512_mask_max_ps(mx, m, mx, ld_mask(d, x, j, m));
	}
	return _mm512_reduce_max_ps(mx);
}

/* exp(x - max): full precision for fp32 (and bf16) results, degree 5 for fp16 ones. */
ROWS_TARGET __m512 softmax_exp(int d, __m512 x)
{
	return d == D_F16 ? exp16_nonpos_f16(x) : exp16(x);
}

/*
 * Softmax rows [0, rows) of width h, kern_bf16.c's scheme: exp(x - max)
 * into the fp32 scratch e with its sum, then e * (1 / sum) stored, the max
 * pass of row r+1 fused into the store pass of row r so reads and writes
 * overlap; the row after next is prefetched into L2 during the exp pass.
 */

ROWS_TARGET void softmax_rows(int d, const void *x, void *y, float *e, size_t h, size_t rows, int nt)
{
	if (!rows)
		return;
	nt = nt_ok(d, y, nt) && h % 16 == 0;   /* every row then starts aligned */
	size_t es = ESZ(d), full = h / 16 * 16;
	__mmask16 tail = tail_mask(h - full);
	float mnext = max_row(d, x, h);
	for (size_t r = 0; r < rows; r++) {
		const char *xr = (const char *)x + r * h * es, *xn = xr + h * es;
		char *yr = (char *)y + r * h * es;
		__m512 m = _mm512_set1_ps(mnext), sum = _mm512_setzero_ps();
		const char *pf = r + 2 < rows ? xr + 2 * h * es : NULL;
		size_t j = 0;
		for (; j < full; j += 16) {
			if (pf && (j * es) % 64 == 0)
				_mm_prefetch(pf + j * es, _MM_HINT_T1);
			__m512 v = softmax_exp(d, _mm512_sub_ps(ld(d, xr, j), m));
			_mm512_storeu_ps(e + j, v);
			sum = _mm512_add_ps(sum, v);
		}
		if (j < h) {
			__m512 v = _mm512_maskz_mov_ps(tail, softmax_exp(d, _mm512_sub_ps(ld_mask(d, xr, j, tail), m)));
			_mm512_mask_storeu_ps(e + j, tail, v);
			sum = _mm512_add_ps(sum, v);
		}
		__m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
		__m512 mx = _mm512_set1_ps(-INFINITY);
		int more = r + 1 < rows;
		for (j = 0; j < full; j += 16) {
			if (more)
				mx = _mm512_max_ps(mx, ld(d, xn, j));
			st(d, yr, j, _mm512_mul_ps(_mm512_loadu_ps(e + j), inv), nt);
		}
		if (j < h) {
			if (more)
				mx = _mm512_mask_max_ps(mx, tail, mx, ld_mask(d, xn, j, tail));
			st_mask(d, yr, j, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, e + j), inv), tail);
		}
		mnext = more ? _mm512_reduce_max_ps(mx) : 0.0f;
	}
	if (nt)
		_mm_sfence();
}

/*
 * silu(g) * u, the division as a reciprocal estimate and one Newton step;
 * 16-bit results take kern_exp16.h's cheaper sigmoid (its error bound),
 * fp32 the full exp16.
 */
ROWS_TARGET __m512 swiglu16(int d, __m512 g, __m512 u)
{
	if (d != D_F32)
		return silu_mul16_lp(g, u);
	const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
	__m512 dn = _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), g)));
	__m512 r = _mm512_rcp14_ps(dn);
	r = _mm512_mul_ps(r, _mm512_fnmadd_ps(dn, r, two));   /* r (2 - dn r) */
	return _mm512_mul_ps(_mm512_mul_ps(g, r), u);
}

/* One SwiGlu row, ordinary stores (streaming ones measured slower: cpu_internal.h). */
ROWS_TARGET void swiglu_row(int d, const void *x, void *y, size_t h)
{
	const char *u = (const char *)x + h * ESZ(d);
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		st(d, y, j, swiglu16(d, ld(d, x, j), ld(d, u, j)), 0);
	if (j < h) {
		__mmask16 m = tail_mask(h - j);
		st_mask(d, y, j, swiglu16(d, ld_mask(d, x, j, m), ld_mask(d, u, j, m)), m);
	}
}

enum cpu_row_fmt cpu_row_fmt(enum perfdb_dtype t, enum perfdb_cpu_isa isa)
{
	if (t == PERFDB_DTYPE_FLOAT)
		return CPU_ROW_F32;
	if (t == PERFDB_DTYPE_FLOAT16)
		return CPU_ROW_F16;
	return cpu_has_avx512bf16(isa) ? CPU_ROW_BF16_CVT : CPU_ROW_BF16;
}

/* The entry points: one switch per row, the constant format folded into each instance. */
ROWS_ENTRY float rows_rms(enum cpu_row_fmt f, const void *x1, const void *x2, void *xsum, void *y, const float *gam,
			  const float *bias, size_t h, float eps, int nt)
{
	switch ((int)f * 2 + (x2 != NULL)) {
	case D_F32 * 2: return rms_row(D_F32, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	case D_F32 * 2 + 1: return rms_row(D_F32, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	case D_F16 * 2: return rms_row(D_F16, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	case D_F16 * 2 + 1: return rms_row(D_F16, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	case D_BF16 * 2: return rms_row(D_BF16, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	case D_BF16 * 2 + 1: return rms_row(D_BF16, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	case D_BF16N * 2: return rms_row(D_BF16N, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	default: return rms_row(D_BF16N, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	}
}

ROWS_ENTRY void rows_softmax(enum cpu_row_fmt f, const void *x, void *y, float *e, size_t h, size_t rows, int nt)
{
	switch (f) {
	case D_F32: softmax_rows(D_F32, x, y, e, h, rows, nt); break;
	case D_F16: softmax_rows(D_F16, x, y, e, h, rows, nt); break;
	case D_BF16: softmax_rows(D_BF16, x, y, e, h, rows, nt); break;
	default: softmax_rows(D_BF16N, x, y, e, h, rows, nt); break;
	}
}

ROWS_ENTRY void rows_swiglu(enum cpu_row_fmt f, const void *x, void *y, size_t h)
{
	switch (f) {
	case D_F32: swiglu_row(D_F32, x, y, h); break;
	case D_F16: swiglu_row(D_F16, x, y, h); break;
	case D_BF16: swiglu_row(D_BF16, x, y, h); break;
	default: swiglu_row(D_BF16N, x, y, h); break;
	}
}

const struct cpu_rows_kern cpu_rows_avx512 = { "rows_avx512", rows_rms, rows_softmax, rows_swiglu };

#else

int cpu_has_avx512(enum perfdb_cpu_isa isa)
{
	(void)isa;
	return 0;
}

enum cpu_row_fmt cpu_row_fmt(enum perfdb_dtype t, enum perfdb_cpu_isa isa)
{
	(void)t, (void)isa;
	return CPU_ROW_F32;
}

const struct cpu_rows_kern cpu_rows_avx512 = { "rows_avx512", NULL, NULL, NULL };

#endif

const struct cpu_rows_kern *cpu_rows_for(enum perfdb_cpu_isa isa)
{
	const struct cpu_rows_kern *k = isa >= PERFDB_ISA_AVX512 ? &cpu_rows_avx512
				      : isa >= PERFDB_ISA_AVX2 ? &cpu_rows_avx2 : NULL;
	return k && k->rms ? k : NULL;
}

void cpu_rows_set_kernel(struct perfdb_op_case *c, enum cpu_rows_path path)
{
	const struct cpu_rows_kern *k = path == CPU_ROWS_TABLE ? cpu_rows_for(cpu_isa_of(c)) : NULL;
	snprintf(c->kernel, sizeof(c->kernel), "own:%s",
		 path == CPU_ROWS_BF16 ? "rows_avx512_bf16" : k ? k->name : "generic");
}
