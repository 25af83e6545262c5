/*
 * FusedInferAttentionScore's shape-level plan (docs/ops.md "Attention";
 * slot layout docs/spec/grid.md §3): the layout, heads, head dims, batches,
 * per-batch lengths and paged-KV geometry a row's shapes and `Runtime …`
 * cells say, what the CPU backend's check and prepare read (rules_attention.c).
 * The definition's check is the part of it every backend applies; the
 * dtypes a kernel takes are the backend's limits.  Also the plans of the
 * DeepSeek-V3.2 / MLA kernels (SparseFlashAttention, LightningIndexer,
 * RINGMLAPrefillBF16Kernel) and the Runtime list and integer cells every
 * attention op reads.
 */
#ifndef PERFDB_REPLAY_OPDEF_ATTENTION_H
#define PERFDB_REPLAY_OPDEF_ATTENTION_H

#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

/* The most batches an attention row's plan takes (its length lists). */
#define PERFDB_ATTN_MAX_BATCH 65536

enum perfdb_fia_layout { PERFDB_FIA_TND, PERFDB_FIA_BNSD };

/* FIA's slots (docs/spec/grid.md §3). */
enum {
	PERFDB_FIA_Q = 0, PERFDB_FIA_K = 1, PERFDB_FIA_V = 2, PERFDB_FIA_MASK = 4, PERFDB_FIA_SEQ = 5,
	PERFDB_FIA_SEQ_KV = 6, PERFDB_FIA_BLOCK_TABLE = 14, PERFDB_FIA_Q_ROPE = 24, PERFDB_FIA_K_ROPE = 25
};

struct perfdb_fia_plan {
	int layout;                           /* enum perfdb_fia_layout */
	int out_nbsd;                         /* BNSD_NBSD: output (N, B, S, Dv) */
	int paged;                            /* key/value through the block table (slot 14) */
	int kv3d;                             /* paged cache (blocks, block_size, N_kv·D), else (blocks, N_kv, block_size, D) */
	int sparse;                           /* sparse mode 0, 2 or 3 */
	int64_t nb, hq, hkv, dq, dr, dv;      /* batches, heads, q·k dim (without rope), rope dim, value dim */
	int64_t t, sq, tkv, skv;              /* TND tokens, BNSD S; contiguous kv tokens (TND) or S_kv (BNSD) */
	int64_t bs, nblk, btc;                /* paged: block size, blocks, block-table columns */
	int64_t *qlen, *kvlen, *qst, *kvst;   /* nb each, per batch: lengths and starts (one allocation) */
	const struct perfdb_tensor *q, *k, *v, *mask, *qr, *kr, *bt, *out;
};

/*
 * The row's plan, or -PERFDB_EINVAL with the rule it breaks
 * ("FusedInferAttentionScore: …"), -PERFDB_ENOMEM.  Reads shapes and
 * cells only (no data).  p is overwritten; release it with
 * perfdb_fia_plan_release whatever the result.
 */
int perfdb_fia_plan(const struct perfdb_op_case *c, struct perfdb_fia_plan *p, struct perfdb_err *err);
void perfdb_fia_plan_release(struct perfdb_fia_plan *p);

/* "a,b,c" (quotes, brackets and spaces ignored) into v; the count, or -1 past max or on junk. */
int64_t perfdb_attn_parse_list(const char *s, int64_t *v, int64_t max);
/* One integer cell: 1 with *v set, 0 when absent, -1 when not an integer. */
int perfdb_attn_cell_int(const struct perfdb_op_case *c, const char *col, int64_t *v);

/*
 * The query and key sides shared by SparseFlashAttention and
 * LightningIndexer (rules_attention_sparse.c): query BSND (B,S1,N1,D) or
 * TND (T,N1,D); key BSND (B,S2,N2,D), TND (T2,N2,D) or, with a block
 * table, PA_BSND (blocks,block_size,N2,D).  Lengths per batch.
 */
struct perfdb_attn_qk {
	int tnd, kv_tnd, paged;
	int64_t nb, n1, n2, d, s1, t, s2, t2, bs, btc, nblk;
	int64_t *qlen, *kvlen, *qst, *kvst;   /* nb each (one allocation) */
	const struct perfdb_tensor *bt;
};

/* SparseFlashAttention: in 3 sparse_indices (.., N2, kk), blocks of sbs positions; rope dim dr, value dim dv. */
struct perfdb_sfa_plan {
	struct perfdb_attn_qk x;
	int mode;                             /* sparse mode 0 or 3 */
	int64_t kk, sbs, dr, dv;
};

/* LightningIndexer: out 0 holds the kk best keys per (query, kv head); g query heads per kv head. */
struct perfdb_li_plan {
	struct perfdb_attn_qk x;
	int mode;
	int64_t kk, g;
};

/* RINGMLAPrefillBF16Kernel (torch_npu.atb.npu_ring_mla's argument order). */
struct perfdb_ring_plan {
	int64_t nb, t, t2, n, nkv, dn, dr, dv;
	int64_t *qlen, *kvlen, *qst, *kvst;   /* nb each (one allocation) */
	int causal;                           /* in 5 mask present: mask_type_triu */
	int merge;                            /* in 7/8 present: merged with the previous ring step */
	int two;                              /* in 6 seqlen is (2,B): q then kv lengths */
};

/*
 * Each op's plan, or -PERFDB_EINVAL with the rule it breaks ("<op>: …"),
 * -PERFDB_ENOMEM.  Shapes, the dtypes the op defines (integer indices and
 * tables, fp32 log-sum-exps) and cells; the float dtypes its kernels take
 * are the backend's limits.  p is overwritten; release it whatever the
 * result.
 */
int perfdb_sfa_plan(const struct perfdb_op_case *c, struct perfdb_sfa_plan *p, struct perfdb_err *err);
int perfdb_li_plan(const struct perfdb_op_case *c, struct perfdb_li_plan *p, struct perfdb_err *err);
int perfdb_ring_plan(const struct perfdb_op_case *c, struct perfdb_ring_plan *p, struct perfdb_err *err);
void perfdb_attn_qk_release(struct perfdb_attn_qk *x);
void perfdb_ring_plan_release(struct perfdb_ring_plan *p);

#endif
