/*
 * Unit tests for src/grid/: the grid stage (docs/spec/grid.md).  Each test names
 * the spec section or §7 test it covers.  Expected values are worked out by
 * hand from the spec (counts also match tests/grid/oracle_grid.py).
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

#include "grid/grid_internal.h"
#include "perfdb/device.h"
#include "perfdb/fsio.h"

static struct perfdb_grid_config *load_cfg(void)
{
	char *path = perfdb_data_path("grid.yaml");
	assert_non_null(path);
	struct perfdb_grid_config *c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_grid_config_load(&c, path, &err) != 0)
		fail_msg("%s", err.msg);
	free(path);
	return c;
}

/* ---- §3 evaluator, §7 "align 7/8/9 -> 8/8/16; ().__class__ rejected" ----- */

static int64_t ev(const char *text, const char *const *vars, size_t n, const int64_t *vals)
{
	struct grid_expr *e;
	char msg[256];
	if (grid_expr_compile(&e, text, strlen(text), vars, n, msg, sizeof(msg)) != 0)
		fail_msg("%s: %s", text, msg);
	int64_t v = 0;
	const char *why;
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), 0);
	grid_expr_free(e);
	return v;
}

static int compile_fails(const char *text, const char *const *vars, size_t n)
{
	struct grid_expr *e = NULL;
	char msg[256];
	int rc = grid_expr_compile(&e, text, strlen(text), vars, n, msg, sizeof(msg));
	grid_expr_free(e);
	return rc != 0;
}

/* Nesting and chain limits (a fuzz_grid_yaml finding: deep nesting overflowed the stack) */
static void test_expr_depth_limits(void **state)
{
	(void)state;
	char buf[4096];
	size_t k = 0;
	for (int i = 0; i < 50; i++)
		buf[k++] = '(';
	buf[k++] = '7';
	for (int i = 0; i < 50; i++)
		buf[k++] = ')';
	buf[k] = '\0';
	assert_int_equal(ev(buf, NULL, 0, NULL), 7);           /* 50 levels: fine */
	k = 0;
	for (int i = 0; i < 1000; i++)
		buf[k++] = '(';
	buf[k++] = '7';
	for (int i = 0; i < 1000; i++)
		buf[k++] = ')';
	buf[k] = '\0';
	assert_true(compile_fails(buf, NULL, 0));              /* 1000 levels: refused, no crash */
	k = 0;
	for (int i = 0; i < 1000; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "not ");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_true(compile_fails(buf, NULL, 0));
	k = 0;
	for (int i = 0; i < 100; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "1+");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_int_equal(ev(buf, NULL, 0, NULL), 101);         /* a chain of 100 '+' evaluates */
	k = 0;
	for (int i = 0; i < 1000; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "1+");
	snprintf(buf + k, sizeof(buf) - k, "1");
	assert_true(compile_fails(buf, NULL, 0));              /* 1000: too deep a tree to walk */
}

static void test_expr_reference_cases(void **state)
{
	(void)state;
	const char *vars[] = { "tokens", "D", "tp" };
	int64_t vals[] = { 128, 5120, 4 };
	assert_int_equal(ev("D // tp", vars, 3, vals), 1280);
	assert_int_equal(ev("tokens * 2", vars, 3, vals), 256);
	assert_int_equal(ev("max(1, tokens // 256)", vars, 3, vals), 1);
	assert_int_equal(ev("abs(-10)", vars, 3, vals), 10);
	assert_int_equal(ev("align(tokens, 8)", vars, 3, vals), 128);
	assert_int_equal(ev("align(1, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(7, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(8, 8)", vars, 3, vals), 8);
	assert_int_equal(ev("align(9, 8)", vars, 3, vals), 16);
	assert_true(compile_fails("().__class__", vars, 3));
	assert_true(compile_fails("tokens.real", vars, 3));
	assert_true(compile_fails("__import__", vars, 3));
}

static void test_expr_python_semantics(void **state)
{
	(void)state;
	const char *vars[] = { "a", "b" };
	int64_t vals[] = { -7, 2 };
	assert_int_equal(ev("a // b", vars, 2, vals), -4);       /* floors */
	assert_int_equal(ev("a % b", vars, 2, vals), 1);         /* divisor's sign */
	assert_int_equal(ev("7 % -2", vars, 2, vals), -1);
	assert_int_equal(ev("-2 ** 2", vars, 2, vals), -4);      /* ** binds tighter */
	assert_int_equal(ev("2 ** 3 ** 2", vars, 2, vals), 512); /* right-assoc */
	assert_int_equal(ev("1 < b < 3", vars, 2, vals), 1);     /* chained */
	assert_int_equal(ev("1 < b < 2", vars, 2, vals), 0);
	assert_int_equal(ev("0 or b", vars, 2, vals), 2);        /* returns an operand */
	assert_int_equal(ev("a and 0", vars, 2, vals), 0);
	assert_int_equal(ev("not a", vars, 2, vals), 0);
	assert_int_equal(ev("min(3, b, 9)", vars, 2, vals), 2);
	assert_int_equal(ev("1_000 + 1", vars, 2, vals), 1001);
	assert_true(compile_fails("a / b", vars, 2));            /* true division */
	assert_true(compile_fails("c + 1", vars, 2));            /* unknown name */
	assert_true(compile_fails("pow(a, b)", vars, 2));        /* unknown function */
	assert_true(compile_fails("abs(a, b)", vars, 2));        /* arity */
	assert_true(compile_fails("(a", vars, 2));
	struct grid_expr *e;
	char msg[256];
	const char *why;
	int64_t v;
	assert_int_equal(grid_expr_compile(&e, "a // (b - 2)", 12, vars, 2, msg, sizeof(msg)), 0);
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), -PERFDB_EINVAL);
	assert_string_equal(why, "integer division by zero");
	grid_expr_free(e);
	assert_int_equal(grid_expr_compile(&e, "a * 9223372036854775807", 23, vars, 2, msg,
					   sizeof(msg)), 0);
	assert_int_equal(grid_expr_eval(e, vals, &v, &why), -PERFDB_EINVAL);
	grid_expr_free(e);
}

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

/* ---- models: §2, §7 "GLM static fallback and pairs", "Legacy names raise" - */

static void resolve(struct perfdb_grid_config *cfg, const char *const *ids, size_t n,
		    struct perfdb_grid_models *out)
{
	struct perfdb_err err;
	perfdb_grid_models_init(out);
	if (perfdb_grid_models_resolve(cfg, NULL, ids, n, out, &err) != 0)
		fail_msg("%s", err.msg);
}

static bool has_pair(int64_t (*p)[2], size_t n, int64_t a, int64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (p[i][0] == a && p[i][1] == b)
			return true;
	return false;
}

static void test_models_pairs(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *ids[] = { "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B",
			      "meta-llama/Meta-Llama-3-70B", "zai-org/GLM-5.1" };
	size_t want[] = { 22, 19, 15, 21 };
	for (size_t i = 0; i < 4; i++) {
		struct perfdb_grid_models m;
		resolve(cfg, &ids[i], 1, &m);
		int64_t(*p)[2];
		size_t n;
		struct perfdb_err err;
		assert_int_equal(perfdb_grid_nk_pairs(&m, &p, &n, &err), 0);
		assert_int_equal(n, want[i]);
		if (i == 3) {
			assert_true(has_pair(p, n, 2048, 6144));
			assert_true(has_pair(p, n, 576, 6144));
			assert_true(has_pair(p, n, 16384, 2048));
			assert_true(has_pair(p, n, 16384, 512));
			assert_string_equal(m.v[0].source, "built-in");
		}
		for (size_t k = 1; k < n; k++)   /* sorted */
			assert_true(p[k - 1][0] < p[k][0] ||
				    (p[k - 1][0] == p[k][0] && p[k - 1][1] < p[k][1]));
		free(p);
		perfdb_grid_models_release(&m);
	}
	/* names are normalised: case, '-', '_', '.', '/' and spaces */
	const char *alias[] = { "ZAI-ORG/glm_5.1 " };
	struct perfdb_grid_models m;
	resolve(cfg, alias, 1, &m);
	assert_string_equal(m.v[0].key, "glm51");
	perfdb_grid_models_release(&m);
	/* no list: the five built-in models */
	resolve(cfg, NULL, 0, &m);
	assert_int_equal(m.n, 5);
	perfdb_grid_models_release(&m);
	perfdb_grid_config_free(cfg);
}

static void test_models_legacy_and_unknown(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *bad[] = { "dsv3", "deepseekv3", "metallama370b", "qwen332b", "Qwen3-32B",
			      "llama70b", "glm51", "glm52", "nope/Model" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct perfdb_grid_models m;
		struct perfdb_err err;
		perfdb_grid_models_init(&m);
		assert_int_equal(perfdb_grid_models_resolve(cfg, NULL, &bad[i], 1, &m, &err),
				 -PERFDB_EINVAL);
		assert_non_null(strstr(err.msg, "known models: deepseek-ai/DeepSeek-V3, "
					       "Qwen/Qwen3-32B, meta-llama/Meta-Llama-3-70B, "
					       "zai-org/GLM-5.1, zai-org/GLM-5.2"));
		perfdb_grid_models_release(&m);
	}
	perfdb_grid_config_free(cfg);
}

/* §2 HuggingFace field fallbacks (Decision 6). */
static void test_models_hf_fallbacks(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	struct perfdb_grid_models m;
	struct perfdb_err err;
	perfdb_grid_models_init(&m);
	const char *mla = "{\"d_model\": 7168, \"num_attention_heads\": 128, "
			  "\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, \"v_head_dim\": 128, "
			  "\"head_dim\": 192, \"rotary_dim\": 32, \"num_experts\": 4, "
			  "\"top_k\": 2, \"moe_intermediate_size\": 1024}";
	assert_int_equal(perfdb_grid_model_parse_hf(&m, "a.json", "deepseek-ai/DeepSeek-V3", mla,
						    strlen(mla), cfg, &err), 0);
	const struct perfdb_grid_model *x = &m.v[0];
	assert_int_equal(x->hidden, 7168);
	assert_int_equal(x->kv_heads, 128);      /* defaults to the heads */
	assert_int_equal(x->head_dim, 128);      /* MLA: v_head_dim first */
	assert_int_equal(x->rope, 32);
	assert_int_equal(x->experts, 4);
	assert_int_equal(x->experts_per_card, 4);
	assert_int_equal(x->topk, 2);
	assert_int_equal(x->nep, 3);             /* 1, 2, 4 */
	assert_int_equal(x->ntp, 5);
	assert_string_equal(x->key, "deepseekv3");  /* a built-in id keeps its key */
	const char *dense = "{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
			    "\"multi_query_group_num\": 2, \"kv_channels\": 96, \"q_lora_rank\": null}";
	assert_int_equal(perfdb_grid_model_parse_hf(&m, "b.json", "my/Model-7B", dense,
						    strlen(dense), cfg, &err), 0);
	x = &m.v[1];
	assert_int_equal(x->kv_heads, 2);
	assert_int_equal(x->head_dim, 96);
	assert_string_equal(x->key, "mymodel7b");
	const char *plain = "{\"hidden_size\": 4096, \"num_attention_heads\": 32}";
	assert_int_equal(perfdb_grid_model_parse_hf(&m, "c.json", "c", plain, strlen(plain), cfg,
						    &err), 0);
	assert_int_equal(m.v[2].head_dim, 128);  /* hidden / heads */
	const char *bad = "{\"hidden_size\": \"4096\", \"num_attention_heads\": 32}";
	assert_int_equal(perfdb_grid_model_parse_hf(&m, "d.json", "d", bad, strlen(bad), cfg,
						    &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "d.json: field 'hidden_size' must be an integer");
	perfdb_grid_models_release(&m);
	perfdb_grid_config_free(cfg);
}

/* ---- generators ----------------------------------------------------------- */

struct collect {
	size_t n, cap;
	bool count_only;       /* big grids: count, keep only the first row */
	bool quant;            /* quant_matmul: check the alignment of each row */
	struct grid_cand *v;   /* copies (extra values not kept) */
	char (*src)[96];       /* Runtime source_profile */
	char (*avg)[32];
	char (*heads)[8][16];
	char (*ep)[16];
};

static int collect_emit(void *arg, const struct grid_cand *c, struct perfdb_err *err)
{
	(void)err;
	struct collect *k = arg;
	if (k->count_only) {
		/* quant-matmul alignment holds on every row (Decision 3) */
		if (k->quant) {
			assert_int_equal(c->out[0].d[1] % 32, 0);
			assert_int_equal(c->in[0].d[1] % 16, 0);
			assert_true(c->out[0].d[1] >= 128 && c->in[0].d[1] >= 128);
		}
		if (k->n++ > 0)
			return 0;
		k->n = 0;
	}
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 64;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
		k->src = realloc(k->src, k->cap * sizeof(*k->src));
		k->avg = realloc(k->avg, k->cap * sizeof(*k->avg));
		k->heads = realloc(k->heads, k->cap * sizeof(*k->heads));
		k->ep = realloc(k->ep, k->cap * sizeof(*k->ep));
	}
	k->v[k->n] = *c;
	k->src[k->n][0] = k->avg[k->n][0] = k->ep[k->n][0] = '\0';
	for (size_t i = 0; i < c->nextra; i++) {
		if (strcmp(c->extra_col[i], "Runtime source_profile") == 0)
			snprintf(k->src[k->n], 96, "%s", c->extra_val[i]);
		if (strcmp(c->extra_col[i], "Runtime avg_seq_len") == 0)
			snprintf(k->avg[k->n], 32, "%s", c->extra_val[i]);
		if (strcmp(c->extra_col[i], "Runtime num_heads") == 0)
			snprintf(k->heads[k->n][0], 16, "%s", c->extra_val[i]);
		if (strcmp(c->extra_col[i], "Runtime num_key_value_heads") == 0)
			snprintf(k->heads[k->n][1], 16, "%s", c->extra_val[i]);
		if (strcmp(c->extra_col[i], "Runtime block_table_valid_blocks") == 0)
			snprintf(k->heads[k->n][2], 16, "%s", c->extra_val[i]);
		if (strcmp(c->extra_col[i], "EP Size") == 0)
			snprintf(k->ep[k->n], 16, "%s", c->extra_val[i]);
	}
	k->n++;
	return 0;
}

static void collect_free(struct collect *k)
{
	free(k->v);
	free(k->src);
	free(k->avg);
	free(k->heads);
	free(k->ep);
	memset(k, 0, sizeof(*k));
}

static void gen_mode(struct perfdb_grid_config *cfg, const char *pattern,
		     const char *const *ids, size_t nids, struct collect *k, bool count_only)
{
	struct perfdb_grid_models m;
	resolve(cfg, ids, nids, &m);
	int64_t(*pairs)[2] = NULL;
	size_t np = 0;
	struct perfdb_err err;
	if (nids)
		assert_int_equal(perfdb_grid_nk_pairs(&m, &pairs, &np, &err), 0);
	struct grid_gen_ctx g = { .cfg = cfg, .p = grid_config_pattern(cfg, pattern),
				  .models = &m, .models_given = nids > 0,
				  .pairs = (const int64_t(*)[2])pairs, .npairs = np };
	assert_non_null(g.p);
	memset(k, 0, sizeof(*k));
	k->count_only = count_only;
	k->quant = strcmp(pattern, "quant_matmul") == 0;
	if (grid_generate(&g, collect_emit, k, &err) != 0)
		fail_msg("%s", err.msg);
	free(pairs);
	perfdb_grid_models_release(&m);
}

static void gen(struct perfdb_grid_config *cfg, const char *pattern, const char *const *ids,
		size_t nids, struct collect *k)
{
	gen_mode(cfg, pattern, ids, nids, k, false);
}

/* Count only (the first row is kept in v[0]). */
static void count(struct perfdb_grid_config *cfg, const char *pattern, const char *const *ids,
		  size_t nids, struct collect *k)
{
	gen_mode(cfg, pattern, ids, nids, k, true);
}

static bool shape_is(const struct grid_shape *s, size_t nd, const int64_t *d)
{
	if (s->nd != nd)
		return false;
	for (size_t i = 0; i < nd; i++)
		if (s->d[i] != d[i])
			return false;
	return true;
}

/* §3 counts of the FIA generator and §7 FIA tests. */
static void test_fia(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *ids[] = { "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B",
			      "meta-llama/Meta-Llama-3-70B", "zai-org/GLM-5.1" };
	size_t want[] = { 102, 680, 216, 54 };
	struct collect k;
	for (size_t i = 0; i < 4; i++) {
		gen(cfg, "fused_attention", &ids[i], 1, &k);
		assert_int_equal(k.n, want[i]);
		if (i == 0) {
			bool mla_prefill = false;
			for (size_t r = 0; r < k.n; r++)
				mla_prefill |= strcmp(k.src[r], "deepseekv3_mla_prefill") == 0;
			assert_true(mla_prefill);
			assert_int_equal(k.v[0].nin, 31);
		}
		if (i == 1) {
			bool tp1 = false, row3593 = false;
			bool pairs[5] = { false };
			const int64_t hp[5][2] = { { 64, 8 }, { 32, 4 }, { 16, 2 }, { 8, 1 }, { 4, 1 } };
			for (size_t r = 0; r < k.n; r++) {
				const struct grid_cand *c = &k.v[r];
				tp1 |= strcmp(k.src[r], "qwen332b_dense_prefill_tp1") == 0;
				const int64_t q[3] = { 1, 16, 128 }, kv[4] = { 29, 2, 128, 128 },
					      bt[2] = { 1, 29 };
				if (shape_is(&c->in[0], 3, q) && shape_is(&c->in[1], 4, kv) &&
				    shape_is(&c->in[14], 2, bt) && shape_is(&c->out[0], 3, q) &&
				    strcmp(k.avg[r], "3593.000000") == 0) {
					row3593 = true;
					assert_string_equal(k.heads[r][0], "16");
					assert_string_equal(k.heads[r][1], "2");
					assert_string_equal(k.heads[r][2], "29");
				}
				if (strstr(k.src[r], "dense_decode") && c->in[0].d[0] == 1)
					for (int p = 0; p < 5; p++)
						pairs[p] |= c->in[0].d[1] == hp[p][0] &&
							    atoi(k.heads[r][1]) == hp[p][1];
			}
			assert_true(tp1);
			assert_true(row3593);
			for (int p = 0; p < 5; p++)
				assert_true(pairs[p]);
		}
		collect_free(&k);
	}
	/* all models: 916, signatures unique */
	gen(cfg, "fused_attention", NULL, 0, &k);
	assert_int_equal(k.n, 916);
	struct perfdb_sig_index ix;
	perfdb_sig_index_init(&ix);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (size_t r = 0; r < k.n; r++) {
		perfdb_strbuf_reset(&sb);
		grid_shape_text(k.v[r].in, k.v[r].nin, &sb);
		perfdb_strbuf_addch(&sb, '|');
		grid_shape_text(k.v[r].out, k.v[r].nout, &sb);
		assert_null(perfdb_sig_index_find(&ix, sb.buf));
		perfdb_sig_index_add(&ix, sb.buf, r);
	}
	perfdb_strbuf_release(&sb);
	perfdb_sig_index_release(&ix);
	collect_free(&k);
	perfdb_grid_config_free(cfg);
}

/* §3 grouped_matmul DSv3 340; DFC DSv3 275 and §7 "DFC EP Size = 256/E". */
static void test_moe(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *dsv3[] = { "deepseek-ai/DeepSeek-V3" };
	const char *glm[] = { "zai-org/GLM-5.1" };
	struct collect k;
	gen(cfg, "grouped_matmul", dsv3, 1, &k);
	assert_int_equal(k.n, 340);
	assert_int_equal(k.v[0].nin, 9);
	collect_free(&k);
	gen(cfg, "dispatch_ffn_combine", dsv3, 1, &k);
	assert_int_equal(k.n, 275);
	collect_free(&k);
	gen(cfg, "dispatch_ffn_combine", glm, 1, &k);
	assert_true(k.n > 0);
	bool ep32 = false;
	for (size_t r = 0; r < k.n; r++) {
		int64_t e = k.v[r].out[1].d[0];
		char want[16];
		snprintf(want, sizeof(want), "%lld", (long long)(256 / e));
		assert_string_equal(k.ep[r], want);
		if (k.v[r].in[0].d[1] == 6144 && e == 8) {
			ep32 = true;
			assert_string_equal(k.ep[r], "32");
		}
	}
	assert_true(ep32);
	collect_free(&k);
	/* dense models have no MoE rows */
	const char *qwen[] = { "Qwen/Qwen3-32B" };
	gen(cfg, "grouped_matmul", qwen, 1, &k);
	assert_int_equal(k.n, 0);
	collect_free(&k);
	perfdb_grid_config_free(cfg);
}

/* §3 split_qkv Qwen3 65; §7 includes (1,768);(128,), skips MLA models. */
static void test_split_qkv(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *qwen[] = { "Qwen/Qwen3-32B" };
	struct collect k;
	gen(cfg, "split_qkv_rmsnorm_rope", qwen, 1, &k);
	assert_int_equal(k.n, 65);
	bool found = false;
	for (size_t r = 0; r < k.n; r++) {
		const struct grid_cand *c = &k.v[r];
		const int64_t a[2] = { 1, 768 }, b[1] = { 128 }, o0[2] = { 1, 512 }, o1[2] = { 1, 128 };
		if (shape_is(&c->in[0], 2, a) && shape_is(&c->in[1], 1, b) &&
		    shape_is(&c->out[0], 2, o0) && shape_is(&c->out[1], 2, o1) &&
		    shape_is(&c->out[2], 2, o1))
			found = true;
		assert_int_equal(c->in[0].d[1], c->out[0].d[1] + 2 * c->out[1].d[1]);
	}
	assert_true(found);
	collect_free(&k);
	const char *mla[] = { "deepseek-ai/DeepSeek-V3", "zai-org/GLM-5.1" };
	gen(cfg, "split_qkv_rmsnorm_rope", mla, 2, &k);
	assert_int_equal(k.n, 0);
	collect_free(&k);
	perfdb_grid_config_free(cfg);
}

/* §3 template counts; Decision 3 (quant-matmul constraints on the pairs path). */
static void test_template_counts(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	static const struct { const char *p; size_t n; } want[] = {
		{ "matmul", 50653 }, { "transpose_batch_matmul", 11840 }, { "batch_matmul_nd", 5550 },
		{ "elementwise_binary", 481 }, { "tensor_move", 321 }, { "interleave_rope", 208 },
		{ "triton_rope", 208 }, { "kv_rmsnorm_rope_cache", 13 }, { "as_strided", 147 },
		{ "sort_op", 104 }, { "tile", 78 }, { "concat", 91 }, { "pad", 925 },
		{ "argmax", 56 }, { "gather", 4329 }, { "gather_v3", 6253 }, { "index", 3367 },
		{ "reshape_and_cache", 234 }, { "paged_cache_load", 273 },
		{ "attention_update", 432 }, { "moe_gating_topk", 117 },
	};
	struct collect k;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		count(cfg, want[i].p, NULL, 0, &k);
		if (k.n != want[i].n)
			fail_msg("%s: %zu candidates, expected %zu", want[i].p, k.n, want[i].n);
		collect_free(&k);
	}
	/* pad: output aligned to 8 */
	count(cfg, "pad", NULL, 0, &k);
	assert_int_equal(k.v[0].in[0].d[0], 1);
	assert_int_equal(k.v[0].out[0].d[0], 8);
	assert_int_equal(k.v[0].in[2].nd, 0);
	collect_free(&k);
	/* model pairs: M x pairs, constraints applied (Decision 3) */
	const char *ids[] = { "deepseek-ai/DeepSeek-V3" };
	count(cfg, "matmul", ids, 1, &k);
	assert_int_equal(k.n, 37 * 22);
	collect_free(&k);
	/* every DSv3 pair has N%32 == 0, K%16 == 0, N,K >= 128 (checked per row) */
	count(cfg, "quant_matmul", ids, 1, &k);
	assert_int_equal(k.n, 37 * 22);
	collect_free(&k);
	count(cfg, "quant_matmul", NULL, 0, &k);
	assert_int_equal(k.n, 50653);
	collect_free(&k);
	perfdb_grid_config_free(cfg);
}

/* §7 "Dry run with DSv3+Qwen3: every assigned kernel yields rows". */
static void test_every_assignment_yields(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *ids[] = { "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B" };
	size_t routed = 0;
	for (size_t i = 0; i < cfg->nassign; i++) {
		const char *pat;
		enum perfdb_grid_route r = perfdb_grid_route(cfg, NULL, cfg->assign[i].kernel, &pat);
		if (r == PERFDB_GRID_ROUTE_SKIP)
			continue;
		assert_int_equal(r, PERFDB_GRID_ROUTE_PATTERN);
		struct collect k;
		count(cfg, pat, ids, 2, &k);
		if (k.n == 0)
			fail_msg("%s (%s): no rows", cfg->assign[i].kernel, pat);
		collect_free(&k);
		routed++;
	}
	assert_int_equal(routed, 93);   /* 84 Ascend kernel types + 9 PyTorch op tables */
	perfdb_grid_config_free(cfg);
}

/* §1 routing through op_mapping.yaml. */
static void test_routing_op_mapping(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *y =
		"operator_mappings:\n"
		"  a: {kernel_type: Pack, zero_cost: true}\n"
		"  b: {kernel_type: RealDiv, composite: yes}\n"
		"  c: {kernel_type: hcom_x_, category: communication}\n"
		"  d: {kernel_type: Add, alternate_kernel_types: [AddVariant, Pack]}\n"
		"  e: {kernel_type: AddVariant, zero_cost: true}\n"
		"  f: {kernel_type: Mystery, query_mode: elementwise}\n"
		"  g: {kernel_type: Mul, zero_cost: \"false\"}\n";
	struct perfdb_opmap *m;
	struct perfdb_err err;
	assert_int_equal(perfdb_opmap_load_mem(&m, "op.yaml", y, strlen(y), &err), 0);
	const char *p;
	assert_int_equal(perfdb_grid_route(cfg, m, "Pack", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "RealDiv", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "hcom_x_", &p), PERFDB_GRID_ROUTE_FLAGGED);
	/* an alternate inherits its parent's pattern; the first entry naming it wins */
	assert_int_equal(perfdb_grid_route(cfg, m, "AddVariant", &p), PERFDB_GRID_ROUTE_PATTERN);
	assert_string_equal(p, "elementwise_binary");
	assert_int_equal(perfdb_grid_route(cfg, m, "Mystery", &p), PERFDB_GRID_ROUTE_PATTERN);
	assert_string_equal(p, "elementwise_binary");
	/* a quoted "false" is a non-empty string: truthy, as in Python */
	assert_int_equal(perfdb_grid_route(cfg, m, "Mul", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "MatMulCommon", &p), PERFDB_GRID_ROUTE_SKIP);
	assert_int_equal(perfdb_grid_route(cfg, m, "Unknown", &p), PERFDB_GRID_ROUTE_UNASSIGNED);
	assert_int_equal(perfdb_opmap_count(m), 7);
	perfdb_opmap_free(m);
	perfdb_grid_config_free(cfg);
}

/* Configuration errors name file:line:col. */
static void test_config_errors(void **state)
{
	(void)state;
	static const struct { const char *yaml, *msg; } cases[] = {
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterators: {a: [1]}\n"
		  "    inputs: [\"(a, b)\"]\n    outputs: []\nassignments: {}\n",
		  "g.yaml:7:14: pattern 'p': expression 'b': unknown name 'b' at column 1" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterator: {a: [1]}\n"
		  "assignments: {}\n",
		  "g.yaml:6:5: unknown key 'iterator' in a template pattern" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns: {}\nassignments:\n  Add: nope\n",
		  "g.yaml:6:8: 'Add' is assigned to unknown pattern 'nope' (write 'skip' to skip it)" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterators: {a: G}\n"
		  "    inputs: []\n    outputs: []\nassignments: {}\n",
		  "g.yaml:6:20: unknown grid 'G' (define it under 'grids:')" },
		{ "version: 2\n", "g.yaml:1:10: 'version: 1' expected" },
		{ "version: 1\ngrids: [\n", "g.yaml:3:1: YAML syntax error" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perfdb_grid_config *c = NULL;
		struct perfdb_err err;
		perfdb_err_clear(&err);
		assert_int_equal(perfdb_grid_config_load_mem(&c, "g.yaml", cases[i].yaml,
							     strlen(cases[i].yaml), &err), -PERFDB_EPARSE);
		if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: got '%s'", i, err.msg);
		assert_null(c);
	}
}

/* §4 / Decision 2: the PRNG is deterministic and samples exactly k. */
static void test_prng(void **state)
{
	(void)state;
	struct grid_rng a, b;
	grid_rng_seed(&a, 42);
	grid_rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		assert_int_equal(grid_rng_next(&a), grid_rng_next(&b));
	/* xoshiro256** seeded by SplitMix64(0): the first SplitMix64 output is
	 * 0xe220a8397b1dcdaf (Vigna's reference implementation) */
	grid_rng_seed(&a, 0);
	assert_int_equal(a.s[0], 0xe220a8397b1dcdafull);
	bool sel[100];
	grid_rng_seed(&a, 7);
	assert_int_equal(grid_rng_sample(&a, 100, 10, sel), 0);
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		n += sel[i];
	assert_int_equal(n, 10);
	for (int i = 0; i < 1000; i++)
		assert_true(grid_rng_below(&a, 3) < 3);
}

/* §4 "a cap without RNG takes the first N"; Decision 8: source bytes kept. */
static void test_run_cap_first_rows(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-grid.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/Add.csv", dir);
	/* LF line ends and an unquoted shape: the source rows stay byte for byte */
	const char *src = "Input Shapes,Input Data Types,Output Shapes,Duration(us)\n"
			  "3;7,DT_BF16,3,1.5";
	struct perfdb_err err;
	assert_int_equal(perfdb_file_write_atomic(path, src, strlen(src), &err), 0);
	struct perfdb_grid_config *cfg = load_cfg();
	struct perfdb_grid_models m;
	resolve(cfg, NULL, 0, &m);
	struct perfdb_grid_opts o = { .db_dir = dir, .cfg = cfg, .models = &m, .rows = 2,
				      .use_rng = false, .lock_timeout = -1 };
	struct perfdb_grid_result res;
	assert_int_equal(perfdb_grid_run(&o, &res, &err), 0);
	assert_int_equal(res.appended, 2);
	assert_int_equal(res.files[0].candidates, 481);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), 0);
	assert_string_equal(sb.buf,
		"Input Shapes,Input Data Types,Output Shapes,Duration(us)\n"
		"3;7,DT_BF16,3,1.5\r\n"
		"\"\"\"1,128;1,128\"\"\",DT_BF16,\"\"\"1,128\"\"\",0\r\n"
		"\"\"\"1,192;1,192\"\"\",DT_BF16,\"\"\"1,192\"\"\",0\r\n");
	perfdb_strbuf_release(&sb);
	perfdb_grid_result_release(&res);
	perfdb_grid_models_release(&m);
	perfdb_grid_config_free(cfg);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);   /* the lock left no file */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_depth_limits),
		cmocka_unit_test(test_expr_reference_cases),
		cmocka_unit_test(test_expr_python_semantics),
		cmocka_unit_test(test_dedupe_matmul_transposed),
		cmocka_unit_test(test_dedupe_ignores_durations),
		cmocka_unit_test(test_absent_slots),
		cmocka_unit_test(test_padding_and_image),
		cmocka_unit_test(test_hbm_estimate),
		cmocka_unit_test(test_models_pairs),
		cmocka_unit_test(test_models_legacy_and_unknown),
		cmocka_unit_test(test_models_hf_fallbacks),
		cmocka_unit_test(test_fia),
		cmocka_unit_test(test_moe),
		cmocka_unit_test(test_split_qkv),
		cmocka_unit_test(test_template_counts),
		cmocka_unit_test(test_every_assignment_yields),
		cmocka_unit_test(test_routing_op_mapping),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_prng),
		cmocka_unit_test(test_run_cap_first_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
