/*
 * Unit tests: strbuf invariants (include/perfdb/strbuf.h) and error records
 * (include/perfdb/err.h, docs/style.md rule 4: "file:line:col: what failed").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

static void test_strbuf(void **state)
{
	(void)state;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");          /* usable before any allocation */
	perfdb_strbuf_reset(&sb);
	assert_int_equal(perfdb_strbuf_addstr(&sb, "ab"), 0);
	assert_int_equal(perfdb_strbuf_addch(&sb, 'c'), 0);
	assert_int_equal(perfdb_strbuf_addf(&sb, "%d-%s", 42, "x"), 0);
	assert_string_equal(sb.buf, "abc42-x");
	assert_int_equal(sb.len, 7);
	assert_true(sb.alloc > sb.len);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(perfdb_strbuf_addch(&sb, 'z'), 0);
	assert_int_equal(sb.len, 10007);
	assert_int_equal(sb.buf[sb.len], '\0');
	perfdb_strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(perfdb_strbuf_add(&sb, "q\0r", 3), 0);   /* binary-safe */
	assert_int_equal(sb.len, 3);
	size_t len;
	char *p = perfdb_strbuf_detach(&sb, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(p, "q\0r", 3);
	free(p);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.alloc, 0);
	/* a huge request fails cleanly and leaves the buffer as it was */
	assert_int_equal(perfdb_strbuf_addstr(&sb, "keep"), 0);
	assert_int_equal(perfdb_strbuf_grow(&sb, (size_t)-1 / 2), -PERFDB_ENOMEM);
	assert_string_equal(sb.buf, "keep");
	p = perfdb_strbuf_detach(&sb, NULL);
	free(p);
	p = perfdb_strbuf_detach(&sb, NULL);   /* never-allocated buffer */
	assert_string_equal(p, "");
	free(p);
	perfdb_strbuf_release(&sb);
}

static void test_err(void **state)
{
	(void)state;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(err.code, 0);
	assert_int_equal(perfdb_err_at(&err, PERFDB_EPARSE, "k.csv", 3, 7, "bad '%s'", "x"),
			 -PERFDB_EPARSE);
	assert_string_equal(err.msg, "k.csv:3:7: bad 'x'");
	perfdb_err_at(&err, PERFDB_EPARSE, "k.csv", 3, 0, "no column");
	assert_string_equal(err.msg, "k.csv:3: no column");
	perfdb_err_at(&err, PERFDB_EPARSE, "k.csv", 0, 0, "whole file");
	assert_string_equal(err.msg, "k.csv: whole file");
	assert_int_equal(perfdb_err_errno(&err, ENOENT, "cannot open '%s'", "f"), -PERFDB_EIO);
	assert_string_equal(err.msg, "cannot open 'f': No such file or directory");
	assert_string_equal(perfdb_err_name(-PERFDB_ELOCKED), "locked");
	assert_string_equal(perfdb_err_name(PERFDB_EPARSE), "parse");
	/* NULL records are allowed; the code still propagates */
	assert_int_equal(perfdb_err_set(NULL, PERFDB_EIO, "x"), -PERFDB_EIO);
	/* over-long messages are cut, never overflow */
	char big[4000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	perfdb_err_set(&err, PERFDB_EINVAL, "%s", big);
	assert_int_equal(strlen(err.msg), PERFDB_ERR_MSG_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_err),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
