/*
 * Unit tests: perfdb predict's lookups (src/predict/db_lookup.c), with the
 * rules of docs/predict.md "Lookup" and figures worked out by hand: the
 * exact row and the consumer's latency-column order, linear interpolation
 * along the token axis (dim 0 of input 0, wherever the same count recurs),
 * no extrapolation, and --measured-only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "predict/predict_internal.h"

#define HDR "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types," \
	    "Average Duration(us),Profiling Average Duration(us)\n"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/perfdb-test-lookup-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char p[128];
	snprintf(p, sizeof(p), "%s/aten.add.csv", dir);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	/* token axis: 8 -> 10 us, 32 -> 40 us, 64 -> 100 us (profiled only);
	 * an FLOAT row at 16 that must not answer a BF16 query */
	fputs(HDR
	      "\"\"\"8,64;8,64\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"8,64\"\"\",DT_BF16,10,12\n"
	      "\"\"\"32,64;32,64\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"32,64\"\"\",DT_BF16,40,\n"
	      "\"\"\"64,64;64,64\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"64,64\"\"\",DT_BF16,,100\n"
	      "\"\"\"16,64;16,64\"\"\",FLOAT;FLOAT,ND;ND,\"\"\"16,64\"\"\",FLOAT,7,\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Ask aten.add with the given cells. */
static void ask(int measured_only, const char *ins, const char *ind, const char *outs,
		const char *outd, struct pred_answer *a)
{
	struct pred_db *db;
	struct perfdb_err err;
	assert_int_equal(pred_db_open(&db, dir, measured_only, &err), 0);
	const char *inf = strchr(ind, ';') ? "ND;ND" : "ND";
	const char *f[PK_N] = { "aten.add", ins, ind, inf, outs, outd };
	size_t len[PK_N];
	for (int i = 0; i < PK_N; i++)
		len[i] = strlen(f[i]);
	assert_int_equal(pred_db_lookup(db, f, len, NULL, a, &err), 0);
	pred_db_close(db);
}

static void test_exact_prefers_average(void **state)
{
	(void)state;
	struct pred_answer a;
	ask(0, "\"8,64;8,64\"", "DT_BF16;DT_BF16", "\"8,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_HIT);
	assert_true(a.us == 10.0);   /* Average before Profiling Average (12) */
	assert_int_equal(a.column, 0);
	/* the dtype spellings normalise: BF16 is DT_BF16 */
	ask(0, "\"8,64;8,64\"", "BF16;BF16", "\"8,64\"", "BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_HIT);
}

static void test_exact_falls_back_to_profiling(void **state)
{
	(void)state;
	struct pred_answer a;
	ask(0, "\"64,64;64,64\"", "DT_BF16;DT_BF16", "\"64,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_HIT);
	assert_true(a.us == 100.0);
	assert_int_equal(a.column, 1);
}

static void test_interpolates_between_neighbours(void **state)
{
	(void)state;
	struct pred_answer a;
	/* 16 tokens between 8 (10) and 32 (40): 10 + 8/24 * 30 = 20 */
	ask(0, "\"16,64;16,64\"", "DT_BF16;DT_BF16", "\"16,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_INTERPOLATED);
	assert_true(a.us > 19.999999 && a.us < 20.000001);
	/* 48 between 32 (40) and 64 (100, profiled): 70; Profiling answered a part */
	ask(0, "\"48,64;48,64\"", "DT_BF16;DT_BF16", "\"48,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_INTERPOLATED);
	assert_true(a.us > 69.999999 && a.us < 70.000001);
	assert_int_equal(a.column, 1);
}

static void test_measured_only(void **state)
{
	(void)state;
	struct pred_answer a;
	/* 64 has no Average: not a row any more, and 48 lies above the last (32) */
	ask(1, "\"64,64;64,64\"", "DT_BF16;DT_BF16", "\"64,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	assert_non_null(strstr(a.detail, "not replayed"));
	ask(1, "\"48,64;48,64\"", "DT_BF16;DT_BF16", "\"48,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	assert_non_null(strstr(a.detail, "no extrapolation"));
}

static void test_misses(void **state)
{
	(void)state;
	struct pred_answer a;
	/* below the smallest row: never extrapolated */
	ask(0, "\"4,64;4,64\"", "DT_BF16;DT_BF16", "\"4,64\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	assert_non_null(strstr(a.detail, "no extrapolation"));
	/* another hidden size is not on the axis */
	ask(0, "\"16,128;16,128\"", "DT_BF16;DT_BF16", "\"16,128\"", "DT_BF16", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	assert_non_null(strstr(a.detail, "differs only in the token axis"));
	/* the FLOAT row at 16 answers FLOAT only; a FLOAT 24 has no neighbours */
	ask(0, "\"16,64;16,64\"", "FLOAT;FLOAT", "\"16,64\"", "FLOAT", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_HIT);
	assert_true(a.us == 7.0);
	ask(0, "\"24,64;24,64\"", "FLOAT;FLOAT", "\"24,64\"", "FLOAT", &a);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	/* no table */
	struct pred_db *db;
	struct perfdb_err err;
	assert_int_equal(pred_db_open(&db, dir, 0, &err), 0);
	const char *f[PK_N] = { "aten.pow", "\"8\"", "FLOAT", "ND", "", "" };
	size_t len[PK_N];
	for (int i = 0; i < PK_N; i++)
		len[i] = strlen(f[i]);
	assert_int_equal(pred_db_lookup(db, f, len, NULL, &a, &err), 0);
	assert_int_equal(a.how, PERFDB_PREDICT_MISSING);
	assert_string_equal(a.detail, "no table aten.pow.csv");
	size_t found, absent;
	pred_db_counts(db, &found, &absent);
	assert_int_equal(found, 0);
	assert_int_equal(absent, 1);
	pred_db_close(db);
}

static void test_zero_cost(void **state)
{
	(void)state;
	assert_true(pred_zero_cost("aten.view", 9));
	assert_true(pred_zero_cost("aten.to", 7));
	assert_false(pred_zero_cost("aten.clone", 10));
	assert_false(pred_zero_cost("aten.viewx", 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_prefers_average),
		cmocka_unit_test(test_exact_falls_back_to_profiling),
		cmocka_unit_test(test_interpolates_between_neighbours),
		cmocka_unit_test(test_measured_only),
		cmocka_unit_test(test_misses),
		cmocka_unit_test(test_zero_cost),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
