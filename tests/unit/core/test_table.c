/*
 * Unit tests: database tables (include/perfdb/table.h) and the signature
 * index.  Expected results follow docs/design.md ("Unknown columns are preserved
 * untouched, in place"; CRLF, minimal quoting) and docs/spec/replay.md §2
 * ("Existing rows are indexed by signature (first row wins)").
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
#include "perfdb/table.h"

static const char db_text[] =
	"OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
	"Output Data Types,Output Formats,My Note,Profiling Average Duration(us)\r\n"
	"dynamic,AI_CORE,\"\"\"2,3;4,3\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,keep me,12.500000\r\n"
	"dynamic,AI_CORE,\"\"\"2,3;3,4\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,4\"\"\",DT_BF16,ND,\"a,b\",\r\n"
	"dynamic,AI_CORE,\"\"\"8,16;16,32\"\"\",DT_FLOAT16;DT_FLOAT16,ND;ND,\"\"\"8,32\"\"\",DT_FLOAT16,ND,,3.000000\r\n";

static void load(struct perfdb_table *t, const char *text)
{
	struct perfdb_err err;
	perfdb_table_init(t);
	if (perfdb_table_load_mem(t, "MatMulV2.csv", text, strlen(text), &err) != 0)
		fail_msg("load failed: %s", err.msg);
}

static void test_load_serialize_identity(void **state)
{
	(void)state;
	struct perfdb_table t;
	load(&t, db_text);
	assert_int_equal(t.ncols, 10);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Input Shapes")),
			    "\"2,3;4,3\"");
	assert_string_equal(perfdb_table_get(&t, 1, perfdb_table_col(&t, "My Note")), "a,b");
	assert_int_equal(t.rows[2].line, 4);
	assert_false(t.dirty);
	/* a file in the database dialect is written back byte for byte */
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_table_serialize(&t, &sb), 0);
	assert_string_equal(sb.buf, db_text);
	perfdb_strbuf_release(&sb);
	perfdb_table_release(&t);
}

static void test_short_rows_padded(void **state)
{
	(void)state;
	struct perfdb_table t;
	load(&t, "a,b,c\nx\ny,z\n");
	assert_int_equal(t.nrows, 2);
	assert_string_equal(perfdb_table_get(&t, 0, 0), "x");
	assert_string_equal(perfdb_table_get(&t, 0, 2), "");
	assert_string_equal(perfdb_table_get(&t, 1, 1), "z");
	assert_string_equal(perfdb_table_get(&t, 1, -1), "");
	perfdb_table_release(&t);
}

static void expect_load_error(const char *text, int code, const char *msg)
{
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load_mem(&t, "t.csv", text, strlen(text), &err), -code);
	assert_string_equal(err.msg, msg);
	perfdb_table_release(&t);
}

static void test_load_errors(void **state)
{
	(void)state;
	expect_load_error("a,b\n1,2\n1,2,3\n", PERFDB_EPARSE,
			  "t.csv:3:5: record has 3 fields, header has 2");
	expect_load_error("a,b,a\n", PERFDB_ESCHEMA, "t.csv:1:5: duplicate column 'a' in header");
	expect_load_error("a,,c\n", PERFDB_ESCHEMA, "t.csv:1:3: empty column name in header (column 2)");
	expect_load_error("", PERFDB_ESCHEMA, "t.csv:1: empty file: no header row");
	expect_load_error("a\n\"x\n", PERFDB_EPARSE,
			  "t.csv:2:1: end of file inside a quoted field (unbalanced '\"')");
}

static void test_edit_columns_and_rows(void **state)
{
	(void)state;
	struct perfdb_table t;
	struct perfdb_err err;
	load(&t, "A,B,C\r\n1,2,3\r\n4,5,6\r\n");
	assert_int_equal(perfdb_table_insert_col(&t, "X", 1, &err), 1);
	assert_true(t.dirty);
	assert_int_equal(perfdb_table_insert_col(&t, "A", 0, &err), -PERFDB_ESCHEMA);
	assert_int_equal(perfdb_table_rename_col(&t, 3, "Cee", &err), 0);
	assert_int_equal(perfdb_table_rename_col(&t, 3, "A", &err), -PERFDB_ESCHEMA);
	assert_int_equal(perfdb_table_set(&t, 0, 1, "x0", 2, &err), 0);
	long r = perfdb_table_append_row(&t, &err);
	assert_int_equal(r, 2);
	assert_int_equal(perfdb_table_set(&t, 2, 0, "7", 1, &err), 0);
	perfdb_table_drop_col(&t, 2); /* B */
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	perfdb_table_serialize(&t, &sb);
	assert_string_equal(sb.buf, "A,X,Cee\r\n1,x0,3\r\n4,,6\r\n7,,\r\n");
	bool keep[3] = { true, false, true };
	perfdb_table_filter_rows(&t, keep);
	perfdb_strbuf_reset(&sb);
	perfdb_table_serialize(&t, &sb);
	assert_string_equal(sb.buf, "A,X,Cee\r\n1,x0,3\r\n7,,\r\n");
	perfdb_strbuf_release(&sb);
	perfdb_table_release(&t);
}

static void test_set_unchanged_keeps_clean(void **state)
{
	(void)state;
	struct perfdb_table t;
	struct perfdb_err err;
	load(&t, "A\r\nsame\r\n");
	assert_int_equal(perfdb_table_set(&t, 0, 0, "same", 4, &err), 0);
	assert_false(t.dirty);
	assert_int_equal(perfdb_table_set(&t, 0, 0, "other", 5, &err), 0);
	assert_true(t.dirty);
	perfdb_table_release(&t);
}

static void test_signature_index(void **state)
{
	(void)state;
	struct perfdb_table t;
	struct perfdb_err err;
	load(&t, db_text);
	struct perfdb_sig_index ix;
	perfdb_sig_index_init(&ix);
	assert_int_equal(perfdb_table_index(&t, "MatMulV2", &ix, &err), 0);
	/* rows 0 and 1 are one matmul (B given as N,K and as K,N): first row wins */
	assert_int_equal(ix.n, 2);
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_table_row_sig(&t, 1, "MatMulV2", &sig), 0);
	const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(&ix, sig.buf);
	assert_non_null(e);
	assert_int_equal(e->row, 0);
	assert_int_equal(e->count, 2);
	assert_null(perfdb_sig_index_find(&ix, "no|such|sig||"));
	perfdb_strbuf_release(&sig);
	perfdb_sig_index_release(&ix);

	/* many signatures force the index to grow */
	perfdb_sig_index_init(&ix);
	char key[32];
	for (size_t i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		assert_int_equal(perfdb_sig_index_add(&ix, key, i), 0);
	}
	assert_int_equal(ix.n, 5000);
	assert_int_equal(perfdb_sig_index_find(&ix, "k4321")->row, 4321);
	perfdb_sig_index_release(&ix);
	perfdb_table_release(&t);
}

static void test_save_roundtrip(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-table-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct perfdb_lock lk;
	struct perfdb_err err;
	assert_int_equal(perfdb_lock_acquire(&lk, dir, 1.0, &err), 0);
	struct perfdb_table t;
	load(&t, db_text);
	char path[256];
	snprintf(path, sizeof(path), "%s/MatMulV2.csv", dir);
	assert_int_equal(perfdb_table_set(&t, 1, 9, "7.250000", 8, &err), 0);
	assert_int_equal(perfdb_table_save(&t, path, &lk, &err), 0);
	assert_false(t.dirty);
	perfdb_table_release(&t);
	perfdb_lock_release(&lk);

	struct perfdb_table u;
	perfdb_table_init(&u);
	assert_int_equal(perfdb_table_load(&u, path, &err), 0);
	assert_string_equal(perfdb_table_get(&u, 1, 9), "7.250000");
	assert_string_equal(perfdb_table_get(&u, 1, 8), "a,b");
	perfdb_table_release(&u);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* nothing else left behind, no lock file either */
}

/* Streaming (writeback): the rows one at a time, rewound to the mark, give
 * the cells a whole load gives, and memory does not grow with the rows. */
static void test_stream_rows(void **state)
{
	(void)state;
	struct perfdb_table whole, t;
	load(&whole, db_text);
	struct perfdb_err err;
	struct perfdb_csv_reader *r;
	assert_int_equal(perfdb_csv_open_mem(&r, "MatMulV2.csv", db_text, strlen(db_text),
					     PERFDB_CSV_UTF8, &err), 0);
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_read_header(&t, r, &err), 0);
	assert_int_equal(t.ncols, whole.ncols);
	struct perfdb_table_mark mk;
	perfdb_table_mark(&t, &mk);
	size_t n = 0;
	const void *arena = NULL;
	for (;;) {
		perfdb_table_rewind(&t, &mk);
		int got = perfdb_table_read_row(&t, r, &err);
		assert_true(got >= 0);
		if (got == 0)
			break;
		assert_int_equal(t.nrows, 1);
		assert_int_equal(t.rows[0].line, whole.rows[n].line);
		for (size_t c = 0; c < t.ncols; c++)
			assert_string_equal(perfdb_table_get(&t, 0, (long)c), perfdb_table_get(&whole, n, (long)c));
		/* an edit after the mark is undone by the rewind */
		assert_int_equal(perfdb_table_set(&t, 0, 0, "edited", 6, &err), 0);
		if (n == 0)
			arena = t.arena;
		else
			assert_ptr_equal(t.arena, arena);   /* the same block, reused */
		n++;
	}
	assert_int_equal(n, whole.nrows);
	perfdb_table_rewind(&t, &mk);
	assert_int_equal(t.nrows, 0);
	perfdb_csv_close(r);

	/* a record wider than the header is refused with its line, as a load refuses it */
	static const char wide[] = "a,b\r\n1,2\r\n1,2,3\r\n";
	assert_int_equal(perfdb_csv_open_mem(&r, "W.csv", wide, strlen(wide), PERFDB_CSV_UTF8, &err), 0);
	struct perfdb_table w;
	perfdb_table_init(&w);
	w.name = strdup("W.csv");
	assert_int_equal(perfdb_table_read_header(&w, r, &err), 0);
	assert_int_equal(perfdb_table_read_row(&w, r, &err), 1);
	assert_int_equal(perfdb_table_read_row(&w, r, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "W.csv:3:"));
	assert_non_null(strstr(err.msg, "record has 3 fields, header has 2"));
	perfdb_csv_close(r);
	perfdb_table_release(&w);
	perfdb_table_release(&t);
	perfdb_table_release(&whole);
}

/* Load and require columns: their indexes, or one message naming the file, the kind and the column. */
static void test_load_cols(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-loadcols-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char text[] = "b,a,c\r\n1,2,3\r\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	struct perfdb_table t;
	struct perfdb_err err;
	static const char *const ok[] = { "a", "c" };
	long col[2];
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load_cols(&t, path, "a test table", ok, 2, col, NULL, &err), 0);
	assert_int_equal(col[0], 1);
	assert_int_equal(col[1], 2);
	perfdb_table_release(&t);
	static const char *const bad[] = { "a", "zz" };
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load_cols(&t, path, "a test table", bad, 2, col, "expected a,zz", &err),
			 -PERFDB_ESCHEMA);
	char want[256];
	snprintf(want, sizeof(want), "%s: not a test table: no column 'zz' (expected a,zz)", path);
	assert_string_equal(err.msg, want);
	perfdb_table_release(&t);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_serialize_identity),
		cmocka_unit_test(test_short_rows_padded),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_edit_columns_and_rows),
		cmocka_unit_test(test_set_unchanged_keeps_clean),
		cmocka_unit_test(test_signature_index),
		cmocka_unit_test(test_save_roundtrip),
		cmocka_unit_test(test_stream_rows),
		cmocka_unit_test(test_load_cols),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
