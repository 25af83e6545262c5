/*
 * The grid configuration (data/grid.yaml; docs/spec/grid.md §2-§3): axis grids,
 * built-in models, legacy model names, patterns (template or generator
 * function with its parameters) and kernel assignments.  docs/grid.md
 * documents the format; the file itself carries a commented example of
 * every key.
 *
 * Everything is checked here, once, with file:line:col: unknown keys, grid
 * names, pattern names, expression syntax and the names an expression uses,
 * integer values.  Generation then cannot fail on the configuration, only
 * on arithmetic (division by zero, overflow) of a user's own expressions.
 */
#include "grid_internal.h"
#include "config_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"
#include "perfdb/schema.h"

/* ---- grids ---------------------------------------------------------------- */

static int load_grids(struct grid_ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(grid_ld_need_map(l, n, "'grids'"));
	l->c->grids = calloc(n->n ? n->n : 1, sizeof(*l->c->grids));
	if (!l->c->grids)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *name = grid_ld_scalar(n->items[2 * i]);
		if (!name || !*name)
			return grid_ld_at(l, n->items[2 * i], "a grid name must be a string");
		if (grid_config_grid(l->c, name))
			return grid_ld_at(l, n->items[2 * i], "duplicate grid '%s'", name);
		struct grid_axis *g = &l->c->grids[l->c->ngrids];
		if (!(g->name = strdup(name)))
			return grid_ld_oom(l);
		l->c->ngrids++;
		PERFDB_TRY(grid_ld_get_int_list(l, n->items[2 * i + 1], &g->v, &g->n, "a grid"));
		for (size_t k = 0; k < g->n; k++)
			if (g->v[k] < 0)
				return grid_ld_at(l, n->items[2 * i + 1], "grid '%s' holds a negative value",
					  name);
	}
	return 0;
}

/* ---- models ----------------------------------------------------------------- */

static int load_par(struct grid_ld *l, const struct perfdb_ynode_s *n, int64_t *v, size_t *cnt,
		    const char *what)
{
	int64_t *tmp;
	size_t k;
	PERFDB_TRY(grid_ld_get_int_list(l, n, &tmp, &k, what));
	if (k == 0 || k > PERFDB_GRID_MAX_PAR) {
		free(tmp);
		return grid_ld_at(l, n, "%s must hold 1 to 8 sizes", what);
	}
	for (size_t i = 0; i < k; i++) {
		if (tmp[i] <= 0) {
			free(tmp);
			return grid_ld_at(l, n, "%s must be positive", what);
		}
		v[i] = tmp[i];
	}
	*cnt = k;
	free(tmp);
	return 0;
}

static int load_models(struct grid_ld *l, const struct perfdb_ynode_s *n)
{
	static const char *const keys[] = {
		"key", "hidden_size", "intermediate_size", "num_attention_heads", "num_kv_heads",
		"head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
		"num_experts", "num_experts_per_card", "expert_intermediate_size", "topk",
		"tp_sizes", "ep_sizes", NULL,
	};
	PERFDB_TRY(grid_ld_need_map(l, n, "'models'"));
	struct perfdb_grid_config *c = l->c;
	c->models = calloc(n->n ? n->n : 1, sizeof(*c->models));
	if (!c->models)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *id = grid_ld_scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *m = n->items[2 * i + 1];
		if (!id || !*id)
			return grid_ld_at(l, n->items[2 * i], "a model id must be a string");
		PERFDB_TRY(grid_ld_need_map(l, m, "a model"));
		PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a model"));
		struct perfdb_grid_model *md = &c->models[c->nmodels];
		memset(md, 0, sizeof(*md));
		char norm[512];
		grid_normalize_name(id, norm, sizeof(norm));
		const char *key = grid_ld_scalar(perfdb_ymap_get(m, "key"));
		md->id = strdup(id);
		md->key = strdup(key ? key : norm);
		md->source = strdup("built-in");
		if (!md->id || !md->key || !md->source) {
			free(md->id);
			free(md->key);
			free(md->source);
			return grid_ld_oom(l);
		}
		c->nmodels++;
		for (size_t j = 0; j + 1 < c->nmodels; j++) {
			char other[512];
			grid_normalize_name(c->models[j].id, other, sizeof(other));
			if (strcmp(other, norm) == 0)
				return grid_ld_at(l, n->items[2 * i], "duplicate model '%s'", id);
		}
		struct { const char *k; int64_t *dst; int64_t def; bool pos; } f[] = {
			{ "hidden_size", &md->hidden, 0, true },
			{ "intermediate_size", &md->inter, 0, false },
			{ "num_attention_heads", &md->heads, 0, true },
			{ "num_kv_heads", &md->kv_heads, 0, true },
			{ "head_dim", &md->head_dim, 128, false },
			{ "q_lora_rank", &md->q_lora, 0, false },
			{ "kv_lora_rank", &md->kv_lora, 0, false },
			{ "qk_nope_head_dim", &md->nope, 0, false },
			{ "qk_rope_head_dim", &md->rope, 64, false },
			{ "num_experts", &md->experts, 0, false },
			{ "num_experts_per_card", &md->experts_per_card, 0, false },
			{ "expert_intermediate_size", &md->expert_inter, 0, false },
			{ "topk", &md->topk, 0, false },
		};
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
			const struct perfdb_ynode_s *v = perfdb_ymap_get(m, f[k].k);
			*f[k].dst = f[k].def;
			if (v)
				PERFDB_TRY(grid_ld_get_int(l, v, f[k].dst, f[k].k));
			if (*f[k].dst < 0 || (f[k].pos && *f[k].dst == 0))
				return grid_ld_at(l, v ? v : m, "model '%s': '%s' must be positive", id, f[k].k);
		}
		static const int64_t tp_def[] = { 1, 4, 8 };
		memcpy(md->tp, tp_def, sizeof(tp_def));
		md->ntp = 3;
		md->ep[0] = 1;
		md->nep = 1;
		const struct perfdb_ynode_s *tp = perfdb_ymap_get(m, "tp_sizes");
		if (tp)
			PERFDB_TRY(load_par(l, tp, md->tp, &md->ntp, "tp_sizes"));
		const struct perfdb_ynode_s *ep = perfdb_ymap_get(m, "ep_sizes");
		if (ep)
			PERFDB_TRY(load_par(l, ep, md->ep, &md->nep, "ep_sizes"));
	}
	return 0;
}

static int load_legacy(struct grid_ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(grid_ld_need_map(l, n, "'legacy_names'"));
	struct perfdb_grid_config *c = l->c;
	c->legacy = calloc(n->n ? n->n : 1, sizeof(char *));
	c->legacy_hint = calloc(n->n ? n->n : 1, sizeof(char *));
	if (!c->legacy || !c->legacy_hint)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *k = grid_ld_scalar(n->items[2 * i]), *v = grid_ld_scalar(n->items[2 * i + 1]);
		if (!k || !v)
			return grid_ld_at(l, n->items[2 * i], "legacy_names maps a name to a model id");
		char norm[512];
		grid_normalize_name(k, norm, sizeof(norm));
		c->legacy[c->nlegacy] = strdup(norm);
		c->legacy_hint[c->nlegacy] = strdup(v);
		c->nlegacy++;
		if (!c->legacy[c->nlegacy - 1] || !c->legacy_hint[c->nlegacy - 1])
			return grid_ld_oom(l);
	}
	return 0;
}

static int load_assignments(struct grid_ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(grid_ld_need_map(l, n, "'assignments'"));
	struct perfdb_grid_config *c = l->c;
	c->assign = calloc(n->n ? n->n : 1, sizeof(*c->assign));
	if (!c->assign)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *k = grid_ld_scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *v = n->items[2 * i + 1];
		if (!k || !*k)
			return grid_ld_at(l, n->items[2 * i], "a kernel type must be a string");
		if (grid_config_assignment(c, k))
			return grid_ld_at(l, n->items[2 * i], "kernel type '%s' assigned twice", k);
		struct grid_assignment *a = &c->assign[c->nassign];
		if (!(a->kernel = strdup(k)))
			return grid_ld_oom(l);
		c->nassign++;
		if (perfdb_yscalar_is_null(v) || (grid_ld_scalar(v) && strcmp(v->text, "skip") == 0))
			continue;
		if (!grid_ld_scalar(v))
			return grid_ld_at(l, v, "the assignment of '%s' must be a pattern name or 'skip'", k);
		a->p = grid_config_pattern(c, v->text);
		if (!a->p)
			return grid_ld_at(l, v, "'%s' is assigned to unknown pattern '%s' (write 'skip' to "
				  "skip it)", k, v->text);
		if (!(a->pattern = strdup(v->text)))
			return grid_ld_oom(l);
	}
	return 0;
}

static int load_doc(struct grid_ld *l, const struct perfdb_ydoc *d)
{
	static const char *const keys[] = { "version", "grids", "models", "legacy_names",
					    "patterns", "assignments", NULL };
	const struct perfdb_ynode_s *root = d->root;
	if (!root || root->type != PERFDB_Y_MAP)
		return grid_ld_at(l, root, "the grid configuration must be a mapping");
	PERFDB_TRY(grid_ld_check_keys(l, root, keys, "the grid configuration"));
	const struct perfdb_ynode_s *v = perfdb_ymap_get(root, "version");
	int64_t ver;
	if (!v || perfdb_yscalar_int(v, &ver) < 0 || ver != 1)
		return grid_ld_at(l, v ? v : root, "'version: 1' expected");
	static const char *const need[] = { "grids", "models", "patterns", "assignments" };
	for (size_t i = 0; i < 4; i++)
		if (!perfdb_ymap_get(root, need[i]))
			return grid_ld_at(l, root, "missing '%s'", need[i]);
	PERFDB_TRY(load_grids(l, perfdb_ymap_get(root, "grids")));
	PERFDB_TRY(load_models(l, perfdb_ymap_get(root, "models")));
	if (perfdb_ymap_get(root, "legacy_names"))
		PERFDB_TRY(load_legacy(l, perfdb_ymap_get(root, "legacy_names")));
	PERFDB_TRY(grid_ld_load_patterns(l, perfdb_ymap_get(root, "patterns")));
	PERFDB_TRY(load_assignments(l, perfdb_ymap_get(root, "assignments")));
	return 0;
}

static void pattern_release(struct grid_pattern *p)
{
	free(p->name);
	for (size_t i = 0; i < p->niters; i++)
		grid_ld_axis_release(&p->iters[i]);
	free(p->iters);
	for (size_t i = 0; i < p->nfallback; i++)
		grid_ld_axis_release(&p->fallback[i]);
	free(p->fallback);
	for (size_t i = 0; i < p->nconsts; i++)
		free(p->const_names[i]);
	free(p->const_names);
	free(p->const_vals);
	for (size_t i = 0; i < p->nconstraints; i++)
		grid_expr_free(p->constraints[i]);
	free(p->constraints);
	struct grid_shape_expr *lists[2] = { p->inputs, p->outputs };
	size_t counts[2] = { p->ninputs, p->noutputs };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; lists[k] && i < counts[k]; i++) {
			for (size_t j = 0; j < lists[k][i].nd; j++)
				grid_expr_free(lists[k][i].dims[j]);
			free(lists[k][i].dims);
		}
		free(lists[k]);
	}
	for (size_t i = 0; i < p->noverrides; i++) {
		free(p->override_col[i]);
		free(p->override_val[i]);
	}
	for (size_t i = 0; i < p->nvars; i++)
		free(p->vars[i]);
	free(p->vars);
	grid_ld_axis_release(&p->tokens);
	grid_ld_axis_release(&p->cards);
	for (size_t i = 0; i < p->nscenes; i++) {
		free(p->scenes[i].key);
		grid_ld_axis_release(&p->scenes[i].prefill_batches);
		grid_ld_axis_release(&p->scenes[i].prefill_seqs);
		grid_ld_axis_release(&p->scenes[i].decode_batches);
		grid_ld_axis_release(&p->scenes[i].decode_avg_seqs);
	}
	free(p->scenes);
}

void perfdb_grid_config_free(struct perfdb_grid_config *c)
{
	if (!c)
		return;
	free(c->path);
	for (size_t i = 0; i < c->ngrids; i++)
		grid_ld_axis_release(&c->grids[i]);
	free(c->grids);
	for (size_t i = 0; i < c->npatterns; i++)
		pattern_release(&c->patterns[i]);
	free(c->patterns);
	for (size_t i = 0; i < c->nassign; i++) {
		free(c->assign[i].kernel);
		free(c->assign[i].pattern);
	}
	free(c->assign);
	for (size_t i = 0; i < c->nmodels; i++) {
		free(c->models[i].id);
		free(c->models[i].key);
		free(c->models[i].source);
	}
	free(c->models);
	for (size_t i = 0; i < c->nlegacy; i++) {
		free(c->legacy[i]);
		free(c->legacy_hint[i]);
	}
	free(c->legacy);
	free(c->legacy_hint);
	free(c);
}

int perfdb_grid_config_load_mem(struct perfdb_grid_config **out, const char *name,
				const char *data, size_t len, struct perfdb_err *err)
{
	*out = NULL;
	struct perfdb_grid_config *c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(name))) {
		free(c);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	struct perfdb_ydoc d;
	int rc = perfdb_ydoc_load(&d, name, data, len, err);
	if (rc == 0) {
		struct grid_ld l = { c, name, err };
		rc = load_doc(&l, &d);
	}
	perfdb_ydoc_release(&d);
	if (rc < 0) {
		perfdb_grid_config_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int perfdb_grid_config_load(struct perfdb_grid_config **out, const char *path,
			    struct perfdb_err *err)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all(path, &sb, err);
	if (rc == 0)
		rc = perfdb_grid_config_load_mem(out, path, sb.buf, sb.len, err);
	perfdb_strbuf_release(&sb);
	return rc;
}

enum perfdb_grid_route perfdb_grid_route(const struct perfdb_grid_config *cfg,
					 const struct perfdb_opmap *opmap,
					 const char *kernel, const char **pattern)
{
	*pattern = NULL;
	const struct perfdb_opmap_kernel *km = perfdb_opmap_find(opmap, kernel);
	if (km && (km->zero_cost || km->composite || km->communication))
		return PERFDB_GRID_ROUTE_FLAGGED;
	const struct grid_assignment *a = grid_config_assignment(cfg, kernel);
	if (!a && km && km->alternates_of)
		a = grid_config_assignment(cfg, km->alternates_of);
	if (!a) {
		if (km && km->query_mode && strcmp(km->query_mode, "elementwise") == 0 &&
		    grid_config_pattern(cfg, "elementwise_binary")) {
			*pattern = "elementwise_binary";
			return PERFDB_GRID_ROUTE_PATTERN;
		}
		return PERFDB_GRID_ROUTE_UNASSIGNED;
	}
	if (!a->p)
		return PERFDB_GRID_ROUTE_SKIP;
	*pattern = a->p->name;
	return PERFDB_GRID_ROUTE_PATTERN;
}
