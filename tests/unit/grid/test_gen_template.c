/*
 * Unit tests for src/grid/gen_template.c: template patterns and the
 * generator dispatch (spec §3, Decision 3).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_counts),
		cmocka_unit_test(test_every_assignment_yields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
