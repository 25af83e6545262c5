/*
 * Unit tests: error records (include/perfdb/err.h).  A message longer than
 * the record keeps its head and its tail around "...", so the reason at the
 * end survives a path near PATH_MAX; cuts fall between UTF-8 characters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"

static void test_short_messages_whole(void **state)
{
	(void)state;
	struct perfdb_err err;
	assert_int_equal(perfdb_err_set(&err, PERFDB_EINVAL, "bad %s %d", "flag", 7), -PERFDB_EINVAL);
	assert_string_equal(err.msg, "bad flag 7");
	assert_int_equal(perfdb_err_errno(&err, ENOENT, "cannot open '%s'", "x.csv"), -PERFDB_EIO);
	assert_string_equal(err.msg, "cannot open 'x.csv': No such file or directory");
	assert_int_equal(perfdb_err_at(&err, PERFDB_EPARSE, "t.csv", 3, 9, "junk"), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "t.csv:3:9: junk");
}

static void test_long_message_keeps_the_reason(void **state)
{
	(void)state;
	size_t n = 4085;
	char *path = malloc(n + 1);
	memset(path, 'd', n);
	memcpy(path, "/tmp/", 5);
	memcpy(path + n - 6, "/T.csv", 6);
	path[n] = '\0';
	struct perfdb_err err;
	perfdb_err_errno(&err, ENAMETOOLONG, "cannot write '%s'", path);
	size_t len = strlen(err.msg);
	assert_true(len < sizeof(err.msg));
	assert_true(len > sizeof(err.msg) - 8);   /* the record is used, not wasted */
	assert_memory_equal(err.msg, "cannot write '/tmp/ddd", 22);
	const char *tail = "ddd/T.csv': File name too long";
	assert_string_equal(err.msg + len - strlen(tail), tail);
	assert_non_null(strstr(err.msg, "..."));

	/* a file name longer than the record: the line and column survive too */
	perfdb_err_at(&err, PERFDB_EPARSE, path, 12, 34, "unterminated quote");
	len = strlen(err.msg);
	tail = "T.csv:12:34: unterminated quote";
	assert_string_equal(err.msg + len - strlen(tail), tail);
	free(path);
}

static void test_cut_between_utf8_characters(void **state)
{
	(void)state;
	/* 3-byte characters everywhere: any cut inside one would leave a stray byte */
	size_t nch = 1500;
	char *s = malloc(nch * 3 + 1);
	for (size_t i = 0; i < nch; i++)
		memcpy(s + 3 * i, "\xe2\x82\xac", 3);   /* U+20AC */
	s[nch * 3] = '\0';
	struct perfdb_err err;
	perfdb_err_set(&err, PERFDB_EINVAL, "%s", s);
	const char *dots = strstr(err.msg, "...");
	assert_non_null(dots);
	size_t head = (size_t)(dots - err.msg), tail = strlen(dots + 3);
	assert_int_equal(head % 3, 0);
	assert_int_equal(tail % 3, 0);
	assert_memory_equal(err.msg, s, head);
	assert_memory_equal(dots + 3, s + nch * 3 - tail, tail);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_messages_whole),
		cmocka_unit_test(test_long_message_keeps_the_reason),
		cmocka_unit_test(test_cut_between_utf8_characters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
