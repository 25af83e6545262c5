/*
 * CPU backend's remaining simple ops (docs/ops.md "Other element-wise and
 * conversion ops") against plain references on small shapes: Cast and
 * CastAiCore (values chosen by hand for the integer cases), Fill, Mul, the
 * broadcast forms of Add, Sub, Mul and RealDiv,
 * LayerNormV3 (double-precision reference), SliceAiCore and
 * ScatterNdUpdateAiCore (the Slice and ScatterNdUpdate results).
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
	return cpu_case_setup(c, op, ins, idt, outs, odt, 11);
}

/* prepare, run once, release */
static void go(struct perfdb_op_case *c)
{
	cpu_case_run(c, 1);
	finish(c);
}

/* ---- Cast ---- */

static void test_cast_float(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++) {
			assert_int_equal(setup(&c, a % 2 ? "CastAiCore" : "Cast", "3,5", FDT[a], "3,5", FDT[b]), 0);
			go(&c);
			for (size_t i = 0; i < 15; i++)
				near(cpu_ld(&c.out[0], i), cpu_ld(&c.in[0], i), tol_of(FD[b]));
		}
	/* bf16 -> fp32 is exact; fp32 -> bf16 rounds to nearest even (hand-derived bit patterns) */
	assert_int_equal(setup(&c, "Cast", "3", "DT_FLOAT", "3", "DT_BF16"), 0);
	float *x = c.in[0].data;
	x[0] = 1.0f + 0x1p-8f;          /* halfway: even 0x3f80 */
	x[1] = 1.0f + 0x1p-8f + 0x1p-9f; /* above halfway: 0x3f81 */
	x[2] = -2.0f;
	go(&c);
	const uint16_t *h = c.out[0].data;
	assert_int_equal(h[0], 0x3f80);
	assert_int_equal(h[1], 0x3f81);
	assert_int_equal(h[2], 0xc000);
	assert_true(setup(&c, "Cast", "3,5", "DT_FLOAT", "3,4", "DT_BF16") < 0);
}

static void test_cast_int(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* float -> int: truncation toward zero, saturated */
	assert_int_equal(setup(&c, "Cast", "5", "DT_FLOAT", "5", "DT_INT8"), 0);
	float *x = c.in[0].data;
	x[0] = 2.7f;
	x[1] = -3.9f;
	x[2] = 300.5f;
	x[3] = -1000.0f;
	x[4] = 0.25f;
	go(&c);
	const int8_t *o8 = c.out[0].data;
	assert_int_equal(o8[0], 2);
	assert_int_equal(o8[1], -3);
	assert_int_equal(o8[2], 127);
	assert_int_equal(o8[3], -128);
	assert_int_equal(o8[4], 0);
	/* int32 -> bf16 and int64 -> fp32: the integers, exactly (small values) */
	assert_int_equal(setup(&c, "CastAiCore", "4", "DT_INT32", "4", "DT_BF16"), 0);
	int32_t *i32 = c.in[0].data;
	i32[0] = -7;
	i32[1] = 0;
	i32[2] = 100;
	i32[3] = 256;
	go(&c);
	assert_true(cpu_ld(&c.out[0], 0) == -7.0f && cpu_ld(&c.out[0], 1) == 0.0f);
	assert_true(cpu_ld(&c.out[0], 2) == 100.0f && cpu_ld(&c.out[0], 3) == 256.0f);
	assert_int_equal(setup(&c, "Cast", "2", "DT_INT64", "2", "DT_FLOAT"), 0);
	int64_t *i64 = c.in[0].data;
	i64[0] = 123456;
	i64[1] = -5;
	go(&c);
	assert_true(cpu_ld(&c.out[0], 0) == 123456.0f && cpu_ld(&c.out[0], 1) == -5.0f);
	/* int64 -> int32 and bf16 -> bool */
	assert_int_equal(setup(&c, "Cast", "2", "DT_INT64", "2", "DT_INT32"), 0);
	i64 = c.in[0].data;
	i64[0] = 77;
	i64[1] = -77;
	go(&c);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 77);
	assert_int_equal(((int32_t *)c.out[0].data)[1], -77);
	assert_int_equal(setup(&c, "Cast", "3", "DT_BF16", "3", "DT_BOOL"), 0);
	uint16_t *hb = c.in[0].data;
	hb[0] = 0x0000;
	hb[1] = 0x3f80;
	hb[2] = 0x8000;   /* -0.0 is false */
	go(&c);
	const uint8_t *ob = c.out[0].data;
	assert_true(ob[0] == 0 && ob[1] == 1 && ob[2] == 0);
	/* same dtype: a copy */
	assert_int_equal(setup(&c, "Cast", "3,7", "DT_BF16", "3,7", "DT_BF16"), 0);
	go(&c);
	assert_memory_equal(c.out[0].data, c.in[0].data, c.in[0].bytes);
}

/* ---- Fill ---- */

static void test_fill(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* value from a one-element input */
	assert_int_equal(setup(&c, "Fill", "2;1", "DT_INT64;DT_FLOAT", "3,5", "DT_BF16"), 0);
	*(float *)c.in[1].data = 2.5f;
	go(&c);
	for (size_t i = 0; i < 15; i++)
		assert_true(cpu_ld(&c.out[0], i) == 2.5f);
	assert_int_equal(setup(&c, "Fill", "2;1", "DT_INT64;DT_FLOAT", "4,3", "DT_INT32"), 0);
	*(float *)c.in[1].data = 7.0f;
	go(&c);
	for (size_t i = 0; i < 12; i++)
		assert_int_equal(((int32_t *)c.out[0].data)[i], 7);
	/* no value recorded: 0 (the grid's rows: one (t, D) slot) */
	for (int d = 0; d < 3; d++) {
		assert_int_equal(setup(&c, "Fill", "3,7", FDT[d], "3,7", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 21; i++)
			assert_true(cpu_ld(&c.out[0], i) == 0.0f);
	}
}

/* ---- Mul ---- */

static void test_mul(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[40];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s", FDT[d], FDT[d]);
		assert_int_equal(setup(&c, "Mul", "4,6;4,6", dt, "4,6", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 24; i++)
			near(cpu_ld(&c.out[0], i), (double)cpu_ld(&c.in[0], i) * cpu_ld(&c.in[1], i), tol_of(FD[d]));
		/* broadcast over the leading dim */
		assert_int_equal(setup(&c, "Mul", "4,6;1,6", dt, "4,6", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 24; i++)
			near(cpu_ld(&c.out[0], i), (double)cpu_ld(&c.in[0], i) * cpu_ld(&c.in[1], i % 6), tol_of(FD[d]));
		/* numpy broadcasts over a non-trailing dim, worked by hand: a (4,1) column, b[i / 6];
		 * (2,1,4) into (2,3,4), b[(i / 12) * 4 + i % 4]; Add the same */
		assert_int_equal(setup(&c, "Mul", "4,6;4,1", dt, "4,6", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 24; i++)
			near(cpu_ld(&c.out[0], i), (double)cpu_ld(&c.in[0], i) * cpu_ld(&c.in[1], i / 6), tol_of(FD[d]));
		assert_int_equal(setup(&c, "Mul", "2,3,4;2,1,4", dt, "2,3,4", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 24; i++)
			near(cpu_ld(&c.out[0], i), (double)cpu_ld(&c.in[0], i) * cpu_ld(&c.in[1], (i / 12) * 4 + i % 4),
			     tol_of(FD[d]));
		assert_int_equal(setup(&c, "Add", "4,6;4,1", dt, "4,6", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 24; i++)
			near(cpu_ld(&c.out[0], i), (double)cpu_ld(&c.in[0], i) + cpu_ld(&c.in[1], i / 6), tol_of(FD[d]));
		/* no second operand: times 1 */
		assert_int_equal(setup(&c, "Mul", "3,7", FDT[d], "3,7", FDT[d]), 0);
		go(&c);
		for (size_t i = 0; i < 21; i++)
			assert_true(cpu_ld(&c.out[0], i) == cpu_ld(&c.in[0], i));
	}
	assert_true(setup(&c, "Mul", "4,6;4,5", "", "4,6", "") < 0);
	assert_true(setup(&c, "Mul", "4,6;4,6", "DT_INT32;DT_INT32", "4,6", "DT_INT32") < 0);
}

/*
 * ---- Add, Sub, Mul, RealDiv on kern_binary.c ----
 * Every broadcast form against the index arithmetic of numpy's rule, on
 * shapes whose runs cross the 1024-element blocks and end inside them, on 1
 * and 2 threads: the bias row (3,1100)+(1100), the per-row scale
 * (3,1100)*(3,1), the mask (1,4,40,40)+(1,1,40,40), (2,5,700)+(5,700), a
 * middle dim (6,2,600)+(6,1,600), and a divisor without dims.
 */
static size_t bc_at(const int64_t *bd, size_t nb, const int64_t *od, size_t no, size_t i)
{
	size_t off = 0, stride = 1;
	for (size_t k = 0; k < nb && k < no; k++) {
		size_t b = (size_t)bd[nb - 1 - k], o = (size_t)od[no - 1 - k], coord = i % o;
		i /= o;
		if (b != 1)
			off += coord * stride;
		stride *= b;
	}
	return off;
}

static void test_binary_bcast(void **state)
{
	(void)state;
	static const struct { const char *ins, *outs; } shapes[] = {
		{ "3,1100;1100", "3,1100" }, { "3,1100;3,1", "3,1100" },
		{ "1,4,40,40;1,1,40,40", "1,4,40,40" }, { "2,5,700;5,700", "2,5,700" },
		{ "6,2,600;6,1,600", "6,2,600" }, { "3,1100;3,1100", "3,1100" },
	};
	static const char *const ops[] = { "Add", "Sub", "Mul", "RealDiv" };
	struct perfdb_op_case c;
	char dt[40];
	for (int d = 0; d < 3; d++)
		for (size_t o = 0; o < 4; o++)
			for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++)
				for (int th = 1; th <= 2; th++) {
					snprintf(dt, sizeof(dt), "%s;%s", FDT[d], FDT[d]);
					assert_int_equal(setup(&c, ops[o], shapes[s].ins, dt, shapes[s].outs,
							       FDT[d]), 0);
					c.threads = th;
					go(&c);
					const struct perfdb_tensor *a = &c.in[0], *b = &c.in[1];
					for (size_t i = 0; i < (size_t)c.out[0].numel; i++) {
						double x = cpu_ld(a, i);
						double y = cpu_ld(b, bc_at(b->dims, b->ndims, c.out[0].dims,
									   c.out[0].ndims, i));
						double want = o == 0 ? x + y : o == 1 ? x - y : o == 2 ? x * y : x / y;
						/* the quotient's error grows with it: relative */
						double tol = tol_of(FD[d]) * (o == 3 ? fmax(1.0, fabs(want)) : 1.0);
						near(cpu_ld(&c.out[0], i), (float)want, tol);
					}
				}
	/* a divisor without dims (aten::div by a Python float records a bare double):
	 * no tensor, so in0 / 1, at the same memory traffic */
	assert_int_equal(setup(&c, "RealDiv", "8,16,1,65;", "DT_FLOAT;DT_DOUBLE", "8,16,1,65", "DT_FLOAT"), 0);
	assert_false(c.nin > 1 && c.in[1].present);
	go(&c);
	for (size_t i = 0; i < (size_t)c.out[0].numel; i++)
		assert_true(cpu_ld(&c.out[0], i) == cpu_ld(&c.in[0], i));
	assert_true(setup(&c, "Sub", "4,6;4,5", "", "4,6", "") < 0);
}

/* ---- Pow (as x^2), Rsqrt, ReduceSum, ReduceMean ---- */

static void test_unary_reduce(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	for (int d = 0; d < 3; d++)
		for (int th = 1; th <= 2; th++) {
			assert_int_equal(setup(&c, "Pow", "3,1100", FDT[d], "3,1100", FDT[d]), 0);
			c.threads = th;
			go(&c);
			for (size_t i = 0; i < 3300; i++) {
				double x = cpu_ld(&c.in[0], i);
				near(cpu_ld(&c.out[0], i), x * x, tol_of(FD[d]) * fmax(1.0, x * x));
			}
			/* 1/sqrt of the absolute values, set before the run */
			assert_int_equal(setup(&c, "Rsqrt", "3,1100", FDT[d], "3,1100", FDT[d]), 0);
			c.threads = th;
			for (size_t i = 0; i < 3300; i++) {
				float v = 0.25f + (float)(i % 17);
				cpu_store_row(&c.in[0], i, 1, &v);
			}
			go(&c);
			for (size_t i = 0; i < 3300; i++)
				near(cpu_ld(&c.out[0], i), 1.0 / sqrt(cpu_ld(&c.in[0], i)), tol_of(FD[d]));
			/* rows of 2500 (across the 1024 blocks): sum and mean by hand in double */
			for (int mean = 0; mean < 2; mean++) {
				assert_int_equal(setup(&c, mean ? "ReduceMean" : "ReduceSum", "3,2500", FDT[d],
						       "3,1", FDT[d]), 0);
				c.threads = th;
				go(&c);
				for (size_t r = 0; r < 3; r++) {
					double sum = 0;
					for (size_t j = 0; j < 2500; j++)
						sum += cpu_ld(&c.in[0], r * 2500 + j);
					double want = mean ? sum / 2500 : sum;
					near(cpu_ld(&c.out[0], r), want, tol_of(FD[d]) * (mean ? 1.0 : 50.0));
				}
			}
		}
	assert_true(setup(&c, "ReduceSum", "3,2500", "DT_FLOAT", "3,2", "DT_FLOAT") < 0);
}

/* ---- LayerNormV3 ---- */

static void check_ln(const struct perfdb_op_case *c, size_t rows, size_t h, int beta, double tol)
{
	for (size_t r = 0; r < rows; r++) {
		double m = 0, v = 0;
		for (size_t j = 0; j < h; j++)
			m += cpu_ld(&c->in[0], r * h + j);
		m /= (double)h;
		for (size_t j = 0; j < h; j++)
			v += pow(cpu_ld(&c->in[0], r * h + j) - m, 2);
		double rstd = 1.0 / sqrt(v / (double)h + 1e-5);
		for (size_t j = 0; j < h; j++) {
			double want = (cpu_ld(&c->in[0], r * h + j) - m) * rstd * cpu_ld(&c->in[1], j) +
				      (beta ? cpu_ld(&c->in[2], j) : 0.0);
			near(cpu_ld(&c->out[0], r * h + j), want, tol);
		}
		if (c->nout > 2) {
			near(cpu_ld(&c->out[1], r), m, 1e-5);
			near(cpu_ld(&c->out[2], r), rstd, 1e-4);
		}
	}
}

/* Silu and Gelu (the targets of aten.silu/aten.gelu) against their double-precision formulas, past one block. */
static void test_activations(void **state)
{
	(void)state;
	for (size_t d = 0; d < 3; d++)
		for (int gelu = 0; gelu < 2; gelu++) {
			struct perfdb_op_case c;
			assert_int_equal(cpu_case_setup(&c, gelu ? "Gelu" : "Silu", "3,1100", FDT[d], "3,1100", FDT[d], 5), 0);
			cpu_case_run(&c, 2);
			for (size_t i = 0; i < 3300; i++) {
				double x = cpu_ld(&c.in[0], i);
				double want = gelu ? 0.5 * x * (1.0 + erf(x / sqrt(2.0))) : x / (1.0 + exp(-x));
				near(cpu_ld(&c.out[0], i), want, tol_of(FD[d]) + 1e-5);
			}
			finish(&c);
		}
	struct perfdb_op_case c;
	assert_int_equal(cpu_case_setup(&c, "Silu", "8", "INT32", "8", "INT32", 5), -PERFDB_EINVAL);
}

static void test_layer_norm(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	char dt[60];
	for (int d = 0; d < 3; d++) {
		snprintf(dt, sizeof(dt), "%s;%s;%s", FDT[d], FDT[d], FDT[d]);
		assert_int_equal(setup(&c, "LayerNormV3", "3,40;40;40", dt, "3,40;3,1;3,1",
				       d ? "DT_BF16;DT_FLOAT;DT_FLOAT" : "DT_FLOAT;DT_FLOAT;DT_FLOAT"), 0);
		go(&c);
		check_ln(&c, 3, 40, 1, tol_of(FD[d]) * 4 + (d ? tol_of(PERFDB_DTYPE_BF16) * 2 : 0));
		/* normalised over the last two dims, no beta */
		assert_int_equal(setup(&c, "LayerNormV3", "3,2,5;2,5", dt, "3,2,5", FDT[d]), 0);
		go(&c);
		check_ln(&c, 3, 10, 0, tol_of(FD[d]) * 4);
	}
	assert_true(setup(&c, "LayerNormV3", "3,40;39;39", "", "3,40", "") < 0);
	assert_true(setup(&c, "LayerNormV3", "3,40;40;20", "", "3,40", "") < 0);
}

/* ---- the AiCore twins ---- */

static void test_aicore_twins(void **state)
{
	(void)state;
	struct perfdb_op_case c;
	/* SliceAiCore: the leading (2,3) block of a (4,5) */
	assert_int_equal(setup(&c, "SliceAiCore", "4,5;2;2;2;2", "DT_BF16;DT_INT64;DT_INT64;DT_INT64;DT_INT64", "2,3",
			       "DT_BF16"), 0);
	go(&c);
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < 3; j++)
			assert_true(cpu_ld(&c.out[0], i * 3 + j) == cpu_ld(&c.in[0], i * 5 + j));
	assert_true(setup(&c, "SliceAiCore", "4,5", "DT_BF16", "5,3", "DT_BF16") < 0);
	/* ScatterNdUpdateAiCore: var (8,2), indices (3,1) spread over [0, 8), updates (3,2) */
	assert_int_equal(setup(&c, "ScatterNdUpdateAiCore", "8,2;3,1;3,2", "DT_FLOAT;DT_INT32;DT_FLOAT", "8,2",
			       "DT_FLOAT"), 0);
	go(&c);
	const int32_t *si = c.in[1].data;
	for (size_t i = 0; i < 3; i++) {
		assert_true(si[i] >= 0 && si[i] < 8);
		int later = 0;
		for (size_t k = i + 1; k < 3; k++)
			later |= si[k] == si[i];
		for (size_t j = 0; j < 2 && !later; j++)
			assert_true(cpu_ld(&c.in[0], (size_t)si[i] * 2 + j) == cpu_ld(&c.in[2], i * 2 + j));
	}
	assert_true(setup(&c, "ScatterNdUpdateAiCore", "8,2;3,2;3,2", "DT_FLOAT;DT_INT32;DT_FLOAT", "8,2",
			  "DT_FLOAT") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cast_float),
		cmocka_unit_test(test_cast_int),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_mul),
		cmocka_unit_test(test_binary_bcast),
		cmocka_unit_test(test_unary_reduce),
		cmocka_unit_test(test_activations),
		cmocka_unit_test(test_layer_norm),
		cmocka_unit_test(test_aicore_twins),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	perfdb_engine_pool_release(&pool);
	return rc;
}
