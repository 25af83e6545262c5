/*
 * Unit tests: CSV reader and writer (include/perfdb/csv.h; dialect of
 * docs/spec/parse.md §1 "CSV reading" and §4 "Format"; docs/design.md database
 * contract).  Expected values are worked out by hand from the dialect rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/csv.h"

/* Read all records of s (delivered chunk bytes at a time) into a flat
 * "field|field\n" dump with the line number first: "1:a|b\n". */
static int dump(const char *s, size_t len, size_t chunk, unsigned flags,
		struct perfdb_strbuf *out, struct perfdb_err *err)
{
	struct perfdb_csv_reader *r;
	int rc = perfdb_csv_open_mem_chunked(&r, "t.csv", s, len, chunk, flags, err);
	if (rc < 0)
		return rc;
	struct perfdb_csv_row row;
	while ((rc = perfdb_csv_next(r, &row, err)) > 0) {
		perfdb_strbuf_addf(out, "%zu:", row.line);
		for (size_t i = 0; i < row.n; i++) {
			if (i)
				perfdb_strbuf_addch(out, '|');
			perfdb_strbuf_add(out, row.f[i].p, row.f[i].len);
		}
		perfdb_strbuf_addch(out, '\n');
	}
	perfdb_csv_close(r);
	return rc;
}

static void expect_dump(const char *in, unsigned flags, const char *want)
{
	/* Every chunking must give the same records (restart path). */
	size_t chunks[] = { 0, 1, 2, 3, 7, 64 };
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		struct perfdb_err err;
		perfdb_err_clear(&err);
		int rc = dump(in, strlen(in), chunks[c], flags, &sb, &err);
		if (rc != 0)
			fail_msg("chunk %zu: unexpected error: %s", chunks[c], err.msg);
		assert_string_equal(sb.buf, want);
		perfdb_strbuf_release(&sb);
	}
}

static void expect_error(const char *in, size_t len, unsigned flags, const char *want)
{
	size_t chunks[] = { 0, 1, 5 };
	for (size_t c = 0; c < 3; c++) {
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		struct perfdb_err err;
		perfdb_err_clear(&err);
		int rc = dump(in, len, chunks[c], flags, &sb, &err);
		assert_int_equal(rc, -PERFDB_EPARSE);
		assert_string_equal(err.msg, want);
		perfdb_strbuf_release(&sb);
	}
}

static void test_basic_line_endings(void **state)
{
	(void)state;
	expect_dump("a,b\r\nc,d\r\n", 0, "1:a|b\n2:c|d\n");
	expect_dump("a,b\nc,d", 0, "1:a|b\n2:c|d\n");          /* LF, no final newline */
	expect_dump("a,b\rc,d\r", 0, "1:a|b\n2:c|d\n");        /* lone CR ends a record */
	expect_dump("a,\r\n,b\r\n,\r\n", 0, "1:a|\n2:|b\n3:|\n"); /* empty fields kept */
}

static void test_bom_and_blank_lines(void **state)
{
	(void)state;
	expect_dump("\xEF\xBB\xBFType,X\r\n\r\n\r\nA,1\r\n\nB,2\n", 0,
		    "1:Type|X\n4:A|1\n6:B|2\n");
	expect_dump("", 0, "");
	expect_dump("\r\n\n", 0, "");
}

static void test_quoting(void **state)
{
	(void)state;
	/* commas, doubled quotes and newlines inside quotes (docs/spec/parse.md §1) */
	expect_dump("\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\"\r\nnext,row\r\n", 0,
		    "1:a,b|say \"hi\"|two\r\nlines\n3:next|row\n");
	/* the profilers' shape cells: literal quotes survive (docs/spec/parse.md §2) */
	expect_dump("Input Shapes\r\n\"\"\"4,8;8,16\"\"\"\r\n", 0,
		    "1:Input Shapes\n2:\"4,8;8,16\"\n");
	/* a quoted empty field, and "" as a whole record */
	expect_dump("\"\",x\r\n\"\"\r\n", 0, "1:|x\n2:\n");
}

static void test_lenient_quotes(void **state)
{
	(void)state;
	/* Python csv (strict=False): a quote inside an unquoted field is literal,
	 * text after a closing quote is appended */
	expect_dump("ab\"c,d\r\n", 0, "1:ab\"c|d\n");
	expect_dump("\"ab\"c\"d,e\r\n", 0, "1:abc\"d|e\n");
	expect_dump(" \"x\",y\n", 0, "1: \"x\"|y\n");
}

static void test_trim(void **state)
{
	(void)state;
	/* Ascend writes a tab after Start Time(us); every cell is trimmed (§1) */
	expect_dump(" a ,1729567123456789.123\t,\" q \"\r\n", PERFDB_CSV_TRIM,
		    "1:a|1729567123456789.123|q\n");
	/* a quote after a space does not open a quoted field: it stays literal */
	expect_dump(" \" q \" \r\n", PERFDB_CSV_TRIM, "1:\" q \"\n");
	expect_dump(" a ,b\t\r\n", 0, "1: a |b\t\n");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("a,b\r\nc,\"open\r\nmore", strlen("a,b\r\nc,\"open\r\nmore"), 0,
		     "t.csv:2:3: end of file inside a quoted field (unbalanced '\"')");
	expect_error("ab\0c\r\n", 6, 0, "t.csv:1:3: NUL byte in CSV (binary file?)");
	expect_error("x\r\n\"q\0\"\r\n", 8, 0, "t.csv:2:3: NUL byte in CSV (binary file?)");
	expect_error("ok\r\na\xff,b\r\n", 9, PERFDB_CSV_UTF8, "t.csv:2:2: invalid UTF-8 byte 0xff");
	/* overlong encoding of '/' and a lone surrogate are invalid too */
	expect_error("\xc0\xaf\n", 3, PERFDB_CSV_UTF8, "t.csv:1:1: invalid UTF-8 byte 0xc0");
	expect_error("a\xed\xa0\x80\n", 5, PERFDB_CSV_UTF8, "t.csv:1:2: invalid UTF-8 byte 0xed");
	/* valid multibyte text passes */
	expect_dump("caf\xc3\xa9,\xe6\x97\xa5\xf0\x9f\x98\x80\n", PERFDB_CSV_UTF8,
		    "1:caf\xc3\xa9|\xe6\x97\xa5\xf0\x9f\x98\x80\n");
}

static void test_huge_field_and_limit(void **state)
{
	(void)state;
	/* a 10 MB single field, delivered 4 KiB at a time: the buffer grows */
	size_t n = 10u << 20;
	char *s = malloc(n + 8);
	memset(s, 'x', n + 8);
	s[0] = '"';
	memcpy(s + n + 1, "\",y\r\n", 5);
	struct perfdb_csv_reader *r;
	struct perfdb_err err;
	assert_int_equal(perfdb_csv_open_mem_chunked(&r, "big.csv", s, n + 6, 4096, 0, &err), 0);
	struct perfdb_csv_row row;
	assert_int_equal(perfdb_csv_next(r, &row, &err), 1);
	assert_int_equal(row.n, 2);
	assert_int_equal(row.f[0].len, n);
	assert_int_equal(row.f[1].len, 1);
	assert_int_equal(perfdb_csv_next(r, &row, &err), 0);
	perfdb_csv_close(r);

	/* the same record with a 1 MiB limit is refused with a position */
	assert_int_equal(perfdb_csv_open_mem_chunked(&r, "big.csv", s, n + 6, 4096, 0, &err), 0);
	perfdb_csv_set_max_record(r, 1u << 20);
	assert_int_equal(perfdb_csv_next(r, &row, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "big.csv:1:1: record longer than 1048576 bytes");
	perfdb_csv_close(r);
	free(s);
}

static void test_file_and_columns(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-csv-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "Type,Input Shapes\r\nMatMulV2,\"\"\"4,8;8,16\"\"\"\r\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (long)sizeof(text) - 1);
	close(fd);

	struct perfdb_csv_reader *r;
	struct perfdb_err err;
	assert_int_equal(perfdb_csv_open(&r, path, PERFDB_CSV_UTF8, &err), 0);
	struct perfdb_csv_row row;
	assert_int_equal(perfdb_csv_next(r, &row, &err), 1);
	assert_int_equal(perfdb_csv_field_col(r, &row, 1), 6);
	assert_int_equal(perfdb_csv_next(r, &row, &err), 1);
	assert_int_equal(row.line, 2);
	assert_int_equal(perfdb_csv_field_col(r, &row, 0), 1);
	assert_int_equal(perfdb_csv_field_col(r, &row, 1), 11); /* after the opening quote */
	assert_int_equal(perfdb_csv_next(r, &row, &err), 0);
	assert_int_equal(perfdb_csv_offset(r), sizeof(text) - 1);
	perfdb_csv_close(r);
	unlink(path);

	assert_int_equal(perfdb_csv_open(&r, path, 0, &err), -PERFDB_EIO);
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

static void test_writer(void **state)
{
	(void)state;
	assert_false(perfdb_csv_needs_quote("DT_BF16;DT_BF16", 15));
	assert_true(perfdb_csv_needs_quote("4,16", 4));
	assert_true(perfdb_csv_needs_quote("a\rb", 3));
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	const char *row[] = { "MatMulV2", "\"4,8;8,16\"", "4,16", "", "12.500000" };
	assert_int_equal(perfdb_csv_put_row(&sb, row, 5), 0);
	/* docs/spec/parse.md §4: literal-quoted shapes go to disk as """4,8;8,16""" */
	assert_string_equal(sb.buf, "MatMulV2,\"\"\"4,8;8,16\"\"\",\"4,16\",,12.500000\r\n");
	perfdb_strbuf_reset(&sb);
	const char *one[] = { "" };
	assert_int_equal(perfdb_csv_put_row(&sb, one, 1), 0);
	assert_string_equal(sb.buf, "\"\"\r\n");
	perfdb_strbuf_release(&sb);
}

static void test_roundtrip(void **state)
{
	(void)state;
	/* write then read gives the same fields back */
	const char *row[] = { "a\"b", "x,y", "line1\r\nline2", "", "\"\"\"" };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	perfdb_csv_put_row(&sb, row, 5);
	perfdb_csv_put_row(&sb, row, 5);
	struct perfdb_csv_reader *r;
	struct perfdb_err err;
	assert_int_equal(perfdb_csv_open_mem(&r, "rt", sb.buf, sb.len, 0, &err), 0);
	struct perfdb_csv_row got;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(perfdb_csv_next(r, &got, &err), 1);
		assert_int_equal(got.n, 5);
		for (size_t i = 0; i < 5; i++) {
			assert_int_equal(got.f[i].len, strlen(row[i]));
			assert_memory_equal(got.f[i].p, row[i], got.f[i].len);
		}
	}
	assert_int_equal(got.line, 3); /* the first record spans lines 1-2 */
	assert_int_equal(perfdb_csv_next(r, &got, &err), 0);
	perfdb_csv_close(r);
	perfdb_strbuf_release(&sb);
}

/* the first repeated header name, by position; empty names never count */
static void test_first_duplicate(void **state)
{
	(void)state;
	struct perfdb_csv_field f[6] = {
		{ "a", 1 }, { "b", 1 }, { "", 0 }, { "b", 1 }, { "", 0 }, { "a", 1 },
	};
	assert_int_equal(perfdb_csv_first_duplicate(f, 6), 3);   /* b at 3 comes before a at 5 */
	assert_int_equal(perfdb_csv_first_duplicate(f, 3), 3);   /* none among a, b, "" */
	struct perfdb_csv_field g[3] = { { "ab", 2 }, { "a", 1 }, { "abc", 2 } };
	assert_int_equal(perfdb_csv_first_duplicate(g, 3), 2);   /* "ab" again (length 2) */
	assert_int_equal(perfdb_csv_first_duplicate(g, 0), 0);
	/* three of one name: the second is the repeat */
	struct perfdb_csv_field h[4] = { { "x", 1 }, { "y", 1 }, { "x", 1 }, { "x", 1 } };
	assert_int_equal(perfdb_csv_first_duplicate(h, 4), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_line_endings),
		cmocka_unit_test(test_first_duplicate),
		cmocka_unit_test(test_bom_and_blank_lines),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_lenient_quotes),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_huge_field_and_limit),
		cmocka_unit_test(test_file_and_columns),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
