/*
 * The row kernels of kern_rows.c (RmsNorm / AddRmsNormBias, softmax and
 * SwiGlu rows read straight from the fp32, fp16 or bf16 tensor and written
 * with one conversion) for CPUs with AVX2, FMA and F16C but no AVX-512:
 * Haswell to Ice Lake client parts, Zen 1-3, most cloud VMs' older hosts.
 * Without them such a CPU took the generic path (cpu_load_row -> fp32
 * scratch -> passes -> cpu_store_row), which ran bf16 RmsNorm at 60 % and
 * bf16 SoftmaxV2 at 37 % of a STREAM triad on one thread (docs/measuring.md
 * "The AVX2 path").
 *
 * Same arithmetic, order and conversions as kern_rows.c on 8 lanes instead
 * of 16:
 *   - bf16 is rounded in integer arithmetic exactly as
 *     perfdb_bf16_from_float (there is no vcvtneps2bf16 below AVX-512), fp16
 *     by vcvtps2ph (F16C) with the rounding in the immediate, so every
 *     non-NaN result converts as the scalar code would (test_cpu_rows.c
 *     tries every 16-bit pattern at each ISA level);
 *   - exp is cpu_expf's reduction and polynomial; AVX2 has no vscalefps,
 *     so p * 2^n is two exact multiplications by 2^a and 2^b (a + b = n,
 *     both within the normal exponent range), which rounds once, like
 *     scalef;
 *   - the 16-bit SwiGlu rows take the same cheaper sigmoid as
 *     kern_exp16.h, its reciprocal from vrcpps (12 bits) refined by one
 *     Newton step (relative error ~1.3e-7, far below the sigmoid's 9e-5
 *     bound); fp32 SwiGlu divides, as the generic path does.
 * Only the lane sums are reassociated (8-lane partial sums), so results
 * agree with kern_rows.c and the generic path within the bounds
 * test_cpu_rows.c states, not bit for bit.
 *
 * AVX2 has no 16-bit masked load or store: a row's last h % 8 elements go
 * through a zeroed 32-byte copy.
 */
#include "cpu_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#define A2 __attribute__((target("avx2,fma,f16c"), always_inline)) static inline
#define A2_ENTRY __attribute__((target("avx2,fma,f16c"))) static

#define D_F32 CPU_ROW_F32
#define D_F16 CPU_ROW_F16
#define D_BF16 CPU_ROW_BF16

#define ESZ(D) ((D) == D_F32 ? 4 : 2)

A2 __m256 ld(int d, const void *base, size_t j)
{
	if (d == D_F32)
		return _mm256_loadu_ps((const float *)base + j);
	__m128i v = _mm_loadu_si128((const __m128i *)((const uint16_t *)base + j));
	if (d == D_F16)
		return _mm256_cvtph_ps(v);
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

/* Lanes [0, n) of the 8 at element j, zeros above (n < 8). */
A2 __m256 ld_part(int d, const void *base, size_t j, size_t n)
{
	uint32_t buf[8] = { 0 };
	memcpy(buf, (const char *)base + j * ESZ(d), n * ESZ(d));
	return ld(d, buf, 0);
}

/* All-ones in lanes [0, n), zero above. */
A2 __m256 lanes_below(size_t n)
{
	return _mm256_castsi256_ps(
		_mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

/*
 * Bits 16-31 of each lane: v rounded to bf16 (bits 0-15 are left over).
 * NaN: quiet, payload kept.
 */
A2 __m256i bf16_hi(__m256 v)
{
	__m256i u = _mm256_castps_si256(v);
	__m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
	__m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
	__m256i q = _mm256_or_si256(u, _mm256_set1_epi32(0x400000));
	return _mm256_blendv_epi8(r, q, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

/* 8 fp32 -> 8 halves of dtype d (fp16 or bf16), rounded as the scalar conversions. */
A2 __m128i narrow(int d, __m256 v)
{
	if (d == D_F16)
		return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* every lane is <= 0xffff, so the unsigned-saturating pack keeps it; it packs
	 * within 128-bit halves, and qwords 0 and 2 then hold lanes 0-3 and 4-7 */
	__m256i r = _mm256_srli_epi32(bf16_hi(v), 16);
	r = _mm256_packus_epi32(r, r);
	return _mm256_castsi256_si128(_mm256_permute4x64_epi64(r, 0x08));
}

/* Bits 16-31 of each lane: finite v rounded to bf16 (bf16_hi without the NaN blend). */
A2 __m256i bf16_hi_num(__m256 v)
{
	__m256i u = _mm256_castps_si256(v);
	__m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
	return _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
}

/*
 * 16 fp32 (a: lanes 0-7, b: 8-15) -> 16 halves of dtype d; one pack for
 * both.  bf16: one unordered compare of a with b says whether any of the
 * 16 is NaN; only then the per-lane NaN blend (a sixth of the rounding's
 * cost, paid by almost no real row).
 */
A2 __m256i narrow2(int d, __m256 a, __m256 b)
{
	if (d == D_F16)
		return _mm256_set_m128i(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
					_mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	__m256i ra, rb;
	if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)) != 0, 0)) {
		ra = bf16_hi(a);
		rb = bf16_hi(b);
	} else {
		ra = bf16_hi_num(a);
		rb = bf16_hi_num(b);
	}
	__m256i r = _mm256_packus_epi32(_mm256_srli_epi32(ra, 16), _mm256_srli_epi32(rb, 16));
	return _mm256_permute4x64_epi64(r, 0xd8);   /* a0-3 b0-3 | a4-7 b4-7 -> a0-7 b0-7 */
}

/* Store 16 values (a, b) from element j; nt as st's (32-byte aligned for 16-bit types). */
A2 void st2(int d, void *base, size_t j, __m256 a, __m256 b, int nt)
{
	if (d == D_F32) {
		float *p = (float *)base + j;
		if (nt) {
			_mm256_stream_ps(p, a);
			_mm256_stream_ps(p + 8, b);
		} else {
			_mm256_storeu_ps(p, a);
			_mm256_storeu_ps(p + 8, b);
		}
		return;
	}
	__m256i *p = (__m256i *)((uint16_t *)base + j);
	if (nt)
		_mm256_stream_si256(p, narrow2(d, a, b));
	else
		_mm256_storeu_si256(p, narrow2(d, a, b));
}

/* Store 8 values; nt: streaming store (aligned to the vector: 32 bytes fp32, 16 bytes fp16/bf16). */
A2 void st(int d, void *base, size_t j, __m256 v, int nt)
{
	if (d == D_F32) {
		float *p = (float *)base + j;
		if (nt)
			_mm256_stream_ps(p, v);
		else
			_mm256_storeu_ps(p, v);
		return;
	}
	__m128i *p = (__m128i *)((uint16_t *)base + j);
	if (nt)
		_mm_stream_si128(p, narrow(d, v));
	else
		_mm_storeu_si128(p, narrow(d, v));
}

/* Store lanes [0, n) (n < 8). */
A2 void st_part(int d, void *base, size_t j, __m256 v, size_t n)
{
	uint32_t buf[8];
	st(d, buf, 0, v, 0);
	memcpy((char *)base + j * ESZ(d), buf, n * ESZ(d));
}

/* Streaming stores only where the row starts 32-byte aligned (st2 streams 32 bytes at a time). */
static inline int nt_ok(int d, const void *y, int nt)
{
	(void)d;
	return nt && (uintptr_t)y % 32 == 0;
}

A2 float hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
	return _mm_cvtss_f32(s);
}

A2 float hmax(__m256 v)
{
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
	return _mm_cvtss_f32(s);
}

/* 2^k for integral k in [-126, 127] (a float holding it). */
A2 __m256 pow2i(__m256 k)
{
	return _mm256_castsi256_ps(
		_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
}

/*
 * p * 2^n, n integral in [-252, 128], p in about [0.7, 1.5]: scalef's one
 * rounding, by two multiplications of which the first (by 2^a, a =
 * floor(n / 2) >= -126) is exact for the n the exps below produce
 * (>= -126: p * 2^a stays normal); overflows to inf, underflows to 0.
 */
A2 __m256 scale2n(__m256 p, __m256 n)
{
	n = _mm256_max_ps(n, _mm256_set1_ps(-252.0f));
	__m256 a = _mm256_floor_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)));
	return _mm256_mul_ps(_mm256_mul_ps(p, pow2i(a)), pow2i(_mm256_sub_ps(n, a)));
}

#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* cpu_expf / kern_exp16.h's exp16 on 8 lanes: same clamps, reduction and degree-6 polynomial. */
A2 __m256 exp8(__m256 x)
{
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
	x = _mm256_min_ps(x, _mm256_set1_ps(88.7f));
	__m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), ROUND_NEAREST);
	__m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145752f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860677e-6f), r);
	__m256 p = _mm256_set1_ps(1.38888892e-3f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.33333377e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666679e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666672e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	return scale2n(p, n);
}

/*
 * 2^n from t = x * log2(e) + 1.5 * 2^23 (its low mantissa bits hold n =
 * round(x * log2(e)), what cpu_expf's rounding does), for n in [-127, 127]:
 * the exponent field n + 127 (0 for n = -127: the result is then 0,
 * where 2^-127 could only matter to a sum with 1 or to a subnormal
 * result, which the callers below do not produce).  Two integer ops
 * where scale2n needs eleven.
 */
#define MAGIC_RND 12582912.0f
A2 __m256 pow2_of_magic(__m256 t)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127)), 23));
}

/*
 * exp8 for x <= 0 (softmax's exp(x - max)): the same clamp and reduction;
 * n in [-126, 0], so p * 2^n is one multiplication by an exact power of
 * two, rounded once as scalef rounds.  f16 (a constant): kern_rows.c's
 * exp16_nonpos_f16 for results rounded to fp16 (one ln2 constant, degree
 * 5; its error bound there); else cpu_expf's degree 6 for fp32 and bf16
 * results.
 */
A2 __m256 exp8_nonpos(__m256 x, const int f16)
{
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
	__m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504f), _mm256_set1_ps(MAGIC_RND));
	__m256 n = _mm256_sub_ps(t, _mm256_set1_ps(MAGIC_RND));
	__m256 r, p;
	if (f16) {
		r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693147181f), x);
		p = _mm256_set1_ps(8.33333377e-3f);
	} else {
		r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145752f), x);
		r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860677e-6f), r);
		p = _mm256_fmadd_ps(_mm256_set1_ps(1.38888892e-3f), r, _mm256_set1_ps(8.33333377e-3f));
	}
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666679e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666672e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	return _mm256_mul_ps(p, pow2_of_magic(t));
}

/*
 * kern_exp16.h's sigmoid16_lp on 8 lanes, g held to [-87, 88] so that n =
 * round(-g log2 e) is in [-127, 126] (above 88, exp(-g) < 2^-126 adds
 * nothing to 1 in fp32 either way); the reciprocal: vrcpps and one Newton
 * step.
 */
A2 __m256 sigmoid8_lp(__m256 g)
{
	g = _mm256_min_ps(_mm256_max_ps(g, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
	__m256 tm = _mm256_fmadd_ps(g, _mm256_set1_ps(-1.44269504f), _mm256_set1_ps(MAGIC_RND));
	__m256 n = _mm256_sub_ps(tm, _mm256_set1_ps(MAGIC_RND));
	__m256 t = _mm256_fmadd_ps(n, _mm256_set1_ps(0.693147181f), g);
	__m256 q = _mm256_set1_ps(4.16666679e-2f);
	q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.66666672e-1f));
	q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.5f));
	q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.0f));
	q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.0f));
	__m256 dn = _mm256_fmadd_ps(q, pow2_of_magic(tm), _mm256_set1_ps(1.0f));
	__m256 r = _mm256_rcp_ps(dn);
	return _mm256_mul_ps(r, _mm256_fnmadd_ps(dn, r, _mm256_set1_ps(2.0f)));
}

A2 __m256 row_x(int d, int add, const void *x1, const void *x2, size_t j)
{
	__m256 v = ld(d, x1, j);
	return add ? _mm256_add_ps(v, ld(d, x2, j)) : v;
}

A2 __m256 row_x_part(int d, int add, const void *x1, const void *x2, size_t j, size_t n)
{
	__m256 v = ld_part(d, x1, j, n);
	return add ? _mm256_add_ps(v, ld_part(d, x2, j, n)) : v;
}

/* gam (and bias) lanes [j, j+n), n < 8, zeros above. */
A2 __m256 ldf_part(const float *p, size_t j, size_t n)
{
	return ld_part(D_F32, p, j, n);
}

/*
 * kern_rows.c's rms_row: y = (x * rstd) * gam (+ bias), x = x1 (+ x2, to
 * xsum); returns rstd.  Four partial sums: one FMA chain per vector would
 * stall on the FMA's latency at 8 lanes.
 */
A2 float rms_row(int d, int add, const void *x1, const void *x2, void *xsum, void *y, const float *gam,
		 const float *bias, size_t h, float eps, int nt)
{
	int nty = nt_ok(d, y, nt), nts = xsum && nt_ok(d, xsum, nt);
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(),
	       acc3 = _mm256_setzero_ps();
	size_t j = 0, full = h / 8 * 8;
	for (; j + 32 <= h; j += 32) {
		__m256 a = row_x(d, add, x1, x2, j), b = row_x(d, add, x1, x2, j + 8);
		__m256 e = row_x(d, add, x1, x2, j + 16), f = row_x(d, add, x1, x2, j + 24);
		if (xsum) {
			st2(d, xsum, j, a, b, nts);
			st2(d, xsum, j + 16, e, f, nts);
		}
		acc0 = _mm256_fmadd_ps(a, a, acc0);
		acc1 = _mm256_fmadd_ps(b, b, acc1);
		acc2 = _mm256_fmadd_ps(e, e, acc2);
		acc3 = _mm256_fmadd_ps(f, f, acc3);
	}
	for (; j < full; j += 8) {
		__m256 a = row_x(d, add, x1, x2, j);
		if (xsum)
			st(d, xsum, j, a, nts);
		acc0 = _mm256_fmadd_ps(a, a, acc0);
	}
	if (j < h) {
		__m256 a = row_x_part(d, add, x1, x2, j, h - j);
		if (xsum)
			st_part(d, xsum, j, a, h - j);
		acc0 = _mm256_fmadd_ps(a, a, acc0);
	}
	float ss = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
	float rstd = 1.0f / sqrtf(ss / (float)h + eps);
	__m256 rs = _mm256_set1_ps(rstd);
	/*
	 * The next row of x (the callers' rows are contiguous) is prefetched
	 * while this one is scaled: at 8 lanes the scaling pass is long enough
	 * that memory would otherwise sit idle through it.  A prefetch past the
	 * tensor's end is harmless.
	 */
	const char *n1 = (const char *)x1 + h * ESZ(d), *n2 = add ? (const char *)x2 + h * ESZ(d) : NULL;
	for (j = 0; j + 16 <= h; j += 16) {
		if ((j * ESZ(d)) % 64 == 0) {
			_mm_prefetch(n1 + j * ESZ(d), _MM_HINT_T0);
			if (n2)
				_mm_prefetch(n2 + j * ESZ(d), _MM_HINT_T0);
		}
		__m256 a = _mm256_mul_ps(_mm256_mul_ps(row_x(d, add, x1, x2, j), rs), _mm256_loadu_ps(gam + j));
		__m256 b = _mm256_mul_ps(_mm256_mul_ps(row_x(d, add, x1, x2, j + 8), rs), _mm256_loadu_ps(gam + j + 8));
		if (bias) {
			a = _mm256_add_ps(a, _mm256_loadu_ps(bias + j));
			b = _mm256_add_ps(b, _mm256_loadu_ps(bias + j + 8));
		}
		st2(d, y, j, a, b, nty);
	}
	for (; j < full; j += 8) {
		__m256 v = _mm256_mul_ps(_mm256_mul_ps(row_x(d, add, x1, x2, j), rs), _mm256_loadu_ps(gam + j));
		if (bias)
			v = _mm256_add_ps(v, _mm256_loadu_ps(bias + j));
		st(d, y, j, v, nty);
	}
	if (j < h) {
		size_t n = h - j;
		__m256 v = _mm256_mul_ps(_mm256_mul_ps(row_x_part(d, add, x1, x2, j, n), rs), ldf_part(gam, j, n));
		if (bias)
			v = _mm256_add_ps(v, ldf_part(bias, j, n));
		st_part(d, y, j, v, n);
	}
	if (nty || nts)
		_mm_sfence();   /* streaming stores are weakly ordered: complete them before returning */
	return rstd;
}

A2 float max_row(int d, const void *x, size_t h)
{
	__m256 mx = _mm256_set1_ps(-INFINITY);
	size_t j = 0;
	for (; j + 8 <= h; j += 8)
		mx = _mm256_max_ps(mx, ld(d, x, j));
	if (j < h)
		mx = _mm256_max_ps(mx, _mm256_blendv_ps(mx, ld_part(d, x, j, h - j), lanes_below(h - j)));
	return hmax(mx);
}

/*
 * exp(x - max): degree 6 for fp32 and bf16 results, 5 for fp16 ones, as
 * kern_rows.c (kern_bf16.c's degree 4 can move a bf16 result by an ulp
 * past the correctly rounded one: test_cpu_rows.c's bound does not allow it).
 */
A2 __m256 softmax_exp(int d, __m256 x)
{
	return exp8_nonpos(x, d == D_F16);
}

/*
 * kern_rows.c's softmax_rows: exp(x - max) into the fp32 scratch e with its
 * sum, then e * (1 / sum) stored, the max pass of row r+1 fused into the
 * store pass of row r; the row after next prefetched into L2.
 */
A2 void softmax_rows(int d, const void *x, void *y, float *e, size_t h, size_t rows, int nt)
{
	if (!rows)
		return;
	nt = nt_ok(d, y, nt) && h * ESZ(d) % 32 == 0;   /* every row then starts aligned */
	size_t es = ESZ(d), full = h / 8 * 8, rest = h - full;
	__m256 tail = lanes_below(rest);
	__m256i tail_i = _mm256_castps_si256(tail);
	float mnext = max_row(d, x, h);
	for (size_t r = 0; r < rows; r++) {
		const char *xr = (const char *)x + r * h * es, *xn = xr + h * es;
		char *yr = (char *)y + r * h * es;
		__m256 m = _mm256_set1_ps(mnext), sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
		const char *pf = r + 2 < rows ? xr + 2 * h * es : NULL;
		size_t j = 0;
		for (; j + 16 <= full; j += 16) {
			if (pf && (j * es) % 64 == 0)
				_mm_prefetch(pf + j * es, _MM_HINT_T1);
			__m256 a = softmax_exp(d, _mm256_sub_ps(ld(d, xr, j), m));
			__m256 b = softmax_exp(d, _mm256_sub_ps(ld(d, xr, j + 8), m));
			_mm256_storeu_ps(e + j, a);
			_mm256_storeu_ps(e + j + 8, b);
			sum0 = _mm256_add_ps(sum0, a);
			sum1 = _mm256_add_ps(sum1, b);
		}
		for (; j < full; j += 8) {
			__m256 a = softmax_exp(d, _mm256_sub_ps(ld(d, xr, j), m));
			_mm256_storeu_ps(e + j, a);
			sum0 = _mm256_add_ps(sum0, a);
		}
		if (rest) {
			__m256 a = _mm256_and_ps(tail, softmax_exp(d, _mm256_sub_ps(ld_part(d, xr, j, rest), m)));
			_mm256_maskstore_ps(e + j, tail_i, a);
			sum0 = _mm256_add_ps(sum0, a);
		}
		__m256 inv = _mm256_set1_ps(1.0f / hsum(_mm256_add_ps(sum0, sum1)));
		__m256 mx = _mm256_set1_ps(-INFINITY);
		int more = r + 1 < rows;
		for (j = 0; j + 16 <= full; j += 16) {
			if (more)
				mx = _mm256_max_ps(mx, _mm256_max_ps(ld(d, xn, j), ld(d, xn, j + 8)));
			st2(d, yr, j, _mm256_mul_ps(_mm256_loadu_ps(e + j), inv), _mm256_mul_ps(_mm256_loadu_ps(e + j + 8), inv),
			    nt);
		}
		for (; j < full; j += 8) {
			if (more)
				mx = _mm256_max_ps(mx, ld(d, xn, j));
			st(d, yr, j, _mm256_mul_ps(_mm256_loadu_ps(e + j), inv), nt);
		}
		if (rest) {
			if (more)
				mx = _mm256_max_ps(mx, _mm256_blendv_ps(mx, ld_part(d, xn, j, rest), tail));
			st_part(d, yr, j, _mm256_mul_ps(_mm256_maskload_ps(e + j, tail_i), inv), rest);
		}
		mnext = more ? hmax(mx) : 0.0f;
	}
	if (nt)
		_mm_sfence();
}

/* silu(g) * u: the 16-bit rows' cheaper sigmoid, fp32's division as in the generic path. */
A2 __m256 swiglu8(int d, __m256 g, __m256 u)
{
	if (d != D_F32)
		return _mm256_mul_ps(_mm256_mul_ps(g, sigmoid8_lp(g)), u);
	__m256 dn = _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(_mm256_sub_ps(_mm256_setzero_ps(), g)));
	return _mm256_mul_ps(_mm256_div_ps(g, dn), u);
}

A2 void swiglu_row(int d, const void *x, void *y, size_t h)
{
	const char *u = (const char *)x + h * ESZ(d);
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		st2(d, y, j, swiglu8(d, ld(d, x, j), ld(d, u, j)), swiglu8(d, ld(d, x, j + 8), ld(d, u, j + 8)), 0);
	for (; j + 8 <= h; j += 8)
		st(d, y, j, swiglu8(d, ld(d, x, j), ld(d, u, j)), 0);
	if (j < h)
		st_part(d, y, j, swiglu8(d, ld_part(d, x, j, h - j), ld_part(d, u, j, h - j)), h - j);
}

/*
 * One bf16 SwiGlu row, kern_bf16.c's scheme on 8 lanes: a 32-byte load holds
 * 8 (even, odd) pairs; the even elements are the dwords shifted left by 16,
 * the odd ones the dwords with the low half cleared, and the two results,
 * rounded in the dwords' high halves, go back with one word blend: no
 * widening loads, no pack.
 */
A2 void swiglu_row_bf16(const uint16_t *x, uint16_t *y, size_t h)
{
	const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
	const uint16_t *xu = x + h;
	size_t j = 0;
	for (; j + 16 <= h; j += 16) {
		__m256i gw = _mm256_loadu_si256((const __m256i *)(x + j)), uw = _mm256_loadu_si256((const __m256i *)(xu + j));
		__m256 re = swiglu8(D_BF16, _mm256_castsi256_ps(_mm256_slli_epi32(gw, 16)),
				    _mm256_castsi256_ps(_mm256_slli_epi32(uw, 16)));
		__m256 ro = swiglu8(D_BF16, _mm256_castsi256_ps(_mm256_and_si256(gw, hi)),
				    _mm256_castsi256_ps(_mm256_and_si256(uw, hi)));
		__m256i a, b;
		if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(re, ro, _CMP_UNORD_Q)) != 0, 0)) {
			a = bf16_hi(re);
			b = bf16_hi(ro);
		} else {
			a = bf16_hi_num(re);
			b = bf16_hi_num(ro);
		}
		_mm256_storeu_si256((__m256i *)(y + j), _mm256_blend_epi16(_mm256_srli_epi32(a, 16), b, 0xaa));
	}
	for (; j + 8 <= h; j += 8)
		st(D_BF16, y, j, swiglu8(D_BF16, ld(D_BF16, x, j), ld(D_BF16, xu, j)), 0);
	if (j < h)
		st_part(D_BF16, y, j, swiglu8(D_BF16, ld_part(D_BF16, x, j, h - j), ld_part(D_BF16, xu, j, h - j)), h - j);
}

/* The entry points: one switch per row, the constant format folded into each instance. */
A2_ENTRY float rows_rms(enum cpu_row_fmt f, const void *x1, const void *x2, void *xsum, void *y, const float *gam,
			const float *bias, size_t h, float eps, int nt)
{
	switch ((int)f * 2 + (x2 != NULL)) {
	case D_F32 * 2: return rms_row(D_F32, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	case D_F32 * 2 + 1: return rms_row(D_F32, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	case D_F16 * 2: return rms_row(D_F16, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	case D_F16 * 2 + 1: return rms_row(D_F16, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	case D_BF16 * 2: return rms_row(D_BF16, 0, x1, NULL, NULL, y, gam, bias, h, eps, nt);
	default: return rms_row(D_BF16, 1, x1, x2, xsum, y, gam, bias, h, eps, nt);
	}
}

A2_ENTRY void rows_softmax(enum cpu_row_fmt f, const void *x, void *y, float *e, size_t h, size_t rows, int nt)
{
	switch (f) {
	case D_F32: softmax_rows(D_F32, x, y, e, h, rows, nt); break;
	case D_F16: softmax_rows(D_F16, x, y, e, h, rows, nt); break;
	default: softmax_rows(D_BF16, x, y, e, h, rows, nt); break;
	}
}

A2_ENTRY void rows_swiglu(enum cpu_row_fmt f, const void *x, void *y, size_t h)
{
	switch (f) {
	case D_F32: swiglu_row(D_F32, x, y, h); break;
	case D_F16: swiglu_row(D_F16, x, y, h); break;
	default: swiglu_row_bf16(x, y, h); break;
	}
}

const struct cpu_rows_kern cpu_rows_avx2 = { "rows_avx2", rows_rms, rows_softmax, rows_swiglu };

#else

const struct cpu_rows_kern cpu_rows_avx2 = { "rows_avx2", NULL, NULL, NULL };

#endif
