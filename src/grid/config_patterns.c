/*
 * The `patterns:` of the grid configuration (docs/spec/grid.md §3): each a
 * template (iterators, shape slots, overrides) or a generator function
 * with its parameters, its expressions compiled and the names they use
 * checked here, once.
 */
#include "config_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/schema.h"

/* ---- patterns --------------------------------------------------------------- */

static int add_var(struct grid_ld *l, struct grid_pattern *p, const char *name,
		   const struct perfdb_ynode_s *where)
{
	for (size_t i = 0; i < p->nvars; i++)
		if (strcmp(p->vars[i], name) == 0)
			return grid_ld_at(l, where, "variable '%s' defined twice in pattern '%s'", name,
				  p->name);
	char **v = realloc(p->vars, (p->nvars + 1) * sizeof(*v));
	if (!v)
		return grid_ld_oom(l);
	p->vars = v;
	if (!(p->vars[p->nvars] = strdup(name)))
		return grid_ld_oom(l);
	p->nvars++;
	return 0;
}

static int load_iters(struct grid_ld *l, const struct perfdb_ynode_s *n,
		      struct grid_axis **out, size_t *cnt, const char *what)
{
	PERFDB_TRY(grid_ld_need_map(l, n, what));
	*out = calloc(n->n ? n->n : 1, sizeof(**out));
	if (!*out)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *var = grid_ld_scalar(n->items[2 * i]);
		if (!var || !*var)
			return grid_ld_at(l, n->items[2 * i], "an iterator name must be a string");
		*cnt = i + 1;   /* released with the pattern, even on error */
		PERFDB_TRY(grid_ld_get_axis(l, n->items[2 * i + 1], var, &(*out)[i], "an iterator"));
	}
	return 0;
}

static int compile(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		   const char *text, size_t len, struct grid_expr **out)
{
	char msg[384];
	int rc = grid_expr_compile(out, text, len, (const char *const *)p->vars, p->nvars, msg,
				   sizeof(msg));
	if (rc == -PERFDB_ENOMEM)
		return grid_ld_oom(l);
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
static int load_shape(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		      struct grid_shape_expr *s)
{
	const char *t = grid_ld_scalar(n);
	if (!t)
		return grid_ld_at(l, n, "pattern '%s': a slot template must be a string like '(M, K)'",
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
					return grid_ld_at(l, n, "pattern '%s': more than 8 dims in '%s'", p->name,
						  t);
				struct grid_expr **d = realloc(s->dims, (s->nd + 1) * sizeof(*d));
				if (!d)
					return grid_ld_oom(l);
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

static int load_shapes(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *n,
		       struct grid_shape_expr **out, size_t *cnt, const char *what)
{
	if (!n || n->type != PERFDB_Y_SEQ)
		return grid_ld_at(l, n ? n : NULL, "pattern '%s': '%s' must be a list of slot templates",
			  p->name, what);
	if (n->n > GRID_MAX_SLOTS)
		return grid_ld_at(l, n, "pattern '%s': more than 64 slots in '%s'", p->name, what);
	*out = calloc(n->n ? n->n : 1, sizeof(**out));
	if (!*out)
		return grid_ld_oom(l);
	*cnt = n->n;
	for (size_t i = 0; i < n->n; i++)
		PERFDB_TRY(load_shape(l, p, n->items[i], &(*out)[i]));
	return 0;
}

static int load_override(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m,
			 const char *key, const char *col)
{
	const struct perfdb_ynode_s *n = perfdb_ymap_get(m, key);
	if (!n || perfdb_yscalar_is_null(n))
		return 0;
	if (n->type != PERFDB_Y_SEQ)
		return grid_ld_at(l, n, "pattern '%s': '%s' must be a list", p->name, key);
	if (n->n == 0)   /* the reference ignores an empty list */
		return 0;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < n->n; i++) {
		const char *v = grid_ld_scalar(n->items[i]);
		if (!v) {
			perfdb_strbuf_release(&sb);
			return grid_ld_at(l, n->items[i], "pattern '%s': '%s' holds a non-scalar", p->name,
				  key);
		}
		if ((i && perfdb_strbuf_addch(&sb, ';') < 0) || perfdb_strbuf_addstr(&sb, v) < 0) {
			perfdb_strbuf_release(&sb);
			return grid_ld_oom(l);
		}
	}
	p->override_col[p->noverrides] = strdup(col);
	p->override_val[p->noverrides] = perfdb_strbuf_detach(&sb, NULL);
	p->noverrides++;
	if (!p->override_col[p->noverrides - 1] || !p->override_val[p->noverrides - 1])
		return grid_ld_oom(l);
	return 0;
}

static int load_template(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m)
{
	static const char *const keys[] = {
		"iterators", "fallback_iterators", "constants", "constraints", "model_nk_pairs",
		"inputs", "outputs", "input_dtypes", "input_formats", "output_dtypes",
		"output_formats", NULL,
	};
	PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a template pattern"));
	const struct perfdb_ynode_s *n;
	if ((n = perfdb_ymap_get(m, "model_nk_pairs"))) {
		int b = perfdb_yscalar_bool(n);
		if (b < 0)
			return grid_ld_at(l, n, "pattern '%s': model_nk_pairs must be true or false", p->name);
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
		PERFDB_TRY(grid_ld_need_map(l, n, "'constants'"));
		p->const_names = calloc(n->n ? n->n : 1, sizeof(char *));
		p->const_vals = calloc(n->n ? n->n : 1, sizeof(int64_t));
		if (!p->const_names || !p->const_vals)
			return grid_ld_oom(l);
		for (size_t i = 0; i < n->n; i++) {
			const char *k = grid_ld_scalar(n->items[2 * i]);
			if (!k)
				return grid_ld_at(l, n->items[2 * i], "a constant name must be a string");
			if (!(p->const_names[i] = strdup(k)))
				return grid_ld_oom(l);
			p->nconsts = i + 1;
			PERFDB_TRY(grid_ld_get_int(l, n->items[2 * i + 1], &p->const_vals[i], "a constant"));
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
			return grid_ld_at(l, n, "pattern '%s': constraints must be a list of expressions",
				  p->name);
		p->constraints = calloc(n->n ? n->n : 1, sizeof(*p->constraints));
		if (!p->constraints)
			return grid_ld_oom(l);
		for (size_t i = 0; i < n->n; i++) {
			const char *t = grid_ld_scalar(n->items[i]);
			if (!t)
				return grid_ld_at(l, n->items[i], "pattern '%s': a constraint must be a string",
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

static int load_scene_axis(struct grid_ld *l, const struct perfdb_ynode_s *m, const char *key,
			   struct grid_axis *a)
{
	const struct perfdb_ynode_s *n = perfdb_ymap_get(m, key);
	if (!n)
		return grid_ld_at(l, m, "a scene needs '%s'", key);
	PERFDB_TRY(grid_ld_get_axis(l, n, key, a, key));
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] <= 0)
			return grid_ld_at(l, n, "'%s' values must be positive", key);
	return 0;
}

static int load_generator(struct grid_ld *l, struct grid_pattern *p, const struct perfdb_ynode_s *m)
{
	const struct perfdb_ynode_s *g = perfdb_ymap_get(m, "generator");
	const char *gen = grid_ld_scalar(g);
	const struct perfdb_ynode_s *n;
	if (gen && strcmp(gen, "grouped_matmul") == 0) {
		static const char *const keys[] = { "generator", "tokens", NULL };
		p->kind = GRID_KIND_GROUPED_MATMUL;
		PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a grouped_matmul pattern"));
	} else if (gen && strcmp(gen, "split_qkv_rmsnorm_rope") == 0) {
		static const char *const keys[] = { "generator", "tokens", NULL };
		p->kind = GRID_KIND_SPLIT_QKV;
		PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a split_qkv_rmsnorm_rope pattern"));
	} else if (gen && strcmp(gen, "dispatch_ffn_combine") == 0) {
		static const char *const keys[] = { "generator", "tokens", "deployment_cards",
						    "max_experts_per_rank", "max_token_elems", NULL };
		p->kind = GRID_KIND_DFC;
		PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a dispatch_ffn_combine pattern"));
		if (!(n = perfdb_ymap_get(m, "deployment_cards")))
			return grid_ld_at(l, m, "pattern '%s' needs 'deployment_cards'", p->name);
		PERFDB_TRY(grid_ld_get_axis(l, n, "deployment_cards", &p->cards, "deployment_cards"));
		for (size_t i = 0; i < p->cards.n; i++)
			if (p->cards.v[i] <= 0)
				return grid_ld_at(l, n, "deployment_cards must be positive");
		if (!(n = perfdb_ymap_get(m, "max_experts_per_rank")))
			return grid_ld_at(l, m, "pattern '%s' needs 'max_experts_per_rank'", p->name);
		PERFDB_TRY(grid_ld_get_int(l, n, &p->max_experts_per_rank, "max_experts_per_rank"));
		if (!(n = perfdb_ymap_get(m, "max_token_elems")))
			return grid_ld_at(l, m, "pattern '%s' needs 'max_token_elems'", p->name);
		PERFDB_TRY(grid_ld_get_int(l, n, &p->max_token_elems, "max_token_elems"));
	} else if (gen && strcmp(gen, "fused_attention") == 0) {
		static const char *const keys[] = { "generator", "block_size", "min_blocks", "mask",
						    "scenes", "layout", NULL };
		p->kind = GRID_KIND_FIA;
		PERFDB_TRY(grid_ld_check_keys(l, m, keys, "a fused_attention pattern"));
		/* layout: fia (the kernel's 31 slots and Runtime columns) or aten (PyTorch's sdpa) */
		if ((n = perfdb_ymap_get(m, "layout"))) {
			int fia = n->type == PERFDB_Y_SCALAR && n->len == 3 && memcmp(n->text, "fia", 3) == 0;
			p->aten_bnsd = n->type == PERFDB_Y_SCALAR && n->len == 4 && memcmp(n->text, "aten", 4) == 0;
			if (!fia && !p->aten_bnsd)
				return grid_ld_at(l, n, "layout must be fia or aten");
		}
		if (!(n = perfdb_ymap_get(m, "block_size")))
			return grid_ld_at(l, m, "pattern '%s' needs 'block_size'", p->name);
		PERFDB_TRY(grid_ld_get_int(l, n, &p->block_size, "block_size"));
		if (p->block_size <= 0)
			return grid_ld_at(l, n, "block_size must be positive");
		if (!(n = perfdb_ymap_get(m, "min_blocks")))
			return grid_ld_at(l, m, "pattern '%s' needs 'min_blocks'", p->name);
		PERFDB_TRY(grid_ld_get_int(l, n, &p->min_blocks, "min_blocks"));
		if (!(n = perfdb_ymap_get(m, "mask")))
			return grid_ld_at(l, m, "pattern '%s' needs 'mask'", p->name);
		int64_t *mv;
		size_t mn;
		PERFDB_TRY(grid_ld_get_int_list(l, n, &mv, &mn, "mask"));
		if (mn != 2) {
			free(mv);
			return grid_ld_at(l, n, "mask must hold 2 dims");
		}
		p->mask[0] = mv[0];
		p->mask[1] = mv[1];
		free(mv);
		const struct perfdb_ynode_s *sc = perfdb_ymap_get(m, "scenes");
		PERFDB_TRY(grid_ld_need_map(l, sc, "'scenes'"));
		p->scenes = calloc(sc->n ? sc->n : 1, sizeof(*p->scenes));
		if (!p->scenes)
			return grid_ld_oom(l);
		bool have_default = false;
		for (size_t i = 0; i < sc->n; i++) {
			static const char *const skeys[] = { "prefill_batches", "prefill_seqs",
							     "decode_batches", "decode_avg_seqs", NULL };
			const char *key = grid_ld_scalar(sc->items[2 * i]);
			const struct perfdb_ynode_s *s = sc->items[2 * i + 1];
			if (!key)
				return grid_ld_at(l, sc->items[2 * i], "a scene key must be a string");
			PERFDB_TRY(grid_ld_need_map(l, s, "a scene"));
			PERFDB_TRY(grid_ld_check_keys(l, s, skeys, "a scene"));
			struct grid_scene *dst = &p->scenes[i];
			if (!(dst->key = strdup(key)))
				return grid_ld_oom(l);
			p->nscenes = i + 1;
			have_default |= strcmp(key, "default") == 0;
			PERFDB_TRY(load_scene_axis(l, s, "prefill_batches", &dst->prefill_batches));
			PERFDB_TRY(load_scene_axis(l, s, "prefill_seqs", &dst->prefill_seqs));
			PERFDB_TRY(load_scene_axis(l, s, "decode_batches", &dst->decode_batches));
			PERFDB_TRY(load_scene_axis(l, s, "decode_avg_seqs", &dst->decode_avg_seqs));
		}
		if (!have_default)
			return grid_ld_at(l, sc, "pattern '%s': scenes need a 'default' entry", p->name);
		return 0;
	} else {
		return grid_ld_at(l, g, "pattern '%s': unknown generator '%s' (grouped_matmul, "
			  "dispatch_ffn_combine, fused_attention, split_qkv_rmsnorm_rope)", p->name,
			  gen ? gen : "?");
	}
	if (!(n = perfdb_ymap_get(m, "tokens")))
		return grid_ld_at(l, m, "pattern '%s' needs 'tokens'", p->name);
	PERFDB_TRY(grid_ld_get_axis(l, n, "tokens", &p->tokens, "tokens"));
	for (size_t i = 0; i < p->tokens.n; i++)
		if (p->tokens.v[i] <= 0)
			return grid_ld_at(l, n, "tokens must be positive");
	return 0;
}

int grid_ld_load_patterns(struct grid_ld *l, const struct perfdb_ynode_s *n)
{
	PERFDB_TRY(grid_ld_need_map(l, n, "'patterns'"));
	struct perfdb_grid_config *c = l->c;
	c->patterns = calloc(n->n ? n->n : 1, sizeof(*c->patterns));
	if (!c->patterns)
		return grid_ld_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const char *name = grid_ld_scalar(n->items[2 * i]);
		const struct perfdb_ynode_s *m = n->items[2 * i + 1];
		if (!name || !*name || strcmp(name, "skip") == 0)
			return grid_ld_at(l, n->items[2 * i], "a pattern name must be a string other than "
				  "'skip'");
		if (grid_config_pattern(c, name))
			return grid_ld_at(l, n->items[2 * i], "duplicate pattern '%s'", name);
		struct grid_pattern *p = &c->patterns[c->npatterns];
		if (!(p->name = strdup(name)))
			return grid_ld_oom(l);
		p->line = n->items[2 * i]->line;
		c->npatterns++;
		PERFDB_TRY(grid_ld_need_map(l, m, "a pattern"));
		if (perfdb_ymap_get(m, "generator"))
			PERFDB_TRY(load_generator(l, p, m));
		else
			PERFDB_TRY(load_template(l, p, m));
	}
	return 0;
}

