/*
 * Transpose of 2-byte elements (bf16, fp16, int16): cpu_transpose_u16(),
 * with streaming stores for outputs larger than the last-level cache and
 * ordinary ones below (ops_index.c decides).
 *
 * The input is read in tiles of TA = 64 rows by TB = 256 elements: each row
 * of a tile is 512 contiguous bytes (eight lines, a run the DRAM pages and
 * the hardware prefetchers like) and the tile's 32 KiB fit L1.  A tile is
 * first copied into a local buffer with full-width vector loads and stores,
 * then transposed from it in 8x8 blocks (three rounds of unpacks); with
 * non-temporal stores the output's lines are not read for ownership
 * before being overwritten whole.  Each output row gets a 128-byte run
 * per tile.  While a tile is transposed the next one is prefetched, two
 * lines per 8x8 block, which covers its 512 lines exactly.
 *
 * With streaming stores, eight output rows' runs are first assembled in
 * a 1 KiB strip and then written one run after another.  Written straight
 * from the 8x8 blocks, each block's eight 16-byte stores went to eight
 * different lines, and every line stayed open in a write-combining buffer
 * across four blocks.  The EPYC's buffers held that.  A Sapphire Rapids
 * Xeon's did not: the partial lines were flushed, and it ran at 1.4 GB/s
 * on one thread (14 % of its triad) and 5.6 GB/s on 16 (2026-12-04,
 * tests/device/run.sh --cpu).
 *
 * Why the copy is written out with intrinsics: given a size GCC can bound
 * (at most the buffer's row), it expands memcpy inline as `rep movsq`,
 * which measured at half the speed of this whole kernel (10 vs 24 GB/s on
 * bf16 4096x8192, one thread).  Measured on that shape, one thread, against
 * a STREAM triad alternating with it (bench/microbench.sh): the previous
 * 256x32 tiles without prefetch 53-80 %, 128x128 tiles 72-75 %, these
 * 64x256 tiles with the prefetch 94-100 %; two threads 65 % -> 100-104 %.
 * In the op (bench/microbench.sh, 2026-11-30): 118-127 % with the AVX2
 * copy, 105-107 % with the SSE2 one (the triad writes with ordinary
 * stores, so it pays a read for ownership the streaming stores do not).
 */
#include <string.h>

#include "cpu_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TA 64
#define TB 256
#define LINES_PER_ROW (TB * 2 / 64)

static inline __attribute__((always_inline)) void tr8x8(const uint16_t *s, size_t lds, uint16_t *d, size_t ldd)
{
	__m128i r0 = _mm_loadu_si128((const __m128i *)(s + 0 * lds)), r1 = _mm_loadu_si128((const __m128i *)(s + 1 * lds));
	__m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * lds)), r3 = _mm_loadu_si128((const __m128i *)(s + 3 * lds));
	__m128i r4 = _mm_loadu_si128((const __m128i *)(s + 4 * lds)), r5 = _mm_loadu_si128((const __m128i *)(s + 5 * lds));
	__m128i r6 = _mm_loadu_si128((const __m128i *)(s + 6 * lds)), r7 = _mm_loadu_si128((const __m128i *)(s + 7 * lds));
	__m128i t0 = _mm_unpacklo_epi16(r0, r1), t1 = _mm_unpackhi_epi16(r0, r1);
	__m128i t2 = _mm_unpacklo_epi16(r2, r3), t3 = _mm_unpackhi_epi16(r2, r3);
	__m128i t4 = _mm_unpacklo_epi16(r4, r5), t5 = _mm_unpackhi_epi16(r4, r5);
	__m128i t6 = _mm_unpacklo_epi16(r6, r7), t7 = _mm_unpackhi_epi16(r6, r7);
	__m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
	__m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
	__m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
	__m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
	_mm_storeu_si128((__m128i *)(d + 0 * ldd), _mm_unpacklo_epi64(u0, u4));
	_mm_storeu_si128((__m128i *)(d + 1 * ldd), _mm_unpackhi_epi64(u0, u4));
	_mm_storeu_si128((__m128i *)(d + 2 * ldd), _mm_unpacklo_epi64(u1, u5));
	_mm_storeu_si128((__m128i *)(d + 3 * ldd), _mm_unpackhi_epi64(u1, u5));
	_mm_storeu_si128((__m128i *)(d + 4 * ldd), _mm_unpacklo_epi64(u2, u6));
	_mm_storeu_si128((__m128i *)(d + 5 * ldd), _mm_unpackhi_epi64(u2, u6));
	_mm_storeu_si128((__m128i *)(d + 6 * ldd), _mm_unpacklo_epi64(u3, u7));
	_mm_storeu_si128((__m128i *)(d + 7 * ldd), _mm_unpackhi_epi64(u3, u7));
}

/* n bytes, a multiple of 16, from s to the 32-byte aligned d. */
static inline __attribute__((always_inline)) void copy16(void *d, const void *s, size_t n)
{
	for (size_t k = 0; k < n; k += 16)
		_mm_store_si128((__m128i *)((char *)d + k), _mm_loadu_si128((const __m128i *)((const char *)s + k)));
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void copy_row_avx2(void *d, const void *s)
{
	for (size_t k = 0; k < TB * 2; k += 32)
		_mm256_store_si256((__m256i *)((char *)d + k), _mm256_loadu_si256((const __m256i *)((const char *)s + k)));
}

/*
 * Eight loads before eight stores: written as copy16's loop, GCC recognises
 * a 512-byte memcpy and expands it as `rep movsq` again.
 */
static inline __attribute__((always_inline)) void copy_row_sse2(void *d, const void *s)
{
	const __m128i *sv = s;
	__m128i *dv = d;
	for (size_t k = 0; k < TB * 2 / 16; k += 8) {
		__m128i v0 = _mm_loadu_si128(sv + k + 0), v1 = _mm_loadu_si128(sv + k + 1);
		__m128i v2 = _mm_loadu_si128(sv + k + 2), v3 = _mm_loadu_si128(sv + k + 3);
		__m128i v4 = _mm_loadu_si128(sv + k + 4), v5 = _mm_loadu_si128(sv + k + 5);
		__m128i v6 = _mm_loadu_si128(sv + k + 6), v7 = _mm_loadu_si128(sv + k + 7);
		_mm_store_si128(dv + k + 0, v0), _mm_store_si128(dv + k + 1, v1);
		_mm_store_si128(dv + k + 2, v2), _mm_store_si128(dv + k + 3, v3);
		_mm_store_si128(dv + k + 4, v4), _mm_store_si128(dv + k + 5, v5);
		_mm_store_si128(dv + k + 6, v6), _mm_store_si128(dv + k + 7, v7);
	}
}

/*
 * n elements (a multiple of 8) from the strip to d (16-byte aligned) with
 * streaming stores one after another, so each output line is complete
 * before the next is begun.
 */
static inline __attribute__((always_inline)) void stream_run(uint16_t *d, const uint16_t *s, size_t n)
{
	for (size_t k = 0; k < n; k += 8)
		_mm_stream_si128((__m128i *)(d + k), _mm_load_si128((const __m128i *)(s + k)));
}

/*
 * The kernel, instantiated once per copy width.  b8 = b rounded down to 8
 * (the 8x8 blocks); the last columns go element by element.
 */
#define TR_BODY(copy_row, nt)                                                                             \
	size_t b8 = b / 8 * 8;                                                                            \
	_Alignas(64) uint16_t buf[TA][TB];                                                                \
	_Alignas(64) uint16_t strip[8][TA];                                                               \
	for (size_t a0 = 0; a0 < a; a0 += TA) {                                                           \
		size_t na = a - a0 < TA ? a - a0 : TA;                                                    \
		for (size_t b0 = 0; b0 < b8; b0 += TB) {                                                  \
			size_t nb = b8 - b0 < TB ? b8 - b0 : TB;                                          \
			if (nb == TB)                                                                     \
				for (size_t i = 0; i < na; i++)                                           \
					copy_row(buf[i], x + (a0 + i) * ld_x + b0);                       \
			else                                                                              \
				for (size_t i = 0; i < na; i++)                                           \
					copy16(buf[i], x + (a0 + i) * ld_x + b0, nb * 2);                 \
			/* the next tile: along b, else the next band of rows */                          \
			size_t pa = a0, pb = b0 + TB;                                                     \
			if (pb >= b8) {                                                                   \
				pa = a0 + TA;                                                             \
				pb = 0;                                                                   \
			}                                                                                 \
			size_t prow = b8 - pb < TB ? ((b8 - pb) * 2 + 63) / 64 : LINES_PER_ROW;           \
			size_t pn = pa < a ? (a - pa < TA ? a - pa : TA) * prow : 0, pl = 0;              \
			const char *px = pn ? (const char *)(x + pa * ld_x + pb) : NULL;                  \
			for (size_t j = 0; j < nb; j += 8) {                                              \
				for (size_t i = 0; i < na; i += 8) {                                      \
					for (int q = 0; q < 2 && pl < pn; q++, pl++)                      \
						_mm_prefetch(px + pl / prow * ld_x * 2 + pl % prow * 64,  \
							     _MM_HINT_T0);                                \
					if (nt)                                                           \
						tr8x8(&buf[i][j], TB, &strip[0][i], TA);               \
					else                                                              \
						tr8x8(&buf[i][j], TB, o + (b0 + j) * ld_o + a0 + i, ld_o);    \
				}                                                                         \
				if (nt)                                                                   \
					for (size_t r = 0; r < 8; r++)                                    \
						stream_run(o + (b0 + j + r) * ld_o + a0, strip[r], na);   \
			}                                                                                 \
		}                                                                                         \
	}                                                                                                 \
	if (nt)                                                                                           \
		_mm_sfence(); /* streaming stores are weakly ordered: complete them before returning */  \
	for (size_t i = 0; i < a; i++)                                                                    \
		for (size_t j = b8; j < b; j++)                                                           \
			o[j * ld_o + i] = x[i * ld_x + j];

#define TR_FN(name, attr, copy_row, nt)                                                                \
	attr static void name(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o) \
	{                                                                                                 \
		TR_BODY(copy_row, nt)                                                                     \
	}
TR_FN(tr_nt_avx2, __attribute__((target("avx2"))), copy_row_avx2, 1)
TR_FN(tr_avx2, __attribute__((target("avx2"))), copy_row_avx2, 0)
TR_FN(tr_nt_sse2, , copy_row_sse2, 1)
TR_FN(tr_sse2, , copy_row_sse2, 0)

int cpu_transpose_u16_ok(const void *o, size_t a, size_t ld_o, int nt)
{
	return a % 8 == 0 && (!nt || ((uintptr_t)o % 16 == 0 && ld_o % 8 == 0));
}

void cpu_transpose_u16_isa(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o, int nt,
			   int avx2)
{
	if (avx2 && perfdb_cpu_isa_detect() >= PERFDB_ISA_AVX2)
		(nt ? tr_nt_avx2 : tr_avx2)(x, o, a, b, ld_x, ld_o);
	else
		(nt ? tr_nt_sse2 : tr_sse2)(x, o, a, b, ld_x, ld_o);
}

#else

int cpu_transpose_u16_ok(const void *o, size_t a, size_t ld_o, int nt)
{
	(void)o, (void)a, (void)ld_o, (void)nt;
	return 0;   /* no kernel here: ops_index.c's tiles do every transpose */
}

void cpu_transpose_u16_isa(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o, int nt,
			   int avx2)
{
	(void)nt, (void)avx2;
	for (size_t i = 0; i < a; i++)
		for (size_t j = 0; j < b; j++)
			o[j * ld_o + i] = x[i * ld_x + j];
}

#endif

void cpu_transpose_u16(const uint16_t *x, uint16_t *o, size_t a, size_t b, size_t ld_x, size_t ld_o, int nt,
		       enum perfdb_cpu_isa isa)
{
	cpu_transpose_u16_isa(x, o, a, b, ld_x, ld_o, nt, isa >= PERFDB_ISA_AVX2);
}
