/*
 * CPU attention ops (src/backend/cpu/ops_attention*.c, docs/ops.md
 * "Attention") against a naive softmax(q·kᵀ·scale + mask)·v computed here
 * in double precision, position by position, from the same random inputs.
 * The reference indexes the stored tensors with its own formulas for each
 * layout (TND, BNSD, NBSD output, paged caches through the block table the
 * op wrote in prepare), so a wrong mapping in the op shows up as a mismatch.
 *
 * Tolerances: fp32 runs differ from the double reference only by fp32
 * rounding in sums of at most a few hundred terms and the kernel's exp
 * (relative error < 2e-7): 2e-4 relative.  bf16 runs read the same bf16
 * values as the reference; the output is rounded to bf16 (2^-9 relative)
 * and, on CPUs with AVX512_BF16, the products take bf16 operands as the
 * NPU's matrix unit does (q·scale and the softmax weights rounded to bf16,
 * 2^-9 relative each, accumulated in fp32): 1e-2.
 */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cpu/cpu_internal.h"
#include "replay/engine.h"
#include "cpu_test_ctx.h"

static struct perfdb_engine_pool pool;

/* ---- Runtime cells of a hand-made row ---- */

struct cells {
	const char *name[8], *val[8];
	int n;
};

static const char *cell_of(const void *ctx, const char *col)
{
	const struct cells *cs = ctx;
	for (int i = 0; i < cs->n; i++)
		if (strcmp(cs->name[i], col) == 0)
			return cs->val[i];
	return NULL;
}

/* A FIA row: the 31 slots given as (slot, shape, dtype), the others empty. */
struct slotdef {
	int slot;
	const char *shape, *dtype;
};

static void row_text(const struct slotdef *s, int n, char *shapes, char *dts, char *fms, size_t len)
{
	shapes[0] = dts[0] = fms[0] = '\0';
	for (int i = 0; i < 31; i++) {
		const struct slotdef *d = NULL;
		for (int k = 0; k < n; k++)
			if (s[k].slot == i)
				d = &s[k];
		const char *sep = i ? ";" : "";
		snprintf(shapes + strlen(shapes), len - strlen(shapes), "%s%s", sep, d ? d->shape : "");
		snprintf(dts + strlen(dts), len - strlen(dts), "%s%s", sep, d ? d->dtype : "DT_UNDEFINED");
		snprintf(fms + strlen(fms), len - strlen(fms), "%s%s", sep, d ? "ND" : "NULL");
	}
}

/* Builds, checks, fills, prepares and runs op; returns check's result. */
static int run_op(struct perfdb_op_case *c, const char *op, const struct slotdef *s, int n, const char *out,
		  const char *odt, const struct cells *cs, int threads, char *msg)
{
	char shapes[1024], dts[1024], fms[512];
	row_text(s, n, shapes, dts, fms, sizeof(shapes) < sizeof(fms) ? sizeof(shapes) : sizeof(fms));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, shapes, dts, fms, out, odt, "", c, &err), 0);
	c->threads = threads;
	c->cell = cell_of;
	c->cell_ctx = cs;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	assert_non_null(impl);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err);
	if (rc < 0) {
		if (msg)
			snprintf(msg, 256, "%.200s", err.msg);
		return rc;
	}
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, 7, &err), 0);
	rc = impl->prepare(with_ctx(c), &err);
	if (rc == 0)
		rc = impl->run(c, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	return 0;
}

static int run_fia(struct perfdb_op_case *c, const struct slotdef *s, int n, const char *out, const char *odt,
		   const struct cells *cs, int threads, char *msg)
{
	return run_op(c, "FusedInferAttentionScore", s, n, out, odt, cs, threads, msg);
}

static void finish(struct perfdb_op_case *c)
{
	perfdb_backend_cpu.find_op(c->op)->release(c);
}

/* ---- the naive reference ---- */

/* Where the reference finds things: element offsets, written per test. */
struct ref {
	int64_t nb, hq, hkv, dq, dr, dv;
	const int64_t *qlen, *kvlen;
	int sparse;
	size_t (*q_at)(const struct ref *r, int64_t b, int64_t h, int64_t s);    /* row start, x dq units */
	size_t (*o_at)(const struct ref *r, int64_t b, int64_t h, int64_t s);
	size_t (*kv_at)(const struct ref *r, const struct perfdb_op_case *c, int64_t b, int64_t g, int64_t j);
	int64_t sq, skv, bs, btc, t;
	int kv3d;
};

static void check_ref(const struct perfdb_op_case *c, const struct ref *r, float tol)
{
	const struct perfdb_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2], *o = &c->out[0];
	const struct perfdb_tensor *qr = r->dr ? &c->in[24] : NULL, *kr = r->dr ? &c->in[25] : NULL;
	double scale = 1.0 / sqrt((double)(r->dq + r->dr));
	int64_t G = r->hq / r->hkv, maxkv = 0;
	for (int64_t b = 0; b < r->nb; b++)
		maxkv = r->kvlen[b] > maxkv ? r->kvlen[b] : maxkv;
	double *sc = malloc((size_t)(maxkv + 1) * sizeof(double)), *acc = malloc((size_t)r->dv * sizeof(double));
	assert_non_null(sc);
	assert_non_null(acc);
	int checked = 0;
	for (int64_t b = 0; b < r->nb; b++)
		for (int64_t h = 0; h < r->hq; h++)
			for (int64_t s = 0; s < r->qlen[b]; s++) {
				int64_t g = h / G, L = r->kvlen[b], end = L;
				if (r->sparse == 2)
					end = s + 1;
				else if (r->sparse == 3)
					end = s + 1 + L - r->qlen[b];
				end = end > L ? L : end;
				double mx = -INFINITY;
				size_t qo = r->q_at(r, b, h, s);
				for (int64_t j = 0; j < end; j++) {
					size_t ko = r->kv_at(r, c, b, g, j);
					double d = 0;
					for (int64_t x = 0; x < r->dq; x++)
						d += (double)cpu_ld(q, qo * (size_t)r->dq + (size_t)x) *
						     (double)cpu_ld(k, ko * (size_t)r->dq + (size_t)x);
					for (int64_t x = 0; x < r->dr; x++)
						d += (double)cpu_ld(qr, qo * (size_t)r->dr + (size_t)x) *
						     (double)cpu_ld(kr, ko * (size_t)r->dr + (size_t)x);
					sc[j] = d * scale;
					mx = sc[j] > mx ? sc[j] : mx;
				}
				double sum = 0;
				for (int64_t x = 0; x < r->dv; x++)
					acc[x] = 0;
				for (int64_t j = 0; j < end; j++) {
					double p = exp(sc[j] - mx);
					sum += p;
					size_t ko = r->kv_at(r, c, b, g, j);
					for (int64_t x = 0; x < r->dv; x++)
						acc[x] += p * (double)cpu_ld(v, ko * (size_t)r->dv + (size_t)x);
				}
				size_t oo = r->o_at(r, b, h, s);
				for (int64_t x = 0; x < r->dv; x++) {
					double want = end > 0 ? acc[x] / sum : 0.0;
					float got = cpu_ld(o, oo * (size_t)r->dv + (size_t)x);
					if (fabs((double)got - want) > tol * (1.0 + fabs(want)))
						fail_msg("b %lld h %lld s %lld x %lld: got %g, want %g", (long long)b,
							 (long long)h, (long long)s, (long long)x, (double)got, want);
				}
				checked++;
			}
	assert_true(checked > 0);
	free(sc);
	free(acc);
}

static int64_t cum_start(const int64_t *len, int64_t b)
{
	int64_t s = 0;
	for (int64_t i = 0; i < b; i++)
		s += len[i];
	return s;
}

static size_t tnd_q(const struct ref *r, int64_t b, int64_t h, int64_t s)
{
	return (size_t)((cum_start(r->qlen, b) + s) * r->hq + h);
}

static size_t tnd_kv(const struct ref *r, const struct perfdb_op_case *c, int64_t b, int64_t g, int64_t j)
{
	(void)c;
	return (size_t)((cum_start(r->kvlen, b) + j) * r->hkv + g);
}

static size_t bnsd_q(const struct ref *r, int64_t b, int64_t h, int64_t s)
{
	return (size_t)((b * r->hq + h) * r->sq + s);
}

static size_t nbsd_o(const struct ref *r, int64_t b, int64_t h, int64_t s)
{
	return (size_t)((h * r->nb + b) * r->sq + s);
}

static size_t bnsd_kv(const struct ref *r, const struct perfdb_op_case *c, int64_t b, int64_t g, int64_t j)
{
	(void)c;
	return (size_t)((b * r->hkv + g) * r->skv + j);
}

/* paged: block = table[b][j / bs]; cache (blocks, hkv, bs, d) or (blocks, bs, hkv*d) */
static size_t paged_kv(const struct ref *r, const struct perfdb_op_case *c, int64_t b, int64_t g, int64_t j)
{
	int64_t blk = cpu_ld_int(&c->in[14], (size_t)(b * r->btc + j / r->bs)), o = j % r->bs;
	assert_true(blk >= 0 && blk < c->in[1].dims[0]);
	return (size_t)(r->kv3d ? (blk * r->bs + o) * r->hkv + g : (blk * r->hkv + g) * r->bs + o);
}

static float tol_for(const char *dt)
{
	return strcmp(dt, "DT_FLOAT") == 0 ? 2e-4f : 1e-2f;
}

/* ---- cases ---- */

/* TND prefill, GQA 4:2, causal (sparse 3) over two sequences crossing the 64-key tile, both dtypes. */
static void test_tnd_causal_gqa(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++)
		for (int threads = 1; threads <= 2; threads++) {
			struct perfdb_op_case c;
			struct slotdef s[] = {
				{ 0, "103,4,32", dts[d] }, { 1, "103,2,32", dts[d] }, { 2, "103,2,32", dts[d] },
				{ 4, "2048,2048", "INT8" }, { 5, "2", "INT64" }, { 6, "2", "INT64" },
			};
			struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
					      "Runtime input_layout", "Runtime sparse_mode" },
					    { "70,103", "70,103", "TND", "3" }, 4 };
			assert_int_equal(run_fia(&c, s, 6, "103,4,32", dts[d], &cs, threads, NULL), 0);
			int64_t ql[] = { 70, 33 };
			struct ref r = { .nb = 2, .hq = 4, .hkv = 2, .dq = 32, .dv = 32, .qlen = ql, .kvlen = ql,
					 .sparse = 3, .q_at = tnd_q, .o_at = tnd_q, .kv_at = tnd_kv };
			check_ref(&c, &r, tol_for(dts[d]));
			/* the op wrote the lengths it used into slots 5 and 6 (cumulative in TND) */
			assert_int_equal(cpu_ld_int(&c.in[5], 1), 103);
			assert_int_equal(cpu_ld_int(&c.in[6], 0), 70);
			finish(&c);
		}
}

/* TND with sparse 2 (top-left causal) and kv longer than q, no Runtime cells but the lengths. */
static void test_tnd_sparse2(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct slotdef s[] = {
		{ 0, "20,2,16", "DT_FLOAT" }, { 1, "50,1,16", "DT_FLOAT" }, { 2, "50,1,16", "DT_FLOAT" },
		{ 4, "2048,2048", "INT8" }, { 5, "2", "INT64" }, { 6, "2", "INT64" },
	};
	struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
			      "Runtime sparse_mode" }, { "8,20", "30,50", "2" }, 3 };
	assert_int_equal(run_fia(&c, s, 6, "20,2,16", "DT_FLOAT", &cs, 1, NULL), 0);
	int64_t ql[] = { 8, 12 }, kl[] = { 30, 20 };
	struct ref r = { .nb = 2, .hq = 2, .hkv = 1, .dq = 16, .dv = 16, .qlen = ql, .kvlen = kl, .sparse = 2,
			 .q_at = tnd_q, .o_at = tnd_q, .kv_at = tnd_kv };
	check_ref(&c, &r, 2e-4f);
	finish(&c);
}

/* Dense decode as the grid writes it: TND q, paged (blocks, hkv, bs, d) caches, shuffled block table. */
static void test_tnd_paged_decode(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "3,8,64", dts[d] }, { 1, "16,2,16,64", dts[d] }, { 2, "16,2,16,64", dts[d] },
			{ 4, "2048,2048", "INT8" }, { 5, "3", "INT64" }, { 6, "3", "INT64" }, { 14, "3,5", "INT32" },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime num_heads", "Runtime num_key_value_heads", "Runtime sparse_mode",
				      "Runtime input_layout", "Runtime block_size" },
				    { "1,2,3", "50,80,7", "8", "2", "3", "TND", "16" }, 7 };
		assert_int_equal(run_fia(&c, s, 7, "3,8,64", dts[d], &cs, 2, NULL), 0);
		/* the table is a permutation: 15 distinct blocks of 16 */
		int seen[16] = { 0 }, moved = 0;
		for (int i = 0; i < 15; i++) {
			int64_t blk = cpu_ld_int(&c.in[14], (size_t)i);
			assert_true(blk >= 0 && blk < 16);
			assert_int_equal(seen[blk]++, 0);
			moved |= blk != i;
		}
		assert_true(moved);
		int64_t ql[] = { 1, 1, 1 }, kl[] = { 50, 80, 7 };
		struct ref r = { .nb = 3, .hq = 8, .hkv = 2, .dq = 64, .dv = 64, .qlen = ql, .kvlen = kl,
				 .sparse = 3, .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 5 };
		check_ref(&c, &r, tol_for(dts[d]));
		finish(&c);
	}
}

/*
 * The bf16 decode kernel's edges (on AVX512_BF16 CPUs: attn_run_decode_bf16):
 * query rows per kv head not a multiple of 4 (6 and 3), a value dim that is
 * not a multiple of 64 (96, 32), a rope split (48 + 16), caches in both
 * paged layouts, and kv lengths spanning several 64-key tiles with a partial
 * last one, so its pipeline stages and prefetches tiles ahead.
 */
static void test_bf16_decode_edges(void **state)
{
	(void)state;
	{
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "2,6,48", "DT_BF16" }, { 1, "16,1,16,48", "DT_BF16" }, { 2, "16,1,16,96", "DT_BF16" },
			{ 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,9", "INT32" },
			{ 24, "2,6,16", "DT_BF16" }, { 25, "16,1,16,16", "DT_BF16" },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime sparse_mode", "Runtime input_layout" }, { "1,2", "70,130", "0", "TND" }, 4 };
		assert_int_equal(run_fia(&c, s, 8, "2,6,96", "DT_BF16", &cs, 1, NULL), 0);
		int64_t ql[] = { 1, 1 }, kl[] = { 70, 130 };
		struct ref r = { .nb = 2, .hq = 6, .hkv = 1, .dq = 48, .dr = 16, .dv = 96, .qlen = ql, .kvlen = kl,
				 .sparse = 0, .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 9 };
		check_ref(&c, &r, tol_for("DT_BF16"));
		finish(&c);
	}
	{
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "2,6,32", "DT_BF16" }, { 1, "16,16,64", "DT_BF16" }, { 2, "16,16,64", "DT_BF16" },
			{ 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,9", "INT32" },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime num_key_value_heads" }, { "1,2", "129,61", "2" }, 3 };
		assert_int_equal(run_fia(&c, s, 6, "2,6,32", "DT_BF16", &cs, 2, NULL), 0);
		int64_t ql[] = { 1, 1 }, kl[] = { 129, 61 };
		struct ref r = { .nb = 2, .hq = 6, .hkv = 2, .dq = 32, .dv = 32, .qlen = ql, .kvlen = kl, .sparse = 0,
				 .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 9, .kv3d = 1 };
		check_ref(&c, &r, tol_for("DT_BF16"));
		finish(&c);
	}
	/* 8 rows per kv head (the row-pair kernel at its widest) and 12 (the transposed kernel), with kv
	 * lengths ending inside, at and past 64-key tiles */
	for (int hq = 16; hq <= 24; hq += 8) {
		struct perfdb_op_case c;
		char q0[32], o0[32];
		snprintf(q0, sizeof(q0), "3,%d,64", hq);
		snprintf(o0, sizeof(o0), "3,%d,64", hq);
		struct slotdef s[] = {
			{ 0, q0, "DT_BF16" }, { 1, "40,2,16,64", "DT_BF16" }, { 2, "40,2,16,64", "DT_BF16" },
			{ 5, "3", "INT64" }, { 6, "3", "INT64" }, { 14, "3,13", "INT32" },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime sparse_mode", "Runtime input_layout" }, { "1,2,3", "200,64,17", "0", "TND" }, 4 };
		assert_int_equal(run_fia(&c, s, 6, o0, "DT_BF16", &cs, 2, NULL), 0);
		int64_t ql[] = { 1, 1, 1 }, kl[] = { 200, 64, 17 };
		struct ref r = { .nb = 3, .hq = hq, .hkv = 2, .dq = 64, .dv = 64, .qlen = ql, .kvlen = kl,
				 .sparse = 0, .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 13 };
		check_ref(&c, &r, tol_for("DT_BF16"));
		finish(&c);
	}
	/* several query tokens per sequence (speculative decode), causal: the rows of one item end at
	 * different keys (the first sequence: 15 and 16), so a tile can be whole for some rows and not
	 * for others */
	{
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "5,8,64", "DT_BF16" }, { 1, "40,2,16,64", "DT_BF16" }, { 2, "40,2,16,64", "DT_BF16" },
			{ 4, "2048,2048", "INT8" }, { 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,13", "INT32" },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime sparse_mode", "Runtime input_layout" }, { "2,5", "16,190", "3", "TND" }, 4 };
		assert_int_equal(run_fia(&c, s, 7, "5,8,64", "DT_BF16", &cs, 1, NULL), 0);
		int64_t ql[] = { 2, 3 }, kl[] = { 16, 190 };
		struct ref r = { .nb = 2, .hq = 8, .hkv = 2, .dq = 64, .dv = 64, .qlen = ql, .kvlen = kl,
				 .sparse = 3, .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 13 };
		check_ref(&c, &r, tol_for("DT_BF16"));
		finish(&c);
	}
}

/*
 * Decode rows split along their keys (ops_attention_plan.c, flash-decoding):
 * on 4 threads, 2 sequences x 2 kv heads are 4 items, fewer than eight
 * times the threads, so each row of 600-1000 keys becomes parts of at
 * least 4 tiles: 4 for 1000 keys, 2 for 600 (whose second part starts at
 * an odd tile)
 * that are combined after the items ran.  Both dtypes, so the fp32 and
 * the bf16 kernels (row pairs for 4 and 8 rows per kv head, the transposed
 * one for 12), and a causal speculative case whose rows end at different
 * keys inside the last part.
 */
static void test_decode_split(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	static const struct { int hq, qlen; const char *kv, *sparse; } cfg[] = {
		{ 16, 1, "1000,600", "0" }, { 24, 1, "1000,600", "0" }, { 8, 2, "600,1000", "3" },
	};
	for (int d = 0; d < 2; d++)
		for (size_t k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
			struct perfdb_op_case c;
			int hq = cfg[k].hq, ql = cfg[k].qlen;
			char q0[32], qls[16];
			snprintf(q0, sizeof(q0), "%d,%d,64", 2 * ql, hq);
			snprintf(qls, sizeof(qls), "%d,%d", ql, 2 * ql);
			int causal = cfg[k].sparse[0] == '3';
			struct slotdef s[] = {
				{ 0, q0, dts[d] }, { 1, "128,2,16,64", dts[d] }, { 2, "128,2,16,64", dts[d] },
				{ 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,64", "INT32" }, { 4, "2048,2048", "INT8" },
			};
			struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
					      "Runtime sparse_mode", "Runtime input_layout" },
					    { qls, cfg[k].kv, cfg[k].sparse, "TND" }, 4 };
			char msg[256] = "";
			int rc = run_fia(&c, s, causal ? 7 : 6, q0, dts[d], &cs, 4, msg);
			if (rc)
				fail_msg("%s %s: %s", dts[d], cfg[k].kv, msg);
			int64_t qlen[] = { ql, ql }, kl[2];
			sscanf(cfg[k].kv, "%" SCNd64 ",%" SCNd64, &kl[0], &kl[1]);
			struct ref r = { .nb = 2, .hq = hq, .hkv = 2, .dq = 64, .dv = 64, .qlen = qlen, .kvlen = kl,
					 .sparse = causal ? 3 : 0, .q_at = tnd_q, .o_at = tnd_q,
					 .kv_at = paged_kv, .bs = 16, .btc = 64 };
			check_ref(&c, &r, tol_for(dts[d]));
			finish(&c);
		}
}

/* Paged cache stored (blocks, bs, hkv*d), no mask (sparse 0). */
static void test_paged_3d_nomask(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct slotdef s[] = {
		{ 0, "2,4,32", "DT_FLOAT" }, { 1, "6,16,64", "DT_FLOAT" }, { 2, "6,16,64", "DT_FLOAT" },
		{ 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,3", "INT32" },
	};
	struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
			      "Runtime num_key_value_heads" }, { "1,2", "40,33", "2" }, 3 };
	assert_int_equal(run_fia(&c, s, 6, "2,4,32", "DT_FLOAT", &cs, 1, NULL), 0);
	int64_t ql[] = { 1, 1 }, kl[] = { 40, 33 };
	struct ref r = { .nb = 2, .hq = 4, .hkv = 2, .dq = 32, .dv = 32, .qlen = ql, .kvlen = kl, .sparse = 0,
			 .q_at = tnd_q, .o_at = tnd_q, .kv_at = paged_kv, .bs = 16, .btc = 3, .kv3d = 1 };
	check_ref(&c, &r, 2e-4f);
	finish(&c);
}

/*
 * MLA prefill as the grid writes it (BNSD_NBSD, one kv head, paged, rope
 * split in slots 24/25), with a value head dim (24) other than q·k's (32+8).
 */
static void test_mla_bnsd_nbsd_rope(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "2,4,9,32", dts[d] }, { 1, "8,1,16,32", dts[d] }, { 2, "8,1,16,24", dts[d] },
			{ 4, "2048,2048", "INT8" }, { 5, "2", "INT64" }, { 6, "2", "INT64" }, { 14, "2,2", "INT32" },
			{ 24, "2,4,9,8", dts[d] }, { 25, "8,1,16,8", dts[d] },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime input_layout", "Runtime sparse_mode" },
				    { "9,7", "9,20", "BNSD_NBSD", "3" }, 4 };
		assert_int_equal(run_fia(&c, s, 9, "4,2,9,24", dts[d], &cs, 2, NULL), 0);
		int64_t ql[] = { 9, 7 }, kl[] = { 9, 20 };
		struct ref r = { .nb = 2, .hq = 4, .hkv = 1, .dq = 32, .dr = 8, .dv = 24, .qlen = ql, .kvlen = kl,
				 .sparse = 3, .q_at = bnsd_q, .o_at = nbsd_o, .kv_at = paged_kv, .sq = 9, .bs = 16,
				 .btc = 2 };
		check_ref(&c, &r, tol_for(dts[d]));
		finish(&c);
	}
}

/* BNSD in and out, contiguous kv, no Runtime cells at all: lengths from the shapes, no mask. */
static void test_bnsd_inferred(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct slotdef s[] = {
		{ 0, "2,4,6,16", "DT_FLOAT" }, { 1, "2,1,130,16", "DT_FLOAT" }, { 2, "2,1,130,16", "DT_FLOAT" },
	};
	struct cells cs = { { NULL }, { NULL }, 0 };
	assert_int_equal(run_fia(&c, s, 3, "2,4,6,16", "DT_FLOAT", &cs, 1, NULL), 0);
	int64_t ql[] = { 6, 6 }, kl[] = { 130, 130 };
	struct ref r = { .nb = 2, .hq = 4, .hkv = 1, .dq = 16, .dv = 16, .qlen = ql, .kvlen = kl, .sparse = 0,
			 .q_at = bnsd_q, .o_at = bnsd_q, .kv_at = bnsd_kv, .sq = 6, .skv = 130 };
	check_ref(&c, &r, 2e-4f);
	finish(&c);
}

/* Rows the op cannot take are refused with the reason; the template row is skipped. */
static void test_refusals(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char msg[256];
	struct slotdef s[] = {
		{ 0, "8,4,16", "DT_FLOAT" }, { 1, "8,3,16", "DT_FLOAT" }, { 2, "8,3,16", "DT_FLOAT" },
		{ 4, "2048,2048", "INT8" },
	};
	struct cells none = { { NULL }, { NULL }, 0 };
	assert_true(run_fia(&c, s, 4, "8,4,16", "DT_FLOAT", &none, 1, msg) < 0);
	assert_non_null(strstr(msg, "not a multiple"));
	s[1].shape = s[2].shape = "8,2,16";
	struct cells band = { { "Runtime sparse_mode" }, { "4" }, 1 };
	assert_true(run_fia(&c, s, 4, "8,4,16", "DT_FLOAT", &band, 1, msg) < 0);
	assert_non_null(strstr(msg, "sparse_mode 4"));
	struct cells full = { { "Runtime sparse_mode" }, { "0" }, 1 };
	assert_true(run_fia(&c, s, 4, "8,4,16", "DT_FLOAT", &full, 1, msg) < 0);
	assert_non_null(strstr(msg, "explicit atten_mask"));
	assert_true(run_fia(&c, s, 4, "8,4,17", "DT_FLOAT", &none, 1, msg) < 0);
	assert_non_null(strstr(msg, "output 0"));
	struct cells lens = { { "Runtime actual_seq_lengths_values" }, { "4,9" }, 1 };
	assert_true(run_fia(&c, s, 4, "8,4,16", "DT_FLOAT", &lens, 1, msg) < 0);
	assert_non_null(strstr(msg, "past the 8 tokens"));
	/* skip: the oracle's template row has one slot */
	const struct perfdb_opdef *def = perfdb_opdef_find("FusedInferAttentionScore");
	assert_non_null(def);
	struct cells tmpl = { { "Input Shapes" }, { "\"3,7\"" }, 1 };
	memset(&c, 0, sizeof(c));
	c.cell = cell_of;
	c.cell_ctx = &tmpl;
	char why[128];
	assert_int_equal((def->skip)(&c, why, sizeof(why)), 1);
	struct cells real = { { "Input Shapes" }, { "\"1,8,128;4,1,128,128;4,1,128,128;;;1;1\"" }, 1 };
	c.cell_ctx = &real;
	assert_int_equal((def->skip)(&c, why, sizeof(why)), 0);
}


/* ---- the DeepSeek-V3.2 / MLA kernels (ops_attention_sparse.c) ---- */

/*
 * softmax(scale·q·kᵀ)·v of one query row over the key rows listed (element
 * offsets: q at qo (x dq), qr at qo (x dr), k/kr/v rows kr[j]); writes the
 * value vector and returns the log-sum-exp (-inf with no key).
 */
static double attend(const struct perfdb_tensor *q, const struct perfdb_tensor *qr, const struct perfdb_tensor *k,
		     const struct perfdb_tensor *kr, const struct perfdb_tensor *v, int64_t dq, int64_t dr, int64_t dv,
		     size_t qo, const int64_t *rows, int64_t n, double scale, double *out)
{
	double *sc = malloc((size_t)(n + 1) * sizeof(double)), mx = -INFINITY, sum = 0;
	assert_non_null(sc);
	for (int64_t j = 0; j < n; j++) {
		double d = 0;
		for (int64_t x = 0; x < dq; x++)
			d += (double)cpu_ld(q, qo * (size_t)dq + (size_t)x) * (double)cpu_ld(k, (size_t)(rows[j] * dq + x));
		for (int64_t x = 0; x < dr; x++)
			d += (double)cpu_ld(qr, qo * (size_t)dr + (size_t)x) * (double)cpu_ld(kr, (size_t)(rows[j] * dr + x));
		sc[j] = d * scale;
		mx = sc[j] > mx ? sc[j] : mx;
	}
	for (int64_t x = 0; x < dv; x++)
		out[x] = 0;
	for (int64_t j = 0; j < n; j++) {
		double p = exp(sc[j] - mx);
		sum += p;
		for (int64_t x = 0; x < dv; x++)
			out[x] += p * (double)cpu_ld(v, (size_t)(rows[j] * dv + x));
	}
	for (int64_t x = 0; x < dv && n; x++)
		out[x] /= sum;
	free(sc);
	return n ? mx + log(sum) : -INFINITY;
}

static void near_row(const struct perfdb_tensor *o, size_t off, const double *want, int64_t n, float tol)
{
	for (int64_t x = 0; x < n; x++) {
		float got = cpu_ld(o, off + (size_t)x);
		if (fabs((double)got - want[x]) > tol * (1.0 + fabs(want[x])))
			fail_msg("element %zu: got %g, want %g", off + (size_t)x, (double)got, want[x]);
	}
}

/*
 * SparseFlashAttention: TND query, paged kv (PA_BSND), GQA 4:2, rope,
 * value dim 12, selection blocks of 2 positions, causal (mode 3).  The
 * reference takes the indices the op wrote and gathers their positions.
 */
static void test_sparse_flash_attention(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "5,4,16", dts[d] }, { 1, "6,8,2,16", dts[d] }, { 2, "6,8,2,12", dts[d] },
			{ 3, "5,2,3", "DT_INT32" }, { 4, "2,3", "DT_INT32" }, { 5, "2", "DT_INT32" }, { 6, "2", "DT_INT32" },
			{ 7, "5,4,4", dts[d] }, { 8, "6,8,2,4", dts[d] },
		};
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime sparse_block_size" }, { "2,5", "20,13", "2" }, 3 };
		assert_int_equal(run_op(&c, "SparseFlashAttention", s, 9, "5,4,12", dts[d], &cs, 2, NULL), 0);
		int64_t ql[] = { 2, 3 }, kl[] = { 20, 13 }, qs[] = { 0, 2 };
		double want[12];
		for (int64_t b = 0; b < 2; b++)
			for (int64_t si = 0; si < ql[b]; si++) {
				int64_t t = qs[b] + si, vis = si + 1 + kl[b] - ql[b], nbv = (vis + 1) / 2;
				for (int64_t g = 0; g < 2; g++) {
					int64_t rows[6], n = 0, seen[16] = { 0 };
					for (int64_t i = 0; i < 3; i++) {
						int64_t blk = cpu_ld_int(&c.in[3], (size_t)((t * 2 + g) * 3 + i));
						if (i < (nbv < 3 ? nbv : 3)) {
							/* min(K, visible blocks) distinct visible blocks, then -1 */
							assert_true(blk >= 0 && blk < nbv);
							assert_int_equal(seen[blk]++, 0);
						} else {
							assert_int_equal(blk, -1);
							continue;
						}
						for (int64_t e = 0; e < 2; e++) {
							int64_t p = blk * 2 + e;
							if (p >= vis)
								continue;
							int64_t pb = cpu_ld_int(&c.in[4], (size_t)(b * 3 + p / 8));
							rows[n++] = (pb * 8 + p % 8) * 2 + g;
						}
					}
					for (int64_t hh = 0; hh < 2; hh++) {
						int64_t h = g * 2 + hh;
						attend(&c.in[0], &c.in[7], &c.in[1], &c.in[8], &c.in[2], 16, 4, 12,
						       (size_t)(t * 4 + h), rows, n, 1.0 / sqrt(20.0), want);
						near_row(&c.out[0], (size_t)(t * 4 + h) * 12, want, 12, tol_for(dts[d]));
					}
				}
			}
		/* lengths written back: q cumulative (TND), kv per batch (paged) */
		assert_int_equal(cpu_ld_int(&c.in[5], 1), 5);
		assert_int_equal(cpu_ld_int(&c.in[6], 1), 13);
		finish(&c);
	}
}

/*
 * LightningIndexer, BSND: the output lists the K best visible keys of
 * Σ_h w_h·relu(q_h·k), -1 past them; on 1 and 3 threads (queries dealt to
 * threads one at a time), with the same output.
 */
static void test_lightning_indexer(void **state)
{
	(void)state;
	int32_t first[2 * 3 * 9];
	for (int threads = 1; threads <= 3; threads += 2) {
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "2,3,4,16", "DT_BF16" }, { 1, "2,10,1,16", "DT_BF16" }, { 2, "2,3,4", "DT_BF16" },
		};
		struct cells none = { { NULL }, { NULL }, 0 };
		assert_int_equal(run_op(&c, "LightningIndexer", s, 3, "2,3,1,9", "DT_INT32", &none, threads, NULL), 0);
		if (threads == 1)
			memcpy(first, c.out[0].data, sizeof(first));
		else
			assert_memory_equal(first, c.out[0].data, sizeof(first));
		for (int64_t b = 0; b < 2; b++)
			for (int64_t si = 0; si < 3; si++) {
				int64_t vis = si + 1 + 10 - 3, t = b * 3 + si;   /* mode 3 by default: 8, 9, 10 keys */
				double sc[10], sorted[10];
				for (int64_t j = 0; j < vis; j++) {
					double acc = 0;
					for (int64_t h = 0; h < 4; h++) {
						double d = 0;
						for (int64_t x = 0; x < 16; x++)
							d += (double)cpu_ld(&c.in[0], (size_t)((t * 4 + h) * 16 + x)) *
							     (double)cpu_ld(&c.in[1], (size_t)((b * 10 + j) * 16 + x));
						acc += (double)cpu_ld(&c.in[2], (size_t)(t * 4 + h)) * (d > 0 ? d : 0);
					}
					sc[j] = sorted[j] = acc;
				}
				for (int64_t i = 1; i < vis; i++)   /* descending */
					for (int64_t k = i; k > 0 && sorted[k] > sorted[k - 1]; k--) {
						double tmp = sorted[k];
						sorted[k] = sorted[k - 1];
						sorted[k - 1] = tmp;
					}
				int used[10] = { 0 };
				for (int64_t i = 0; i < 9; i++) {
					int64_t got = cpu_ld_int(&c.out[0], (size_t)(t * 9 + i));
					if (i >= vis) {
						assert_int_equal(got, -1);
						continue;
					}
					assert_true(got >= 0 && got < vis);
					assert_int_equal(used[got]++, 0);
					/* the i-th entry scores as the i-th best (ties may come in either order) */
					if (fabs(sc[got] - sorted[i]) > 1e-4 * (1 + fabs(sorted[i])))
						fail_msg("b %lld s %lld rank %lld: key %lld scores %g, rank's score %g", (long long)b,
							 (long long)si, (long long)i, (long long)got, sc[got], sorted[i]);
				}
			}
		finish(&c);
	}
}

/* RINGMLAPrefillBF16Kernel, first ring step: causal per sequence, rope split, GQA 4:2, lse output. */
static void test_ring_mla_first(void **state)
{
	(void)state;
	const char *dts[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		struct perfdb_op_case c;
		struct slotdef s[] = {
			{ 0, "7,4,16", dts[d] }, { 1, "7,4,8", dts[d] }, { 2, "7,2,16", dts[d] }, { 3, "7,2,8", dts[d] },
			{ 4, "7,2,12", dts[d] }, { 5, "512,512", dts[d] }, { 6, "2", "DT_INT32" },
		};
		struct cells cs = { { "Runtime seqlen_values" }, { "3,4" }, 1 };
		char odt[32];
		snprintf(odt, sizeof(odt), "%s;DT_FLOAT", dts[d]);
		assert_int_equal(run_op(&c, "RINGMLAPrefillBF16Kernel", s, 7, "7,4,12;4,7", odt, &cs, 2, NULL), 0);
		double want[12];
		for (int64_t b = 0; b < 2; b++)
			for (int64_t si = 0; si < (b ? 4 : 3); si++)
				for (int64_t h = 0; h < 4; h++) {
					int64_t t = (b ? 3 : 0) + si, rows[4], n = 0;
					for (int64_t j = 0; j <= si; j++)
						rows[n++] = ((b ? 3 : 0) + j) * 2 + h / 2;
					double lse = attend(&c.in[0], &c.in[1], &c.in[2], &c.in[3], &c.in[4], 16, 8, 12,
							    (size_t)(t * 4 + h), rows, n, 1.0 / sqrt(24.0), want);
					near_row(&c.out[0], (size_t)(t * 4 + h) * 12, want, 12, tol_for(dts[d]));
					double wl[1] = { lse };
					near_row(&c.out[1], (size_t)(h * 7 + t), wl, 1, d ? 1e-2f : 1e-4f);
				}
		assert_int_equal(cpu_ld_int(&c.in[6], 1), 4);
		finish(&c);
	}
}

/*
 * A later ring step's output (value dim 16) against attend() over each
 * query row's keys (unmasked), merged with prev_out/prev_lse (slots 7
 * and 8): nb sequences of qlen[b] tokens and kvlen[b] keys, TND, hq q
 * heads over hkv kv heads, q·k dims dq + dr.
 */
static void check_ring_merge(const struct perfdb_op_case *c, int64_t nb, const int64_t *qlen, const int64_t *kvlen,
			     int64_t hq, int64_t hkv, int64_t dq, int64_t dr)
{
	int64_t T = 0, maxkv = 1;
	for (int64_t b = 0; b < nb; b++) {
		T += qlen[b];
		maxkv = kvlen[b] > maxkv ? kvlen[b] : maxkv;
	}
	double now[16], want[16];
	int64_t *rows = malloc((size_t)maxkv * sizeof(*rows));
	assert_non_null(rows);
	for (int64_t b = 0, qoff = 0, kvoff = 0; b < nb; qoff += qlen[b], kvoff += kvlen[b], b++)
		for (int64_t si = 0; si < qlen[b]; si++)
			for (int64_t h = 0; h < hq; h++) {
				int64_t t = qoff + si, n = 0;
				for (int64_t j = 0; j < kvlen[b]; j++)
					rows[n++] = (kvoff + j) * hkv + h / (hq / hkv);
				double l2 = attend(&c->in[0], &c->in[1], &c->in[2], &c->in[3], &c->in[4], dq, dr, 16,
						   (size_t)(t * hq + h), rows, n, 1.0 / sqrt((double)(dq + dr)), now);
				double l1 = cpu_ld(&c->in[8], (size_t)(h * T + t)), m = l1 > l2 ? l1 : l2;
				double w1 = exp(l1 - m), w2 = exp(l2 - m);
				for (int64_t x = 0; x < 16; x++)
					want[x] = (w1 * cpu_ld(&c->in[7], (size_t)((t * hq + h) * 16 + x)) + w2 * now[x]) /
						  (w1 + w2);
				near_row(&c->out[0], (size_t)(t * hq + h) * 16, want, 16, 2e-4f);
			}
	free(rows);
}

/* RINGMLAPrefillBF16Kernel, a later ring step: no mask, kv lengths of their own, merged with prev_out/prev_lse. */
static void test_ring_mla_merge(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct slotdef s[] = {
		{ 0, "7,4,16", "DT_FLOAT" }, { 1, "7,4,8", "DT_FLOAT" }, { 2, "11,4,16", "DT_FLOAT" },
		{ 3, "11,4,8", "DT_FLOAT" }, { 4, "11,4,16", "DT_FLOAT" }, { 6, "2,2", "DT_INT32" },
		{ 7, "7,4,16", "DT_FLOAT" }, { 8, "4,7", "DT_FLOAT" },
	};
	struct cells cs = { { "Runtime seqlen_values" }, { "3,4,5,6" }, 1 };
	assert_int_equal(run_op(&c, "RINGMLAPrefillBF16Kernel", s, 8, "7,4,16", "DT_FLOAT", &cs, 1, NULL), 0);
	int64_t ql[] = { 3, 4 }, kl[] = { 5, 6 };
	check_ring_merge(&c, 2, ql, kl, 4, 4, 16, 8);
	finish(&c);
}

/*
 * A later ring step of decode shape on 4 threads: one query token per
 * sequence against 600 and 1000 keys, q·k dim 16 + 16 rope, GQA 4:2, so
 * the rows are split along their keys (ops_attention_plan.c) and the
 * merged parts' log-sum-exp is what the ring merge with prev_out/prev_lse
 * reads.
 */
static void test_ring_mla_merge_split(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	struct slotdef s[] = {
		{ 0, "2,4,16", "DT_FLOAT" }, { 1, "2,4,16", "DT_FLOAT" }, { 2, "1600,2,16", "DT_FLOAT" },
		{ 3, "1600,2,16", "DT_FLOAT" }, { 4, "1600,2,16", "DT_FLOAT" }, { 6, "2,2", "DT_INT32" },
		{ 7, "2,4,16", "DT_FLOAT" }, { 8, "4,2", "DT_FLOAT" },
	};
	struct cells cs = { { "Runtime seqlen_values" }, { "1,1,600,1000" }, 1 };
	assert_int_equal(run_op(&c, "RINGMLAPrefillBF16Kernel", s, 8, "2,4,16", "DT_FLOAT", &cs, 4, NULL), 0);
	int64_t ql[] = { 1, 1 }, kl[] = { 600, 1000 };
	check_ring_merge(&c, 2, ql, kl, 4, 2, 16, 16);
	finish(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tnd_causal_gqa),
		cmocka_unit_test(test_tnd_sparse2),
		cmocka_unit_test(test_tnd_paged_decode),
		cmocka_unit_test(test_bf16_decode_edges),
		cmocka_unit_test(test_decode_split),
		cmocka_unit_test(test_paged_3d_nomask),
		cmocka_unit_test(test_mla_bnsd_nbsd_rope),
		cmocka_unit_test(test_bnsd_inferred),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_sparse_flash_attention),
		cmocka_unit_test(test_lightning_indexer),
		cmocka_unit_test(test_ring_mla_first),
		cmocka_unit_test(test_ring_mla_merge),
		cmocka_unit_test(test_ring_mla_merge_split),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
