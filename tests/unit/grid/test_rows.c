/*
 * Unit tests for src/grid/rows.c: a table's rows, dedupe, absent slots,
 * padding, the written image and the HBM estimate (spec §3, §5, §7).
 * Expected values are worked out by hand from docs/spec/grid.md (counts also
 * match tests/grid/oracle_grid.py).
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

#include "grid_test.h"

/* ---- rows: §1 row build, §3 post-processing, §7 dedupe / clearing -------- */

static struct perfdb_table *table(const char *csv)
{
	struct perfdb_table *t = malloc(sizeof(*t));
	struct perfdb_err err;
	perfdb_table_init(t);
	if (perfdb_table_load_mem(t, "mem.csv", csv, strlen(csv), &err) != 0)
		fail_msg("%s", err.msg);
	return t;
}

static void table_free(struct perfdb_table *t)
{
	perfdb_table_release(t);
	free(t);
}

static void set2(struct grid_shape *s, int64_t a, int64_t b)
{
	int64_t v[2] = { a, b };
	grid_shape_set(s, 2, v);
}

static void set1(struct grid_shape *s, int64_t a)
{
	grid_shape_set(s, 1, &a);
}

/* §7 "Dedupe ignores durations and drops the MatMul transposed-B duplicate". */
static void test_dedupe_matmul_transposed(void **state)
{
	(void)state;
	struct perfdb_table *t = table(
		"OP State,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
		"Output Data Types,Average Duration(us)\r\n"
		"static,\"\"\"32,6144;2048,6144\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"32,2048\"\"\","
		"DT_BF16,12.0\r\n");
	struct grid_file *f;
	struct perfdb_err err;
	assert_int_equal(grid_file_new(&f, t, "MatMulV2", NULL, 0, &err), 0);
	struct grid_cand *c = calloc(1, sizeof(*c));
	c->nin = 2;
	c->nout = 1;
	set2(&c->in[0], 32, 6144);
	set2(&c->in[1], 6144, 2048);       /* (M,K)(K,N): the same GEMM */
	set2(&c->out[0], 32, 2048);
	assert_int_equal(grid_file_add(f, c, &err), 0);
	set2(&c->in[0], 48, 6144);
	set2(&c->in[1], 2048, 6144);
	set2(&c->out[0], 48, 2048);
	assert_int_equal(grid_file_add(f, c, &err), 0);
	const struct grid_file_stats *st = grid_file_stats(f);
	assert_int_equal(st->duplicates, 1);
	assert_int_equal(st->kept, 1);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_string_equal(grid_file_row_cell(f, 0, "Input Shapes", &sb), "\"48,6144;2048,6144\"");
	assert_string_equal(grid_file_row_cell(f, 0, "Average Duration(us)", &sb), "0");
	assert_string_equal(grid_file_row_cell(f, 0, "OP State", &sb), "static");
	perfdb_strbuf_release(&sb);
	free(c);
	grid_file_free(f);
	table_free(t);
}

/* §7 dedupe against source rows ignores the duration columns. */
static void test_dedupe_ignores_durations(void **state)
{
	(void)state;
	struct perfdb_table *t = table(
		"Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
		"Average Duration(us),MicroBench aiv_time(us)\r\n"
		"\"\"\"128,10240;128,10240;10240;10240\"\"\",DT_BF16;DT_BF16;DT_BF16;DT_BF16,"
		"ND;ND;ND;ND,\"\"\"128,10240;128,1;128,10240\"\"\",DT_BF16;DT_FLOAT;DT_BF16,17.84,16.0\r\n");
	struct grid_file *f;
	struct perfdb_err err;
	assert_int_equal(grid_file_new(&f, t, "AddRmsNormBias", NULL, 0, &err), 0);
	struct grid_cand *c = calloc(1, sizeof(*c));
	int64_t rows[2] = { 128, 2048 }, dims[2] = { 10240, 384 };
	for (int k = 0; k < 2; k++) {
		c->nin = 4;
		c->nout = 3;
		set2(&c->in[0], rows[k], dims[k]);
		set2(&c->in[1], rows[k], dims[k]);
		set1(&c->in[2], dims[k]);
		set1(&c->in[3], dims[k]);
		set2(&c->out[0], rows[k], dims[k]);
		set2(&c->out[1], rows[k], 1);
		set2(&c->out[2], rows[k], dims[k]);
		assert_int_equal(grid_file_add(f, c, &err), 0);
	}
	assert_int_equal(grid_file_stats(f)->duplicates, 1);
	assert_int_equal(grid_file_stats(f)->kept, 1);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_string_equal(grid_file_row_cell(f, 0, "Input Shapes", &sb),
			    "\"2048,384;2048,384;384;384\"");
	assert_string_equal(grid_file_row_cell(f, 0, "MicroBench aiv_time(us)", &sb), "0");
	perfdb_strbuf_release(&sb);
	free(c);
	grid_file_free(f);
	table_free(t);
}

/* §7 "Absent slots are cleared unless dtypes are overridden" (AddRmsNormBias). */
static void test_absent_slots(void **state)
{
	(void)state;
	const char *csv =
		"Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
		"Output Formats,Average Duration(us)\r\n"
		"\"\"\"1,512;1,512;512;\"\"\",DT_BF16;DT_BF16;DT_BF16;DT_UNDEFINED,ND;ND;ND;NULL,"
		"\"\"\"1,512;1,1;1,512\"\"\",DT_BF16;FLOAT;DT_BF16,ND;ND;ND,1.0\r\n";
	for (int override = 0; override < 2; override++) {
		struct perfdb_table *t = table(csv);
		struct grid_file *f;
		struct perfdb_err err;
		assert_int_equal(grid_file_new(&f, t, "AddRmsNormBias", NULL, 0, &err), 0);
		struct grid_cand *c = calloc(1, sizeof(*c));
		c->nin = 4;
		c->nout = 3;
		set2(&c->in[0], 128, 512);
		set2(&c->in[1], 128, 512);
		set1(&c->in[2], 512);
		set1(&c->in[3], 512);
		set2(&c->out[0], 128, 512);
		set2(&c->out[1], 128, 1);
		set2(&c->out[2], 128, 512);
		if (override) {
			c->nextra = 2;
			c->extra_col[0] = "Input Data Types";
			c->extra_val[0] = "DT_BF16;DT_BF16;DT_BF16;DT_BF16";
			c->extra_col[1] = "Input Formats";
			c->extra_val[1] = "ND;ND;ND;ND";
		}
		assert_int_equal(grid_file_add(f, c, &err), 0);
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		assert_string_equal(grid_file_row_cell(f, 0, "Input Shapes", &sb),
				    override ? "\"128,512;128,512;512;512\"" : "\"128,512;128,512;512;\"");
		perfdb_strbuf_release(&sb);
		free(c);
		grid_file_free(f);
		table_free(t);
	}
}

/* §3: shapes padded to the template's slot count, never truncated; sorted. */
static void test_padding_and_image(void **state)
{
	(void)state;
	const char *csv = "Input Shapes,Input Data Types,Output Shapes,Count\r\n"
			  "\"\"\"9;9;9\"\"\",DT_BF16,\"\"\"9\"\"\",7\r\n";
	struct perfdb_table *t = table(csv);
	struct grid_file *f;
	struct perfdb_err err;
	const char *add[] = { "EP Size", NULL };
	assert_int_equal(grid_file_new(&f, t, "Foo", add, 0, &err), 0);
	struct grid_cand *c = calloc(1, sizeof(*c));
	c->nin = 1;
	c->nout = 2;
	int64_t order[3] = { 4, 2, 3 };
	for (int k = 0; k < 3; k++) {
		set1(&c->in[0], order[k]);
		set1(&c->out[0], order[k]);
		set1(&c->out[1], 1);
		assert_int_equal(grid_file_add(f, c, &err), 0);
	}
	struct perfdb_strbuf img = PERFDB_STRBUF_INIT;
	assert_int_equal(grid_file_image(f, csv, strlen(csv), &img, &err), 0);
	assert_string_equal(img.buf,
		"Input Shapes,Input Data Types,Output Shapes,Count,EP Size\r\n"
		"\"\"\"9;9;9\"\"\",DT_BF16,\"\"\"9\"\"\",7,\r\n"
		"\"\"\"2;;\"\"\",DT_BF16,\"\"\"2;1\"\"\",7,\r\n"
		"\"\"\"3;;\"\"\",DT_BF16,\"\"\"3;1\"\"\",7,\r\n"
		"\"\"\"4;;\"\"\",DT_BF16,\"\"\"4;1\"\"\",7,\r\n");
	perfdb_strbuf_release(&img);
	free(c);
	grid_file_free(f);
	table_free(t);
	/* the reference's parse_shape_text: a trailing ';' opens no slot, an
	 * empty slot between two ';' is one */
	assert_int_equal(grid_template_slots("\"1,512;1,512;512;\""), 3);
	assert_int_equal(grid_template_slots("\"2;\""), 1);
	assert_int_equal(grid_template_slots("\"2;;\""), 2);
	assert_int_equal(grid_template_slots("\";\""), 1);
	assert_int_equal(grid_template_slots("\"2;;3\""), 3);
	assert_int_equal(grid_template_slots("2"), 1);
	assert_int_equal(grid_template_slots("N/A"), 0);
	assert_int_equal(grid_template_slots(""), 0);
	assert_int_equal(grid_template_slots("\"(1;2);3\""), 2);
}

/* §5 estimator math; "equality with the budget is not over". */
static void test_hbm_estimate(void **state)
{
	(void)state;
	struct grid_shape in[1], out[1];
	set2(&in[0], 4096, 4096);
	set2(&out[0], 4096, 4096);
	uint64_t est = grid_hbm_estimate(in, 1, out, 1, "DT_FLOAT16", "DT_FLOAT16");
	assert_int_equal(est, 4096ull * 4096 * 2 * 2);
	assert_int_equal(grid_dtype_bytes("DT_FLOAT", 8), 4);
	assert_int_equal(grid_dtype_bytes("INT8", 4), 1);
	assert_int_equal(grid_dtype_bytes("dt_bf16", 7), 2);
	assert_int_equal(grid_dtype_bytes("DT_COMPLEX128", 13), 16);
	assert_int_equal(grid_dtype_bytes("whatever", 8), 2);
	assert_int_equal(perfdb_grid_hbm_budget(32.0), 34359738368ull);
	assert_int_equal(perfdb_grid_hbm_budget(0), 0);
	assert_int_equal(perfdb_grid_hbm_budget(-1), 0);
	/* the filter keeps a row whose estimate equals the budget */
	const char *csv = "Input Shapes,Input Data Types,Output Shapes,Output Data Types\r\n"
			  "\"\"\"3\"\"\",DT_FLOAT16,\"\"\"3\"\"\",DT_FLOAT16\r\n";
	struct perfdb_table *t = table(csv);
	struct grid_file *f;
	struct perfdb_err err;
	assert_int_equal(grid_file_new(&f, t, "Foo", NULL, est, &err), 0);
	struct grid_cand *c = calloc(1, sizeof(*c));
	c->nin = c->nout = 1;
	c->in[0] = in[0];
	c->out[0] = out[0];
	assert_int_equal(grid_file_add(f, c, &err), 0);
	set2(&c->in[0], 4096, 4097);
	assert_int_equal(grid_file_add(f, c, &err), 0);
	assert_int_equal(grid_file_stats(f)->kept, 1);
	assert_int_equal(grid_file_stats(f)->hbm_filtered, 1);
	free(c);
	grid_file_free(f);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedupe_matmul_transposed),
		cmocka_unit_test(test_dedupe_ignores_durations),
		cmocka_unit_test(test_absent_slots),
		cmocka_unit_test(test_padding_and_image),
		cmocka_unit_test(test_hbm_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
