/*
 * YAML documents for the grid configuration and op_mapping.yaml, read with
 * libyaml's document loader and kept as a small node graph with 1-based
 * lines and columns, so every consumer can report `file:line:col`.
 *
 * Nodes are stored in one array indexed like libyaml's; an alias is the
 * same node reached twice, never a copy (no billion-laughs expansion).
 * Typing of plain scalars follows YAML 1.1 as PyYAML's safe_load does:
 * null (`~`, `null`, empty), booleans (`true`, `yes`, `on`, ... any of
 * their three casings), integers, floats, else strings; quoted scalars are
 * always strings.
 */
#include "perfdb/yaml_doc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

struct impl {
	struct perfdb_ynode_s *nodes;
	size_t n;
};

static int yaml_fail(const char *name, const yaml_parser_t *p, struct perfdb_err *err)
{
	const char *what = p->problem ? p->problem : "malformed YAML";
	if (p->context)
		return perfdb_err_at(err, PERFDB_EPARSE, name, p->problem_mark.line + 1,
				     p->problem_mark.column + 1, "YAML syntax error: %s %s", what,
				     p->context);
	return perfdb_err_at(err, PERFDB_EPARSE, name, p->problem_mark.line + 1,
			     p->problem_mark.column + 1, "YAML syntax error: %s", what);
}

/*
 * Nesting is capped before the document is built: libyaml's loader takes
 * seconds on tens of thousands of levels, and no configuration needs more
 * than a handful.  One pass over the events stops at the first level past
 * the cap, so a deep document costs microseconds to refuse.
 */
#define YAML_MAX_DEPTH 64

static int check_depth(const char *name, const char *data, size_t len, struct perfdb_err *err)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	int depth = 0, rc = 0, done = 0;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_fail(name, &p, err);
			break;
		}
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > YAML_MAX_DEPTH)
				rc = perfdb_err_at(err, PERFDB_EPARSE, name, ev.start_mark.line + 1,
						   ev.start_mark.column + 1,
						   "YAML nested more than %d levels deep", YAML_MAX_DEPTH);
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

int perfdb_ydoc_load(struct perfdb_ydoc *d, const char *name, const char *data, size_t len,
		   struct perfdb_err *err)
{
	memset(d, 0, sizeof(*d));
	d->name = strdup(name);
	struct impl *im = calloc(1, sizeof(*im));
	if (!d->name || !im) {
		free(im);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	d->impl = im;
	if (memchr(data, '\0', len))
		return perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0, "NUL byte in YAML text");
	PERFDB_TRY(check_depth(name, data, len, err));
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	if (!yaml_parser_load(&p, &doc)) {
		int rc = yaml_fail(name, &p, err);
		yaml_parser_delete(&p);
		return rc;
	}
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root) {
		size_t n = (size_t)(doc.nodes.top - doc.nodes.start);
		im->nodes = calloc(n, sizeof(*im->nodes));
		im->n = n;
		if (!im->nodes)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (size_t i = 0; rc == 0 && i < n; i++) {
			yaml_node_t *y = &doc.nodes.start[i];
			struct perfdb_ynode_s *g = &im->nodes[i];
			g->line = y->start_mark.line + 1;
			g->col = y->start_mark.column + 1;
			if (y->type == YAML_SCALAR_NODE) {
				g->type = PERFDB_Y_SCALAR;
				g->len = y->data.scalar.length;
				g->text = malloc(g->len + 1);
				if (!g->text) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				memcpy(g->text, y->data.scalar.value, g->len);
				g->text[g->len] = '\0';
				g->plain = y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			} else if (y->type == YAML_SEQUENCE_NODE) {
				g->type = PERFDB_Y_SEQ;
				size_t k = (size_t)(y->data.sequence.items.top -
						    y->data.sequence.items.start);
				g->items = calloc(k ? k : 1, sizeof(*g->items));
				if (!g->items) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				for (size_t j = 0; j < k; j++)
					g->items[j] = &im->nodes[y->data.sequence.items.start[j] - 1];
				g->n = k;
			} else {
				g->type = PERFDB_Y_MAP;
				size_t k = (size_t)(y->data.mapping.pairs.top -
						    y->data.mapping.pairs.start);
				g->items = calloc(k ? 2 * k : 1, sizeof(*g->items));
				if (!g->items) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				for (size_t j = 0; j < k; j++) {
					yaml_node_pair_t *pr = &y->data.mapping.pairs.start[j];
					g->items[2 * j] = &im->nodes[pr->key - 1];
					g->items[2 * j + 1] = &im->nodes[pr->value - 1];
				}
				g->n = k;
			}
		}
		if (rc == 0)
			d->root = &im->nodes[root - doc.nodes.start];
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return rc;
}

void perfdb_ydoc_release(struct perfdb_ydoc *d)
{
	struct impl *im = d->impl;
	if (im) {
		for (size_t i = 0; i < im->n; i++) {
			free(im->nodes[i].text);
			free(im->nodes[i].items);
		}
		free(im->nodes);
		free(im);
	}
	free(d->name);
	memset(d, 0, sizeof(*d));
}

const struct perfdb_ynode_s *perfdb_ymap_get(const struct perfdb_ynode_s *map, const char *key)
{
	if (!map || map->type != PERFDB_Y_MAP)
		return NULL;
	const struct perfdb_ynode_s *found = NULL;
	for (size_t i = 0; i < map->n; i++) {
		const struct perfdb_ynode_s *k = map->items[2 * i];
		/* PyYAML: a repeated key keeps the last value */
		if (k->type == PERFDB_Y_SCALAR && strcmp(k->text, key) == 0)
			found = map->items[2 * i + 1];
	}
	return found;
}

bool perfdb_yscalar_is_null(const struct perfdb_ynode_s *n)
{
	if (!n)
		return true;
	if (n->type != PERFDB_Y_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0 ||
	       strcmp(n->text, "Null") == 0 || strcmp(n->text, "NULL") == 0;
}

int perfdb_yscalar_bool(const struct perfdb_ynode_s *n)
{
	static const char *const t[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					  "on", "On", "ON" };
	static const char *const f[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off", "Off", "OFF" };
	if (!n || n->type != PERFDB_Y_SCALAR || !n->plain)
		return -1;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(n->text, t[i]) == 0)
			return 1;
		if (strcmp(n->text, f[i]) == 0)
			return 0;
	}
	return -1;
}

int perfdb_yscalar_int(const struct perfdb_ynode_s *n, int64_t *out)
{
	if (!n || n->type != PERFDB_Y_SCALAR || !n->plain || !n->len)
		return -1;
	const char *p = n->text;
	int neg = 0;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return -1;
	int64_t v = 0;
	for (; *p; p++) {
		if (*p == '_')
			continue;
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

bool perfdb_yscalar_truthy(const struct perfdb_ynode_s *n)
{
	if (!n || perfdb_yscalar_is_null(n))
		return false;
	if (n->type != PERFDB_Y_SCALAR)
		return n->n > 0;
	if (!n->plain)
		return n->len > 0;
	int b = perfdb_yscalar_bool(n);
	if (b >= 0)
		return b;
	int64_t v;
	if (perfdb_yscalar_int(n, &v) == 0)
		return v != 0;
	char *end;
	double d = strtod(n->text, &end);
	if (*end == '\0' && end != n->text)
		return d != 0;
	return n->len > 0;
}
