/*
 * Unit tests: the replay journal (src/replay/journal.h; docs/spec/replay.md
 * Decision 7): what journal_append writes journal_load reads back; the last
 * entry of a row wins, the last ok one for --resume; torn, junk and
 * non-finite lines are not measurements; 5,000 rows are all found.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay/journal.h"

static struct perfdb_engine_row row(int ok, double mean, const char *reason)
{
	struct perfdb_engine_row r;
	memset(&r, 0, sizeof(r));
	r.status = ok ? PERFDB_ENGINE_OK : PERFDB_ENGINE_FAILED;
	r.line = 2;
	r.samples = 5;
	r.mean = mean;
	r.median = mean;
	r.min = mean / 2;
	r.std = 0.5;
	r.reason = (char *)reason;
	return r;
}

static void test_roundtrip(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-journal-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	struct perfdb_engine_row a = row(0, 0, "ti\"mes\nout"), b = row(1, 12.5, NULL),
				 c = row(0, 0, "crashed");
	assert_int_equal(journal_append(fd, "Add", "db/Add.csv", "sig|1", &a), 0);
	assert_int_equal(journal_append(fd, "Add", "db/Add.csv", "sig|1", &b), 0);
	assert_int_equal(journal_append(fd, "Add", "db/Add.csv", "sig|1", &c), 0);
	struct perfdb_engine_row d = row(1, 3.25, NULL);
	assert_int_equal(journal_append(fd, "Mul", "db/Mul.csv", "sig|2", &d), 0);
	/* lines that are not measurements: junk, 1e999, a negative time, a torn last line */
	const char *bad =
		"not json\n"
		"{\"table\":\"db/Mul.csv\",\"signature\":\"sig|3\",\"status\":\"ok\",\"samples\":5,\"mean\":1e999}\n"
		"{\"table\":\"db/Mul.csv\",\"signature\":\"sig|4\",\"status\":\"ok\",\"samples\":5,\"mean\":-5}\n"
		"{\"table\":\"db/Mul.csv\",\"signature\":\"sig|5\",\"status\":\"ok\",\"samp";
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);

	struct journal j;
	memset(&j, 0, sizeof(j));
	assert_int_equal(journal_load(path, &j), 0);
	assert_int_equal(j.n, 5);   /* 4 appended + the negative one, which is not ok */
	const struct jentry *e = journal_find(&j, "db/Add.csv\tsig|1", 1);
	assert_non_null(e);
	assert_true(e->ok && e->mean == 12.5 && e->samples == 5 && e->min == 6.25);
	e = journal_find(&j, "db/Add.csv\tsig|1", 0);   /* the last entry: failed */
	assert_non_null(e);
	assert_false(e->ok);
	assert_string_equal(e->reason, "crashed");
	assert_true(journal_find(&j, "db/Mul.csv\tsig|2", 1)->mean == 3.25);
	assert_null(journal_find(&j, "db/Mul.csv\tsig|3", 0));
	assert_null(journal_find(&j, "db/Mul.csv\tsig|4", 1));
	assert_non_null(journal_find(&j, "db/Mul.csv\tsig|4", 0));
	assert_null(journal_find(&j, "db/Mul.csv\tsig|5", 0));
	assert_null(journal_find(&j, "db/Nope.csv\tsig|1", 0));
	journal_release(&j);
	/* the escaped reason survives the round trip */
	memset(&j, 0, sizeof(j));
	assert_int_equal(journal_load(path, &j), 0);
	assert_string_equal(j.v[0].reason, "ti\"mes\nout");
	journal_release(&j);
	unlink(path);
}

static void test_many(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-journal-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char sig[32];
	for (int i = 0; i < 5000; i++) {
		struct perfdb_engine_row r = row(1, 1.0 + i, NULL);
		snprintf(sig, sizeof(sig), "s%d", i);
		assert_int_equal(journal_append(fd, "Add", "t.csv", sig, &r), 0);
	}
	close(fd);
	struct journal j;
	memset(&j, 0, sizeof(j));
	assert_int_equal(journal_load(path, &j), 0);
	assert_int_equal(j.n, 5000);
	char key[64];
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "t.csv\ts%d", i);
		const struct jentry *e = journal_find(&j, key, 1);
		assert_non_null(e);
		assert_true(e->mean == 1.0 + i);
	}
	journal_release(&j);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
