/*
 * CPU backend MoE ops (ops_moe.c, ops_dfc.c) against naive references on
 * small shapes: grouped matmul per group against a plain GEMM over the
 * group's rows (float and int8 with scales), GroupedMatmulSwigluQuant
 * against dequant -> SwiGlu -> dynamic quant written out here, MoeGatingTopK
 * against a sort-based selection, MoeTokenPermute/Unpermute round trip,
 * and DispatchFFNCombine single-process (EP 1) against a loop over the
 * tokens' choices, plus its skip hook and refusals.
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
#include "cpu_test_ctx.h"

static struct perfdb_engine_pool pool;

static uint64_t rng = 0x9876543;

static int32_t rnd(int lo, int hi)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (int32_t)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

/* The int8 weights' range (see cpu_test_int8_vnni): exact on every ISA unless widened. */
static int w8_lo = -64, w8_hi = 63;

static int run_full(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt, const char *outs,
		    const char *odt, int ep, void (*tweak)(struct perfdb_op_case *))
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", c, &err), 0);
	c->ep_size = ep;
	c->nranks = 1;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_non_null(impl);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err);
	if (rc < 0)
		return rc;
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, 11, &err), 0);
	if (tweak)
		tweak(c);
	if (impl->prepare && (rc = impl->prepare(with_ctx(c), &err)) < 0)
		fail_msg("prepare: %s", err.msg);
	if ((rc = impl->run(c, &err)) < 0)
		fail_msg("run: %s", err.msg);
	return 0;
}

static int run_case(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt, const char *outs,
		    const char *odt, void (*tweak)(struct perfdb_op_case *))
{
	return run_full(c, op, ins, idt, outs, odt, 16, tweak);
}

static void finish(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->release)
		impl->release(c);
}

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol * (1.0 + fabs(want)))
		fail_msg("got %g, want %g (tol %g)", got, want, tol);
}

static void signed_int8(struct perfdb_op_case *c)
{
	for (int i = 0; i < 2; i++)
		if (c->in[i].dtype == PERFDB_DTYPE_INT8)
			for (int64_t j = 0; j < c->in[i].numel; j++)
				((int8_t *)c->in[i].data)[j] = (int8_t)(i == 1 ? rnd(w8_lo, w8_hi) : rnd(-128, 127));
	for (int i = 3; i <= 8; i += 5)
		if ((size_t)i < c->nin && c->in[i].present)
			for (int64_t j = 0; j < c->in[i].numel; j++)
				((float *)c->in[i].data)[j] = (float)rnd(1, 1000) / 65536.0f;
}

/* x (T,K) . w[g] (K,N) over the rows of group g, in double */
static double gemm_at(const struct perfdb_op_case *c, int64_t g, int64_t r, int64_t n, int64_t k, int64_t nn)
{
	double s = 0;
	for (int64_t q = 0; q < k; q++) {
		double a = c->in[0].dtype == PERFDB_DTYPE_INT8 ? ((int8_t *)c->in[0].data)[r * k + q] : cpu_ld(&c->in[0], (size_t)(r * k + q));
		size_t wi = (size_t)(g * k * nn + q * nn + n);
		double b = c->in[1].dtype == PERFDB_DTYPE_INT8 ? ((int8_t *)c->in[1].data)[wi] : cpu_ld(&c->in[1], wi);
		s += a * b;
	}
	return s;
}

static void test_grouped_matmul_float(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	const char *dt[] = { "DT_FLOAT;DT_FLOAT;;DT_FLOAT;;;;DT_INT64;DT_FLOAT",
			     "DT_BF16;DT_BF16;;DT_FLOAT;;;;DT_INT64;DT_FLOAT" };
	const char *od[] = { "DT_FLOAT", "DT_BF16" };
	for (int d = 0; d < 2; d++) {
		/* T = 10 over E = 3 groups: the list is rewritten to 4, 7, 10 */
		assert_int_equal(run_case(&c, "GroupedMatmul", "10,8;3,8,1,16;;3,16;;;;3;10", dt[d], "10,16", od[d], NULL), 0);
		const int64_t *gl = c.in[7].data;
		assert_int_equal(gl[0], 4);
		assert_int_equal(gl[1], 7);
		assert_int_equal(gl[2], 10);
		for (int64_t r = 0; r < 10; r++) {
			int64_t g = r < 4 ? 0 : r < 7 ? 1 : 2;
			for (int64_t n = 0; n < 16; n++)
				near(cpu_ld(&c.out[0], (size_t)(r * 16 + n)), gemm_at(&c, g, r, n, 8, 16), d ? 2e-2 : 1e-5);
		}
		finish(&c);
	}
	/* more groups than tokens: empty groups */
	assert_int_equal(run_case(&c, "GroupedMatmul", "2,8;4,8,16;;;;;;4;2", "DT_FLOAT;DT_FLOAT;;;;;;DT_INT64;DT_FLOAT",
				  "2,16", "DT_FLOAT", NULL), 0);
	for (int64_t r = 0; r < 2; r++)
		for (int64_t n = 0; n < 16; n++)
			near(cpu_ld(&c.out[0], (size_t)(r * 16 + n)), gemm_at(&c, r, r, n, 8, 16), 1e-5);
	finish(&c);
	/* the weight does not hold E groups of (K,N) */
	assert_true(run_case(&c, "GroupedMatmul", "10,8;3,8,1,16;;3,16;;;;3;10", "DT_FLOAT", "10,15", "DT_FLOAT", NULL) < 0);
	assert_true(run_case(&c, "GroupedMatmul", "10,8;3,7,16;;;;;;3;10", "DT_FLOAT", "10,16", "DT_FLOAT", NULL) < 0);
}

static void test_grouped_matmul_int8(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* w8a8: out = acc * scale[g][n] * per_token_scale[m] */
	assert_int_equal(run_case(&c, "GroupedMatmul", "9,32;2,32,16;;2,16;;;;2;9",
				  "DT_INT8;DT_INT8;;DT_FLOAT;;;;DT_INT64;DT_FLOAT", "9,16", "DT_FLOAT", signed_int8), 0);
	const float *ws = c.in[3].data, *pt = c.in[8].data;
	for (int64_t r = 0; r < 9; r++) {
		int64_t g = r < 5 ? 0 : 1;
		for (int64_t n = 0; n < 16; n++)
			near(((float *)c.out[0].data)[r * 16 + n], gemm_at(&c, g, r, n, 32, 16) * ws[g * 16 + n] * pt[r], 1e-5);
	}
	finish(&c);
}

static void test_grouped_matmul_swiglu_quant(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_case(&c, "GroupedMatmulSwigluQuant", "6,32;2,32,16;;2,16;;;;2;6",
				  "DT_INT8;DT_INT8;;DT_FLOAT;;;;DT_INT64;DT_FLOAT", "6,8;6", "DT_INT8;DT_FLOAT",
				  signed_int8), 0);
	const float *ws = c.in[3].data, *pt = c.in[8].data;
	for (int64_t r = 0; r < 6; r++) {
		int64_t g = r < 3 ? 0 : 1;
		double v[16], h[8], mx = 0;
		for (int n = 0; n < 16; n++)
			v[n] = gemm_at(&c, g, r, n, 32, 16) * ws[g * 16 + n] * pt[r];
		for (int n = 0; n < 8; n++) {
			h[n] = v[n] / (1 + exp(-v[n])) * v[8 + n];
			mx = fmax(mx, fabs(h[n]));
		}
		near(((float *)c.out[1].data)[r], mx / 127, 1e-4);
		for (int n = 0; n < 8; n++)
			assert_true(fabs(((int8_t *)c.out[0].data)[r * 8 + n] - nearbyint(h[n] * 127 / mx)) <= 1);
	}
	finish(&c);
	/* the output must hold N/2 (or the grid template's N) columns */
	assert_true(run_case(&c, "GroupedMatmulSwigluQuant", "6,32;2,32,16;;2,16;;;;2;6",
			     "DT_INT8;DT_INT8;;DT_FLOAT;;;;DT_INT64;DT_FLOAT", "6,5;6", "DT_INT8;DT_FLOAT", NULL) < 0);
}

static void test_gating_topk(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* E = 32: 8 groups of 4, the 4 groups with the largest top-2 sums kept, then the top 6 */
	assert_int_equal(run_case(&c, "MoeGatingTopK", "5,32;;", "DT_FLOAT", "5,6;5,6;5", "DT_FLOAT;DT_INT32;DT_FLOAT",
				  NULL), 0);
	const float *x = c.in[0].data;
	for (int t = 0; t < 5; t++) {
		double s[32], gs[8];
		int gord[8], keep[8] = { 0 };
		for (int i = 0; i < 32; i++)
			s[i] = 1 / (1 + exp(-(double)x[t * 32 + i]));
		for (int g = 0; g < 8; g++) {
			double v[4];
			memcpy(v, s + 4 * g, sizeof(v));
			/* sort descending: the sum of the top 2 */
			for (int a = 0; a < 4; a++)
				for (int b = a + 1; b < 4; b++)
					if (v[b] > v[a]) {
						double tmp = v[a];
						v[a] = v[b];
						v[b] = tmp;
					}
			gs[g] = v[0] + v[1];
			gord[g] = g;
		}
		for (int a = 0; a < 8; a++)
			for (int b = a + 1; b < 8; b++)
				if (gs[gord[b]] > gs[gord[a]]) {
					int tmp = gord[a];
					gord[a] = gord[b];
					gord[b] = tmp;
				}
		for (int a = 0; a < 4; a++)
			keep[gord[a]] = 1;
		int chosen[6];
		double sum = 0;
		int used[32] = { 0 };
		for (int j = 0; j < 6; j++) {
			int best = -1;
			for (int i = 0; i < 32; i++)
				if (keep[i / 4] && !used[i] && (best < 0 || s[i] > s[best]))
					best = i;
			used[best] = 1;
			chosen[j] = best;
			sum += s[best];
		}
		for (int j = 0; j < 6; j++) {
			assert_int_equal(((int32_t *)c.out[1].data)[t * 6 + j], chosen[j]);
			near(((float *)c.out[0].data)[t * 6 + j], s[chosen[j]] / sum, 1e-5);
		}
		near(((float *)c.out[2].data)[t], sum, 1e-5);
	}
	finish(&c);
	/* k larger than the kept groups' experts (4 groups of 2 = 8 < 9) */
	assert_true(run_case(&c, "MoeGatingTopK", "5,16;;", "DT_FLOAT", "5,9;5,9;5", "DT_FLOAT;DT_INT32;DT_FLOAT", NULL) < 0);
}

static void test_permute_round_trip(void **state)
{
	(void)state;
	struct perfdb_op_case c, u;
	/* T = 6 tokens, k = 2: expert ids (t*2 + j) % 8 are rewritten in prepare */
	assert_int_equal(run_case(&c, "MoeTokenPermute", "6,5;6,2", "DT_FLOAT;DT_INT64", "12,5;12", "DT_FLOAT;DT_INT32",
				  NULL), 0);
	const int64_t *id = c.in[1].data;
	const int32_t *si = c.out[1].data;
	for (int i = 0; i < 12; i++)
		assert_int_equal(id[i], i % 8);
	/* stable sort by id: pairs 0,8 (id 0), 1,9 (id 1), 2,10, 3,11, 4, 5, 6, 7 */
	const int32_t want[12] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 5, 6, 7 };
	for (int i = 0; i < 12; i++) {
		assert_int_equal(si[i], want[i]);
		assert_memory_equal((float *)c.out[0].data + i * 5, (float *)c.in[0].data + want[i] / 2 * 5, 5 * sizeof(float));
	}
	/* unpermute the permuted rows back with probs: out[t] = (p[t,0] + p[t,1]) * tokens[t] */
	float tok[30], perm[60];
	memcpy(tok, c.in[0].data, sizeof(tok));
	memcpy(perm, c.out[0].data, sizeof(perm));
	finish(&c);
	assert_int_equal(run_case(&u, "MoeTokenUnpermute", "12,5;12;6,2", "DT_FLOAT;DT_INT32;DT_FLOAT", "6,5", "DT_FLOAT",
				  NULL), 0);
	/* prepare rewrote sorted_indices to the same permutation; feed the permuted rows and run again */
	for (int i = 0; i < 12; i++)
		assert_int_equal(((int32_t *)u.in[1].data)[i], want[i]);
	memcpy(u.in[0].data, perm, sizeof(perm));
	struct perfdb_err err;
	assert_int_equal(perfdb_backend_cpu.find_op("MoeTokenUnpermute")->run(&u, &err), 0);
	const float *p = u.in[2].data;
	for (int t = 0; t < 6; t++)
		for (int h = 0; h < 5; h++)
			near(((float *)u.out[0].data)[t * 5 + h], (p[2 * t] + p[2 * t + 1]) * tok[t * 5 + h], 1e-5);
	finish(&u);
}

/* ---- DispatchFFNCombine, single process ---- */

static const char *dfc_in = "6,16;2,16,8;2,4,16;6,2;16;32;6,2";
static const char *dfc_dt = "DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_INT32;DT_FLOAT;DT_FLOAT;DT_FLOAT";

static void test_dfc_local(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	assert_int_equal(run_full(&c, "DispatchFFNCombine", dfc_in, dfc_dt, "6,16;2", "DT_FLOAT;DT_INT32", 1, NULL), 0);
	const float *x = c.in[0].data, *w1 = c.in[1].data, *w2 = c.in[2].data, *p = c.in[6].data;
	const int32_t *id = c.in[3].data;
	for (int t = 0; t < 6; t++) {
		double out[16] = { 0 };
		for (int j = 0; j < 2; j++) {
			int e = id[t * 2 + j];
			assert_int_equal(e, (t * 2 + j) % 2);    /* balanced ids, EP 1, rank 0 */
			double y1[8], hh[4];
			for (int n = 0; n < 8; n++) {
				y1[n] = 0;
				for (int h = 0; h < 16; h++)
					y1[n] += (double)x[t * 16 + h] * w1[e * 128 + h * 8 + n];
			}
			for (int n = 0; n < 4; n++)
				hh[n] = y1[n] / (1 + exp(-y1[n])) * y1[4 + n];
			for (int h = 0; h < 16; h++) {
				double y = 0;
				for (int n = 0; n < 4; n++)
					y += hh[n] * w2[e * 64 + n * 16 + h];
				out[h] += p[t * 2 + j] * y;
			}
		}
		for (int h = 0; h < 16; h++)
			near(((float *)c.out[0].data)[t * 16 + h], out[h], 1e-4);
	}
	assert_int_equal(((int32_t *)c.out[1].data)[0], 6);
	assert_int_equal(((int32_t *)c.out[1].data)[1], 6);
	finish(&c);
}

static const char *cell_ep(const void *ctx, const char *col)
{
	return strcmp(col, "EP Size") == 0 ? ctx : NULL;
}

static void test_dfc_refuses_and_skips(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* EP 2 without mpirun */
	assert_true(run_full(&c, "DispatchFFNCombine", dfc_in, dfc_dt, "6,16;2", "DT_FLOAT;DT_INT32", 2, NULL) < 0);
	/* six slots */
	assert_true(run_full(&c, "DispatchFFNCombine", "6,16;2,16,8;2,4,16;6,2;16;32", dfc_dt, "6,16;2",
			     "DT_FLOAT;DT_INT32", 1, NULL) < 0);
	/* w2 not (E,n/2,H) */
	assert_true(run_full(&c, "DispatchFFNCombine", "6,16;2,16,8;2,8,16;6,2;16;32;6,2", dfc_dt, "6,16;2",
			     "DT_FLOAT;DT_INT32", 1, NULL) < 0);
	const struct perfdb_opdef *def = perfdb_opdef_find("DispatchFFNCombine");
	assert_non_null(def);
	struct perfdb_op_case k;
	memset(&k, 0, sizeof(k));
	k.ep_size = 2;
	k.cell = cell_ep;
	char why[160];
	k.cell_ctx = "2";
	assert_int_equal((def->skip)(&k, why, sizeof(why)), 0);
	k.cell_ctx = "16";
	assert_int_equal((def->skip)(&k, why, sizeof(why)), 1);
	assert_string_equal(why, "EP Size 16 differs from the run's --dispatch-ffn-combine-ep-size 2");
	k.cell = NULL;     /* no EP Size column: replayed */
	assert_int_equal((def->skip)(&k, why, sizeof(why)), 0);
}

/*
 * The group list every backend gives GroupedMatmul (backend.h,
 * perfdb_even_group_end): cumulative ends, the remainder to the first
 * groups; values worked out by hand.
 */
static void test_even_group_ends(void **state)
{
	(void)state;
	static const struct { int64_t t, e, ends[4]; } cs[] = {
		{ 10, 4, { 3, 6, 8, 10 } },   /* 10 = 4 x 2 + 2: groups of 3 3 2 2 */
		{ 12, 4, { 3, 6, 9, 12 } },
		{ 3, 4, { 1, 2, 3, 3 } },     /* fewer tokens than groups: the last one empty */
		{ 0, 4, { 0, 0, 0, 0 } },
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		for (int64_t g = 0; g < cs[i].e; g++)
			assert_int_equal(perfdb_even_group_end(cs[i].t, cs[i].e, g), cs[i].ends[g]);
	assert_int_equal(perfdb_even_group_end(7, 1, 0), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_even_group_ends),
		cmocka_unit_test(test_grouped_matmul_float),
		cmocka_unit_test(test_grouped_matmul_int8),
		cmocka_unit_test(test_grouped_matmul_swiglu_quant),
		cmocka_unit_test(test_gating_topk),
		cmocka_unit_test(test_permute_round_trip),
		cmocka_unit_test(test_dfc_local),
		cmocka_unit_test(test_dfc_refuses_and_skips),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
