/*
 * Loading the grid configuration: the loader's state and the checked
 * readers of YAML nodes (config_load.c) that config.c (grids, models,
 * assignments) and config_patterns.c (patterns) share.  Errors carry
 * file:line:col.
 */
#ifndef PERFDB_GRID_CONFIG_LOAD_H
#define PERFDB_GRID_CONFIG_LOAD_H

#include <stdint.h>

#include "grid_internal.h"

struct grid_ld {
	struct perfdb_grid_config *c;
	const char *name;               /* the file, for messages */
	struct perfdb_err *err;
};

/* -PERFDB_EPARSE at n's line and column. */
int grid_ld_at(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int grid_ld_oom(struct grid_ld *l);
/* n's text when it is a scalar, else NULL. */
const char *grid_ld_scalar(const struct perfdb_ynode_s *n);
/* Every key of map must be in allowed (NULL-terminated). */
int grid_ld_check_keys(struct grid_ld *l, const struct perfdb_ynode_s *map,
		       const char *const *allowed, const char *where);
int grid_ld_need_map(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *what);
int grid_ld_get_int(struct grid_ld *l, const struct perfdb_ynode_s *n, int64_t *out,
		    const char *what);
int grid_ld_get_int_list(struct grid_ld *l, const struct perfdb_ynode_s *n, int64_t **v,
			 size_t *cnt, const char *what);
/* A grid reference: the name of a `grids:` entry, or an inline list. */
int grid_ld_get_axis(struct grid_ld *l, const struct perfdb_ynode_s *n, const char *var,
		     struct grid_axis *a, const char *what);
void grid_ld_axis_release(struct grid_axis *a);

/* The `patterns:` mapping (config_patterns.c). */
int grid_ld_load_patterns(struct grid_ld *l, const struct perfdb_ynode_s *n);

#endif
