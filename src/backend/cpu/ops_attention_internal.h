/*
 * What the files of the CPU flash-attention kernel share (its interface
 * to the ops is ops_attention_kernel.h): work items, the per-thread scratch
 * layout, the 16-lane vector helpers, and the item kernels and products
 * each file gives the others.
 *
 * Flash attention: online softmax over tiles of ATTN_BK keys, so memory
 * stays bounded whatever the sequence.  A work item is (batch b, kv head
 * g, a run of query positions) with all G = hq/hkv query heads of g, so
 * every key tile is loaded and converted to fp32 once for the G·positions
 * rows that use it (GQA, MLA's one kv head).  Items are shared between
 * threads through an atomic counter (causal items differ in cost).
 *
 *   ops_attention_plan.c            items, scratch, which item kernel runs an item
 *   ops_attention_prefill.c         items of many query rows, one query per lane
 *   ops_attention_decode.c          items of <= 16 query rows, lanes along the head dim
 *   ops_attention_decode_avx512bf16.c  the same in bf16 on AVX512_BF16
 *   ops_attention_fp32.c            the fp32 products (16-lane vectors, CPU_CLONES)
 *   ops_attention_avx512bf16.c      the bf16 products of the prefill items (vdpbf16ps)
 *
 * 16-lane GCC vector types compile to AVX-512 (AVX2, SSE) in the clones of
 * CPU_CLONES; the AVX512_BF16 code carries its own target attribute (TBF)
 * and is only called once the plan has seen the CPU support it, so the
 * binary runs on any x86-64 CPU.
 */
#ifndef PERFDB_CPU_OPS_ATTENTION_INTERNAL_H
#define PERFDB_CPU_OPS_ATTENTION_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"
#include "ops_attention_kernel.h"

/* the 16-lane helpers are static and inlined: no call passes a vector across an ABI boundary */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
/* -std=c17 turns contraction off; the products below are meant as fused multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

#define NEG_BIG (-1e30f)

/* Items of at most this many query rows may take the decode kernels (lanes along the head dim). */
#define ROWS_MAX 16

/*
 * A work item: query rows s0 .. s0 + ns - 1 of sequence b against kv head
 * g, over keys [k0, k1) (k1 past the end: all of them).  A decode item may
 * be one part of a row split along its keys (ops_attention_plan.c); part
 * is then where its rows' partial results start in struct scr's parts
 * (floats; -1: not split, the item writes the outputs itself).
 */
struct item {
	int64_t b, g, s0, ns;
	int64_t k0, k1, part;
};

/* Scratch layout of one thread (floats, every part 64-byte aligned); parts: the plan's, shared. */
struct scr {
	float *qt, *k, *v, *st, *ot, *m, *l, *alpha, *row;
	int32_t *end;
	float *parts;
};

static inline size_t al16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/*
 * Keys j0 .. j0 + nk - 1 of item it into the tile scratch as fp32: s->k
 * rows of dq + dr (the key, then its rope part), s->v rows of dv.  Inline,
 * so each ISA clone of the prefill and decode loops gets its own copy.
 */
static inline void attn_load_kv_tile(const struct attn_problem *p, const struct item *it, int64_t j0, size_t nk,
				     struct scr *s)
{
	size_t dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	for (size_t j = 0; j < nk; j++) {
		int64_t kr = p->kv_row(p->ctx, it->b, it->g, it->s0, j0 + (int64_t)j);
		cpu_load_row(p->k, (size_t)kr * dq, dq, s->k + j * dk);
		if (dr)
			cpu_load_row(p->kr, (size_t)kr * dr, dr, s->k + j * dk + dq);
		cpu_load_row(p->v, (size_t)kr * dv, dv, s->v + j * dv);
	}
}

/*
 * A scalar as 16 lanes.  Written as vector + scalar: GCC builds a 16-element
 * literal (or a shuffle) through the stack, but broadcasts the scalar
 * operand of a vector operation in a register.  These helpers are always
 * inlined: an out-of-line copy (GCC makes one at -O1, the sanitizer build)
 * would return a 64-byte vector from a function compiled without AVX-512,
 * which -Wpsabi rejects.
 */
static inline __attribute__((always_inline)) v16 bc(float x)
{
	return (v16){ 0 } + x;
}

static inline __attribute__((always_inline)) v16 vsel(v16i m, v16 a, v16 b)
{
	return (v16)(((v16i)a & m) | ((v16i)b & ~m));
}

static inline __attribute__((always_inline)) v16 vmax(v16 a, v16 b)
{
	return vsel(a > b, a, b);
}

/* cpu_expf over 16 lanes (same polynomial, same clamps, without the +inf case: scores stay finite). */
static inline __attribute__((always_inline)) v16 vexp(v16 x)
{
	x = vmax(x, bc(-87.3f));
	x = vsel(x < bc(88.7f), x, bc(88.7f));
	v16 n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
	v16 r = x - n * 0.693145752f - n * 1.42860677e-6f;
	v16 p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
		r * (8.33333377e-3f + r * 1.38888892e-3f)))));
	v16i e = __builtin_convertvector(n, v16i) + 127;
	e &= e > 0;
	return p * (v16)(e << 23);
}

/*
 * AVX512_BF16 (GCC on x86-64): vdpbf16ps multiplies bf16 pairs and
 * accumulates in fp32, as the NPU's cube unit takes bf16 operands with fp32
 * accumulation.  Code built for it carries TBF.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define ATTN_BF16 1
#define TBF __attribute__((target("avx512f,avx512bw,avx512bf16")))
#endif

/*
 * The item kernels (the plan picks one per item).  s is the thread's
 * scratch (laid out for the plan's widest item); each writes the item's
 * output rows (and lse).
 */
/* Lane-per-query items (any M <= the plan's Mp); bf: bf16 tiles and products (ATTN_BF16 only). */
void attn_run_prefill(const struct attn_problem *p, const struct item *it, struct scr *s, int bf);
/* Items of M <= ROWS_MAX rows with q·k and value dims multiples of 16. */
void attn_run_decode(const struct attn_problem *p, const struct item *it, struct scr *s);
/*
 * Row i of a decode item: o (dv floats in dim order, not yet divided by
 * l), the row's running max m and sum l.  Divided and stored to the
 * outputs (with the log-sum-exp), or kept in the item's part when the
 * item is one part of a split row.  o may be overwritten.
 */
void attn_decode_emit(const struct attn_problem *p, const struct item *it, struct scr *s, size_t i, float m,
		      float l, float *o);
/* The np parts of one split row (consecutive items) combined and stored; row: dv floats of scratch. */
void attn_decode_merge(const struct attn_problem *p, const struct item *parts, size_t np, const float *buf,
		       float *row);

/* fp32 products of the lane-per-query layout (attn_qk_tile in ops_attention_kernel.h is the score one). */
/* Ot[d][i] = Ot[d][i]·alpha[i] + Σ_j V[j][d]·P[j][i] for d < dv, i < mp (a multiple of 16), j < nk; aligned as attn_qk_tile. */
void attn_pv_tile(const float *V, size_t dv, const float *P, size_t mp, size_t nk, float *Ot, const float *alpha);

/* fp32 products of the decode layout (one query row against a tile). */
/* S[j] = Σ_d q[d]·K[j][d] for j < nk16 (a multiple of 16), dk a multiple of 16. */
void attn_rows_qk(const float *q, const float *K, size_t dk, size_t nk16, float *S);
/* o[d] = o[d]·alpha + Σ_j P[j]·V[j][d] for d < dv (a multiple of 16), j < nk; V rows dv apart. */
void attn_rows_pv(float *o, float alpha, const float *P, const float *V, size_t dv, size_t nk);

#ifdef ATTN_BF16
/* Decode items in bf16: as attn_run_decode, plus q·k dim a multiple of 32 up to 256, value dim up to 512. */
TBF void attn_run_decode_bf16(const struct attn_problem *p, const struct item *it, struct scr *s);

/* bf16 products of the lane-per-query layout (ops_attention_avx512bf16.c). */
/* St[j][i] = Σ_q pair(K[j][2q], K[j][2q+1])·Qt2[q][i]: attn_qk_tile on bf16 pairs, Qt2 (d, d+1) per lane. */
TBF void attn_qk_tile_bf16(const uint16_t *K, size_t dk, const uint32_t *Qt2, size_t mp, float *St, size_t nk);
/* attn_pv_tile on bf16 pairs: Vp from attn_pack_v_bf16, P2 from attn_pack_p_bf16 (nk even). */
TBF void attn_pv_tile_bf16(const uint32_t *Vp, size_t dv, const uint32_t *P2, size_t mp, size_t nk, float *Ot,
			   const float *alpha);
/* Vp[q][d] = V[2q][d] | V[2q+1][d] << 16 from two bf16 rows (r1 NULL: zeros). */
TBF void attn_pack_v_bf16(uint32_t *dst, const uint16_t *r0, const uint16_t *r1, size_t dv);
/* P2 row q (in place over St row q) = bf16(St[2q]) | bf16(St[2q+1]) << 16, rounded to nearest even. */
TBF void attn_pack_p_bf16(float *St, size_t mp, size_t nk);
#endif

#endif
