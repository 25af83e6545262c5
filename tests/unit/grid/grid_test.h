/*
 * What the grid stage's unit tests share (tests/unit/grid/test_*.c): the
 * shipped grid configuration, model resolution, and a generator's rows
 * collected for checking.  static inline so a test that does not use one
 * does not warn.
 */
#ifndef PERFDB_TEST_GRID_TEST_H
#define PERFDB_TEST_GRID_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grid/grid_internal.h"
#include "perfdb/device.h"
#include "perfdb/fsio.h"

static inline struct perfdb_grid_config *load_cfg(void)
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

static inline void resolve(struct perfdb_grid_config *cfg, const char *const *ids, size_t n,
		    struct perfdb_grid_models *out)
{
	struct perfdb_err err;
	perfdb_grid_models_init(out);
	if (perfdb_grid_models_resolve(cfg, NULL, ids, n, out, &err) != 0)
		fail_msg("%s", err.msg);
}

static inline bool has_pair(int64_t (*p)[2], size_t n, int64_t a, int64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (p[i][0] == a && p[i][1] == b)
			return true;
	return false;
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

static inline int collect_emit(void *arg, const struct grid_cand *c, struct perfdb_err *err)
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

static inline void collect_free(struct collect *k)
{
	free(k->v);
	free(k->src);
	free(k->avg);
	free(k->heads);
	free(k->ep);
	memset(k, 0, sizeof(*k));
}

static inline void gen_mode(struct perfdb_grid_config *cfg, const char *pattern,
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

static inline void gen(struct perfdb_grid_config *cfg, const char *pattern, const char *const *ids,
		size_t nids, struct collect *k)
{
	gen_mode(cfg, pattern, ids, nids, k, false);
}

/* Count only (the first row is kept in v[0]). */
static inline void count(struct perfdb_grid_config *cfg, const char *pattern, const char *const *ids,
		  size_t nids, struct collect *k)
{
	gen_mode(cfg, pattern, ids, nids, k, true);
}

static inline bool shape_is(const struct grid_shape *s, size_t nd, const int64_t *d)
{
	if (s->nd != nd)
		return false;
	for (size_t i = 0; i < nd; i++)
		if (s->d[i] != d[i])
			return false;
	return true;
}

#endif
