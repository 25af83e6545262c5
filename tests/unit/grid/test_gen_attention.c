/*
 * Unit tests for src/grid/gen_attention.c: the FIA generator (spec §3, §7).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fia),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
