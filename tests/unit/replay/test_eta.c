/*
 * Unit tests: the ETA from the rows to come (src/replay/eta.c, docs/replay.md
 * "Progress").  Hand-worked figures: a 1024^3 GEMM is 2*1024^3 = 2.147e9
 * FLOP; at 1e11 FLOP/s one call is 21.47 ms, and its warm-up (2 calls) and
 * 3 samples 5 calls = 107.4 ms.  The 16384x5120 . 25600x5120 GEMM is
 * 4.295e12 FLOP: 42.9 s a call, 214.7 s for 5 calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "replay/engine_internal.h"

static const char *csv =
	"OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
	"Output Formats,Profiling Average Duration(us)\n"
	"dynamic,AI_CORE,\"\"\"1024,1024;1024,1024\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"1024,1024\"\"\",DT_BF16,ND,\n"
	"dynamic,AI_CORE,\"\"\"16384,5120;25600,5120\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"16384,25600\"\"\",DT_BF16,ND,\n"
	"dynamic,AI_CORE,\"\"\"1024,1024;1024,1024\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"1024,1024\"\"\",DT_BF16,ND,7.5\n";

static void test_eta_rows_to_come(void **state)
{
	(void)state;
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load_mem(&t, "MatMulV2.csv", csv, strlen(csv), &err), 0);
	const char *names[] = { "MatMulV2" };
	struct perfdb_engine_opts o = { .repeat = 3, .timeout_s = 300, .missing_only = 1 };
	struct engine_eta e;
	assert_int_equal(eta_init(&e, &o, &t, names, 1), 0);
	assert_int_equal(e.n, 3);
	double rates[3] = { 0, 1e11, 1e12 };
	/* nothing replayed yet: no estimate */
	assert_true(eta_estimate(&e, &o, rates, 0, 1) < 0);
	eta_row_done(&e, 0.05);   /* rows so far took 50 ms on average */
	/* from row 0: 107.4 ms + 214.7 s; row 2 has a duration and missing-only skips it */
	double all = 5 * 2.0 * 1024 * 1024 * 1024 / 1e11 + 5 * 2.0 * 16384 * 5120 * 25600 / 1e11;
	assert_true(fabs(eta_estimate(&e, &o, rates, 0, 1) - all) < 1e-6 * all);
	/* over --row-timeout the big row will be refused: only the small one counts */
	o.timeout_s = 60;
	assert_true(fabs(eta_estimate(&e, &o, rates, 0, 1) - 5 * 2.0 * 1024 * 1024 * 1024 / 1e11) < 1e-9);
	/* a row of a unit without a rate costs the run's average row */
	double none[3] = { 0, 0, 0 };
	assert_true(fabs(eta_estimate(&e, &o, none, 0, 1) - 2 * 0.05) < 1e-12);
	/* two ranks split the rows */
	assert_true(fabs(eta_estimate(&e, &o, none, 0, 2) - 0.05) < 1e-12);
	/* from the last row on: nothing left to run */
	assert_true(eta_estimate(&e, &o, rates, 2, 1) == 0);
	eta_release(&e);
	perfdb_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_eta_rows_to_come) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
