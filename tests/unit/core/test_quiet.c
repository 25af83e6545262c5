/*
 * Unit tests for src/core/quiet.c, this machine's quiet figures: the
 * file's parse (a file that is not ours is no figure), the median figure,
 * and notes that keep the last PERFDB_QUIET_KEEP readings, written under
 * $PERFDB_STATE_DIR (a scratch directory here).
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

#include "perfdb/preflight.h"

static void test_parse(void **state)
{
	(void)state;
	struct perfdb_quiet q;
	const char *ok = "{\"host\": \"h\", \"preflight_gbs\": [30, 32, 31], \"row_gbs\": [20.5], \"torch_gbs\": [40, 44]}";
	assert_int_equal(perfdb_quiet_parse(ok, strlen(ok), &q), 0);
	assert_int_equal(q.ntorch, 2);
	assert_true(perfdb_quiet_figure(q.torch_gbs, q.ntorch) == 42.0);
	assert_int_equal(q.npreflight, 3);
	assert_int_equal(q.nrow, 1);
	assert_true(perfdb_quiet_figure(q.preflight_gbs, q.npreflight) == 31.0);
	assert_true(perfdb_quiet_figure(q.row_gbs, q.nrow) == 20.5);
	assert_true(perfdb_quiet_figure(NULL, 0) == 0.0);
	/* a negative, a string, a non-array: not ours, no figures at all */
	const char *bad[] = { "{\"preflight_gbs\": [30, -1]}", "{\"row_gbs\": [\"x\"]}", "{\"row_gbs\": 5}", "[1]", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(perfdb_quiet_parse(bad[i], strlen(bad[i]), &q), -PERFDB_EPARSE);
		assert_int_equal(q.npreflight + q.nrow, 0);
	}
	/* more than PERFDB_QUIET_KEEP readings: the newest are kept */
	const char *many = "{\"row_gbs\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}";
	assert_int_equal(perfdb_quiet_parse(many, strlen(many), &q), 0);
	assert_int_equal(q.nrow, PERFDB_QUIET_KEEP);
	assert_true(q.row_gbs[0] == 3.0 && q.row_gbs[PERFDB_QUIET_KEEP - 1] == 11.0);
}

static void test_note_keeps_the_newest(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-quiet-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[64];
	snprintf(sub, sizeof(sub), "%s/state", dir);   /* made by the first note */
	setenv("PERFDB_STATE_DIR", sub, 1);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_quiet q;
	perfdb_quiet_load(&q);
	assert_int_equal(q.npreflight + q.nrow, 0);   /* no file yet */
	for (int i = 1; i <= 12; i++)
		assert_int_equal(perfdb_quiet_note(PERFDB_QUIET_PREFLIGHT, (double)i, &err), 0);
	assert_int_equal(perfdb_quiet_note(PERFDB_QUIET_ROW, 25.0, &err), 0);
	assert_int_equal(perfdb_quiet_note(PERFDB_QUIET_ROW, 0.0, &err), 0);   /* no reading: nothing kept */
	perfdb_quiet_load(&q);
	assert_int_equal(q.npreflight, PERFDB_QUIET_KEEP);
	assert_true(q.preflight_gbs[0] == 4.0);   /* 1..3 went */
	assert_true(perfdb_quiet_figure(q.preflight_gbs, q.npreflight) == 8.0);   /* median of 4..12 */
	assert_int_equal(q.nrow, 1);
	assert_true(q.row_gbs[0] == 25.0);
	assert_int_equal(q.ntorch, 0);   /* each kind its own */
	assert_int_equal(perfdb_quiet_note(PERFDB_QUIET_TORCH, 31.5, &err), 0);
	perfdb_quiet_load(&q);
	assert_int_equal(q.ntorch, 1);
	assert_true(q.torch_gbs[0] == 31.5);
	assert_int_equal(q.nrow, 1);
	assert_int_equal(q.npreflight, PERFDB_QUIET_KEEP);
	struct perfdb_strbuf p = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_quiet_path(&p), 0);
	assert_int_equal(strncmp(p.buf, sub, strlen(sub)), 0);
	assert_int_equal(unlink(p.buf), 0);
	perfdb_strbuf_release(&p);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_note_keeps_the_newest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
