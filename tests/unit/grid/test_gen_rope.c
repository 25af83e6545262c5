/*
 * Unit tests for src/grid/gen_rope.c: split_qkv (spec §3, §7).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_qkv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
