/*
 * What the CPU backend's op files share (cpu_internal.h): the backend's
 * context of a case, splitting rows over the threads, and element loads
 * and stores of every dtype (bf16 and fp16 vectorised where the CPU can).
 * Apart from cpu.c, which only lists the op tables, so that the op files
 * and the backend's registry do not call each other.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

const struct cpu_ctx *cpu_ctx_of(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (!c->backend_ctx)
		perfdb_err_set(err, PERFDB_EINVAL, "%s: the cpu backend is not open (no context)", c->op);
	return c->backend_ctx;
}

int cpu_par_threads(size_t n, size_t work, int threads)
{
	if (threads <= 1 || work < CPU_PAR_MIN || n < 2)
		return 1;
	return (size_t)threads < n ? threads : (int)n;
}

void cpu_parallel(size_t n, size_t work, int threads, void (*fn)(void *ctx, size_t lo, size_t hi, int tid),
		  void *ctx)
{
	int t = cpu_par_threads(n, work, threads);
	if (t == 1) {
		fn(ctx, 0, n, 0);
		return;
	}
#pragma omp parallel num_threads(t)
	{
		int id = omp_get_thread_num(), nt = omp_get_num_threads();
		size_t lo = n * (size_t)id / (size_t)nt, hi = n * (size_t)(id + 1) / (size_t)nt;
		if (lo < hi)
			fn(ctx, lo, hi, id);
	}
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define CPU_BF16_AVX512 1
/*
 * bf16 <-> fp32 over 16 lanes with AVX-512F (and fp16 with F16C, below);
 * the tails and other CPUs take the loops below.  Like the CPU_CLONES loops these follow the hardware, not
 * PERFDB_MAX_CPU_ISA (asked per row, where reading the environment would
 * cost more than a short row): both paths give the same bits.
 */
__attribute__((target("avx512f"))) static size_t bf16_load512(const uint16_t *h, size_t n, float *dst)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(h + i)));
		_mm512_storeu_si512(dst + i, _mm512_slli_epi32(w, 16));
	}
	return i;
}

/* Same rounding as perfdb_bf16_from_float: nearest even, NaN kept quiet. */
__attribute__((target("avx512f"))) static size_t bf16_store512(uint16_t *h, size_t n, const float *src)
{
	const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff),
		      abs = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000),
		      qb = _mm512_set1_epi32(0x40);
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512i u = _mm512_loadu_si512(src + i);
		__m512i hi = _mm512_srli_epi32(u, 16);
		__m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(hi, one))), 16);
		__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs), inf);
		r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, qb));
		_mm256_storeu_si256((__m256i *)(h + i), _mm512_cvtepi32_epi16(r));
	}
	return i;
}

/*
 * fp16 <-> fp32 over 8 lanes with F16C (every AVX2 CPU has it): the
 * conversions of perfdb_fp16_to_float/perfdb_fp16_from_float bit for bit
 * (nearest even, subnormals kept, NaN kept quiet with its top payload bits;
 * a signalling fp16 NaN loads quieted),
 * without which a fp16 row costs about 30 scalar instructions an element.
 */
__attribute__((target("avx2,f16c"))) static size_t fp16_load8(const uint16_t *h, size_t n, float *dst)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	return i;
}

__attribute__((target("avx2,f16c"))) static size_t fp16_store8(uint16_t *h, size_t n, const float *src)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(h + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
	return i;
}
#endif

CPU_CLONES void cpu_load_row(const struct perfdb_tensor *t, size_t off, size_t n, float *dst)
{
	const uint16_t *h = (const uint16_t *)t->data + off;
	switch (t->dtype) {
	case PERFDB_DTYPE_BF16: {
		size_t i = 0;
#ifdef CPU_BF16_AVX512
		if (perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX512)
			i = bf16_load512(h, n, dst);
#endif
		for (; i < n; i++) {
			uint32_t u = (uint32_t)h[i] << 16;
			memcpy(&dst[i], &u, 4);
		}
		break;
	}
	case PERFDB_DTYPE_FLOAT16: {
		size_t i = 0;
#ifdef CPU_BF16_AVX512
		if (perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX2)
			i = fp16_load8(h, n, dst);
#endif
		for (; i < n; i++)
			dst[i] = perfdb_fp16_to_float(h[i]);
		break;
	}
	default:
		memcpy(dst, (const float *)t->data + off, n * sizeof(float));
	}
}

CPU_CLONES void cpu_store_row(struct perfdb_tensor *t, size_t off, size_t n, const float *src)
{
	uint16_t *h = (uint16_t *)t->data + off;
	switch (t->dtype) {
	case PERFDB_DTYPE_BF16: {
		size_t i = 0;
#ifdef CPU_BF16_AVX512
		if (perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX512)
			i = bf16_store512(h, n, src);
#endif
		/* perfdb_bf16_from_float written branch-free, so the loop vectorises */
		for (; i < n; i++) {
			uint32_t u;
			memcpy(&u, &src[i], 4);
			uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x40u;
			h[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
		}
		break;
	}
	case PERFDB_DTYPE_FLOAT16: {
		size_t i = 0;
#ifdef CPU_BF16_AVX512
		if (perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX2)
			i = fp16_store8(h, n, src);
#endif
		for (; i < n; i++)
			h[i] = perfdb_fp16_from_float(src[i]);
		break;
	}
	default:
		memcpy((float *)t->data + off, src, n * sizeof(float));
	}
}

int64_t cpu_ld_int(const struct perfdb_tensor *t, size_t i)
{
	return perfdb_int_elem(t->data, t->dtype, i);
}

/* 16 partial sums so the loop vectorises at any ISA level; one order everywhere, so every norm gives the same rstd. */
CPU_CLONES float cpu_sumsq(const float *x, size_t h)
{
	float acc[16] = { 0 };
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		for (size_t k = 0; k < 16; k++)
			acc[k] += x[j + k] * x[j + k];
	float s = 0.0f;
	for (size_t k = 0; k < 16; k++)
		s += acc[k];
	for (; j < h; j++)
		s += x[j] * x[j];
	return s;
}
