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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"
#include "perfdb/schema.h"

struct ld {
	struct perfdb_grid_config *c;
	const char *name;
	struct perfdb_err *err;
};

static int at(struct ld *l, const struct perfdb_ynode_s *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int at(struct ld *l, const struct perfdb_ynode_s *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return perfdb_err_at(l->err, PERFDB_EPARSE, l->name, n ? n->line : 0, n ? n->col : 0,
			     "%s", msg);
}

static int oom(struct ld *l)
{
	return perfdb_err_set(l->err, PERFDB_ENOMEM, "out of memory");
}

static const char *scalar(const struct perfdb_ynode_s *n)
{
	return n && n->type == PERFDB_Y_SCALAR ? n->text : NULL;
}

/* Every key of map must be in allowed (NULL-terminated). */
static int check_keys(struct ld *l, const struct perfdb_ynode_s *map, const char *const *allowed,
		      const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct perfdb_ynode_s *k = map->items[2 * i];
		const char *ks = scalar(k);
		bool ok = false;
		for (size_t j = 0; ks && allowed[j]; j++)
			ok |= strcmp(ks, allowed[j]) == 0;
		if (!ok)
			return at(l, k, "unknown key '%s' in %s", ks ? ks : "?", where);
		for (size_t j = 0; j < i; j++)
			if (scalar(map->items[2 * j]) && strcmp(scalar(map->items[2 * j]), ks) == 0)
				return at(l, k, "duplicate key '%s' in %s", ks, where);
	}
	return 0;
}

static int need_map(struct ld *l, const struct perfdb_ynode_s *n, const char *what)
{
	if (!n || n->type != PERFDB_Y_MAP)
		return at(l, n, "%s must be a mapping", what);
	return 0;
}

static int get_int(struct ld *l, const struct perfdb_ynode_s *n, int64_t *out, const char *what)
{
	if (perfdb_yscalar_int(n, out) < 0)
		return at(l, n, "%s must be an integer", what);
	return 0;
}

static int get_int_list(struct ld *l, const struct perfdb_ynode_s *n, int64_t **v, size_t *cnt,
			const char *what)
{
	if (!n || n->type != PERFDB_Y_SEQ)
		return at(l, n, "%s must be a list of integers", what);
	*v = malloc((n->n ? n->n : 1) * sizeof(**v));
	if (!*v)
		return oom(l);
	*cnt = n->n;
	for (size_t i = 0; i < n->n; i++) {
		int rc = get_int(l, n->items[i], &(*v)[i], what);
		if (rc < 0) {   /* the callers own *v only on success */
			free(*v);
			*v = NULL;
			*cnt = 0;
			return rc;
		}
	}
	return 0;
}

static void axis_release(struct grid_axis *a)
{
	free(a->name);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* A grid reference: the name of a `grids:` entry, or an inline list. */
static int get_axis(struct ld *l, const struct perfdb_ynode_s *n, const char *var,
		    struct grid_axis *a, const char *what)
{
	memset(a, 0, sizeof(*a));
	if (var && !(a->name = strdup(var)))
		return oom(l);
	if (n && n->type == PERFDB_Y_SCALAR) {
		const struct grid_axis *g = grid_config_grid(l->c, n->text);
		if (!g)
			return at(l, n, "unknown grid '%s' (define it under 'grids:')", n->text);
		a->v = malloc((g->n ? g->n : 1) * sizeof(*a->v));
		if (!a->v)
			return oom(l);
		memcpy(a->v, g->v, g->n * sizeof(*a->v));
		a->n = g->n;
		return 0;
	}
	return get_int_list(l, n, &a->v, &a->n, what);
}

const struct grid_axis *grid_config_grid(const struct perfdb_grid_config *c, const char *name)
{
	for (size_t i = 0; i < c->ngrids; i++)
		if (strcmp(c->grids[i].name, name) == 0)
			return &c->grids[i];
	return NULL;
}

const struct grid_pattern *grid_config_pattern(const struct perfdb_grid_config *c,
					       const char *name)
{
	for (size_t i = 0; i < c->npatterns; i++)
		if (strcmp(c->patterns[i].name, name) == 0)
			return &c->patterns[i];
	return NULL;
}

const struct grid_assignment *grid_config_assignment(const struct perfdb_grid_config *c,
						     const char *kernel)
{
	for (size_t i = 0; i < c->nassign; i++)
		if (strcmp(c->assign[i].kernel, kernel) == 0)
			return &c->assign[i];
	return NULL;
}

/* ---- grids ---------------------------------------------------------------- */

static int load_grids(struct ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(need_map(l, n, "'grids'"));
	l->c->grids = calloc(n->n ? n->n : 1, sizeof(*l->c->grids));
	if (!l->c->grids)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *name = scalar(n->items[2 * i]);
		if (!name || !*name)
			return at(l, n->items[2 * i], "a grid name must be a string");
		if (grid_config_grid(l->c, name))
			return at(l, n->items[2 * i], "duplicate grid '%s'", name);
		struct grid_axis *g = &l->c->grids[l->c->ngrids];
		if (!(g->name = strdup(name)))
			return oom(l);
		l->c->ngrids++;
		PERFDB_TRY(get_int_list(l, n->items[2 * i + 1], &g->v, &g->n, "a grid"));
		for (size_t k = 0; k < g->n; k++)
			if (g->v[k] < 0)
				return at(l, n->items[2 * i + 1], "grid '%s' holds a negative value",
					  name);
	}
	return 0;
}

/* ---- models ----------------------------------------------------------------- */

static int load_par(struct ld *l, const struct perfdb_ynode_s *n, int64_t *v, size_t *cnt,
		    const char *what)
{
	int64_t *tmp;
	size_t k;
	PERFDB_TRY(get_int_list(l, n, &tmp, &k, what));
	if (k == 0 || k > PERFDB_GRID_MAX_PAR) {
		free(tmp);
		return at(l, n, "%s must hold 1 to 8 sizes", what);
	}
	for (size_t i = 0; i < k; i++) {
		if (tmp[i] <= 0) {
			free(tmp);
			return at(l, n, "%s must be positive", what);
		}
		v[i] = tmp[i];
	}
	*cnt = k;
	free(tmp);
	return 0;
}

static int load_models(struct ld *l, const struct perfdb_ynode_s *n)
{
	static const char *const keys[] = {
		"key", "hidden_size", "intermediate_size", "num_attention_heads", "num_kv_heads",
		"head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
		"num_experts", "num_experts_per_card", "expert_intermediate_size", "topk",
		"tp_sizes", "ep_sizes", NULL,
	};
	PERFDB_TRY(need_map(l, n, "'models'"));
	struct perfdb_grid_config *c = l->c;
	c->models = calloc(n->n ? n->n : 1, sizeof(*c->models));
	if (!c->models)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *id = scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *m = n->items[2 * i + 1];
		if (!id || !*id)
			return at(l, n->items[2 * i], "a model id must be a string");
		PERFDB_TRY(need_map(l, m, "a model"));
		PERFDB_TRY(check_keys(l, m, keys, "a model"));
		struct perfdb_grid_model *md = &c->models[c->nmodels];
		memset(md, 0, sizeof(*md));
		char norm[512];
		grid_normalize_name(id, norm, sizeof(norm));
		const char *key = scalar(perfdb_ymap_get(m, "key"));
		md->id = strdup(id);
		md->key = strdup(key ? key : norm);
		md->source = strdup("built-in");
		if (!md->id || !md->key || !md->source) {
			free(md->id);
			free(md->key);
			free(md->source);
			return oom(l);
		}
		c->nmodels++;
		for (size_t j = 0; j + 1 < c->nmodels; j++) {
			char other[512];
			grid_normalize_name(c->models[j].id, other, sizeof(other));
			if (strcmp(other, norm) == 0)
				return at(l, n->items[2 * i], "duplicate model '%s'", id);
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
				PERFDB_TRY(get_int(l, v, f[k].dst, f[k].k));
			if (*f[k].dst < 0 || (f[k].pos && *f[k].dst == 0))
				return at(l, v ? v : m, "model '%s': '%s' must be positive", id, f[k].k);
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

static int load_legacy(struct ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(need_map(l, n, "'legacy_names'"));
	struct perfdb_grid_config *c = l->c;
	c->legacy = calloc(n->n ? n->n : 1, sizeof(char *));
	c->legacy_hint = calloc(n->n ? n->n : 1, sizeof(char *));
	if (!c->legacy || !c->legacy_hint)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *k = scalar(n->items[2 * i]), *v = scalar(n->items[2 * i + 1]);
		if (!k || !v)
			return at(l, n->items[2 * i], "legacy_names maps a name to a model id");
		char norm[512];
		grid_normalize_name(k, norm, sizeof(norm));
		c->legacy[c->nlegacy] = strdup(norm);
		c->legacy_hint[c->nlegacy] = strdup(v);
		c->nlegacy++;
		if (!c->legacy[c->nlegacy - 1] || !c->legacy_hint[c->nlegacy - 1])
			return oom(l);
	}
	return 0;
}

/* ---- patterns --------------------------------------------------------------- */

static int add_var(struct ld *l, struct grid_pattern *p, const char *name,
		   const struct perfdb_ynode_s *where)
{
	for (size_t i = 0; i < p->nvars; i++)
		if (strcmp(p->vars[i], name) == 0)
			return at(l, where, "variable '%s' defined twice in pattern '%s'", name,
				  p->name);
	char **v = realloc(p->vars, (p->nvars + 1) * sizeof(*v));
	if (!v)
		return oom(l);
	p->vars = v;
	if (!(p->vars[p->nvars] = strdup(name)))
		return oom(l);
	p->nvars++;
	return 0;
}

static int load_iters(struct ld *l, const struct perfdb_ynode_s *n,
		      struct grid_axis **out, size_t *cnt, const char *what)
{
	PERFDB_TRY(need_map(l, n, what));
	*out = calloc(n->n ? n->n : 1, sizeof(**out));
	if (!*out)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *var = scalar(n->items[2 * i]);
		if (!var || !*var)
			return at(l, n->items[2 * i], "an iterator name must be a string");
		*cnt = i + 1;   /* released with the pattern, even on error */
		PERFDB_TRY(get_axis(l, n->items[2 * i + 1], var, &(*out)[i], "an iterator"));
	}
	return 0;
}

static int compile(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		   const char *text, size_t len, struct grid_expr **out)
{
	char msg[384];
	int rc = grid_expr_compile(out, text, len, (const char *const *)p->vars, p->nvars, msg,
				   sizeof(msg));
	if (rc == -PERFDB_ENOMEM)
		return oom(l);
	if (rc < 0) {
		char full[512];
		snprintf(full, sizeof(full), "pattern '%s': expression '%.*s': %s", p->name,
			 (int)(len > 100 ? 100 : len), text, msg);
		return perfdb_err_at(l->err, PERFDB_EPARSE, l->name, n->line, n->col, "%s", full);
	}
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * A slot template, as the reference's _parse_shape_expr: `()` is empty;
 * otherwise strip every leading '(' and trailing ')', split on commas at
 * depth 0, drop empty pieces.
 */
static int load_shape(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		      struct grid_shape_expr *s)
{
	const char *t = scalar(n);
	if (!t)
		return at(l, n, "pattern '%s': a slot template must be a string like '(M, K)'",
			  p->name);
	const char *b = t, *e = t + strlen(t);
	while (b < e && is_space(*b))
		b++;
	while (e > b && is_space(e[-1]))
		e--;
	if (e - b == 2 && b[0] == '(' && b[1] == ')')
		return 0;
	while (b < e && *b == '(')
		b++;
	while (e > b && e[-1] == ')')
		e--;
	const char *piece = b;
	int depth = 0;
	for (const char *q = b;; q++) {
		if (q == e || (*q == ',' && depth == 0)) {
			const char *ps = piece, *pe = q;
			while (ps < pe && is_space(*ps))
				ps++;
			while (pe > ps && is_space(pe[-1]))
				pe--;
			if (pe > ps) {
				if (s->nd == GRID_MAX_DIMS)
					return at(l, n, "pattern '%s': more than 8 dims in '%s'", p->name,
						  t);
				struct grid_expr **d = realloc(s->dims, (s->nd + 1) * sizeof(*d));
				if (!d)
					return oom(l);
				s->dims = d;
				s->dims[s->nd] = NULL;
				PERFDB_TRY(compile(l, p, n, ps, (size_t)(pe - ps), &s->dims[s->nd]));
				s->nd++;
			}
			if (q == e)
				break;
			piece = q + 1;
		} else if (*q == '(') {
			depth++;
		} else if (*q == ')') {
			depth--;
		}
	}
	return 0;
}

static int load_shapes(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		       struct grid_shape_expr **out, size_t *cnt, const char *what)
{
	if (!n || n->type != PERFDB_Y_SEQ)
		return at(l, n ? n : NULL, "pattern '%s': '%s' must be a list of slot templates",
			  p->name, what);
	if (n->n > GRID_MAX_SLOTS)
		return at(l, n, "pattern '%s': more than 64 slots in '%s'", p->name, what);
	*out = calloc(n->n ? n->n : 1, sizeof(**out));
	if (!*out)
		return oom(l);
	*cnt = n->n;
	for (size_t i = 0; i < n->n; i++)
		PERFDB_TRY(load_shape(l, p, n->items[i], &(*out)[i]));
	return 0;
}

static int load_override(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m,
			 const char *key, const char *col)
{
	const struct perfdb_ynode_s *n = perfdb_ymap_get(m, key);
	if (!n || perfdb_yscalar_is_null(n))
		return 0;
	if (n->type != PERFDB_Y_SEQ)
		return at(l, n, "pattern '%s': '%s' must be a list", p->name, key);
	if (n->n == 0)   /* the reference ignores an empty list */
		return 0;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < n->n; i++) {
		const char *v = scalar(n->items[i]);
		if (!v) {
			perfdb_strbuf_release(&sb);
			return at(l, n->items[i], "pattern '%s': '%s' holds a non-scalar", p->name,
				  key);
		}
		if ((i && perfdb_strbuf_addch(&sb, ';') < 0) || perfdb_strbuf_addstr(&sb, v) < 0) {
			perfdb_strbuf_release(&sb);
			return oom(l);
		}
	}
	p->override_col[p->noverrides] = strdup(col);
	p->override_val[p->noverrides] = perfdb_strbuf_detach(&sb, NULL);
	p->noverrides++;
	if (!p->override_col[p->noverrides - 1] || !p->override_val[p->noverrides - 1])
		return oom(l);
	return 0;
}

static int load_template(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m)
{
	static const char *const keys[] = {
		"iterators", "fallback_iterators", "constants", "constraints", "model_nk_pairs",
		"inputs", "outputs", "input_dtypes", "input_formats", "output_dtypes",
		"output_formats", NULL,
	};
	PERFDB_TRY(check_keys(l, m, keys, "a template pattern"));
	const struct perfdb_ynode_s *n;
	if ((n = perfdb_ymap_get(m, "model_nk_pairs"))) {
		int b = perfdb_yscalar_bool(n);
		if (b < 0)
			return at(l, n, "pattern '%s': model_nk_pairs must be true or false", p->name);
		p->model_nk_pairs = b;
	}
	if ((n = perfdb_ymap_get(m, "iterators")))
		PERFDB_TRY(load_iters(l, n, &p->iters, &p->niters, "'iterators'"));
	if ((n = perfdb_ymap_get(m, "fallback_iterators")))
		PERFDB_TRY(load_iters(l, n, &p->fallback, &p->nfallback,
				      "'fallback_iterators'"));
	for (size_t i = 0; i < p->niters; i++)
		PERFDB_TRY(add_var(l, p, p->iters[i].name, m));
	for (size_t i = 0; i < p->nfallback; i++)
		PERFDB_TRY(add_var(l, p, p->fallback[i].name, m));
	if ((n = perfdb_ymap_get(m, "constants"))) {
		PERFDB_TRY(need_map(l, n, "'constants'"));
		p->const_names = calloc(n->n ? n->n : 1, sizeof(char *));
		p->const_vals = calloc(n->n ? n->n : 1, sizeof(int64_t));
		if (!p->const_names || !p->const_vals)
			return oom(l);
		for (size_t i = 0; i < n->n; i++) {
			const char *k = scalar(n->items[2 * i]);
			if (!k)
				return at(l, n->items[2 * i], "a constant name must be a string");
			if (!(p->const_names[i] = strdup(k)))
				return oom(l);
			p->nconsts = i + 1;
			PERFDB_TRY(get_int(l, n->items[2 * i + 1], &p->const_vals[i], "a constant"));
			PERFDB_TRY(add_var(l, p, k, n->items[2 * i]));
		}
	}
	if (p->model_nk_pairs) {
		/* N and K come from the model pairs; make sure expressions may use them */
		for (int k = 0; k < 2; k++) {
			const char *nm = k ? "K" : "N";
			bool have = false;
			for (size_t i = 0; i < p->nvars; i++)
				have |= strcmp(p->vars[i], nm) == 0;
			if (!have)
				PERFDB_TRY(add_var(l, p, nm, m));
		}
	}
	if ((n = perfdb_ymap_get(m, "constraints")) && !perfdb_yscalar_is_null(n)) {
		if (n->type != PERFDB_Y_SEQ)
			return at(l, n, "pattern '%s': constraints must be a list of expressions",
				  p->name);
		p->constraints = calloc(n->n ? n->n : 1, sizeof(*p->constraints));
		if (!p->constraints)
			return oom(l);
		for (size_t i = 0; i < n->n; i++) {
			const char *t = scalar(n->items[i]);
			if (!t)
				return at(l, n->items[i], "pattern '%s': a constraint must be a string",
					  p->name);
			PERFDB_TRY(compile(l, p, n->items[i], t, strlen(t), &p->constraints[i]));
			p->nconstraints = i + 1;
		}
	}
	PERFDB_TRY(load_shapes(l, p, perfdb_ymap_get(m, "inputs"), &p->inputs, &p->ninputs,
			       "inputs"));
	PERFDB_TRY(load_shapes(l, p, perfdb_ymap_get(m, "outputs"), &p->outputs, &p->noutputs,
			       "outputs"));
	PERFDB_TRY(load_override(l, p, m, "input_dtypes", PERFDB_COL_IN_DTYPES));
	PERFDB_TRY(load_override(l, p, m, "input_formats", PERFDB_COL_IN_FORMATS));
	PERFDB_TRY(load_override(l, p, m, "output_dtypes", PERFDB_COL_OUT_DTYPES));
	PERFDB_TRY(load_override(l, p, m, "output_formats", PERFDB_COL_OUT_FORMATS));
	return 0;
}

static int load_scene_axis(struct ld *l, const struct perfdb_ynode_s *m, const char *key,
			   struct grid_axis *a)
{
	const struct perfdb_ynode_s *n = perfdb_ymap_get(m, key);
	if (!n)
		return at(l, m, "a scene needs '%s'", key);
	PERFDB_TRY(get_axis(l, n, key, a, key));
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] <= 0)
			return at(l, n, "'%s' values must be positive", key);
	return 0;
}

static int load_generator(struct ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m)
{
	const struct perfdb_ynode_s *g = perfdb_ymap_get(m, "generator");
	const char *gen = scalar(g);
	const struct perfdb_ynode_s *n;
	if (gen && strcmp(gen, "grouped_matmul") == 0) {
		static const char *const keys[] = { "generator", "tokens", NULL };
		p->kind = GRID_KIND_GROUPED_MATMUL;
		PERFDB_TRY(check_keys(l, m, keys, "a grouped_matmul pattern"));
	} else if (gen && strcmp(gen, "split_qkv_rmsnorm_rope") == 0) {
		static const char *const keys[] = { "generator", "tokens", NULL };
		p->kind = GRID_KIND_SPLIT_QKV;
		PERFDB_TRY(check_keys(l, m, keys, "a split_qkv_rmsnorm_rope pattern"));
	} else if (gen && strcmp(gen, "dispatch_ffn_combine") == 0) {
		static const char *const keys[] = { "generator", "tokens", "deployment_cards",
						    "max_experts_per_rank", "max_token_elems", NULL };
		p->kind = GRID_KIND_DFC;
		PERFDB_TRY(check_keys(l, m, keys, "a dispatch_ffn_combine pattern"));
		if (!(n = perfdb_ymap_get(m, "deployment_cards")))
			return at(l, m, "pattern '%s' needs 'deployment_cards'", p->name);
		PERFDB_TRY(get_axis(l, n, "deployment_cards", &p->cards, "deployment_cards"));
		for (size_t i = 0; i < p->cards.n; i++)
			if (p->cards.v[i] <= 0)
				return at(l, n, "deployment_cards must be positive");
		if (!(n = perfdb_ymap_get(m, "max_experts_per_rank")))
			return at(l, m, "pattern '%s' needs 'max_experts_per_rank'", p->name);
		PERFDB_TRY(get_int(l, n, &p->max_experts_per_rank, "max_experts_per_rank"));
		if (!(n = perfdb_ymap_get(m, "max_token_elems")))
			return at(l, m, "pattern '%s' needs 'max_token_elems'", p->name);
		PERFDB_TRY(get_int(l, n, &p->max_token_elems, "max_token_elems"));
	} else if (gen && strcmp(gen, "fused_attention") == 0) {
		static const char *const keys[] = { "generator", "block_size", "min_blocks", "mask",
						    "scenes", "layout", NULL };
		p->kind = GRID_KIND_FIA;
		PERFDB_TRY(check_keys(l, m, keys, "a fused_attention pattern"));
		/* layout: fia (the kernel's 31 slots and Runtime columns) or aten (PyTorch's sdpa) */
		if ((n = perfdb_ymap_get(m, "layout"))) {
			int fia = n->type == PERFDB_Y_SCALAR && n->len == 3 && memcmp(n->text, "fia", 3) == 0;
			p->aten_bnsd = n->type == PERFDB_Y_SCALAR && n->len == 4 && memcmp(n->text, "aten", 4) == 0;
			if (!fia && !p->aten_bnsd)
				return at(l, n, "layout must be fia or aten");
		}
		if (!(n = perfdb_ymap_get(m, "block_size")))
			return at(l, m, "pattern '%s' needs 'block_size'", p->name);
		PERFDB_TRY(get_int(l, n, &p->block_size, "block_size"));
		if (p->block_size <= 0)
			return at(l, n, "block_size must be positive");
		if (!(n = perfdb_ymap_get(m, "min_blocks")))
			return at(l, m, "pattern '%s' needs 'min_blocks'", p->name);
		PERFDB_TRY(get_int(l, n, &p->min_blocks, "min_blocks"));
		if (!(n = perfdb_ymap_get(m, "mask")))
			return at(l, m, "pattern '%s' needs 'mask'", p->name);
		int64_t *mv;
		size_t mn;
		PERFDB_TRY(get_int_list(l, n, &mv, &mn, "mask"));
		if (mn != 2) {
			free(mv);
			return at(l, n, "mask must hold 2 dims");
		}
		p->mask[0] = mv[0];
		p->mask[1] = mv[1];
		free(mv);
		const struct perfdb_ynode_s *sc = perfdb_ymap_get(m, "scenes");
		PERFDB_TRY(need_map(l, sc, "'scenes'"));
		p->scenes = calloc(sc->n ? sc->n : 1, sizeof(*p->scenes));
		if (!p->scenes)
			return oom(l);
		bool have_default = false;
		for (size_t i = 0; i < sc->n; i++) {
			static const char *const skeys[] = { "prefill_batches", "prefill_seqs",
							     "decode_batches", "decode_avg_seqs", NULL };
			const char *key = scalar(sc->items[2 * i]);
			const struct perfdb_ynode_s *s = sc->items[2 * i + 1];
			if (!key)
				return at(l, sc->items[2 * i], "a scene key must be a string");
			PERFDB_TRY(need_map(l, s, "a scene"));
			PERFDB_TRY(check_keys(l, s, skeys, "a scene"));
			struct grid_scene *dst = &p->scenes[i];
			if (!(dst->key = strdup(key)))
				return oom(l);
			p->nscenes = i + 1;
			have_default |= strcmp(key, "default") == 0;
			PERFDB_TRY(load_scene_axis(l, s, "prefill_batches", &dst->prefill_batches));
			PERFDB_TRY(load_scene_axis(l, s, "prefill_seqs", &dst->prefill_seqs));
			PERFDB_TRY(load_scene_axis(l, s, "decode_batches", &dst->decode_batches));
			PERFDB_TRY(load_scene_axis(l, s, "decode_avg_seqs", &dst->decode_avg_seqs));
		}
		if (!have_default)
			return at(l, sc, "pattern '%s': scenes need a 'default' entry", p->name);
		return 0;
	} else {
		return at(l, g, "pattern '%s': unknown generator '%s' (grouped_matmul, "
			  "dispatch_ffn_combine, fused_attention, split_qkv_rmsnorm_rope)", p->name,
			  gen ? gen : "?");
	}
	if (!(n = perfdb_ymap_get(m, "tokens")))
		return at(l, m, "pattern '%s' needs 'tokens'", p->name);
	PERFDB_TRY(get_axis(l, n, "tokens", &p->tokens, "tokens"));
	for (size_t i = 0; i < p->tokens.n; i++)
		if (p->tokens.v[i] <= 0)
			return at(l, n, "tokens must be positive");
	return 0;
}

static int load_patterns(struct ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(need_map(l, n, "'patterns'"));
	struct perfdb_grid_config *c = l->c;
	c->patterns = calloc(n->n ? n->n : 1, sizeof(*c->patterns));
	if (!c->patterns)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *name = scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *m = n->items[2 * i + 1];
		if (!name || !*name || strcmp(name, "skip") == 0)
			return at(l, n->items[2 * i], "a pattern name must be a string other than "
				  "'skip'");
		if (grid_config_pattern(c, name))
			return at(l, n->items[2 * i], "duplicate pattern '%s'", name);
		struct grid_pattern *p = &c->patterns[c->npatterns];
		if (!(p->name = strdup(name)))
			return oom(l);
		p->line = n->items[2 * i]->line;
		c->npatterns++;
		PERFDB_TRY(need_map(l, m, "a pattern"));
		if (perfdb_ymap_get(m, "generator"))
			PERFDB_TRY(load_generator(l, p, m));
		else
			PERFDB_TRY(load_template(l, p, m));
	}
	return 0;
}

static int load_assignments(struct ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(need_map(l, n, "'assignments'"));
	struct perfdb_grid_config *c = l->c;
	c->assign = calloc(n->n ? n->n : 1, sizeof(*c->assign));
	if (!c->assign)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *k = scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *v = n->items[2 * i + 1];
		if (!k || !*k)
			return at(l, n->items[2 * i], "a kernel type must be a string");
		if (grid_config_assignment(c, k))
			return at(l, n->items[2 * i], "kernel type '%s' assigned twice", k);
		struct grid_assignment *a = &c->assign[c->nassign];
		if (!(a->kernel = strdup(k)))
			return oom(l);
		c->nassign++;
		if (perfdb_yscalar_is_null(v) || (scalar(v) && strcmp(v->text, "skip") == 0))
			continue;
		if (!scalar(v))
			return at(l, v, "the assignment of '%s' must be a pattern name or 'skip'", k);
		a->p = grid_config_pattern(c, v->text);
		if (!a->p)
			return at(l, v, "'%s' is assigned to unknown pattern '%s' (write 'skip' to "
				  "skip it)", k, v->text);
		if (!(a->pattern = strdup(v->text)))
			return oom(l);
	}
	return 0;
}

static int load_doc(struct ld *l, const struct perfdb_ydoc *d)
{
	static const char *const keys[] = { "version", "grids", "models", "legacy_names",
					    "patterns", "assignments", NULL };
	const struct perfdb_ynode_s *root = d->root;
	if (!root || root->type != PERFDB_Y_MAP)
		return at(l, root, "the grid configuration must be a mapping");
	PERFDB_TRY(check_keys(l, root, keys, "the grid configuration"));
	const struct perfdb_ynode_s *v = perfdb_ymap_get(root, "version");
	int64_t ver;
	if (!v || perfdb_yscalar_int(v, &ver) < 0 || ver != 1)
		return at(l, v ? v : root, "'version: 1' expected");
	static const char *const need[] = { "grids", "models", "patterns", "assignments" };
	for (size_t i = 0; i < 4; i++)
		if (!perfdb_ymap_get(root, need[i]))
			return at(l, root, "missing '%s'", need[i]);
	PERFDB_TRY(load_grids(l, perfdb_ymap_get(root, "grids")));
	PERFDB_TRY(load_models(l, perfdb_ymap_get(root, "models")));
	if (perfdb_ymap_get(root, "legacy_names"))
		PERFDB_TRY(load_legacy(l, perfdb_ymap_get(root, "legacy_names")));
	PERFDB_TRY(load_patterns(l, perfdb_ymap_get(root, "patterns")));
	PERFDB_TRY(load_assignments(l, perfdb_ymap_get(root, "assignments")));
	return 0;
}

static void pattern_release(struct grid_pattern *p)
{
	free(p->name);
	for (size_t i = 0; i < p->niters; i++)
		axis_release(&p->iters[i]);
	free(p->iters);
	for (size_t i = 0; i < p->nfallback; i++)
		axis_release(&p->fallback[i]);
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
	axis_release(&p->tokens);
	axis_release(&p->cards);
	for (size_t i = 0; i < p->nscenes; i++) {
		free(p->scenes[i].key);
		axis_release(&p->scenes[i].prefill_batches);
		axis_release(&p->scenes[i].prefill_seqs);
		axis_release(&p->scenes[i].decode_batches);
		axis_release(&p->scenes[i].decode_avg_seqs);
	}
	free(p->scenes);
}

void perfdb_grid_config_free(struct perfdb_grid_config *c)
{
	if (!c)
		return;
	free(c->path);
	for (size_t i = 0; i < c->ngrids; i++)
		axis_release(&c->grids[i]);
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
		struct ld l = { c, name, err };
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
