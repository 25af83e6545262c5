/*
 * Unit tests for src/grid/models.c: model configs, their (N, K) pairs and
 * HuggingFace fallbacks (spec §2, Decision 6).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_models_pairs),
		cmocka_unit_test(test_models_legacy_and_unknown),
		cmocka_unit_test(test_models_hf_fallbacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
