/*
 * Unit tests for src/grid/gen_moe.c: grouped_matmul and DFC (spec §3, §7).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
