/*
 * The CPU backend (docs/spec/replay.md Decision 1): GEMMs through oneDNN's C API
 * (ops_matmul.c), element-wise, norm and index ops with our own
 * kernels (ops_eltwise.c, ops_norm.c, ops_index.c, ops_reduce.c).  Tensors keep their own
 * dtype (bf16, fp16, fp32, integers); the kernels compute in fp32.
 * OpenBLAS is not linked: every GEMM, fp32 M = 1 included, goes through
 * oneDNN (ops_matmul.c; docs/replay.md "CPU backend").
 */
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dnnl_load.h"

static const struct perfdb_op_impl *const tables[] = {
	cpu_ops_matmul, cpu_ops_eltwise, cpu_ops_norm, cpu_ops_index, cpu_ops_reduce,
	cpu_ops_rope, cpu_ops_cache, cpu_ops_misc,
	cpu_ops_moe, cpu_ops_quant, cpu_ops_dfc,
	cpu_ops_attention, cpu_ops_attention_sparse,
	cpu_ops_mla_preprocess,
};

static const struct perfdb_op_impl *cpu_find_op(const char *op)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct perfdb_op_impl *o = tables[t]; o->name; o++)
			if (strcmp(o->name, op) == 0)
				return o;
	return NULL;
}

static bool cpu_supports_op(const char *op)
{
	return cpu_find_op(op) != NULL;
}

static void cpu_free(void *ctx)
{
	struct cpu_ctx *x = ctx;
	if (!x)
		return;
	if (x->strm)
		dnnl_stream_destroy(x->strm);
	if (x->eng)
		dnnl_engine_destroy(x->eng);
	free(x);
}

static int cpu_open(int threads, int device, void **ctx, struct perfdb_err *err)
{
	*ctx = NULL;
	if (device != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "--backend cpu: device %d does not exist (the host is 0)", device);
	struct perfdb_err why;
	perfdb_err_clear(&why);
	if (cpu_dnnl_open(&why) < 0)
		return perfdb_err_set(err, PERFDB_EIO, "--backend cpu: %s", why.msg);
	struct cpu_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	x->threads = threads > 0 ? threads : 1;
	x->isa = perfdb_cpu_isa();
	/* oneDNN's OpenMP runtime reads OMP_NUM_THREADS at its first primitive */
	char b[16];
	snprintf(b, sizeof(b), "%d", x->threads);
	setenv("OMP_NUM_THREADS", b, 1);
	dnnl_status_t st = dnnl_engine_create(&x->eng, dnnl_cpu, 0);
	if (st == dnnl_success)
		st = dnnl_stream_create(&x->strm, x->eng, dnnl_stream_default_flags);
	if (st != dnnl_success) {
		cpu_free(x);
		return perfdb_err_set(err, PERFDB_EIO, "--backend cpu: oneDNN engine creation failed (status %d)", (int)st);
	}
	*ctx = x;
	return 0;
}

const struct cpu_ctx *cpu_ctx_of(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (!c->backend_ctx)
		perfdb_err_set(err, PERFDB_EINVAL, "%s: the cpu backend is not open (no context)", c->op);
	return c->backend_ctx;
}

/* oneDNN's name of the ISA its kernels may use (dnnl_get_effective_cpu_isa). */
static const char *onednn_isa_name(dnnl_cpu_isa_t isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return "other";
	}
}

static void cpu_describe(void *ctx, struct perfdb_strbuf *out)
{
	const struct cpu_ctx *x = ctx;
	const dnnl_version_t *v = dnnl_version();   /* NULL where oneDNN is not loaded (dnnl_load.c) */
	if (x) {
		/* what the rows ran with: the own kernels' level and oneDNN's (Kernel Used names each GEMM's) */
		const char *cap = getenv("PERFDB_MAX_CPU_ISA"), *dcap = getenv("ONEDNN_MAX_CPU_ISA");
		perfdb_strbuf_addf(out, "cpu_isa=%s (detected %s, PERFDB_MAX_CPU_ISA=%s)\n", perfdb_cpu_isa_name(x->isa),
				   perfdb_cpu_isa_name(perfdb_cpu_isa_detect()), cap ? cap : "(unset)");
		perfdb_strbuf_addf(out, "onednn_isa=%s (ONEDNN_MAX_CPU_ISA=%s)\n",
				   onednn_isa_name(dnnl_get_effective_cpu_isa()), dcap ? dcap : "(unset)");
	}
	if (v)
		perfdb_strbuf_addf(out, "onednn=%d.%d.%d (%s)\n", v->major, v->minor, v->patch, v->hash);
}

const struct perfdb_backend_i perfdb_backend_cpu = {
	.api_version = PERFDB_BACKEND_API_VERSION,
	.name = "cpu",
	.device_kind = "cpu",
	.open = cpu_open,
	.free = cpu_free,
	.supports_op = cpu_supports_op,
	.find_op = cpu_find_op,
	.describe = cpu_describe,
};

/* ---- helpers shared by the op files --------------------------------- */

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
