/*
 * The template engine (spec/grid.md §3 "Template engine", reference
 * theory_router.generate_from_template) and the generator dispatch.
 *
 * The Cartesian product of the iterators runs in configuration order, the
 * last iterator fastest.  With model_nk_pairs and a model list, N and K
 * are dropped from the iterators and, for every combination of the others,
 * the sorted model pairs run innermost.  Decision 3: constraints apply on
 * both paths (the reference skips them on the model-pairs path).
 */
#include "grid_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int grid_generate(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		  struct perfdb_err *err)
{
	switch (g->p->kind) {
	case GRID_KIND_TEMPLATE:
		return grid_gen_template(g, emit, arg, err);
	case GRID_KIND_GROUPED_MATMUL:
		return grid_gen_grouped_matmul(g, emit, arg, err);
	case GRID_KIND_DFC:
		return grid_gen_dfc(g, emit, arg, err);
	case GRID_KIND_FIA:
		return grid_gen_fia(g, emit, arg, err);
	case GRID_KIND_SPLIT_QKV:
		return grid_gen_split_qkv(g, emit, arg, err);
	}
	return perfdb_err_set(err, PERFDB_EINVAL, "unknown generator");
}

const char *const *grid_pattern_extra_cols(const struct grid_pattern *p)
{
	static const char *const none[] = { NULL };
	static const char *const dfc[] = { "EP Size", NULL };
	static const char *const qkv[] = { "Input Data Types", "Input Formats",
					   "Output Data Types", "Output Formats", NULL };
	static const char *const fia[] = {
		"Input Data Types", "Input Formats",
		"Runtime source_profile", "Runtime actual_seq_lengths_shape",
		"Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_shape",
		"Runtime actual_seq_lengths_kv_values", "Runtime avg_seq_len",
		"Runtime block_table_shape", "Runtime block_table_valid_blocks",
		"Runtime num_heads", "Runtime num_key_value_heads", "Runtime sparse_mode",
		"Runtime input_layout", "Runtime block_size", "Runtime metadata_completeness",
		"Runtime operator_input_shapes_raw", NULL,
	};
	switch (p->kind) {
	case GRID_KIND_DFC:
		return dfc;
	case GRID_KIND_SPLIT_QKV:
		return qkv;
	case GRID_KIND_FIA:
		return fia;
	case GRID_KIND_GROUPED_MATMUL:
		return none;
	case GRID_KIND_TEMPLATE:
		break;
	}
	/* the columns of the dtype/format overrides (NULL-terminated) */
	return (const char *const *)p->override_col;
}

struct tctx {
	const struct grid_gen_ctx *g;
	const struct grid_pattern *p;
	int64_t vals[128];
	struct grid_cand cand;
	grid_emit_fn emit;
	void *arg;
	struct perfdb_err *err;
};

static int eval_fail(struct tctx *t, const struct grid_expr *e, const char *why)
{
	char vars[512];
	size_t w = 0;
	vars[0] = '\0';
	for (size_t i = 0; i < t->p->nvars && w < sizeof(vars); i++)
		w += (size_t)snprintf(vars + w, sizeof(vars) - w, "%s%s=%" PRId64, i ? ", " : "",
				      t->p->vars[i], t->vals[i]);
	return perfdb_err_at(t->err, PERFDB_EINVAL, t->g->cfg->path, t->p->line, 0,
			     "pattern '%s': expression '%s': %s (%s)", t->p->name,
			     grid_expr_text(e), why, vars);
}

static int eval_shapes(struct tctx *t, const struct grid_shape_expr *se, size_t n,
		       struct grid_shape *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i].nd = (uint32_t)se[i].nd;
		for (size_t d = 0; d < se[i].nd; d++) {
			const char *why;
			if (grid_expr_eval(se[i].dims[d], t->vals, &out[i].d[d], &why) < 0)
				return eval_fail(t, se[i].dims[d], why);
			if (out[i].d[d] < 0)
				return eval_fail(t, se[i].dims[d], "negative dim");
		}
	}
	return 0;
}

/* One combination of values: constraints, then the row. */
static int one(struct tctx *t)
{
	const struct grid_pattern *p = t->p;
	for (size_t i = 0; i < p->nconstraints; i++) {
		int64_t ok;
		const char *why;
		if (grid_expr_eval(p->constraints[i], t->vals, &ok, &why) < 0)
			return eval_fail(t, p->constraints[i], why);
		if (!ok)
			return 0;
	}
	PERFDB_TRY(eval_shapes(t, p->inputs, p->ninputs, t->cand.in));
	PERFDB_TRY(eval_shapes(t, p->outputs, p->noutputs, t->cand.out));
	return t->emit(t->arg, &t->cand, t->err);
}

static size_t var_index(const struct grid_pattern *p, const char *name)
{
	for (size_t i = 0; i < p->nvars; i++)
		if (strcmp(p->vars[i], name) == 0)
			return i;
	return (size_t)-1;
}

int grid_gen_template(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		      struct perfdb_err *err)
{
	const struct grid_pattern *p = g->p;
	struct tctx *t = calloc(1, sizeof(*t));
	if (!t)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (p->nvars > sizeof(t->vals) / sizeof(t->vals[0])) {
		free(t);
		return perfdb_err_set(err, PERFDB_EINVAL, "pattern '%s': too many variables",
				      p->name);
	}
	t->g = g;
	t->p = p;
	t->emit = emit;
	t->arg = arg;
	t->err = err;
	t->cand.nin = p->ninputs;
	t->cand.nout = p->noutputs;
	t->cand.nextra = p->noverrides;
	for (size_t i = 0; i < p->noverrides; i++) {
		t->cand.extra_col[i] = p->override_col[i];
		t->cand.extra_val[i] = p->override_val[i];
	}
	for (size_t i = 0; i < p->nconsts; i++)
		t->vals[var_index(p, p->const_names[i])] = p->const_vals[i];

	bool pairs = p->model_nk_pairs && g->models_given;
	const struct grid_axis *axes[128];
	size_t idx[128], nax = 0;
	for (size_t i = 0; i < p->niters; i++) {
		if (pairs && (strcmp(p->iters[i].name, "N") == 0 || strcmp(p->iters[i].name, "K") == 0))
			continue;
		axes[nax] = &p->iters[i];
		idx[nax++] = var_index(p, p->iters[i].name);
	}
	if (p->model_nk_pairs && !pairs)
		for (size_t i = 0; i < p->nfallback; i++) {
			axes[nax] = &p->fallback[i];
			idx[nax++] = var_index(p, p->fallback[i].name);
		}
	size_t vn = var_index(p, "N"), vk = var_index(p, "K");
	size_t pos[128] = { 0 };
	int rc = 0;
	bool empty = false;
	for (size_t a = 0; a < nax; a++)
		empty |= axes[a]->n == 0;
	while (!empty && rc == 0) {
		for (size_t a = 0; a < nax; a++)
			t->vals[idx[a]] = axes[a]->v[pos[a]];
		if (pairs) {
			for (size_t k = 0; k < g->npairs && rc == 0; k++) {
				t->vals[vn] = g->pairs[k][0];
				t->vals[vk] = g->pairs[k][1];
				rc = one(t);
			}
		} else {
			rc = one(t);
		}
		/* odometer, last axis fastest */
		size_t a = nax;
		while (a > 0) {
			a--;
			if (++pos[a] < axes[a]->n)
				break;
			pos[a] = 0;
			if (a == 0)
				empty = true;
		}
		if (nax == 0)
			empty = true;
	}
	free(t);
	return rc;
}
