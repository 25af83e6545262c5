/*
 * Unit tests: COMPUTE_TASK_INFO read in chunks by two parts
 * (src/parse/ascend_db_info.c).  The two parts are run one after the
 * other with the chunk counter set by hand, so that which part reads
 * which chunk is fixed, not left to the scheduler: the merge must give
 * every task its own cells whichever part interned them, and of two bad
 * rows the error must name the lower, whichever part met it.  The
 * database is written here with SQLite; every expected value follows from
 * the rule that writes it (row r: name "n<r % 5>", opType "t<r % 3>").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/ascend_db.h"

#define ROWS 20000   /* three chunks of 8,192 rowids */

struct fx {
	char path[64];
	char uri[96];
	struct perfdb_err err;
	struct adb_reader r;   /* the first part's connection, and STRING_IDS */
	sqlite3 *db1;          /* the second part's */
};

/* STRING_IDS: 1..5 "n0".."n4", 6..8 "t0".."t2", 9 "AI_CORE"; bad: rows whose opType is text */
static void write_db(const char *path, const int *bad, int nbad)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	const char *sql =
		"CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
		"CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, taskType INTEGER,"
		" opType INTEGER, inputShapes INTEGER, inputDataTypes INTEGER, inputFormats INTEGER,"
		" outputShapes INTEGER, outputDataTypes INTEGER, outputFormats INTEGER);"
		/* the reader sizes by rowids only up to one per 24 bytes of file:
		 * these rows are small, so the file is padded as a profile's other
		 * tables would fill it */
		"CREATE TABLE PAD (x BLOB); INSERT INTO PAD VALUES (zeroblob(1000000));"
		"BEGIN;";
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	char q[256];
	for (int i = 0; i < 5; i++) {
		snprintf(q, sizeof(q), "INSERT INTO STRING_IDS VALUES (%d, 'n%d')", i + 1, i);
		assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(q, sizeof(q), "INSERT INTO STRING_IDS VALUES (%d, 't%d')", i + 6, i);
		assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
	}
	assert_int_equal(sqlite3_exec(db, "INSERT INTO STRING_IDS VALUES (9, 'AI_CORE')", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO COMPUTE_TASK_INFO VALUES "
					    "(?1, ?2, 9, ?3, NULL, NULL, NULL, NULL, NULL, NULL)", -1, &st, NULL),
			 SQLITE_OK);
	for (int r = 1; r <= ROWS; r++) {
		int is_bad = 0;
		for (int i = 0; i < nbad; i++)
			is_bad |= bad[i] == r;
		sqlite3_bind_int(st, 1, r % 5 + 1);
		sqlite3_bind_int(st, 2, r);
		if (is_bad)
			sqlite3_bind_text(st, 3, "MatMulV2", -1, SQLITE_STATIC);
		else
			sqlite3_bind_int(st, 3, r % 3 + 6);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void open_fx(struct fx *f, const int *bad, int nbad)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/perfdb-test-adb-info-%d.db", (int)getpid());
	unlink(f->path);
	write_db(f->path, bad, nbad);
	snprintf(f->uri, sizeof(f->uri), "file:%s?immutable=1", f->path);
	f->r.path = f->path;
	f->r.err = &f->err;
	assert_int_equal(adb_open(&f->r, f->uri, 1024), 0);
	assert_int_equal(adb_load_strings(&f->r), 0);
	struct adb_reader r1 = { .path = f->path, .err = &f->err };
	assert_int_equal(adb_open(&r1, f->uri, 1024), 0);
	f->db1 = r1.db;
}

static void close_fx(struct fx *f)
{
	adb_strings_release(&f->r.str);
	sqlite3_close(f->r.db);
	sqlite3_close(f->db1);
	unlink(f->path);
}

static const char *cell(struct fx *f, const struct adb_combos *c, uint32_t combo, int col)
{
	struct perfdb_span sp;
	assert_true(combo < c->n);
	assert_true(adb_strings_get(&f->r.str, c->ids[(size_t)combo * ADB_NCOL + col], &sp));
	static char buf[32];
	snprintf(buf, sizeof(buf), "%.*s", (int)sp.len, sp.p);
	return buf;
}

/* Part 0 reads all three chunks, then part 1 reads chunks 1 and 2 again:
 * chunk 0 keeps part 0's combination ids, chunks 1-2 carry part 1's, which
 * it interned in another order (its first row is 8193, not 1). */
static void test_merge_of_two_parts(void **state)
{
	(void)state;
	struct fx f;
	open_fx(&f, NULL, 0);
	struct adb_info_scan s;
	assert_int_equal(adb_info_begin(&s, &f.r, 0, 0), 0);
	assert_int_equal(s.span, ROWS);
	adb_info_work(&s, 0, f.r.db);
	atomic_store(&s.next, 1);
	adb_info_work(&s, 1, f.db1);
	assert_int_equal(s.part[0].rc, 0);
	assert_int_equal(s.part[1].rc, 0);
	assert_true(s.part[1].combos.n > 0);
	/* part 1 met 8193 first: name n3 (8193 % 5), opType t0 (8193 % 3); part 0 met 1 first: n1, t1 */
	assert_int_equal(s.part[0].combos.ids[ADB_NAME], 2);
	assert_int_equal(s.part[1].combos.ids[ADB_NAME], 4);
	assert_int_equal(adb_info_end(&s), 0);
	assert_int_equal(s.n, ROWS);
	assert_int_equal(s.part[0].combos.n, 15);   /* 5 names x 3 op types */
	for (size_t i = 0; i < s.n; i++) {
		int r = (int)i + 1;
		char want[8];
		assert_int_equal(s.info[i].gtid, r);
		snprintf(want, sizeof(want), "n%d", r % 5);
		assert_string_equal(cell(&f, &s.part[0].combos, s.info[i].combo, ADB_NAME), want);
		snprintf(want, sizeof(want), "t%d", r % 3);
		assert_string_equal(cell(&f, &s.part[0].combos, s.info[i].combo, ADB_OPTYPE), want);
		assert_string_equal(cell(&f, &s.part[0].combos, s.info[i].combo, ADB_TASKTYPE), "AI_CORE");
	}
	adb_info_release(&s);
	close_fx(&f);
}

/* Bad rows 100 (chunk 0) and 17000 (chunk 2); first_low: the part that
 * meets row 100 runs first.  Either way the error names task 100. */
static void both_fail(int low_part)
{
	static const int bad[] = { 100, 17000 };
	struct fx f;
	open_fx(&f, bad, 2);
	struct adb_info_scan s;
	assert_int_equal(adb_info_begin(&s, &f.r, 0, 0), 0);
	sqlite3 *db[2] = { f.r.db, f.db1 };
	atomic_store(&s.next, 2);            /* the other part meets row 17000 */
	adb_info_work(&s, 1 - low_part, db[1 - low_part]);
	assert_true(s.part[1 - low_part].rc < 0);
	assert_int_equal(s.part[1 - low_part].err_row, 17000);
	atomic_store(&s.stop, 0);
	atomic_store(&s.next, 0);
	adb_info_work(&s, low_part, db[low_part]);
	assert_int_equal(s.part[low_part].err_row, 100);
	assert_true(adb_info_end(&s) < 0);
	if (!strstr(f.err.msg, "COMPUTE_TASK_INFO.opType of task 100 holds text"))
		fail_msg("low part %d: %s", low_part, f.err.msg);
	adb_info_release(&s);
	close_fx(&f);
}

static void test_lowest_bad_row_named(void **state)
{
	(void)state;
	both_fail(0);
	both_fail(1);
}

/* A part that fails stops the chunks not yet taken: they all lie above it. */
static void test_failure_stops_the_rest(void **state)
{
	(void)state;
	static const int bad[] = { 100 };
	struct fx f;
	open_fx(&f, bad, 1);
	struct adb_info_scan s;
	assert_int_equal(adb_info_begin(&s, &f.r, 0, 0), 0);
	adb_info_work(&s, 0, f.r.db);
	assert_int_equal(atomic_load(&s.next), 1);   /* only chunk 0 was taken */
	assert_int_equal(atomic_load(&s.stop), 1);
	adb_info_work(&s, 1, f.db1);
	assert_int_equal(s.part[1].rc, 0);
	assert_int_equal(atomic_load(&s.next), 1);   /* part 1 took nothing */
	assert_true(adb_info_end(&s) < 0);
	assert_non_null(strstr(f.err.msg, "of task 100 holds text"));
	adb_info_release(&s);
	close_fx(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_of_two_parts),
		cmocka_unit_test(test_lowest_bad_row_named),
		cmocka_unit_test(test_failure_stops_the_rest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
