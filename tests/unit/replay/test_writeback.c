/*
 * Unit tests: writeback and report helpers (docs/spec/replay.md §2, §3, §5
 * "update" and "md_table" scenarios; Decision 2 columns).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/md_table.h"
#include "replay/replay.h"
#include "perfdb/table.h"

static char db[64];

static int setup(void **state)
{
	(void)state;
	strcpy(db, "/tmp/perfdb-test-wb-XXXXXX");
	return mkdtemp(db) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", db);
	return system(cmd);
}

static void put(const char *name, const char *text)
{
	char p[256];
	struct perfdb_err err;
	snprintf(p, sizeof(p), "%s/%s", db, name);
	assert_int_equal(perfdb_file_write_atomic(p, text, strlen(text), &err), 0);
}

static void load(const char *name, struct perfdb_table *t)
{
	char p[256];
	struct perfdb_err err;
	snprintf(p, sizeof(p), "%s/%s", db, name);
	perfdb_table_init(t);
	if (perfdb_table_load(t, p, &err) != 0)
		fail_msg("%s", err.msg);
}

static void measure(struct perfdb_measure *m, const char *op, const char *ins, const char *outs,
		    double v, const char *ep)
{
	memset(m, 0, sizeof(*m));
	m->op = strdup(op);
	const char *base[8] = { "dynamic", "AI_CORE", ins, "DT_BF16;DT_BF16", "ND;ND", outs, "DT_BF16", "ND" };
	for (int i = 0; i < 8; i++)
		m->base[i] = strdup(base[i]);
	m->ep_size = ep ? strdup(ep) : NULL;
	m->samples = 1;
	m->mean = m->min = m->median = v;
}

static void test_validity(void **state)
{
	(void)state;
	/* §2: valid when float > 0; empty, N/A and junk count as 0 */
	assert_true(perfdb_wb_valid("5.0"));
	assert_false(perfdb_wb_valid(""));
	assert_false(perfdb_wb_valid("N/A"));
	assert_false(perfdb_wb_valid("0"));
	assert_false(perfdb_wb_valid("-1"));
	assert_false(perfdb_wb_valid("junk"));
}

static void test_md_table(void **state)
{
	(void)state;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	static const char *const h[2] = { "A", "Bee" };
	/* §5 md_table: empty -> _None_ */
	assert_int_equal(perfdb_md_table(&sb, h, 2, NULL, 0), 0);
	assert_string_equal(sb.buf, "_None_");
	perfdb_strbuf_reset(&sb);
	char *r0[2] = { "xyz", "1" };
	char **rows[1] = { r0 };
	assert_int_equal(perfdb_md_table(&sb, h, 2, rows, 1), 0);
	assert_string_equal(sb.buf, "| A   | Bee |\n| --- | --- |\n| xyz | 1   |");
	perfdb_strbuf_release(&sb);
}

/* §5 get_cols: new file columns (62 of the reference + 4 of Decision 2) */
static void test_new_table_columns(void **state)
{
	(void)state;
	struct perfdb_measures m = { calloc(1, sizeof(struct perfdb_measure)), 1, 1 };
	measure(&m.v[0], "Add", "4,8;4,8", "4,8", 2.5, NULL);
	struct perfdb_wb_opts o = { .dbdir = db, .lock_timeout = 1 };
	struct perfdb_wb_result r;
	struct perfdb_err err;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), 0);
	assert_int_equal(r.nfiles, 1);
	assert_int_equal(r.files[0].added, 1);
	struct perfdb_table t;
	load("Add.csv", &t);
	assert_int_equal(t.ncols, 62 + 4);
	assert_string_equal(t.cols[8], "Average Duration(us)");
	assert_string_equal(t.cols[9], "MicroBench Min Duration(us)");
	assert_string_equal(t.cols[12], "MicroBench Samples");
	assert_string_equal(t.cols[13], "Profiling Average Duration(us)");
	assert_string_equal(t.cols[16], "MicroBench aicore_time(us)");
	assert_string_equal(t.cols[17], "Profiling Average aicore_time(us)");
	assert_string_equal(perfdb_table_get(&t, 0, 8), "2.500000");
	perfdb_table_release(&t);
	perfdb_wb_result_release(&r);
	perfdb_measures_release(&m);
}

/* §5 get_cols on an existing table: Task/Kernel dropped, legacy renamed, MB before Profiling */
static void test_header_migration(void **state)
{
	(void)state;
	put("RmsNorm.csv",
	    "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
	    "Output Data Types,Output Formats,MicroBench Duration(us),MicroBench Task Duration(us),"
	    "MicroBench Kernel Duration(us),Profiling Average aiv_time(us)\r\n"
	    "dynamic,AI_CORE,\"4,8;4,8\",DT_BF16;DT_BF16,ND;ND,\"4,8\",DT_BF16,ND,12.34,1,2,0.5\r\n");
	struct perfdb_measures m = { calloc(1, sizeof(struct perfdb_measure)), 1, 1 };
	measure(&m.v[0], "RmsNorm", "9;9", "9", 1.0, NULL);
	struct perfdb_wb_opts o = { .dbdir = db, .lock_timeout = 1, .missing_only = 1 };
	struct perfdb_wb_result r;
	struct perfdb_err err;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), 0);
	/* missing-only: the new key is missing, not appended, so rows are
	 * unchanged and the header-only migration is not saved (§2 "Write") */
	assert_int_equal(r.files[0].nmissing, 1);
	assert_int_equal(r.files[0].added, 0);
	assert_int_equal(r.files[0].written, 0);
	perfdb_wb_result_release(&r);
	/* mode all appends, so the migrated table is written */
	o.missing_only = 0;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), 0);
	assert_int_equal(r.files[0].written, 1);
	struct perfdb_table t;
	load("RmsNorm.csv", &t);
	assert_int_equal(perfdb_table_col(&t, "MicroBench Task Duration(us)"), -1);
	assert_int_equal(perfdb_table_col(&t, "MicroBench Kernel Duration(us)"), -1);
	assert_int_equal(perfdb_table_col(&t, "MicroBench Duration(us)"), -1);
	long mb = perfdb_table_col(&t, "Average Duration(us)");
	assert_int_equal(mb, 8);
	assert_string_equal(perfdb_table_get(&t, 0, mb), "12.34");   /* legacy value survives */
	assert_int_equal(perfdb_table_col(&t, "MicroBench aiv_time(us)") + 1,
			 perfdb_table_col(&t, "Profiling Average aiv_time(us)"));
	perfdb_table_release(&t);
	perfdb_wb_result_release(&r);
	perfdb_measures_release(&m);
}

/* §5 update: MatMulV2 <- MatMulCommon 9.5, no add, no missing; legacy DFC via incoming 32 */
static void test_aliases_and_dfc(void **state)
{
	(void)state;
	put("MatMulV2.csv", "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
			    "Average Duration(us),Profiling Average Duration(us)\r\n"
			    "\"4,8;16,8\",DT_BF16;DT_BF16,ND;ND,\"4,16\",DT_BF16,,\r\n");
	put("DispatchFFNCombine.csv", "Input Shapes,Input Data Types,Input Formats,Output Shapes,"
				      "Output Data Types,Average Duration(us)\r\n"
				      "\"16,7168\",DT_BF16;DT_BF16,ND;ND,\"16,7168\",DT_BF16,\r\n");
	struct perfdb_measures m = { calloc(3, sizeof(struct perfdb_measure)), 3, 3 };
	measure(&m.v[0], "MatMulCommon", "4,8;8,16", "4,16", 9.5, NULL);   /* B given K,N */
	measure(&m.v[1], "MatMulV3", "2,2;2,2", "2,2", 1.0, NULL);          /* matches nothing */
	measure(&m.v[2], "DispatchFFNCombine", "16,7168", "16,7168", 40.0, "32");
	struct perfdb_wb_opts o = { .dbdir = db, .lock_timeout = 1 };
	struct perfdb_wb_result r;
	struct perfdb_err err;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), 0);
	assert_int_equal(r.nfiles, 2);   /* sorted: DispatchFFNCombine, MatMulV2 */
	assert_string_equal(r.files[1].stem, "MatMulV2");
	assert_int_equal(r.files[1].updated, 1);
	assert_int_equal(r.files[1].added, 0);
	assert_int_equal(r.files[1].nmissing, 0);
	assert_int_equal(r.files[0].updated, 1);
	assert_int_equal(r.nwarnings, 2);   /* legacy EP Size fill, V3 match-only miss */
	struct perfdb_table t;
	load("MatMulV2.csv", &t);
	assert_int_equal(t.nrows, 1);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Average Duration(us)")), "9.500000");
	perfdb_table_release(&t);
	load("DispatchFFNCombine.csv", &t);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "EP Size")), "32");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Average Duration(us)")), "40.000000");
	perfdb_table_release(&t);
	perfdb_wb_result_release(&r);
	perfdb_measures_release(&m);
}

/* §5 mocked E2E: prune keeps the matched N/A row, drops the unmatched empty row */
static void test_prune(void **state)
{
	(void)state;
	put("Add.csv", "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
		       "Average Duration(us),Profiling Average Duration(us)\r\n"
		       "\"1,1\",DT_BF16;DT_BF16,ND;ND,\"1,1\",DT_BF16,N/A,N/A\r\n"
		       "\"2,2\",DT_BF16;DT_BF16,ND;ND,\"2,2\",DT_BF16,,\r\n");
	struct perfdb_measures m = { calloc(1, sizeof(struct perfdb_measure)), 1, 1 };
	measure(&m.v[0], "Add", "1,1", "1,1", 123.45, NULL);
	struct perfdb_wb_opts o = { .dbdir = db, .lock_timeout = 1, .prune = 1 };
	struct perfdb_wb_result r;
	struct perfdb_err err;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), 0);
	assert_int_equal(r.files[0].ndeleted, 1);
	assert_string_equal(r.files[0].deleted[0], "2,2 -> 2,2");
	struct perfdb_table t;
	load("Add.csv", &t);
	assert_int_equal(t.nrows, 1);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Average Duration(us)")), "123.450000");
	perfdb_table_release(&t);
	perfdb_wb_result_release(&r);
	perfdb_measures_release(&m);
}

/* A table that does not load fails the run before any table is written */
static void test_bad_table_writes_nothing(void **state)
{
	(void)state;
	put("Add.csv", "Input Shapes,Output Shapes\r\n\"1\",\"1\"\r\n");
	put("Mul.csv", "Input Shapes,Output Shapes\r\n1,2,3\r\n");
	struct perfdb_measures m = { calloc(2, sizeof(struct perfdb_measure)), 2, 2 };
	measure(&m.v[0], "Add", "1", "1", 1.0, NULL);
	measure(&m.v[1], "Mul", "1", "1", 1.0, NULL);
	struct perfdb_wb_opts o = { .dbdir = db, .lock_timeout = 1 };
	struct perfdb_wb_result r;
	struct perfdb_err err;
	assert_int_equal(perfdb_writeback(&o, &m, &r, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "Mul.csv:2:5: record has 3 fields"));
	struct perfdb_table t;
	load("Add.csv", &t);
	assert_int_equal(t.ncols, 2);   /* untouched */
	perfdb_table_release(&t);
	perfdb_wb_result_release(&r);
	perfdb_measures_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validity),
		cmocka_unit_test(test_md_table),
		cmocka_unit_test_setup_teardown(test_new_table_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_migration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aliases_and_dfc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_table_writes_nothing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
