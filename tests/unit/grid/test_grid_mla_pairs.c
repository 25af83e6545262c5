/*
 * Unit tests: GEMM (N,K) pairs of MLA models whose config has no q (or kv)
 * LoRA rank (found by fuzz_hf_config; docs/reliability.md).  docs/spec/grid.md §2
 * lists (q_lora,h), (heads·hd/tp, q_lora), (kv_lora+rope,h),
 * (heads·hd/tp, kv_lora); with q_lora_rank null (DeepSeek-V2-Lite) the
 * first two would have a zero dimension.  Such a model projects q from h
 * directly: (heads·hd/tp, h).  No pair may have a zero or negative side.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"

static bool has_pair(int64_t (*p)[2], size_t n, int64_t a, int64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (p[i][0] == a && p[i][1] == b)
			return true;
	return false;
}

static void pairs_of(const char *json, struct perfdb_grid_models *m, int64_t (**p)[2], size_t *n)
{
	struct perfdb_err err;
	perfdb_grid_models_init(m);
	if (perfdb_grid_model_parse_hf(m, "config.json", "t/mla", json, strlen(json), NULL, &err))
		fail_msg("%s", err.msg);
	if (perfdb_grid_nk_pairs(m, p, n, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < *n; i++) {
		assert_true((*p)[i][0] > 0);
		assert_true((*p)[i][1] > 0);
	}
}

static void test_no_q_lora(void **state)
{
	(void)state;
	/* DeepSeek-V2-Lite's attention: q_lora_rank null */
	const char *json = "{\"hidden_size\": 2048, \"num_attention_heads\": 16,"
			   " \"q_lora_rank\": null, \"kv_lora_rank\": 512,"
			   " \"qk_rope_head_dim\": 64, \"qk_nope_head_dim\": 128,"
			   " \"v_head_dim\": 128, \"intermediate_size\": 10944}";
	struct perfdb_grid_models m;
	int64_t(*p)[2];
	size_t n;
	pairs_of(json, &m, &p, &n);
	const struct perfdb_grid_model *x = &m.v[0];
	assert_int_equal(x->q_lora, 0);
	for (size_t t = 0; t < x->ntp; t++) {
		int64_t q_up = x->heads * x->head_dim / x->tp[t];
		assert_true(has_pair(p, n, q_up, 2048));        /* q from h directly */
		assert_true(has_pair(p, n, q_up, 512));         /* up from the kv LoRA */
	}
	assert_true(has_pair(p, n, 512 + 64, 2048));            /* kv down + rope */
	free(p);
	perfdb_grid_models_release(&m);
}

static void test_with_q_lora_unchanged(void **state)
{
	(void)state;
	const char *json = "{\"hidden_size\": 7168, \"num_attention_heads\": 128,"
			   " \"q_lora_rank\": 1536, \"kv_lora_rank\": 512,"
			   " \"qk_rope_head_dim\": 64, \"qk_nope_head_dim\": 128,"
			   " \"v_head_dim\": 128, \"intermediate_size\": 18432}";
	struct perfdb_grid_models m;
	int64_t(*p)[2];
	size_t n;
	pairs_of(json, &m, &p, &n);
	assert_true(has_pair(p, n, 1536, 7168));                /* (q_lora, h) */
	assert_true(has_pair(p, n, 576, 7168));                 /* (kv_lora + rope, h) */
	free(p);
	perfdb_grid_models_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_q_lora),
		cmocka_unit_test(test_with_q_lora_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
