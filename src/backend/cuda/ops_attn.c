/*
 * CUDA backend, FusedInferAttentionScore through the backend's own kernel
 * (kernels.cu cuk_attention; recorded as Kernel Used "own"): cuDNN's fused
 * attention is not wired in yet (docs/cuda.md).
 *
 * Slots (docs/spec/replay.md §4): q0 k1 v2 mask4 seq5 kvseq6 block_table14.
 * TND layout only: q (T, N, D), out0 (T, N, D).  Keys/values either paged,
 * (blocks, KV heads, block size, D) with a block table, or contiguous TND
 * (tokens, KV heads, D).  The `Runtime ...` cells take priority (num_heads,
 * num_key_value_heads, input_layout, block_size, sparse_mode,
 * actual_seq_lengths_values, actual_seq_lengths_kv_values); without them:
 * one sequence, N and KV heads from the shapes, sparse mode 3 when a mask
 * is present.  Query lengths are cumulative (TND); key lengths are
 * cumulative for contiguous keys and per sequence for paged ones (vLLM's
 * decode rows).  The block table is rewritten to distinct blocks per
 * sequence; the mask tensor is not read (sparse modes 2 and 3 are the
 * causal masks it encodes).  Scale 1/sqrt(D).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define MAX_SEQS 4096

struct attn_plan {
	int t, n, kvn, d, paged, bs, nblocks, max_blocks, tk, causal, nseq;
	int q_cum[MAX_SEQS], kv[MAX_SEQS];
};

struct attn_state {
	struct cuk_attn a;
	int32_t *meta;   /* device: block table, seq_of_token, q_start, q_len, kv_len, kv_start */
};

/* "1,2,3" -> ints; the count, or -1 when malformed or too many. */
static int parse_list(const char *s, int *v, int cap)
{
	int n = 0;
	while (s && *s) {
		char *e;
		long x = strtol(s, &e, 10);
		if (e == s || n == cap || x < 0 || x > 1L << 30)
			return -1;
		v[n++] = (int)x;
		s = e;
		while (*s == ',' || *s == ' ')
			s++;
	}
	return n;
}

static int cell_int(const struct perfdb_op_case *c, const char *col, int dflt)
{
	const char *v = perfdb_case_cell(c, col);
	return v ? atoi(v) : dflt;
}

static int plan(const struct perfdb_op_case *c, struct attn_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	if (c->nin < 3 || !c->in[0].present || !c->in[1].present || !c->in[2].present || c->nout < 1 ||
	    !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs q, k, v and an output", c->op);
	const struct perfdb_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2], *o = &c->out[0];
	const char *layout = perfdb_case_cell(c, "Runtime input_layout");
	if (layout && strcmp(layout, "TND") != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: layout %s not supported by the cuda backend (TND only)",
				      c->op, layout);
	if (cu_float_dt(q->dtype) < 0 || k->dtype != q->dtype || v->dtype != q->dtype || o->dtype != q->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: q, k, v and output must share one float dtype", c->op);
	if (q->ndims != 3 || o->numel != q->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: q must be (T, N, D) and the output its size", c->op);
	p->t = (int)q->dims[0];
	p->n = cell_int(c, "Runtime num_heads", (int)q->dims[1]);
	p->d = (int)q->dims[2];
	if (p->n != q->dims[1] || p->d % 32 || p->d > 256 || p->d < 32)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: q (T, N=%d, D) with D a multiple of 32 up to 256", c->op,
				      p->n);
	if (k->ndims == 4) {
		p->paged = 1;
		p->nblocks = (int)k->dims[0];
		p->kvn = (int)k->dims[1];
		p->bs = (int)k->dims[2];
		if (k->dims[3] != p->d || cell_int(c, "Runtime block_size", p->bs) != p->bs)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: paged k must be (blocks, KV heads, block size, D)",
					      c->op);
	} else if (k->ndims == 3) {
		p->tk = (int)k->dims[0];
		p->kvn = (int)k->dims[1];
		if (k->dims[2] != p->d)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: k must be (tokens, KV heads, D)", c->op);
	} else {
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: k must be 3-D (TND) or 4-D (paged)", c->op);
	}
	if (v->numel != k->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: v must be k's size", c->op);
	if (cell_int(c, "Runtime num_key_value_heads", p->kvn) != p->kvn || p->kvn < 1 || p->n % p->kvn)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %d heads over %d KV heads", c->op, p->n, p->kvn);
	int mask = c->nin > 4 && c->in[4].present;
	p->causal = cell_int(c, "Runtime sparse_mode", mask ? 3 : 0);
	if (p->causal != 0 && p->causal != 2 && p->causal != 3)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: sparse_mode %d not supported (0, 2, 3)", c->op, p->causal);
	int nq = parse_list(perfdb_case_cell(c, "Runtime actual_seq_lengths_values"), p->q_cum, MAX_SEQS);
	int nk = parse_list(perfdb_case_cell(c, "Runtime actual_seq_lengths_kv_values"), p->kv, MAX_SEQS);
	if (nq < 0 || nk < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: unreadable sequence lengths", c->op);
	if (nq == 0) {
		nq = 1;
		p->q_cum[0] = p->t;
	}
	if (nk == 0) {
		nk = 1;
		p->kv[0] = p->paged ? p->nblocks * p->bs : p->tk;
	}
	if (nq != nk)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %d query and %d key sequence lengths", c->op, nq, nk);
	p->nseq = nq;
	for (int b = 0; b < nq; b++)
		if (p->q_cum[b] < (b ? p->q_cum[b - 1] : 0) || (!p->paged && p->kv[b] < (b ? p->kv[b - 1] : 0)))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: cumulative sequence lengths decrease", c->op);
	if (p->q_cum[nq - 1] != p->t)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: query lengths end at %d, not T=%d", c->op, p->q_cum[nq - 1],
				      p->t);
	if (!p->paged && p->kv[nk - 1] > p->tk)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: key lengths end past the %d keys", c->op, p->tk);
	if (p->paged) {
		for (int b = 0; b < nk; b++) {
			int need = (p->kv[b] + p->bs - 1) / p->bs;
			p->max_blocks = need > p->max_blocks ? need : p->max_blocks;
		}
		if (p->max_blocks > p->nblocks)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: a sequence needs %d blocks of %d", c->op, p->max_blocks,
					      p->nblocks);
	}
	return 0;
}

static int attn_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct attn_plan *p = malloc(sizeof(*p));
	if (!p)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = plan(c, p, err);
	free(p);
	return rc;
}

static int attn_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	struct attn_state *s = calloc(1, sizeof(*s));
	struct attn_plan *p = malloc(sizeof(*p));
	if (!s || !p) {
		free(s);
		free(p);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	k->state = s;
	int rc = plan(c, p, err);
	size_t nb = p->paged ? (size_t)p->nseq * (size_t)p->max_blocks : 0;
	size_t n = nb + (size_t)p->t + 4 * (size_t)p->nseq;
	int32_t *h = rc == 0 ? malloc((n ? n : 1) * sizeof(int32_t)) : NULL;
	if (rc == 0 && !h)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0) {
		int32_t *bt = h, *sot = h + nb, *qs = sot + p->t, *ql = qs + p->nseq, *kl = ql + p->nseq,
			*ks = kl + p->nseq;
		/* distinct blocks per sequence, wrapping over the pool (deterministic) */
		for (size_t i = 0; i < nb; i++)
			bt[i] = (int32_t)(i % (size_t)p->nblocks);
		for (int b = 0; b < p->nseq; b++) {
			qs[b] = b ? p->q_cum[b - 1] : 0;
			ql[b] = p->q_cum[b] - qs[b];
			ks[b] = p->paged ? 0 : (b ? p->kv[b - 1] : 0);
			kl[b] = p->paged ? p->kv[b] : p->kv[b] - ks[b];
			for (int t = qs[b]; t < p->q_cum[b]; t++)
				sot[t] = b;
		}
		cudaError_t e = cudaMalloc((void **)&s->meta, n * sizeof(int32_t) + 4);
		if (e == cudaSuccess)
			e = cudaMemcpy(s->meta, h, n * sizeof(int32_t), cudaMemcpyHostToDevice);
		rc = cu_check(e, "cudaMemcpy (attention metadata)", err);
		int32_t *m = s->meta;
		s->a = (struct cuk_attn){
			.q = k->din[0], .k = k->din[1], .v = k->din[2], .out = k->dout[0],
			.dt = cu_float_dt(c->in[0].dtype), .t = p->t, .n = p->n, .kvn = p->kvn, .d = p->d,
			.paged = p->paged, .block_size = p->bs, .max_blocks = p->max_blocks,
			.block_table = m, .seq_of_token = m + nb, .q_start = m + nb + p->t,
			.q_len = m + nb + p->t + p->nseq, .kv_len = m + nb + p->t + 2 * p->nseq,
			.kv_start = m + nb + p->t + 3 * p->nseq, .causal = p->causal,
			.scale = 1.0f / sqrtf((float)p->d),
		};
	}
	free(h);
	free(p);
	return rc;
}

static int attn_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t st, struct perfdb_err *err)
{
	(void)c;
	struct attn_state *s = k->state;
	CU_TRY(err, cuk_attention(&s->a, st));
	return 0;
}

static void attn_teardown(struct cu_case *k)
{
	struct attn_state *s = k->state;
	if (!s)
		return;
	cudaFree(s->meta);
	free(s);
	k->state = NULL;
}

const struct cu_op cu_ops_attn[] = {
	CU_OP("FusedInferAttentionScore", "own", attn_check, attn_setup, attn_enqueue, attn_teardown),
	{ .impl = { .name = NULL } },
};
