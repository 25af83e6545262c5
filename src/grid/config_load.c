/*
 * The grid configuration loader's checked readers of YAML nodes
 * (config_load.h), and the lookups of a loaded configuration by name.
 */
#include "config_load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int grid_ld_at(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return perfdb_err_at(l->err, PERFDB_EPARSE, l->name, n ? n->line : 0, n ? n->col : 0,
			     "%s", msg);
}

int grid_ld_oom(struct grid_ld *l)
{
	return perfdb_err_set(l->err, PERFDB_ENOMEM, "out of memory");
}

const char *grid_ld_scalar(const struct perfdb_ynode_s *n)
{
	return n && n->type == PERFDB_Y_SCALAR ? n->text : NULL;
}

/* Every key of map must be in allowed (NULL-terminated). */
int grid_ld_check_keys(struct grid_ld *l, const struct perfdb_ynode_s *map, const char *const *allowed,
		      const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct perfdb_ynode_s *k = map->items[2 * i];
		const char *ks = grid_ld_scalar(k);
		bool ok = false;
		for (size_t j = 0; ks && allowed[j]; j++)
			ok |= strcmp(ks, allowed[j]) == 0;
		if (!ok)
			return grid_ld_at(l, k, "unknown key '%s' in %s", ks ? ks : "?", where);
		for (size_t j = 0; j < i; j++)
			if (grid_ld_scalar(map->items[2 * j]) && strcmp(grid_ld_scalar(map->items[2 * j]), ks) == 0)
				return grid_ld_at(l, k, "duplicate key '%s' in %s", ks, where);
	}
	return 0;
}

int grid_ld_need_map(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *what)
{
	if (!n || n->type != PERFDB_Y_MAP)
		return grid_ld_at(l, n, "%s must be a mapping", what);
	return 0;
}

int grid_ld_get_int(struct grid_ld *l, const struct perfdb_ynode_s *n, int64_t *out, const char *what)
{
	if (perfdb_yscalar_int(n, out) < 0)
		return grid_ld_at(l, n, "%s must be an integer", what);
	return 0;
}

int grid_ld_get_int_list(struct grid_ld *l, const struct perfdb_ynode_s *n, int64_t **v, size_t *cnt,
			const char *what)
{
	if (!n || n->type != PERFDB_Y_SEQ)
		return grid_ld_at(l, n, "%s must be a list of integers", what);
	*v = malloc((n->n ? n->n : 1) * sizeof(**v));
	if (!*v)
		return grid_ld_oom(l);
	*cnt = n->n;
	for (size_t i = 0; i < n->n; i++) {
		int rc = grid_ld_get_int(l, n->items[i], &(*v)[i], what);
		if (rc < 0) {   /* the callers own *v only on success */
			free(*v);
			*v = NULL;
			*cnt = 0;
			return rc;
		}
	}
	return 0;
}

void grid_ld_axis_release(struct grid_axis *a)
{
	free(a->name);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* A grid reference: the name of a `grids:` entry, or an inline list. */
int grid_ld_get_axis(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *var,
		    struct grid_axis *a, const char *what)
{
	memset(a, 0, sizeof(*a));
	if (var && !(a->name = strdup(var)))
		return grid_ld_oom(l);
	if (n && n->type == PERFDB_Y_SCALAR) {
		const struct grid_axis *g = grid_config_grid(l->c, n->text);
		if (!g)
			return grid_ld_at(l, n, "unknown grid '%s' (define it under 'grids:')", n->text);
		a->v = malloc((g->n ? g->n : 1) * sizeof(*a->v));
		if (!a->v)
			return grid_ld_oom(l);
		memcpy(a->v, g->v, g->n * sizeof(*a->v));
		a->n = g->n;
		return 0;
	}
	return grid_ld_get_int_list(l, n, &a->v, &a->n, what);
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
