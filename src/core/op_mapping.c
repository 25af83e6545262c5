/*
 * op_mapping.yaml routing metadata (docs/spec/grid.md §1, reference
 * grid_generator/config.load_op_mapping_metadata).
 *
 * Format (TensorCast's file, only these fields are read):
 *
 *   operator_mappings:
 *     "<op name>":
 *       kernel_type: MatMulV2               # the CSV stem
 *       alternate_kernel_types: [MatMulV3]  # inherit this entry's flags
 *       zero_cost: true | composite: true | category: communication
 *       query_mode: elementwise
 *
 * For every entry with a kernel_type, in file order, the first entry naming
 * a kernel type wins; its alternates get the same flags plus
 * `alternates_of` unless they were already named.  Flags use Python
 * truthiness after YAML typing (`zero_cost: "false"` is true, as in the
 * reference).  Entries that are not mappings are ignored, as are
 * kernel_type values that are not strings.  Structural errors (the root or
 * operator_mappings not a mapping, alternate_kernel_types not a list) are
 * reported with file:line:col; the reference would crash on them.
 */
#include "perfdb/op_mapping.h"
#include "perfdb/yaml_doc.h"

#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"

const struct perfdb_opmap_kernel *perfdb_opmap_find(const struct perfdb_opmap *m,
					       const char *kernel)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].kernel, kernel) == 0)
			return &m->v[i];
	return NULL;
}

size_t perfdb_opmap_count(const struct perfdb_opmap *m)
{
	return m ? m->n : 0;
}

void perfdb_opmap_free(struct perfdb_opmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].kernel);
		free(m->v[i].query_mode);
		free(m->v[i].alternates_of);
	}
	free(m->v);
	free(m->path);
	free(m);
}

static int add(struct perfdb_opmap *m, const char *kernel, bool zero, bool comp,
	       bool comm, const char *qm, const char *parent, struct perfdb_err *err)
{
	if (perfdb_opmap_find(m, kernel))
		return 0;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct perfdb_opmap_kernel *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		m->v = v;
		m->cap = cap;
	}
	struct perfdb_opmap_kernel *e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->kernel = strdup(kernel);
	e->query_mode = qm ? strdup(qm) : NULL;
	e->alternates_of = parent ? strdup(parent) : NULL;
	if (!e->kernel || (qm && !e->query_mode) || (parent && !e->alternates_of)) {
		free(e->kernel);
		free(e->query_mode);
		free(e->alternates_of);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	e->zero_cost = zero;
	e->composite = comp;
	e->communication = comm;
	m->n++;
	return 0;
}

/* A string-valued scalar (not null, not a bool/number-typed plain scalar
 * that YAML would turn into something else). */
static const char *str_value(const struct perfdb_ynode_s *n)
{
	if (!n || n->type != PERFDB_Y_SCALAR || perfdb_yscalar_is_null(n))
		return NULL;
	if (n->plain) {
		int64_t v;
		if (perfdb_yscalar_bool(n) >= 0 || perfdb_yscalar_int(n, &v) == 0)
			return NULL;
	}
	return n->text;
}

static int load_doc(struct perfdb_opmap *m, const struct perfdb_ydoc *d,
		    struct perfdb_err *err)
{
	const struct perfdb_ynode_s *root = d->root;
	if (!root || perfdb_yscalar_is_null(root))
		return 0;
	if (root->type != PERFDB_Y_MAP)
		return perfdb_err_at(err, PERFDB_EPARSE, d->name, root->line, root->col,
				     "op_mapping: the document must be a mapping");
	const struct perfdb_ynode_s *maps = perfdb_ymap_get(root, "operator_mappings");
	if (!maps || perfdb_yscalar_is_null(maps))
		return 0;
	if (maps->type != PERFDB_Y_MAP)
		return perfdb_err_at(err, PERFDB_EPARSE, d->name, maps->line, maps->col,
				     "op_mapping: 'operator_mappings' must be a mapping");
	for (size_t i = 0; i < maps->n; i++) {
		const struct perfdb_ynode_s *key = maps->items[2 * i];
		/* a repeated operator name: PyYAML keeps the last value, at the first position */
		bool later = false;
		for (size_t j = i + 1; j < maps->n; j++)
			if (key->type == PERFDB_Y_SCALAR && maps->items[2 * j]->type == PERFDB_Y_SCALAR &&
			    strcmp(maps->items[2 * j]->text, key->text) == 0)
				later = true;
		bool earlier = false;
		for (size_t j = 0; j < i; j++)
			if (key->type == PERFDB_Y_SCALAR && maps->items[2 * j]->type == PERFDB_Y_SCALAR &&
			    strcmp(maps->items[2 * j]->text, key->text) == 0)
				earlier = true;
		if (earlier)
			continue;
		const struct perfdb_ynode_s *info = maps->items[2 * i + 1];
		if (later)
			info = perfdb_ymap_get(maps, key->text);
		if (!info || info->type != PERFDB_Y_MAP)
			continue;
		const char *kt = str_value(perfdb_ymap_get(info, "kernel_type"));
		if (!kt || !*kt)
			continue;
		bool zero = perfdb_yscalar_truthy(perfdb_ymap_get(info, "zero_cost"));
		bool comp = perfdb_yscalar_truthy(perfdb_ymap_get(info, "composite"));
		const struct perfdb_ynode_s *cat = perfdb_ymap_get(info, "category");
		bool comm = cat && cat->type == PERFDB_Y_SCALAR && str_value(cat) &&
			    strcmp(cat->text, "communication") == 0;
		const char *qm = str_value(perfdb_ymap_get(info, "query_mode"));
		PERFDB_TRY(add(m, kt, zero, comp, comm, qm, NULL, err));
		const struct perfdb_ynode_s *alts = perfdb_ymap_get(info, "alternate_kernel_types");
		if (!alts || perfdb_yscalar_is_null(alts))
			continue;
		if (alts->type != PERFDB_Y_SEQ)
			return perfdb_err_at(err, PERFDB_EPARSE, d->name, alts->line, alts->col,
					     "op_mapping: 'alternate_kernel_types' of '%s' must be a list",
					     key->type == PERFDB_Y_SCALAR ? key->text : "?");
		for (size_t a = 0; a < alts->n; a++) {
			const char *alt = str_value(alts->items[a]);
			if (alt && *alt)
				PERFDB_TRY(add(m, alt, zero, comp, comm, qm, kt, err));
		}
	}
	return 0;
}

int perfdb_opmap_load_mem(struct perfdb_opmap **out, const char *name,
			       const char *data, size_t len, struct perfdb_err *err)
{
	*out = NULL;
	struct perfdb_opmap *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(name))) {
		free(m);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	struct perfdb_ydoc d;
	int rc = perfdb_ydoc_load(&d, name, data, len, err);
	if (rc == 0)
		rc = load_doc(m, &d, err);
	perfdb_ydoc_release(&d);
	if (rc < 0) {
		perfdb_opmap_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int perfdb_opmap_load(struct perfdb_opmap **out, const char *path,
			   struct perfdb_err *err)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all(path, &sb, err);
	if (rc == 0)
		rc = perfdb_opmap_load_mem(out, path, sb.buf, sb.len, err);
	perfdb_strbuf_release(&sb);
	return rc;
}
