/*
 * The CPU backend's flash-attention kernel, shared by the attention ops
 * (ops_attention.c, ops_attention_sparse.c): its plan in ops_attention_plan.c,
 * the rest in the files ops_attention_internal.h lists; the ops' row
 * helpers at the end in ops_attention_inputs.c.
 *
 * A problem is described by index callbacks rather than one memory layout,
 * so TND, BNSD, paged KV caches (block tables) and the top-k selections of
 * SparseFlashAttention all use the same kernel: for batch b and KV head g,
 * kv_row(b, g, j) is the row index of the j-th key in slots k (and krope,
 * v); a row of width D starts at element row * D.  Query rows likewise.
 */
#ifndef PERFDB_CPU_OPS_ATTENTION_KERNEL_H
#define PERFDB_CPU_OPS_ATTENTION_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

/* Keys per tile (the online softmax's step). */
#define ATTN_BK 64

struct attn_problem {
	const struct perfdb_tensor *q, *qr, *k, *kr, *v;   /* qr/kr: rope parts (NULL: none) */
	struct perfdb_tensor *out;
	int64_t nb, hq, hkv;                                 /* batches, heads, kv heads */
	int64_t dq, dr, dv;                                  /* q·k dim = dq + dr, value dim */
	float scale;
	const int64_t *qlen, *kvlen;                         /* per batch */
	/* row of query (b, h, s) in q (x dq), qr (x dr) and out (x dv) */
	int64_t (*q_row)(const void *ctx, int64_t b, int64_t h, int64_t s);
	int64_t (*o_row)(const void *ctx, int64_t b, int64_t h, int64_t s);
	/*
	 * Row of key j (0 <= j < kvlen[b]) of kv head g in k (x dq), kr (x dr),
	 * v (x dv).  s is the item's first query position: with per_query set,
	 * items hold one position and each query has its own keys (top-k).
	 */
	int64_t (*kv_row)(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j);
	/*
	 * Optional: rows[t] = kv_row(b, g, s, j0 + t) for t < n at once.  The
	 * decode kernel asks for every key twice per tile (staging, prefetch);
	 * one call per key, each with a block-table division, cost more than
	 * the arithmetic on the key.  NULL: kv_row per key.
	 */
	void (*kv_rows)(const void *ctx, int64_t b, int64_t g, int64_t s, int64_t j0, int64_t n, int64_t *rows);
	/* keys 0 .. end-1 are visible to query s of batch b, kv head g (end <= kvlen[b]) */
	int64_t (*kv_end)(const void *ctx, int64_t b, int64_t g, int64_t s);
	const void *ctx;
	bool per_query;
	/* optional fp32 log-sum-exp of each row's scores (element lse_at(b, h, s)); -inf with no key */
	struct perfdb_tensor *lse;
	int64_t (*lse_at)(const void *ctx, int64_t b, int64_t h, int64_t s);
};

struct attn_plan;

/*
 * Work items and per-thread scratch for p (kept by pointer: p, its lengths
 * and its context must outlive the plan and not change), on c's threads
 * and ISA level (cpu_isa_of); names the tiles chosen in c->kernel.
 */
int attn_plan_new(struct attn_plan **out, const struct attn_problem *p, struct perfdb_op_case *c,
		  struct perfdb_err *err);
/* out = softmax(q·kᵀ·scale, keys past kv_end masked) · v; rows with no visible key get 0. */
int attn_plan_run(struct attn_plan *pl, struct perfdb_err *err);
void attn_plan_free(struct attn_plan *pl);

/*
 * St[j][i] = Σ_d K[j][d]·Qt[d][i] for j < nk (a multiple of 8), i < mp (a
 * multiple of 16), all row-major fp32, St and Qt 64-byte aligned: the
 * kernel's score tile, for ops that score keys without a softmax.
 */
void attn_qk_tile(const float *K, size_t dk, const float *Qt, size_t mp, float *St, size_t nk);

/* Helpers shared by the attention ops (ops_attention_inputs.c; the Runtime cells: ops/attention.h). */
/* Element i of an int32/int64 tensor (other dtypes untouched). */
void attn_st_int(struct perfdb_tensor *t, size_t i, int64_t v);
/* A block table filled with a deterministic shuffle of distinct ids < nblocks (reused past nblocks). */
int attn_fill_table(struct perfdb_tensor *bt, int64_t nblocks, struct perfdb_err *err);

#endif
