/*
 * Unit tests: the table checks of perfdb check (src/report/check.h),
 * every rule on small tables, with expectations worked out by hand from
 * the rules (docs/cli.md "perfdb check", docs/spec/replay.md §1b).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/check.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"

#define KHDR "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats," \
	     "Output Shapes,Output Data Types,Output Formats,Average Duration(us)," \
	     "Profiling Average Duration(us)\n"
#define COMMHDR "message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps\n"

/* Check the CSV text as the table <op>.csv. */
static void check(const char *op, const char *csv, struct perfdb_check_result *res)
{
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	if (perfdb_table_load_mem(&t, op, csv, strlen(csv), &err) != 0)
		fail_msg("%s", err.msg);
	memset(res, 0, sizeof(*res));
	assert_int_equal(perfdb_check_table(&t, op, res, &err), 0);
	perfdb_table_release(&t);
}

static void assert_problem(const struct perfdb_check_result *r, size_t i, size_t line,
			   long col, const char *msg)
{
	assert_true(i < r->nproblems);
	assert_int_equal(r->problems[i].line, line);
	assert_int_equal(r->problems[i].col, col);
	assert_string_equal(r->problems[i].msg, msg);
}

/* A clean kernel table: counts only. */
static void test_clean_kernel_table(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("Add", KHDR
	      "dynamic,AI_VECTOR_CORE,\"\"\"4,8;4,8\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"4,8\"\"\",DT_BF16,ND,3.5,\n"
	      "dynamic,AI_VECTOR_CORE,\"\"\"4,9;4,9\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"4,9\"\"\",DT_BF16,ND,,2\n",
	      &r);
	assert_int_equal(r.rows, 2);
	assert_int_equal(r.columns, 10);
	assert_int_equal(r.with_duration, 2);
	assert_int_equal(r.duplicates, 0);
	assert_int_equal(r.nproblems, 0);
	perfdb_check_result_release(&r);
	assert_null(r.problems);
}

/* Kernel tables need Input Shapes and Output Shapes (line 1, in that order). */
static void test_kernel_missing_columns(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("Add", "OP State,Average Duration(us)\ndynamic,1\n", &r);
	assert_int_equal(r.nproblems, 2);
	assert_problem(&r, 0, 1, -1, "missing column 'Input Shapes'");
	assert_problem(&r, 1, 1, -1, "missing column 'Output Shapes'");
	assert_int_equal(r.with_duration, 1);
	perfdb_check_result_release(&r);

	check("Add", "Input Shapes,Average Duration(us)\n\"\"\"2\"\"\",1\n", &r);
	assert_int_equal(r.nproblems, 1);
	assert_problem(&r, 0, 1, -1, "missing column 'Output Shapes'");
	perfdb_check_result_release(&r);
}

/* Collective tables need message_bytes and num_devices, not shapes. */
static void test_comm_missing_columns(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("hcom_allReduce_", "message_bytes,dtype,Duration(us)\n1024,DT_BF16,20.5\n", &r);
	assert_int_equal(r.nproblems, 1);
	assert_problem(&r, 0, 1, -1,
		       "missing column 'num_devices' (the simulator skips this table)");
	assert_int_equal(r.duplicates, 0);
	perfdb_check_result_release(&r);

	check("hcom_allReduce_", COMMHDR "1024,16,DT_BF16,1,20.5,0.05\n", &r);
	assert_int_equal(r.nproblems, 0);
	assert_int_equal(r.with_duration, 1);
	perfdb_check_result_release(&r);
}

/* A shape cell is reported once, at its first slot that does not parse. */
static void test_bad_shapes(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("Add", KHDR
	      "dynamic,AI_CORE,\"\"\"8,x\"\"\",DT_BF16,ND,\"\"\"8,32\"\"\",DT_BF16,ND,,\n"
	      "dynamic,AI_CORE,\"\"\"2,3;4,y;z\"\"\",DT_BF16,ND,\"\"\"2,q\"\"\",DT_BF16,ND,,\n",
	      &r);
	assert_int_equal(r.nproblems, 3);
	assert_problem(&r, 0, 2, 2, "'Input Shapes' slot 0: invalid dim 'x' in shape slot '8,x'");
	assert_problem(&r, 1, 3, 2, "'Input Shapes' slot 1: invalid dim 'y' in shape slot '4,y'");
	assert_problem(&r, 2, 3, 5, "'Output Shapes' slot 0: invalid dim 'q' in shape slot '2,q'");
	assert_int_equal(r.with_duration, 0);
	perfdb_check_result_release(&r);
}

/* Rows sharing a signature: each later one names the first (MatMul rows
 * match with the right-hand side transposed, §1b). */
static void test_duplicate_signatures(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("MatMulV2", KHDR
	      "dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,,12.5\n"
	      "dynamic,AI_CORE,\"\"\"2,3;3,4\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,3.0,\n"
	      "dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,,\n",
	      &r);
	assert_int_equal(r.duplicates, 2);
	assert_int_equal(r.nproblems, 2);
	assert_problem(&r, 0, 3, -1, "duplicate signature of line 2 (writeback only updates the "
		       "first): inputs 2,3;4,3, dtypes DT_BF16;DT_BF16, formats ND;ND -> output 2,4, "
		       "dtype DT_BF16");
	assert_problem(&r, 1, 4, -1, "duplicate signature of line 2 (writeback only updates the "
		       "first): inputs 2,3;4,3, dtypes DT_BF16;DT_BF16, formats ND;ND -> output 2,4, "
		       "dtype DT_BF16");
	assert_int_equal(r.with_duration, 2);
	perfdb_check_result_release(&r);

	/* rows without any key cells (a trace recorded without shapes): every field
	 * reads "none", not an empty "||||" */
	check("aten.addmm", KHDR ",GPU,\"\"\"\"\"\",,,\"\"\"\"\"\",,,,1.0\n"
	      ",GPU,\"\"\"\"\"\",,,\"\"\"\"\"\",,,,2.0\n", &r);
	assert_int_equal(r.duplicates, 1);
	assert_problem(&r, 0, 3, -1, "duplicate signature of line 2 (writeback only updates the "
		       "first): inputs none, dtypes none, formats none -> output none, dtype none");
	perfdb_check_result_release(&r);

	/* a collective table has no signatures */
	check("hcom_allGather_", COMMHDR "1024,8,DT_BF16,1,2,1\n1024,8,DT_BF16,1,2,1\n", &r);
	assert_int_equal(r.duplicates, 0);
	assert_int_equal(r.nproblems, 0);
	perfdb_check_result_release(&r);
}

/* Every column whose name holds Duration(us): non-empty cells must be
 * finite numbers >= 0; other columns are not looked at. */
static void test_bad_durations(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("Cast", "Input Shapes,Output Shapes,Average Duration(us),MicroBench Min Duration(us),"
	      "MicroBench Samples\n"
	      "2,2,abc,-1,junk\n"
	      "3,3,nan,inf,\n"
	      "4,4,0,,\n"
	      "5,5, 1e1 ,-0,\n",
	      &r);
	/* found column by column, then ordered by line */
	assert_int_equal(r.nproblems, 4);
	assert_problem(&r, 0, 2, 2, "'Average Duration(us)': not a number: 'abc'");
	assert_problem(&r, 1, 2, 3, "'MicroBench Min Duration(us)': invalid duration '-1'");
	assert_problem(&r, 2, 3, 2, "'Average Duration(us)': invalid duration 'nan'");
	assert_problem(&r, 3, 3, 3, "'MicroBench Min Duration(us)': invalid duration 'inf'");
	/* only ' 1e1 ' (10) is a duration > 0 */
	assert_int_equal(r.with_duration, 1);
	perfdb_check_result_release(&r);
}

/* with a duration: a finite valid microbench duration, else profiling,
 * else (collective tables) Duration(us). */
static void test_with_duration(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("Cast", "Input Shapes,Output Shapes,Average Duration(us),Profiling Average Duration(us)\n"
	      "2,2,,12.5\n"     /* profiling only: counts */
	      "2,2,inf,5\n"     /* infinite microbench, finite profiling: counts */
	      "2,2,inf,\n"      /* infinite only: does not */
	      "2,2,0,N/A\n"     /* zero and N/A: does not */
	      "2,2,7,\n",       /* microbench: counts */
	      &r);
	assert_int_equal(r.rows, 5);
	assert_int_equal(r.with_duration, 3);
	perfdb_check_result_release(&r);

	check("hcom_allReduce_", COMMHDR "1024,16,DT_BF16,1,20.5,0.05\n2048,16,DT_BF16,1,0,0\n",
	      &r);
	assert_int_equal(r.with_duration, 1);
	perfdb_check_result_release(&r);
}

/* Problems are ordered by line; within a line the rules' order holds:
 * shapes, duplicates, durations. */
static void test_order_within_a_line(void **state)
{
	(void)state;
	struct perfdb_check_result r;
	check("MatMulV2", KHDR
	      "dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,-2,\n"
	      "dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,x\"\"\",DT_BF16,ND,-1,\n"
	      "dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,-3,\n",
	      &r);
	assert_int_equal(r.nproblems, 5);
	assert_problem(&r, 0, 2, 8, "'Average Duration(us)': invalid duration '-2'");
	assert_problem(&r, 1, 3, 5, "'Output Shapes' slot 0: invalid dim 'x' in shape slot '2,x'");
	assert_problem(&r, 2, 3, 8, "'Average Duration(us)': invalid duration '-1'");
	assert_problem(&r, 3, 4, -1, "duplicate signature of line 2 (writeback only updates the "
		       "first): inputs 2,3;4,3, dtypes DT_BF16;DT_BF16, formats ND;ND -> output 2,4, "
		       "dtype DT_BF16");
	assert_problem(&r, 4, 4, 8, "'Average Duration(us)': invalid duration '-3'");
	perfdb_check_result_release(&r);
}

/* From a file: the stem picks the rules; a table that does not read fails. */
static void test_check_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-check-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[128];
	struct perfdb_err err;
	struct perfdb_check_result r = { 0 };

	snprintf(p, sizeof(p), "%s/hcom_allReduce_.csv", dir);
	const char *comm = "message_bytes,Duration(us)\r\n1024,3\r\n";
	assert_int_equal(perfdb_file_write_atomic(p, comm, strlen(comm), &err), 0);
	assert_int_equal(perfdb_check_file(p, &r, &err), 0);
	assert_int_equal(r.nproblems, 1);
	assert_problem(&r, 0, 1, -1,
		       "missing column 'num_devices' (the simulator skips this table)");
	perfdb_check_result_release(&r);
	unlink(p);

	snprintf(p, sizeof(p), "%s/Add.csv", dir);
	const char *broken = "not,a\n\"broken\n";
	assert_int_equal(perfdb_file_write_atomic(p, broken, strlen(broken), &err), 0);
	perfdb_err_clear(&err);
	assert_true(perfdb_check_file(p, &r, &err) < 0);
	assert_true(err.msg[0] != '\0');
	assert_int_equal(r.nproblems, 0);
	perfdb_check_result_release(&r);
	unlink(p);

	snprintf(p, sizeof(p), "%s/absent.csv", dir);
	assert_true(perfdb_check_file(p, &r, &err) < 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_kernel_table),
		cmocka_unit_test(test_kernel_missing_columns),
		cmocka_unit_test(test_comm_missing_columns),
		cmocka_unit_test(test_bad_shapes),
		cmocka_unit_test(test_duplicate_signatures),
		cmocka_unit_test(test_bad_durations),
		cmocka_unit_test(test_with_duration),
		cmocka_unit_test(test_order_within_a_line),
		cmocka_unit_test(test_check_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
