/*
 * The template engine (docs/spec/grid.md §3 "Template engine", reference
 * theory_router.generate_from_template) and the generator dispatch.
 *
 * The Cartesian product of the iterators runs in configuration order, the
 * last iterator fastest.  With model_nk_pairs and a model list, N and K
 * are dropped from the iterators and, for every combination of the others,
 * the sorted model pairs run innermost.  Decision 3: constraints apply on
 * both paths (the reference skips them on the model-pairs path).
 */
#include "grid_internal.h"
#include "perfdb/schema.h"

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
	static const char *const dfc[] = { PERFDB_COL_EP_SIZE, NULL };
	static const char *const qkv[] = { PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
					   PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS, NULL };
	static const char *const fia[] = {
		PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
		PERFDB_COL_RT_SOURCE_PROFILE, PERFDB_COL_RT_SEQ_SHAPE,
		PERFDB_COL_RT_SEQ_VALUES, PERFDB_COL_RT_SEQ_KV_SHAPE,
		PERFDB_COL_RT_SEQ_KV_VALUES, PERFDB_COL_RT_AVG_SEQ_LEN,
		PERFDB_COL_RT_BLOCK_TABLE_SHAPE, PERFDB_COL_RT_BLOCK_TABLE_VALID,
		PERFDB_COL_RT_NUM_HEADS, PERFDB_COL_RT_NUM_KV_HEADS, PERFDB_COL_RT_SPARSE_MODE,
		PERFDB_COL_RT_INPUT_LAYOUT, PERFDB_COL_RT_BLOCK_SIZE, PERFDB_COL_RT_COMPLETENESS,
		PERFDB_COL_RT_INPUT_SHAPES_RAW, NULL,
	};
	switch (p->kind) {
	case GRID_KIND_DFC:
		return dfc;
	case GRID_KIND_SPLIT_QKV:
		return qkv;
	case GRID_KIND_FIA:
		return p->aten_bnsd ? none : fia;   /* aten sdpa tables: the template row's dtypes, no Runtime */
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

/* 1 when the current values pass every constraint, 0 when not, <0 on error. */
static int passes(struct tctx *t)
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
	return 1;
}

/* One combination of values: constraints, then the row. */
static int one(struct tctx *t)
{
	const struct grid_pattern *p = t->p;
	int ok = passes(t);
	if (ok <= 0)
		return ok;
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

/*
 * A template pattern ready to run: its axes in product order (the last one
 * fastest), then the model pairs innermost.  Combination i of the product
 * is decoded digit by digit, so a sample can be drawn without walking the
 * product (docs/grid.md "Bounded work").
 */
struct grid_tmpl {
	struct tctx t;
	const struct grid_axis *axes[128];
	size_t idx[128], nax;
	bool pairs;
	size_t vn, vk;
};

int grid_tmpl_open(const struct grid_gen_ctx *g, struct grid_tmpl **out, struct perfdb_err *err)
{
	const struct grid_pattern *p = g->p;
	if (p->nvars > 128 || p->niters + p->nfallback > 128)
		return perfdb_err_set(err, PERFDB_EINVAL, "pattern '%s': too many variables", p->name);
	struct grid_tmpl *m = calloc(1, sizeof(*m));
	if (!m)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct tctx *t = &m->t;
	t->g = g;
	t->p = p;
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
	m->pairs = p->model_nk_pairs && g->models_given;
	for (size_t i = 0; i < p->niters; i++) {
		if (m->pairs &&
		    (strcmp(p->iters[i].name, "N") == 0 || strcmp(p->iters[i].name, "K") == 0))
			continue;
		m->axes[m->nax] = &p->iters[i];
		m->idx[m->nax++] = var_index(p, p->iters[i].name);
	}
	if (p->model_nk_pairs && !m->pairs)
		for (size_t i = 0; i < p->nfallback; i++) {
			m->axes[m->nax] = &p->fallback[i];
			m->idx[m->nax++] = var_index(p, p->fallback[i].name);
		}
	m->vn = var_index(p, "N");
	m->vk = var_index(p, "K");
	*out = m;
	return 0;
}

void grid_tmpl_free(struct grid_tmpl *m)
{
	free(m);
}

uint64_t grid_tmpl_combinations(const struct grid_tmpl *m, bool *overflow)
{
	uint64_t n = m->pairs ? (uint64_t)m->t.g->npairs : 1;
	*overflow = false;
	for (size_t a = 0; a < m->nax; a++) {
		uint64_t k = (uint64_t)m->axes[a]->n;
		if (k && n > UINT64_MAX / k) {
			*overflow = true;
			return UINT64_MAX;
		}
		n *= k;
	}
	return n;
}

int grid_tmpl_at(struct grid_tmpl *m, uint64_t i, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err)
{
	struct tctx *t = &m->t;
	t->err = err;
	if (m->pairs) {
		uint64_t k = i % m->t.g->npairs;
		i /= m->t.g->npairs;
		t->vals[m->vn] = m->t.g->pairs[k][0];
		t->vals[m->vk] = m->t.g->pairs[k][1];
	}
	for (size_t a = m->nax; a-- > 0;) {
		uint64_t n = (uint64_t)m->axes[a]->n;
		t->vals[m->idx[a]] = m->axes[a]->v[i % n];
		i /= n;
	}
	if (!emit)   /* only the constraints: 1 = the combination is a candidate */
		return passes(t);
	t->emit = emit;
	t->arg = arg;
	return one(t);
}

int grid_gen_template(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		      struct perfdb_err *err)
{
	struct grid_tmpl *m;
	PERFDB_TRY(grid_tmpl_open(g, &m, err));
	struct tctx *t = &m->t;
	t->emit = emit;
	t->arg = arg;
	size_t pos[128] = { 0 };
	int rc = 0;
	bool empty = false;
	for (size_t a = 0; a < m->nax; a++)
		empty |= m->axes[a]->n == 0;
	while (!empty && rc == 0) {
		for (size_t a = 0; a < m->nax; a++)
			t->vals[m->idx[a]] = m->axes[a]->v[pos[a]];
		if (m->pairs) {
			for (size_t k = 0; k < g->npairs && rc == 0; k++) {
				t->vals[m->vn] = g->pairs[k][0];
				t->vals[m->vk] = g->pairs[k][1];
				rc = one(t);
			}
		} else {
			rc = one(t);
		}
		/* odometer, last axis fastest */
		size_t a = m->nax;
		while (a > 0) {
			a--;
			if (++pos[a] < m->axes[a]->n)
				break;
			pos[a] = 0;
			if (a == 0)
				empty = true;
		}
		if (m->nax == 0)
			empty = true;
	}
	grid_tmpl_free(m);
	return rc;
}
