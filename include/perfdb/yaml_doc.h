/*
 * YAML documents as a tree of nodes with their line and column (libyaml's
 * parser underneath), typed as PyYAML's safe_load types them.  Every stage
 * that reads YAML written for the reference tools reads it through this:
 * op_mapping.yaml (op_mapping.c) and the grid's config (src/grid/config.c).
 */
#ifndef PERFDB_YAML_DOC_H
#define PERFDB_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

enum perfdb_ynode { PERFDB_Y_SCALAR, PERFDB_Y_SEQ, PERFDB_Y_MAP };

struct perfdb_ynode_s {
	enum perfdb_ynode type;
	size_t line, col;               /* 1-based */
	char *text;                     /* scalars */
	size_t len;
	bool plain;                     /* an unquoted scalar (YAML typing applies) */
	struct perfdb_ynode_s **items;    /* seq: items; map: key, value, key, value ... */
	size_t n;                       /* seq: items; map: pairs */
};

struct perfdb_ydoc {
	char *name;
	struct perfdb_ynode_s *root;      /* NULL for an empty document */
	void *impl;
};

/* Parse a whole YAML document (the first one); errors carry name:line:col. */
int perfdb_ydoc_load(struct perfdb_ydoc *d, const char *name, const char *data, size_t len,
		   struct perfdb_err *err);
void perfdb_ydoc_release(struct perfdb_ydoc *d);
/* Value of key in a mapping node, or NULL. */
const struct perfdb_ynode_s *perfdb_ymap_get(const struct perfdb_ynode_s *map, const char *key);
/* YAML 1.1 core typing of a plain scalar, as PyYAML's safe_load. */
bool perfdb_yscalar_is_null(const struct perfdb_ynode_s *n);
/* 1 true, 0 false, -1 not a boolean. */
int perfdb_yscalar_bool(const struct perfdb_ynode_s *n);
/* Python truthiness of a scalar value (bool(x) after safe_load). */
bool perfdb_yscalar_truthy(const struct perfdb_ynode_s *n);
/* A decimal integer scalar (plain, optional sign and '_'); 0 ok. */
int perfdb_yscalar_int(const struct perfdb_ynode_s *n, int64_t *out);

#endif
