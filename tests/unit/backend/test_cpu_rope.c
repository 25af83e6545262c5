/*
 * CPU backend RoPE and KV-cache ops (docs/ops.md "RoPE and KV cache")
 * against plain references on small shapes: the rotations against the
 * textbook formula (each pair of values turned by its angle, written here
 * from angles, not from the kernel's cos/sin layout), RmsNorm in double,
 * and cache writes that land at the mapped slots and nowhere else.
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

#include "cpu_case.h"

static int setup(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt, const char *outs,
		 const char *odt)
{
	return cpu_case_setup(c, op, ins, idt, outs, odt, 7);
}

/* prepare and run twice (a replay times the same call repeatedly); finish() releases */
static void go(struct perfdb_op_case *c)
{
	cpu_case_run(c, 2);
}

static void put(struct perfdb_tensor *t, size_t i, double v)
{
	float f = (float)v;
	cpu_store_row(t, i, 1, &f);
}

/* The pair (a, b) turned by th: (a cos th - b sin th, b cos th + a sin th). */
static void turn(double a, double b, double th, double *ra, double *rb)
{
	*ra = a * cos(th) - b * sin(th);
	*rb = b * cos(th) + a * sin(th);
}

/* ---- InterleaveRope: pair (x[2j], x[2j+1]) turned by th_j lands at (j, j + D/2) ---- */

static void check_irope(const struct perfdb_op_case *c, size_t B, size_t N, size_t S, size_t D, size_t cb,
			size_t cs, double tol)
{
	for (size_t b = 0; b < B; b++)
		for (size_t n = 0; n < N; n++)
			for (size_t s = 0; s < S; s++)
				for (size_t j = 0; j < D / 2; j++) {
					size_t off = ((b * N + n) * S + s) * D;
					size_t co = ((cb == 1 ? 0 : b) * cs + (cs == 1 ? 0 : s)) * D;
					/* the angle whose cos/sin the inputs hold */
					double th = atan2(cpu_ld(&c->in[2], co + j), cpu_ld(&c->in[1], co + j));
					double ra, rb;
					turn(cpu_ld(&c->in[0], off + 2 * j), cpu_ld(&c->in[0], off + 2 * j + 1), th, &ra, &rb);
					near(cpu_ld(&c->out[0], off + j), ra, tol);
					near(cpu_ld(&c->out[0], off + j + D / 2), rb, tol);
				}
}

/* cos/sin rows of angles (row + 1)·10000^(-2j/D), both halves alike. */
static void fill_angles(struct perfdb_tensor *cs, struct perfdb_tensor *sn, size_t rows, size_t D)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < D; j++) {
			double th = (double)(r + 1) * pow(10000.0, -2.0 * (double)(j % (D / 2)) / (double)D);
			put(cs, r * D + j, cos(th));
			put(sn, r * D + j, sin(th));
		}
}

static void test_interleave_rope(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[64];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s;%s", FDT[d], FDT[d], FDT[d]);
		/* the grid's layout: x (B,N,1,D), cos/sin (B,1,1,D) */
		assert_int_equal(setup(&c, "InterleaveRope", "2,3,1,8;2,1,1,8;2,1,1,8", dt, "2,3,1,8", FDT[d]), 0);
		fill_angles(&c.in[1], &c.in[2], 2, 8);
		go(&c);
		check_irope(&c, 2, 3, 1, 8, 2, 1, tol_of(FD[d]) * 2);
		finish(&c);
		/* S > 1 and cos/sin shared over the batch: (1,1,S,D) */
		assert_int_equal(setup(&c, "InterleaveRope", "2,2,3,8;1,1,3,8;1,1,3,8", dt, "2,2,3,8", FDT[d]), 0);
		fill_angles(&c.in[1], &c.in[2], 3, 8);
		go(&c);
		check_irope(&c, 2, 2, 3, 8, 1, 3, tol_of(FD[d]) * 2);
		finish(&c);
	}
	/* refused: odd D, cos with a head dim, 3-D x */
	assert_true(setup(&c, "InterleaveRope", "2,3,1,7;2,1,1,7;2,1,1,7", "", "2,3,1,7", "") < 0);
	assert_true(setup(&c, "InterleaveRope", "2,3,1,8;2,3,1,8;2,3,1,8", "", "2,3,1,8", "") < 0);
	assert_true(setup(&c, "InterleaveRope", "2,3,8;2,1,8;2,1,8", "", "2,3,8", "") < 0);
	assert_true(setup(&c, "InterleaveRope", "3,7", "DT_BF16", "3,7", "DT_BF16") < 0);
}

/* ---- _triton_rope_siso: NeoX pair (x[j], x[j + D/2]) turned by the cache row's angle ---- */

static void test_triton_rope(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[64], odt[64];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s;%s", FDT[d], FDT[d], FDT[d]);
		snprintf(odt, sizeof(odt), "%s;%s", FDT[d], FDT[d]);
		/* q (T=5, 2, 8), k (5, 1, 8), cache (P=4, 8): token i at position i mod 4 */
		assert_int_equal(setup(&c, "_triton_rope_siso", "5,2,8;5,1,8;4,8", dt, "5,2,8;5,1,8", odt), 0);
		double th[4][4];
		for (size_t p = 0; p < 4; p++)
			for (size_t j = 0; j < 4; j++) {
				th[p][j] = 0.3 * (double)(p + 1) * (double)(j + 1);
				put(&c.in[2], p * 8 + j, cos(th[p][j]));
				put(&c.in[2], p * 8 + 4 + j, sin(th[p][j]));
			}
		go(&c);
		for (size_t k = 0; k < 2; k++) {
			size_t h = k ? 1 : 2;
			for (size_t i = 0; i < 5; i++)
				for (size_t n = 0; n < h; n++)
					for (size_t j = 0; j < 4; j++) {
						size_t off = (i * h + n) * 8;
						double a = atan2(cpu_ld(&c.in[2], (i % 4) * 8 + 4 + j),
								 cpu_ld(&c.in[2], (i % 4) * 8 + j));
						double ra, rb;
						turn(cpu_ld(&c.in[k], off + j), cpu_ld(&c.in[k], off + 4 + j), a, &ra, &rb);
						near(cpu_ld(&c.out[k], off + j), ra, tol_of(FD[d]) * 2);
						near(cpu_ld(&c.out[k], off + 4 + j), rb, tol_of(FD[d]) * 2);
					}
		}
		finish(&c);
	}
	/* refused: cache width differs from D */
	assert_true(setup(&c, "_triton_rope_siso", "5,2,8;5,1,8;4,6", "", "5,2,8;5,1,8", "") < 0);
}

/* ---- split_qkv_rmsnorm_rope_kernel ---- */

static void test_split_qkv(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[64], odt[64];
	const size_t T = 3, HD = 8, QH = 2, KH = 1, W = QH * HD + 2 * KH * HD;
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s", FDT[d], FDT[d]);
		snprintf(odt, sizeof(odt), "%s;%s;%s", FDT[d], FDT[d], FDT[d]);
		assert_int_equal(setup(&c, "split_qkv_rmsnorm_rope_kernel", "3,32;8", dt, "3,16;3,8;3,8", odt), 0);
		go(&c);
		for (size_t i = 0; i < T; i++) {
			for (size_t part = 0; part < 2; part++) {
				size_t heads = part ? KH : QH, base = i * W + (part ? QH * HD : 0);
				for (size_t h = 0; h < heads; h++) {
					double x[8], ss = 0;
					for (size_t j = 0; j < HD; j++) {
						x[j] = cpu_ld(&c.in[0], base + h * HD + j);
						ss += x[j] * x[j];
					}
					double r = 1.0 / sqrt(ss / HD + 1e-6);
					for (size_t j = 0; j < HD; j++)
						x[j] *= r * cpu_ld(&c.in[1], j);
					for (size_t j = 0; j < HD / 2; j++) {
						/* position i, Qwen3's base 1e6 */
						double th = (double)i * pow(1e6, -2.0 * (double)j / (double)HD), ra, rb;
						turn(x[j], x[j + HD / 2], th, &ra, &rb);
						size_t o = (i * heads + h) * HD;
						near(cpu_ld(&c.out[part], o + j), ra, tol_of(FD[d]) * 4);
						near(cpu_ld(&c.out[part], o + j + HD / 2), rb, tol_of(FD[d]) * 4);
					}
				}
			}
			for (size_t j = 0; j < KH * HD; j++)   /* v: copied */
				assert_true(cpu_ld(&c.out[2], i * KH * HD + j) ==
					    cpu_ld(&c.in[0], i * W + (QH + KH) * HD + j));
		}
		finish(&c);
	}
	/* refused: width not q + 2kv; q not a multiple of the head dim */
	assert_true(setup(&c, "split_qkv_rmsnorm_rope_kernel", "3,30;8", "", "3,16;3,8;3,8", "") < 0);
	assert_true(setup(&c, "split_qkv_rmsnorm_rope_kernel", "3,28;8", "", "3,12;3,8;3,8", "") < 0);
}

/* ---- caches: slots distinct and in range, rows written there, the rest unchanged ---- */

static void check_slots(const int64_t *s, size_t n, int64_t nslots)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(s[i] >= 0 && s[i] < nslots);
		for (size_t k = 0; k < i; k++)
			assert_true(s[k] != s[i]);
	}
}

static void *snapshot(const struct perfdb_tensor *t)
{
	void *p = malloc(t->bytes);
	assert_non_null(p);
	memcpy(p, t->data, t->bytes);
	return p;
}

/* Slot of cache row r, or -1: which token (if any) was mapped there. */
static int64_t token_at(const int64_t *s, size_t n, size_t r)
{
	for (size_t i = 0; i < n; i++)
		if ((size_t)s[i] == r)
			return (int64_t)i;
	return -1;
}

static void test_reshape_and_cache(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	const char *dts[] = { "DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_INT32",
			      "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_INT64",
			      "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;DT_INT32",
			      "DT_BF16" /* the grid's rows: the rest fp32, the mapping too */ };
	for (int d = 0; d < 4; d++) {
		/* key (3,2,4), value (3,2,2), caches of 2 blocks of 4 slots */
		assert_int_equal(setup(&c, "ReshapeAndCacheNdKernel", "3,2,4;3,2,2;2,4,2,4;2,4,2,2;3", dts[d],
				       "2,4,2,4;2,4,2,2", d == 3 ? "DT_BF16" : dts[d]), 0);
		void *k0 = snapshot(&c.in[2]), *v0 = snapshot(&c.in[3]);
		go(&c);
		int64_t s[3];
		for (size_t i = 0; i < 3; i++)
			s[i] = cpu_ld_int(&c.in[4], i);
		check_slots(s, 3, 8);
		struct perfdb_tensor was_k = c.in[2], was_v = c.in[3];
		was_k.data = k0;
		was_v.data = v0;
		for (size_t r = 0; r < 8; r++) {
			int64_t t = token_at(s, 3, r);
			/* exact even for the bf16 key into the fp32 cache: every bf16 value is an fp32 value */
			for (size_t j = 0; j < 8; j++)
				assert_true(cpu_ld(&c.in[2], r * 8 + j) ==
					    (t < 0 ? cpu_ld(&was_k, r * 8 + j) : cpu_ld(&c.in[0], (size_t)t * 8 + j)));
			for (size_t j = 0; j < 4; j++)
				assert_true(cpu_ld(&c.in[3], r * 4 + j) ==
					    (t < 0 ? cpu_ld(&was_v, r * 4 + j) : cpu_ld(&c.in[1], (size_t)t * 4 + j)));
		}
		free(k0);
		free(v0);
		finish(&c);
	}
	/* refused: fewer cache slots than tokens; rows that do not match the caches */
	assert_true(setup(&c, "ReshapeAndCacheNdKernel", "9,2,4;9,2,2;1,4,2,4;1,4,2,2;9", "", "1,4,2,4;1,4,2,2", "") < 0);
	assert_true(setup(&c, "ReshapeAndCacheNdKernel", "3,2,4;3,2,2;2,4,2,3;2,4,2,2;3", "", "2,4,2,4;2,4,2,2", "") < 0);
	assert_true(setup(&c, "ReshapeAndCacheNdKernel", "3,7", "DT_BF16", "3,7", "DT_BF16") < 0);
}

static void test_kv_rmsnorm_rope_cache(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[160], odt[80];
	for (int d = 0; d < 4; d++) {
		const char *f = FDT[d < 3 ? d : 1];
		if (d < 3) {
			snprintf(dt, sizeof(dt), "%s;%s;%s;%s;DT_INT64;%s;%s;;;;;", f, f, f, f, f, f);
			snprintf(odt, sizeof(odt), "%s;%s;%s;%s", f, f, f, f);
		} else {   /* the grid's rows: kv bf16, the rest (the index too) fp32 */
			snprintf(dt, sizeof(dt), "DT_BF16");
			snprintf(odt, sizeof(odt), "DT_BF16");
		}
		/* T=3 tokens, Dv=8, Dk=4; caches of 2 blocks of 4 slots */
		assert_int_equal(setup(&c, "KvRmsNormRopeCache",
				       "3,1,1,12;8;3,1,1,4;3,1,1,4;3;2,4,1,4;2,4,1,8;;;;;", dt,
				       "2,4,1,4;2,4,1,8;3,1,1,4;3,1,1,8", odt), 0);
		fill_angles(&c.in[2], &c.in[3], 3, 4);
		void *k0 = snapshot(&c.in[5]), *v0 = snapshot(&c.in[6]);
		go(&c);
		int64_t s[3];
		for (size_t i = 0; i < 3; i++)
			s[i] = cpu_ld_int(&c.in[4], i);
		check_slots(s, 3, 8);
		struct perfdb_tensor was_k = c.in[5], was_v = c.in[6];
		was_k.data = k0;
		was_v.data = v0;
		double tk = tol_of(c.in[5].dtype) * 2 + tol_of(c.in[0].dtype) * 2;
		for (size_t r = 0; r < 8; r++) {
			int64_t t = token_at(s, 3, r);
			if (t < 0) {   /* untouched */
				for (size_t j = 0; j < 4; j++)
					assert_true(cpu_ld(&c.in[5], r * 4 + j) == cpu_ld(&was_k, r * 4 + j));
				for (size_t j = 0; j < 8; j++)
					assert_true(cpu_ld(&c.in[6], r * 8 + j) == cpu_ld(&was_v, r * 8 + j));
				continue;
			}
			size_t i = (size_t)t;
			double ss = 0;
			for (size_t j = 0; j < 8; j++)
				ss += pow(cpu_ld(&c.in[0], i * 12 + j), 2);
			double rstd = 1.0 / sqrt(ss / 8 + 1e-5);
			for (size_t j = 0; j < 8; j++) {
				double want = cpu_ld(&c.in[0], i * 12 + j) * rstd * cpu_ld(&c.in[1], j);
				near(cpu_ld(&c.in[6], r * 8 + j), want, tk * 2);
				assert_true(cpu_ld(&c.out[3], i * 8 + j) == cpu_ld(&c.in[6], r * 8 + j) ||
					    c.out[3].dtype != c.in[6].dtype);
			}
			for (size_t j = 0; j < 2; j++) {
				double th = atan2(cpu_ld(&c.in[3], i * 4 + j), cpu_ld(&c.in[2], i * 4 + j)), ra, rb;
				turn(cpu_ld(&c.in[0], i * 12 + 8 + 2 * j), cpu_ld(&c.in[0], i * 12 + 9 + 2 * j), th, &ra, &rb);
				near(cpu_ld(&c.in[5], r * 4 + j), ra, tk);
				near(cpu_ld(&c.in[5], r * 4 + j + 2), rb, tk);
				near(cpu_ld(&c.out[2], i * 4 + j), ra, tk);
				near(cpu_ld(&c.out[2], i * 4 + j + 2), rb, tk);
			}
		}
		free(k0);
		free(v0);
		finish(&c);
	}
	/* refused: a quant scale present; kv width not Dv + Dk; caches too small */
	assert_true(setup(&c, "KvRmsNormRopeCache", "3,1,1,12;8;3,1,1,4;3,1,1,4;3;2,4,1,4;2,4,1,8;1;;;;",
			  "", "2,4,1,4;2,4,1,8", "") < 0);
	assert_true(setup(&c, "KvRmsNormRopeCache", "3,1,1,13;8;3,1,1,4;3,1,1,4;3;2,4,1,4;2,4,1,8", "",
			  "2,4,1,4;2,4,1,8", "") < 0);
	assert_true(setup(&c, "KvRmsNormRopeCache", "9,1,1,12;8;9,1,1,4;9,1,1,4;9;2,4,1,4;1,4,1,8", "",
			  "2,4,1,4;1,4,1,8", "") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleave_rope),
		cmocka_unit_test(test_triton_rope),
		cmocka_unit_test(test_split_qkv),
		cmocka_unit_test(test_reshape_and_cache),
		cmocka_unit_test(test_kv_rmsnorm_rope_cache),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
