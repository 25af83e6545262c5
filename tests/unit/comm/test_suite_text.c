/*
 * Unit tests for src/comm/suite_text.c: comm-suite's dry-run plan, log
 * header and summary, from a plan of two group sizes and two message
 * sizes (the launches' command lines are test_comm's test_suite_plan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "comm/comm.h"
#include "perfdb/strbuf.h"

static void plan(struct perfdb_comm_suite *s)
{
	static long nd[] = { 4, 2 };
	static long long b[] = { 1024, 2048 };
	struct perfdb_comm_suite_opts o = { .perfdb = "/bin/perfdb", .num_devices = nd,
					    .nnum_devices = 2, .bytes = b, .nbytes = 2,
					    .output_dir = "out" };
	struct perfdb_err err;
	perfdb_comm_suite_init(s);
	assert_int_equal(perfdb_comm_suite_plan(&o, s, &err), 0);
}

/* Three launches, each a "# title" line and its command. */
static void test_plan_text(void **state)
{
	(void)state;
	struct perfdb_comm_suite s;
	plan(&s);
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_comm_suite_plan_text(&s, &out), 0);
	const char *round2 = "# Round 2: allGather+reduceScatter\nmpirun -np 4 /bin/perfdb comm --ops all_gather "
			     "reduce_scatter --grid-shape 48 8 2 --num-devices 4 2 --bytes-grid 1024 2048 "
			     "--database-path out\n";
	assert_non_null(strstr(out.buf, round2));
	size_t lines = 0;
	for (const char *p = out.buf; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 6);
	assert_true(strncmp(out.buf, "# Round 1: ", 11) == 0);
	perfdb_strbuf_release(&out);
	perfdb_comm_suite_release(&s);
}

/* The header names the output, the mode, the sizes; the summary counts launches and rows
 * (a table it could not read is said to be so, not "-1 rows"). */
static void test_header_and_summary(void **state)
{
	(void)state;
	struct perfdb_comm_suite s;
	plan(&s);
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_comm_suite_header_text(&s, "/abs/out", &out), 0);
	const char *want = "=== perfdb comm-suite: collective microbenchmarks ===\nOutput: /abs/out\n"
			   "Mode: single node, 4 ranks\nGroup sizes: 4 2\nSizes: 2 (1024 .. 2048 bytes)\n"
			   "Start time: ";
	assert_true(strncmp(out.buf, want, strlen(want)) == 0);
	/* "YYYY-MM-DD HH:MM:SS\n" */
	assert_int_equal(strlen(out.buf) - strlen(want), 20);
	perfdb_strbuf_reset(&out);
	struct perfdb_comm_suite_result r;
	memset(&r, 0, sizeof(r));
	r.nlaunch = 3;
	r.nfailed = 1;
	r.ntables = 2;
	r.tables[0].file = "hcom_allReduce_.csv";
	r.tables[0].rows = 8;
	r.tables[1].file = "hcom_allGather_.csv";
	r.tables[1].rows = -1;
	assert_int_equal(perfdb_comm_suite_summary_text(&s, &r, &out), 0);
	assert_true(strncmp(out.buf, "\n=== Collection complete: 2 of 3 launches succeeded ===\nEnd time: ", 66) == 0);
	assert_non_null(strstr(out.buf, "\n  hcom_allReduce_.csv      8 rows\n  hcom_allGather_.csv      unreadable\n"));
	perfdb_strbuf_release(&out);
	perfdb_comm_suite_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_text),
		cmocka_unit_test(test_header_and_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
