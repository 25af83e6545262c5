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
 * values as the reference, so the difference is dominated by rounding the
 * output to bf16 (half an ulp, 2^-9 relative): 1e-2.
 */
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

/* Builds, checks, fills, prepares and runs; returns check's (or prepare's) result. */
static int run_fia(struct perfdb_op_case *c, const struct slotdef *s, int n, const char *out, const char *odt,
		   const struct cells *cs, int threads, char *msg)
{
	char shapes[1024], dts[1024], fms[512];
	row_text(s, n, shapes, dts, fms, sizeof(shapes) < sizeof(fms) ? sizeof(shapes) : sizeof(fms));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case("FusedInferAttentionScore", shapes, dts, fms, out, odt, "", c,
						  &err), 0);
	c->threads = threads;
	c->cell = cell_of;
	c->cell_ctx = cs;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	assert_non_null(impl);
	int rc = impl->check(c, &err);
	if (rc < 0) {
		if (msg)
			snprintf(msg, 256, "%.200s", err.msg);
		return rc;
	}
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, 7, &err), 0);
	rc = impl->prepare(c, &err);
	if (rc == 0)
		rc = impl->run(c, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	return 0;
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
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op("FusedInferAttentionScore");
	struct cells tmpl = { { "Input Shapes" }, { "\"3,7\"" }, 1 };
	memset(&c, 0, sizeof(c));
	c.cell = cell_of;
	c.cell_ctx = &tmpl;
	char why[128];
	assert_int_equal((impl->skip)(&c, why, sizeof(why)), 1);
	struct cells real = { { "Input Shapes" }, { "\"1,8,128;4,1,128,128;4,1,128,128;;;1;1\"" }, 1 };
	c.cell_ctx = &real;
	assert_int_equal((impl->skip)(&c, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tnd_causal_gqa),
		cmocka_unit_test(test_tnd_sparse2),
		cmocka_unit_test(test_tnd_paged_decode),
		cmocka_unit_test(test_paged_3d_nomask),
		cmocka_unit_test(test_mla_bnsd_nbsd_rope),
		cmocka_unit_test(test_bnsd_inferred),
		cmocka_unit_test(test_refusals),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
