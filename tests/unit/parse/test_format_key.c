/*
 * Unit tests: the key form of an Input Formats cell (src/parse/format_key.c,
 * docs/parse.md "Aggregation"): FORMAT_ND and ND are one key, token by
 * token; a bare "FORMAT_" names no format and stays as it is.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "parse/parse_internal.h"

static void check(const char *in, const char *want)
{
	char out[256];
	size_t n = perfdb_format_key(in, strlen(in), out);
	out[n] = '\0';
	assert_string_equal(out, want);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_strbuf_addstr(&sb, "x|"), 0);
	assert_int_equal(perfdb_format_key_str(in, &sb), 0);
	assert_string_equal(sb.buf + 2, want);
	perfdb_strbuf_release(&sb);
}

static void test_key_forms(void **state)
{
	(void)state;
	check("ND;ND", "ND;ND");
	check("FORMAT_ND;FORMAT_ND", "ND;ND");
	check("FORMAT_NZ;ND", "NZ;ND");
	check("FORMAT_FRACTAL_NZ", "FRACTAL_NZ");
	check("", "");
	check(";FORMAT_ND;", ";ND;");
	check("FORMAT_", "FORMAT_");
	check("ND_FORMAT_X", "ND_FORMAT_X");
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_key_forms) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
