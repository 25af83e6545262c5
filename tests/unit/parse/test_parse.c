/*
 * Unit tests: the parse stage helpers and FIA metadata, citing
 * docs/spec/parse.md §6 (test_fia_parser_backfill.py) and §2-§5.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/fia.h"
#include "perfdb/fsio.h"
#include "parse/parse.h"
#include "perfdb/table.h"

static void test_helpers(void **state)
{
	(void)state;
	char buf[64];
	/* §6: infer_avg_seq_len("40, 998") = 519.000000, "bad" -> "" */
	assert_int_equal(perfdb_fia_avg_seq_len("40, 998", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "519.000000");
	assert_int_equal(perfdb_fia_avg_seq_len("1;2,3", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2.000000");
	assert_true(perfdb_fia_avg_seq_len("bad", buf, sizeof(buf)) < 0);
	assert_string_equal(buf, "");
	/* §6: sanitize('A/B:*?"') = A_B____ */
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_parse_sanitize_name("A/B:*?\"", &sb), 0);
	assert_string_equal(sb.buf, "A_B____");
	assert_int_equal(perfdb_parse_sanitize_name("  ", &sb), 0);
	assert_string_equal(sb.buf, "UNKNOWN_TYPE");
	assert_int_equal(perfdb_parse_sanitize_name("a\tb<c>", &sb), 0);
	assert_string_equal(sb.buf, "a_b_c_");
	/* no hidden tables: a leading '.' (after trimming) becomes '_', others stay */
	assert_int_equal(perfdb_parse_sanitize_name(" .hidden.x", &sb), 0);
	assert_string_equal(sb.buf, "_hidden.x");
	assert_int_equal(perfdb_parse_sanitize_name("..", &sb), 0);
	assert_string_equal(sb.buf, "_.");
	/* long names: 183-byte prefix, '~', 16 hex digits */
	char longname[600];
	memset(longname, 'k', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(perfdb_parse_sanitize_name(longname, &sb), 0);
	assert_int_equal(sb.len, PERFDB_PARSE_NAME_MAX);
	assert_int_equal(sb.buf[183], '~');
	perfdb_strbuf_release(&sb);
	/* §6: '"N/A"' is N/A; §2 any case, outer quotes removed */
	struct perfdb_span na = { "\"N/A\"", 5 }, na2 = { " n/a ", 5 }, no = { "\"N/A;1\"", 7 };
	assert_true(perfdb_parse_is_na(na));
	assert_true(perfdb_parse_is_na(na2));
	assert_false(perfdb_parse_is_na(no));
	/* §2/§6: exact renames only */
	size_t len;
	const char *t = perfdb_parse_normalize_type("muls_add_kernel_1", 17, &len);
	assert_int_equal(len, 15);
	assert_memory_equal(t, "muls_add_kernel", 15);
	t = perfdb_parse_normalize_type("split_qkv_rmsnorm_rope_kernel_0", 31, &len);
	assert_int_equal(len, 29);
	t = perfdb_parse_normalize_type("muls_add_kernel_2", 17, &len);
	assert_int_equal(len, 17);
	assert_memory_equal(t, "muls_add_kernel_2", 17);
}

static void write_file(const char *path, const char *text)
{
	struct perfdb_err err;
	assert_int_equal(perfdb_file_write_atomic(path, text, strlen(text), &err), 0);
}

/* §6 end to end: profile_a/ kernel row (slot 14 empty) plus operator row
 * (slot 14 5,512, Name aclnnFusedInferAttentionScoreV2) -> source_profile
 * profile_a, block_table 5,512; slots 5 and 6 = 5 and 5; profile_shapes_only */
static void test_fia_end_to_end(void **state)
{
	(void)state;
	char root[] = "/tmp/perfdb-test-parse-XXXXXX";
	assert_non_null(mkdtemp(root));
	char dir[128], kd[160], od[160], db[128];
	snprintf(dir, sizeof(dir), "%s/profile_a", root);
	snprintf(kd, sizeof(kd), "%s/kernel_details.csv", dir);
	snprintf(od, sizeof(od), "%s/operator_details.csv", dir);
	snprintf(db, sizeof(db), "%s/db", root);
	struct perfdb_err err;
	assert_int_equal(perfdb_mkdir_p(dir, &err), 0);
	write_file(kd, "Type,Input Shapes,Output Shapes,Duration(us)\r\n"
		       "FusedInferAttentionScore,\"\"\"5,1,128;5,128;5,128;;;5;5;;;;;;;;;\"\"\",\"\"\"5,1,128\"\"\",20\r\n");
	write_file(od, "Name,Input Shapes,Output Shapes\r\n"
		       "aclnnFusedInferAttentionScoreV2,\"5,1,128;5,128;5,128;;;5;5;;;;;;;;5,512\",\"5,1,128\"\r\n");
	struct perfdb_parse_opts o = { .profiling_path = root, .outdir = db, .jobs = 1,
				       .lock_timeout = 1 };
	struct perfdb_parse_result res;
	assert_int_equal(perfdb_parse_run(&o, &res, &err), 0);
	assert_int_equal(res.ntables, 1);
	perfdb_parse_result_release(&res);
	char path[200];
	snprintf(path, sizeof(path), "%s/FusedInferAttentionScore.csv", db);
	struct perfdb_table t;
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load(&t, path, &err), 0);
	assert_int_equal(t.ncols, 36 + 16 + 1);
	assert_int_equal(t.nrows, 1);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime source_profile")), "profile_a");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime actual_seq_lengths_shape")), "5");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime actual_seq_lengths_kv_shape")), "5");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime block_table_shape")), "5,512");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime avg_seq_len")), "");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime metadata_completeness")),
			    "profile_shapes_only");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Profiling Average Duration(us)")),
			    "20.000000");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Profiling Count")), "1");
	perfdb_table_release(&t);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static int warnings;
static void count_warn(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
	warnings++;
}

/* Decision 8: a non-integer FIA slot leaves the field empty and warns */
static void test_fia_bad_slot(void **state)
{
	(void)state;
	char root[] = "/tmp/perfdb-test-parse-XXXXXX";
	assert_non_null(mkdtemp(root));
	char kd[160], db[128];
	snprintf(kd, sizeof(kd), "%s/kernel_details.csv", root);
	snprintf(db, sizeof(db), "%s/db", root);
	write_file(kd, "Type,Input Shapes,Output Shapes,Duration(us)\r\n"
		       "FusedInferAttentionScore,\"\"\"1;1;1;;;N/A;x;;;;;;;;2,4\"\"\",\"\"\"1\"\"\",3\r\n");
	struct perfdb_err err;
	struct perfdb_parse_opts o = { .profiling_path = kd, .outdir = db, .jobs = 1,
				       .lock_timeout = 1, .warn = count_warn };
	struct perfdb_parse_result res;
	warnings = 0;
	assert_int_equal(perfdb_parse_run(&o, &res, &err), 0);
	assert_int_equal(warnings, 2);   /* optional columns missing, and slot 6 'x' */
	perfdb_parse_result_release(&res);
	char path[200];
	snprintf(path, sizeof(path), "%s/FusedInferAttentionScore.csv", db);
	struct perfdb_table t;
	perfdb_table_init(&t);
	assert_int_equal(perfdb_table_load(&t, path, &err), 0);
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime actual_seq_lengths_shape")), "");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime actual_seq_lengths_kv_shape")), "");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime block_table_shape")), "2,4");
	assert_string_equal(perfdb_table_get(&t, 0, perfdb_table_col(&t, "Runtime source_profile")),
			    strrchr(root, '/') + 1);
	perfdb_table_release(&t);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* Decision 2: invalid durations are not samples; §3 stats on the rest */
static void test_aggregate_stats(void **state)
{
	(void)state;
	const char csv[] =
		"Type,Input Shapes,Input Data Types,Output Shapes,Duration(us),aicore_time(us)\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",1,N/A\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",bad,2\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",2,4\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",6,x\r\n"
		"Add,\"\"\"4\"\"\",DT_FLOAT16,\"\"\"4\"\"\",9,\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",-1,\r\n"
		"Add,\"\"\"4\"\"\",DT_BF16,\"\"\"4\"\"\",nan,\r\n";
	struct perfdb_agg *a;
	struct perfdb_err err;
	assert_int_equal(perfdb_agg_new(&a, 0, &err), 0);
	struct perfdb_row_sink sink = perfdb_agg_sink(a);
	struct perfdb_csv_input_stats st;
	assert_int_equal(perfdb_parse_read_csv_mem("m.csv", csv, sizeof(csv) - 1,
						   PERFDB_INPUT_KERNEL_DETAILS, &sink, &st, &err), 0);
	assert_int_equal(perfdb_agg_finish(a, &err), 0);
	assert_int_equal(perfdb_agg_ngroups(a), 2);   /* bf16 and fp16 are two keys (Decision 4) */
	const struct perfdb_agg_group *g = perfdb_agg_group(a, 0);
	assert_int_equal(g->n, 3);                   /* 1, 2, 6 */
	assert_int_equal(g->n_invalid, 3);           /* bad, -1, nan */
	assert_true(g->mean == 3.0);
	assert_true(g->median == 2.0);
	/* population std of 1,2,6: sqrt(((1-3)^2+(2-3)^2+(6-3)^2)/3) = sqrt(14/3) */
	assert_true(g->std > 2.1602468 && g->std < 2.1602469);
	assert_int_equal(g->cn[0], 2);               /* 2 and 4; N/A, x and empty are not values */
	assert_true((g->csum[0] + g->ccomp[0]) / (double)g->cn[0] == 3.0);
	assert_int_equal(perfdb_agg_totals(a)->invalid_counters, 1);   /* 'x' */
	assert_true(perfdb_agg_group(a, 1)->median == 9.0);
	perfdb_agg_free(a);
}

/*
 * The memo path gives what row() gives: the same rows, six combinations
 * (two of one key, one dropped for N/A shapes, one with an empty Type)
 * offered in an interleaved order, once through row() and once through
 * row_memo() with a memo per combination; groups, samples and counts agree.
 */
static void test_aggregate_memo(void **state)
{
	(void)state;
	static const struct { const char *type, *ins, *ind, *outs, *state; } combo[] = {
		{ "MatMul", "\"8,16;16,32\"", "DT_BF16", "\"8,32\"", "dynamic" },
		{ "MatMul", "\"8,16;16,32\"", "DT_BF16", "\"8,32\"", "" },   /* same key */
		{ "Add", "\"4\"", "DT_FLOAT", "\"4\"", "" },
		{ "Add", "N/A", "DT_FLOAT", "\"4\"", "" },                     /* dropped */
		{ "", "\"4\"", "DT_FLOAT", "\"4\"", "" },                    /* no type */
		{ "Cast", "\"4\"", "DT_FLOAT", "\"4\"", "static" },
	};
	static const char *const dur[] = { "3.5", "1", "bad", "2.25", "7", "0.5", "4", "", "9", "6.125" };
	struct perfdb_agg *a, *b;
	struct perfdb_err err;
	assert_int_equal(perfdb_agg_new(&a, 0, &err), 0);
	assert_int_equal(perfdb_agg_new(&b, 0, &err), 0);
	struct perfdb_row_sink sa = perfdb_agg_sink(a), sb = perfdb_agg_sink(b);
	assert_non_null(sb.row_memo);
	uint32_t memo[6] = { 0 };
	for (int i = 0; i < 60; i++) {
		int c = (i * 7 + i / 6) % 6;
		struct perfdb_kernel_row r;
		memset(&r, 0, sizeof(r));
		r.file = "m.db";
		r.type = (struct perfdb_span){ combo[c].type, strlen(combo[c].type) };
		r.in_shapes = (struct perfdb_span){ combo[c].ins, strlen(combo[c].ins) };
		r.in_dtypes = (struct perfdb_span){ combo[c].ind, strlen(combo[c].ind) };
		r.out_shapes = (struct perfdb_span){ combo[c].outs, strlen(combo[c].outs) };
		r.op_state = (struct perfdb_span){ combo[c].state, strlen(combo[c].state) };
		r.duration = (struct perfdb_span){ dur[i % 10], strlen(dur[i % 10]) };
		assert_int_equal(sa.row(sa.ctx, &r, &err), 0);
		assert_int_equal(sb.row_memo(sb.ctx, &r, &memo[c], &err), 0);
	}
	assert_int_equal(memo[3], 1);   /* remembered as dropped */
	assert_int_equal(memo[4], 2);
	assert_int_equal(memo[0], memo[1]);
	assert_int_equal(perfdb_agg_finish(a, &err), 0);
	assert_int_equal(perfdb_agg_finish(b, &err), 0);
	assert_int_equal(perfdb_agg_ngroups(a), 3);
	assert_int_equal(perfdb_agg_ngroups(b), 3);
	const struct perfdb_agg_totals *ta = perfdb_agg_totals(a), *tb = perfdb_agg_totals(b);
	assert_int_equal(ta->rows, 60);
	assert_int_equal(tb->rows, 60);
	assert_int_equal(ta->dropped_na, 10);
	assert_int_equal(tb->dropped_na, ta->dropped_na);
	assert_int_equal(tb->empty_type, ta->empty_type);
	assert_int_equal(tb->invalid_durations, ta->invalid_durations);
	for (size_t g = 0; g < 3; g++) {
		const struct perfdb_agg_group *x = perfdb_agg_group(a, g), *y = perfdb_agg_group(b, g);
		assert_string_equal(x->type, y->type);
		assert_string_equal(x->op_state, y->op_state);
		assert_int_equal(x->n, y->n);
		assert_int_equal(x->n_invalid, y->n_invalid);
		assert_true(x->median == y->median && x->mean == y->mean && x->std == y->std);
		assert_true(x->min == y->min && x->max == y->max);
	}
	/* MatMul's two combinations are one group, whose OP State is the first non-empty */
	assert_string_equal(perfdb_agg_group(b, 0)->type, "MatMul");
	assert_string_equal(perfdb_agg_group(b, 0)->op_state, "dynamic");
	perfdb_agg_free(a);
	perfdb_agg_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_fia_end_to_end),
		cmocka_unit_test(test_fia_bad_slot),
		cmocka_unit_test(test_aggregate_stats),
		cmocka_unit_test(test_aggregate_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
