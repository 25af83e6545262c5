/*
 * Unit tests for src/report/model_runs.c, the run records the report
 * reads: a row the run left unwritten ("contended") is flagged, a row
 * written under a low probe is flagged against the run's reference (the
 * machine's quiet figure when the record has one, else the run's median),
 * and each ok row's Noise is read; records of 2026-11 (no Noise column)
 * read as noise unknown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfdb/fsio.h"
#include "report/model.h"

static void put(const char *dir, const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/reports/%s", dir, name);
	struct perfdb_err err;
	assert_int_equal(perfdb_file_write_atomic(p, text, strlen(text), &err), 0);
}

static void test_flags_and_noise(void **state)
{
	(void)state;
	char db[] = "/tmp/perfdb-test-runs-XXXXXX";
	assert_non_null(mkdtemp(db));
	char rep[64];
	snprintf(rep, sizeof(rep), "%s/reports", db);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_mkdir_p(rep, &err), 0);
	/* run a: no Noise column, the run's median 40 is the reference: 20 < 32 is low */
	put(db, "microbench_env_a.txt", "host=H\nprobe_median_gbs=40.0\n");
	put(db, "microbench_rows_a.csv", "Operator,Line,Status,Probe(GB/s),Reason\r\nAdd,2,ok,40.0,\"\"\r\n"
					  "Add,3,ok,20.0,\"\"\r\n");
	/* run b: the quiet figure 50 is the reference: 39 < 40 is low although the median is 39 */
	put(db, "microbench_env_b.txt", "host=H\nprobe_median_gbs=39.0\nprobe_quiet_gbs=50.0\n");
	put(db, "microbench_rows_b.csv",
	    "Operator,Line,Status,Noise,Probe(GB/s),Reason\r\nRmsNorm,2,ok,12.50%,39.0,\"\"\r\n"
	    "RmsNorm,3,contended,3.00%,0.0,\"contended: 4 of 4\"\r\nRmsNorm,4,ok,0.80%,45.0,\"\"\r\n"
	    "RmsNorm,5,skipped,,0.0,\"kept\"\r\n");
	struct report_runs rr;
	assert_int_equal(report_runs_load(&rr, db, &err), 0);
	const struct report_run_row *x = report_runs_find(&rr, "Add", 2);
	assert_non_null(x);
	assert_false(x->contended);
	assert_true(x->noise < 0);
	x = report_runs_find(&rr, "Add", 3);
	assert_true(x->contended && !x->unwritten);
	x = report_runs_find(&rr, "RmsNorm", 2);
	assert_true(x->contended);
	assert_true(x->noise > 0.1249 && x->noise < 0.1251);
	x = report_runs_find(&rr, "RmsNorm", 3);
	assert_true(x->contended && x->unwritten);
	assert_true(x->noise < 0);   /* an unwritten row's samples describe no duration */
	x = report_runs_find(&rr, "RmsNorm", 4);
	assert_false(x->contended);
	assert_true(x->noise > 0.0079 && x->noise < 0.0081);
	assert_null(report_runs_find(&rr, "RmsNorm", 5));   /* skipped: not measured */
	report_runs_release(&rr);
	const char *files[] = { "microbench_env_a.txt", "microbench_rows_a.csv", "microbench_env_b.txt",
				"microbench_rows_b.csv" };
	for (size_t i = 0; i < 4; i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s/%s", rep, files[i]);
		assert_int_equal(unlink(p), 0);
	}
	assert_int_equal(rmdir(rep), 0);
	assert_int_equal(rmdir(db), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_and_noise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
