/*
 * Unit tests for src/comm/run_text.c: perfdb comm's table line and closing
 * lines.  Expected text is worked by hand from the row rules of
 * docs/comm.md (Duration = the median rounded to 2 places, the overhead
 * added after rounding; algbw = bytes / Duration / 1e3; all_reduce's bus
 * factor 2(n-1)/n = 1 at n = 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "comm/comm.h"
#include "perfdb/strbuf.h"

static struct perfdb_comm_case mib_case(void)
{
	struct perfdb_comm_case c;
	memset(&c, 0, sizeof(c));
	c.op = PERFDB_COMM_ALL_REDUCE;
	c.num_devices = 2;
	c.message_bytes = 1048576;
	c.bus_bytes = 1048576;
	c.st = (struct perfdb_stats){ .n = 10, .mean = 101, .median = 100, .min = 90, .max = 120 };
	c.check = 1;
	return c;
}

/* 1 MiB in 100 us is 10.49 GB/s; the notes say what was dropped, repeated and left unwritten. */
static void test_case_line(void **state)
{
	(void)state;
	struct perfdb_comm_opts o;
	perfdb_comm_opts_defaults(&o);
	o.database_path = "db";
	struct perfdb_comm_case c = mib_case();
	c.rounds = 10;
	c.rounds_bad = 2;
	c.attempts = 2;
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_comm_case_text(&c, &o, &out), 0);
	assert_string_equal(out.buf, "     all_reduce     2    0      1048576       100.00      90.00     120.00      10"
		"       10.49       10.49     ok  2 of 10 rounds dropped repeated 1 times not written\n");
	/* unclean, a failed check and 0.5 us of overhead: 100.5 us, 1048576 / 100.5 / 1e3 = 10.43 */
	perfdb_strbuf_reset(&out);
	c.unclean = true;
	c.rounds_bad = 8;
	c.attempts = 1;
	c.check = -1;
	c.overhead_us = 0.5;
	o.database_path = NULL;
	assert_int_equal(perfdb_comm_case_text(&c, &o, &out), 0);
	assert_string_equal(out.buf, "     all_reduce     2    0      1048576       100.50      90.50     120.50      10"
		"       10.43       10.43   FAIL  unclean (8 of 10 rounds contended) overhead +0.5 us not written\n");
	/* checked, written nowhere because no destination was given: no note */
	perfdb_strbuf_reset(&out);
	c = mib_case();
	assert_int_equal(perfdb_comm_case_text(&c, &o, &out), 0);
	assert_non_null(strstr(out.buf, "     ok  \n"));
	perfdb_strbuf_release(&out);
}

/* A failed check makes the status 1 and says so; nothing saved is said in words. */
static void test_outcome(void **state)
{
	(void)state;
	struct perfdb_comm_report rep;
	perfdb_comm_report_init(&rep);
	snprintf(rep.ctx.shm_copy, sizeof(rep.ctx.shm_copy), "cma");
	rep.output = "(no output)";
	rep.ncases = 3;
	rep.written = 2;
	rep.check_failed = 1;
	rep.seconds = 1.3;
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT, err = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_comm_outcome_text(&rep, 0, 2, false, false, &out, &err), 1);
	assert_string_equal(out.buf, "# shared-memory single copy: cma\nCompleted 2 benchmarks. Nothing saved: "
		"give --database-path or --output-csv to keep the results\n");
	assert_string_equal(err.buf, "perfdb comm: 3 case(s) in 1.3 s: 2 written, 0 unclean (not written), "
		"0 contended, 0 non-monotonic, 1 check failure(s), 0 skipped\n"
		"perfdb comm: error: 1 size(s) failed the correctness check\n");
	/* --json --quiet, nothing run because every group outgrew a world of one */
	perfdb_strbuf_reset(&out);
	perfdb_strbuf_reset(&err);
	rep.ncases = rep.written = rep.check_failed = 0;
	assert_int_equal(perfdb_comm_outcome_text(&rep, 2, 1, true, true, &out, &err), 1);
	assert_int_equal(out.len, 0);
	assert_string_equal(err.buf, "perfdb comm: error: nothing measured: every group is larger than the "
		"world (1 rank)\n");
	/* a clean run saved to a file */
	perfdb_strbuf_reset(&out);
	perfdb_strbuf_reset(&err);
	rep.ncases = rep.written = 4;
	rep.output = "db/hcom_allReduce_.csv";
	assert_int_equal(perfdb_comm_outcome_text(&rep, 0, 2, false, true, &out, &err), 0);
	assert_string_equal(out.buf, "# shared-memory single copy: cma\nCompleted 4 benchmarks. Results saved "
		"to db/hcom_allReduce_.csv\n");
	assert_int_equal(err.len, 0);
	perfdb_strbuf_release(&out);
	perfdb_strbuf_release(&err);
	perfdb_comm_report_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_line),
		cmocka_unit_test(test_outcome),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
