/*
 * Unit tests for src/replay/native_notes.c: what a native run says before
 * writeback.  The expected lines are written from docs/replay.md's tags and
 * the row facts below, not from the code's output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/strbuf.h"
#include "replay/native_run.h"

static struct perfdb_engine_row row(const char *table, size_t line, enum perfdb_engine_status st,
				    const char *reason, double gbs)
{
	struct perfdb_engine_row r;
	memset(&r, 0, sizeof(r));
	r.op = (char *)table;
	r.table = (char *)table;
	r.line = line;
	r.status = st;
	r.reason = (char *)reason;
	r.probe_gbs = gbs;
	return r;
}

static void notes_of(struct perfdb_native_run *run, struct perfdb_strbuf *out)
{
	perfdb_strbuf_init(out);
	assert_int_equal(perfdb_native_notes(run, out), 0);
}

/* Failed rows, and contended rows not written: one measured at a quarter of the quiet bandwidth, one the scheduler's accounts refused. */
static void test_rows(void **state)
{
	(void)state;
	struct perfdb_engine_row rows[] = {
		row("Add.csv", 2, PERFDB_ENGINE_OK, NULL, 10.0),
		row("MatMulV2.csv", 3, PERFDB_ENGINE_FAILED, "bad shape", 0),
		row("Softmax.csv", 4, PERFDB_ENGINE_CONTENDED, "contended: measured with 2.5 GB/s of memory "
		    "bandwidth against this machine's quiet 10.0 after 2 retries", 2.5),
		row("Softmax.csv", 5, PERFDB_ENGINE_CONTENDED, "contended: 9 of 10 timed blocks", 0),
	};
	rows[2].retries = 2;
	rows[2].low_bandwidth = 1;
	struct perfdb_native_run run;
	memset(&run, 0, sizeof(run));
	run.res.rows = rows;
	run.res.nrows = 4;
	run.res.nok = 1;
	run.res.nfailed = 1;
	run.res.ncontended = 2;
	run.res.probe_quiet_gbs = 10.0;
	struct perfdb_strbuf out;
	notes_of(&run, &out);
	assert_string_equal(out.buf,
		"[FAILED] MatMulV2.csv:3: bad shape\n"
		"[CONTENDED] Softmax.csv:4: not written: measured with 2.5 GB/s of memory bandwidth against "
		"this machine's quiet 10.0 after 2 retries\n"
		"[CONTENDED] Softmax.csv:5: not written: 9 of 10 timed blocks\n"
		"[CONTENDED] 2 rows left unwritten; --update-mode missing-only measures them again\n");
	perfdb_strbuf_release(&out);
}

/* The tables no replay selects: the first eight named, the rest counted. */
static void test_unreplayed(void **state)
{
	(void)state;
	struct perfdb_status_unreplayed u[10];
	char names[10][16];
	for (size_t i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "aten.t%zu", i);
		memset(&u[i], 0, sizeof(u[i]));
		u[i].table = names[i];
		u[i].rows = i + 1;
	}
	struct perfdb_native_run run;
	memset(&run, 0, sizeof(run));
	run.st.unreplayed = u;
	run.st.nunreplayed = 10;
	run.res.interrupted = 1;
	struct perfdb_strbuf out;
	notes_of(&run, &out);
	/* 1 + 2 + ... + 10 = 55 rows */
	assert_string_equal(out.buf,
		"[NOT REPLAYED] 10 tables (55 rows) that no replay selects: aten.t0 (1), aten.t1 (2), "
		"aten.t2 (3), aten.t3 (4), aten.t4 (5), aten.t5 (6), aten.t6 (7), aten.t7 (8) and 2 more; "
		"the status file says why\n"
		"[INTERRUPTED] writing back the rows measured so far\n");
	perfdb_strbuf_release(&out);
}

/* A run with nothing to say says nothing; --fail-fast's stop is named. */
static void test_quiet_and_stop(void **state)
{
	(void)state;
	struct perfdb_native_run run;
	memset(&run, 0, sizeof(run));
	struct perfdb_strbuf out;
	notes_of(&run, &out);
	assert_int_equal(out.len, 0);
	perfdb_strbuf_release(&out);
	run.res.stopped = 1;
	notes_of(&run, &out);
	assert_string_equal(out.buf, "[STOP] --fail-fast: stopped at the first failure\n");
	perfdb_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_unreplayed),
		cmocka_unit_test(test_quiet_and_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
