/*
 * The op_mapping.yaml generator (include/perfdb/op_mapping.h; the rules
 * are docs/database.md "op_mapping.yaml").
 *
 * Upstream entries are copied as text, line ranges of the upstream file
 * found from the line numbers of its YAML nodes, so that every field
 * (notes, nested policy options, comments inside an entry) reads exactly as
 * upstream wrote it; only the entries of PyTorch op tables are perfdb's
 * own text, with upstream's query fields copied field by field.  The
 * result is parsed again before it is returned: a copy that broke the
 * YAML is an error, never a file.
 */
#include "perfdb/op_mapping.h"
#include "perfdb/yaml_doc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perfdb/hash.h"
#include "perfdb/op_mapping.h"

/* ---- the upstream text as lines ------------------------------------------ */

struct lines {
	const char *t;
	size_t len;
	size_t *start;              /* start[i]: offset of line i+1; start[n] = len */
	size_t n;
};

static int lines_index(struct lines *l, const char *t, size_t len)
{
	l->t = t;
	l->len = len;
	size_t n = 1;
	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	l->start = malloc((n + 1) * sizeof(*l->start));
	if (!l->start)
		return -PERFDB_ENOMEM;
	l->n = 0;
	l->start[l->n++] = 0;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '\n' && i + 1 < len)
			l->start[l->n++] = i + 1;
	l->start[l->n] = len;
	return 0;
}

static size_t line_indent(const struct lines *l, size_t ln)
{
	size_t i = l->start[ln - 1], e = l->start[ln], k = 0;
	while (i + k < e && l->t[i + k] == ' ')
		k++;
	return k;
}

/* Blank, or a comment no deeper than ind (a deeper '#' line may be a block scalar's text). */
static int line_droppable(const struct lines *l, size_t ln, size_t ind)
{
	size_t i = l->start[ln - 1], e = l->start[ln];
	size_t k = line_indent(l, ln);
	while (i + k < e && (l->t[i + k] == ' ' || l->t[i + k] == '\t' || l->t[i + k] == '\r'))
		k++;
	if (i + k >= e || l->t[i + k] == '\n')
		return 1;
	return l->t[i + k] == '#' && line_indent(l, ln) <= ind;
}

/* [a, b) without the blank lines and shallow comments that end it. */
static size_t trim_end(const struct lines *l, size_t a, size_t b, size_t ind)
{
	while (b > a && line_droppable(l, b - 1, ind))
		b--;
	return b;
}

static int put_lines(struct perfdb_strbuf *out, const struct lines *l, size_t a, size_t b)
{
	if (b <= a)
		return 0;
	size_t s = l->start[a - 1], e = l->start[b - 1];
	PERFDB_TRY(perfdb_strbuf_add(out, l->t + s, e - s));
	if (!out->len || out->buf[out->len - 1] != '\n')
		PERFDB_TRY(perfdb_strbuf_addch(out, '\n'));
	return 0;
}

/* ---- the tables of the directory ----------------------------------------- */

struct tables {
	const char **v;             /* sorted, unique (borrowed) */
	size_t n;
	unsigned char *used;        /* named by an emitted entry */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static long table_index(const struct tables *t, const char *name)
{
	const char **p = bsearch(&name, t->v, t->n, sizeof(*t->v), cmp_str);
	return p ? (long)(p - t->v) : -1;
}

static const char *scalar_str(const struct perfdb_ynode_s *n)
{
	return n && n->type == PERFDB_Y_SCALAR && !perfdb_yscalar_is_null(n) ? n->text : NULL;
}

static int present(const struct tables *t, const struct perfdb_ynode_s *n)
{
	const char *s = scalar_str(n);
	return s && table_index(t, s) >= 0;
}

/* Fields whose values are kernel (table) names. */
static int kernel_field(const char *k)
{
	size_t n = strlen(k);
	return strcmp(k, "sub_kernels") == 0 ||
	       (n >= 11 && strcmp(k + n - 11, "kernel_type") == 0) ||
	       (n >= 12 && strcmp(k + n - 12, "kernel_types") == 0);
}

/*
 * Walk the kernel names under node v, the value of field key (every scalar
 * value below a kernel field is a kernel name, `kernel_types_by_input_rank:
 * {3: [...]}` too): counts them in *names and those present in *have; with
 * mark, marks the present ones used.
 */
static void kernel_walk(struct tables *t, int inside, const struct perfdb_ynode_s *v,
			size_t *names, size_t *have, int mark)
{
	if (!v)
		return;
	if (v->type == PERFDB_Y_MAP) {
		for (size_t i = 0; i < v->n; i++) {
			const char *k = scalar_str(v->items[2 * i]);
			kernel_walk(t, inside || (k && kernel_field(k)), v->items[2 * i + 1], names, have,
				    mark);
		}
	} else if (v->type == PERFDB_Y_SEQ) {
		for (size_t i = 0; i < v->n; i++)
			kernel_walk(t, inside, v->items[i], names, have, mark);
	} else if (inside && scalar_str(v)) {
		(*names)++;
		long ix = table_index(t, v->text);
		if (ix >= 0) {
			(*have)++;
			if (mark)
				t->used[ix] = 1;
		}
	}
}

static void kernel_names(struct tables *t, const char *key, const struct perfdb_ynode_s *v,
			 size_t *names, size_t *have, int mark)
{
	kernel_walk(t, kernel_field(key), v, names, have, mark);
}

/* ---- upstream entries ------------------------------------------------------ */

struct entry {
	const struct perfdb_ynode_s *key, *info;
	size_t a, b;                /* its lines [a, b), trimmed */
	int dup;                    /* a later entry has the same key: PyYAML keeps that one */
	long torch;                 /* claimed by torch stem [torch], -1 none */
};

struct torch_stem {
	const char *stem;
	struct perfdb_strbuf base, ovl;
	int claimed;                /* upstream keys it took */
	char *extra;                /* its own key when it took none, or NULL */
};

struct gen {
	const char *upname;
	struct perfdb_err *err;
	struct lines l;
	struct perfdb_ydoc d;
	struct tables t;
	struct entry *e;
	size_t ne;
	struct torch_stem *ts;
	size_t nts;
	int ascend_db;              /* an upstream-mapped kernel table is present */
};

static int truthy(const struct perfdb_ynode_s *info, const char *k)
{
	return perfdb_yscalar_truthy(perfdb_ymap_get(info, k));
}

static int key_matches(const struct torch_stem *s, const char *key)
{
	size_t bl = s->base.len;
	if (strncmp(key, s->base.buf, bl) != 0 || key[bl] != '.')
		return 0;
	if (s->ovl.len)
		return strcmp(key + bl + 1, s->ovl.buf) == 0;
	return key[bl + 1] && !strchr(key + bl + 1, '.');
}

static int key_taken(const struct gen *g, const char *key)
{
	for (size_t i = 0; i < g->ne; i++)
		if (!g->e[i].dup && strcmp(scalar_str(g->e[i].key), key) == 0)
			return 1;
	for (size_t i = 0; i < g->nts; i++)
		if (g->ts[i].extra && strcmp(g->ts[i].extra, key) == 0)
			return 1;
	return 0;
}

/* Exact overloads first, so that `aten.add%2ETensor` gets aten.add.Tensor before `aten.add` does. */
static int claim(struct gen *g)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t s = 0; s < g->nts; s++) {
			struct torch_stem *ts = &g->ts[s];
			if ((pass == 0) != (ts->ovl.len > 0))
				continue;
			for (size_t i = 0; i < g->ne; i++)
				if (!g->e[i].dup && g->e[i].torch < 0 &&
				    key_matches(ts, scalar_str(g->e[i].key))) {
					g->e[i].torch = (long)s;
					ts->claimed++;
				}
			if (ts->claimed)
				continue;
			struct perfdb_strbuf k = PERFDB_STRBUF_INIT;
			if (perfdb_strbuf_addf(&k, "%s.%s", ts->base.buf,
					       ts->ovl.len ? ts->ovl.buf : "default") < 0)
				return -PERFDB_ENOMEM;
			if (key_taken(g, k.buf))
				perfdb_strbuf_release(&k);
			else
				ts->extra = perfdb_strbuf_detach(&k, NULL);
		}
	return 0;
}

/* Whether the Ascend rule keeps upstream entry e (docs/database.md). */
/* An entry of the simulator's collectives: its kernel is a comm table (hcom_*). */
static int comm_entry(const struct perfdb_ynode_s *info)
{
	if (!info || info->type != PERFDB_Y_MAP)
		return 0;
	const char *kt = scalar_str(perfdb_ymap_get(info, "kernel_type"));
	return kt && strncmp(kt, "hcom_", 5) == 0;
}

static int ascend_keeps(struct gen *g, const struct entry *e)
{
	const struct perfdb_ynode_s *info = e->info;
	if (!info || info->type != PERFDB_Y_MAP)
		return 0;
	if (truthy(info, "composite")) {
		const struct perfdb_ynode_s *sk = perfdb_ymap_get(info, "sub_kernels");
		if (!sk || sk->type != PERFDB_Y_SEQ || !sk->n)
			return 0;   /* a Python decomposer: its kernels are not in the file */
		for (size_t i = 0; i < sk->n; i++)
			if (!present(&g->t, sk->items[i]))
				return 0;
		return 1;
	}
	const struct perfdb_ynode_s *kt = perfdb_ymap_get(info, "kernel_type");
	int zero = truthy(info, "zero_cost") || truthy(info, "accepted_miss");
	if (zero && !scalar_str(kt))
		return g->ascend_db;
	if (present(&g->t, kt))
		return 1;
	if (zero)
		return 0;
	const struct perfdb_ynode_s *alts = perfdb_ymap_get(info, "alternate_kernel_types");
	if (alts && alts->type == PERFDB_Y_SEQ)
		for (size_t i = 0; i < alts->n; i++)
			if (present(&g->t, alts->items[i]))
				return 1;
	return 0;
}

static int put_quoted(struct perfdb_strbuf *out, const char *s)
{
	PERFDB_TRY(perfdb_strbuf_addch(out, '"'));
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			PERFDB_TRY(perfdb_strbuf_addch(out, '\\'));
		if (c < 0x20 || c == 0x7f)
			PERFDB_TRY(perfdb_strbuf_addf(out, "\\x%02x", c));
		else
			PERFDB_TRY(perfdb_strbuf_addch(out, c));
	}
	return perfdb_strbuf_addch(out, '"');
}

/* Fields of an upstream entry that a PyTorch op table does not take over. */
static int not_copied(const char *k)
{
	static const char *const skip[] = {
		"kernel_type", "alternate_kernel_types", "notes", "zero_cost", "accepted_miss",
		"composite", "decomposer", "decomposer_options", "sub_kernels",
		"require_all_sub_kernels", "primary_kernel_type", "category", NULL,
	};
	for (size_t i = 0; skip[i]; i++)
		if (strcmp(k, skip[i]) == 0)
			return 1;
	return 0;
}

static int put_torch_entry(struct gen *g, struct perfdb_strbuf *out, const char *key,
			   const struct torch_stem *ts, const struct entry *up)
{
	size_t ki = 2, fi = 4;
	const struct perfdb_ynode_s *info = up && up->info && up->info->type == PERFDB_Y_MAP ? up->info
											  : NULL;
	if (up)
		ki = up->key->col - 1;
	if (info && info->n)
		fi = info->items[0]->col - 1;
	PERFDB_TRY(perfdb_strbuf_addf(out, "%*s", (int)ki, ""));
	PERFDB_TRY(put_quoted(out, key));
	PERFDB_TRY(perfdb_strbuf_addf(out, ":\n%*skernel_type: ", (int)fi, ""));
	PERFDB_TRY(put_quoted(out, ts->stem));
	PERFDB_TRY(perfdb_strbuf_addch(out, '\n'));
	g->t.used[table_index(&g->t, ts->stem)] = 1;
	/* upstream's kernels that this database also holds answer the op too */
	size_t nalt = 0;
	if (info) {
		const struct perfdb_ynode_s *kt = perfdb_ymap_get(info, "kernel_type");
		const struct perfdb_ynode_s *alts = perfdb_ymap_get(info, "alternate_kernel_types");
		size_t na = alts && alts->type == PERFDB_Y_SEQ ? alts->n : 0;
		for (size_t i = 0; i <= na; i++) {
			const struct perfdb_ynode_s *k = i == 0 ? kt : alts->items[i - 1];
			if (!present(&g->t, k) || strcmp(k->text, ts->stem) == 0)
				continue;
			PERFDB_TRY(perfdb_strbuf_addf(out, nalt ? ", " : "%*salternate_kernel_types: [",
						      (int)fi, ""));
			PERFDB_TRY(put_quoted(out, k->text));
			g->t.used[table_index(&g->t, k->text)] = 1;
			nalt++;
		}
		if (nalt)
			PERFDB_TRY(perfdb_strbuf_addstr(out, "]\n"));
		/* the query fields, each as upstream wrote it */
		for (size_t j = 0; j < info->n; j++) {
			const char *fk = scalar_str(info->items[2 * j]);
			if (!fk || not_copied(fk))
				continue;
			size_t names = 0, have = 0;
			kernel_names(&g->t, fk, info->items[2 * j + 1], &names, &have, 0);
			if (have < names)
				continue;   /* it names a kernel this database lacks */
			size_t a = info->items[2 * j]->line;
			size_t b = j + 1 < info->n ? info->items[2 * (j + 1)]->line : up->b;
			if (a <= up->key->line || b <= a)
				return perfdb_err_at(g->err, PERFDB_EPARSE, g->upname, info->items[2 * j]->line,
						     info->items[2 * j]->col,
						     "op_mapping: fields of '%s' must be one per line", key);
			kernel_names(&g->t, fk, info->items[2 * j + 1], &names, &have, 1);
			PERFDB_TRY(put_lines(out, &g->l, a, trim_end(&g->l, a, b, fi)));
		}
	}
	PERFDB_TRY(perfdb_strbuf_addf(out, "%*snotes: ", (int)fi, ""));
	struct perfdb_strbuf n = PERFDB_STRBUF_INIT;
	int rc = up ? perfdb_strbuf_addf(&n, "perfdb: PyTorch op table %s.csv; query fields from "
					 "the upstream entry '%s'.", ts->stem, key)
		    : perfdb_strbuf_addf(&n, "perfdb: PyTorch op table %s.csv; upstream maps no "
					 "overload of this op.", ts->stem);
	if (rc == 0)
		rc = put_quoted(out, n.buf);
	perfdb_strbuf_release(&n);
	PERFDB_TRY(rc);
	return perfdb_strbuf_addstr(out, "\n\n");
}

/* ---- the whole file -------------------------------------------------------- */

static int printable(char c)
{
	return (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f;
}

/*
 * Upstream's convention for a kernel no simulator op maps to (its FAQ Q4,
 * the "Profiling-only Placeholder" entries): `profiling.<Kernel>`, so that
 * every table is reachable through the mapping.  A name that is not
 * printable ASCII cannot be a YAML key here: it stays a comment.
 */
static int put_placeholders(struct gen *g, struct perfdb_strbuf *out, size_t *nentries)
{
	struct perfdb_strbuf k = PERFDB_STRBUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < g->t.n && rc == 0; i++) {
		const char *stem = g->t.v[i];
		if (g->t.used[i])
			continue;
		int ok = 1;
		for (const char *p = stem; *p; p++)
			ok &= printable(*p);
		perfdb_strbuf_reset(&k);
		if (!ok || perfdb_strbuf_addf(&k, "profiling.%s", stem) < 0 || key_taken(g, k.buf))
			continue;
		rc = perfdb_strbuf_addstr(out, "  ");
		if (rc == 0)
			rc = put_quoted(out, k.buf);
		if (rc == 0)
			rc = perfdb_strbuf_addstr(out, ":\n    kernel_type: ");
		if (rc == 0)
			rc = put_quoted(out, stem);
		if (rc == 0)
			rc = perfdb_strbuf_addstr(out, "\n    notes: \"perfdb: a table no simulator op is "
						       "known to map to (upstream's profiling.<Kernel> "
						       "placeholder).\"\n\n");
		g->t.used[i] = 1;
		(*nentries)++;
	}
	perfdb_strbuf_release(&k);
	return rc;
}

static const char *const policies[] = {
	"latency_policy", "query_selection_policy", "interpolation_policy", NULL,
};

static int body(struct gen *g, const struct perfdb_ynode_s *root, struct perfdb_strbuf *out,
		size_t *nentries)
{
	const struct perfdb_ynode_s *maps = NULL;
	size_t maps_end = g->l.n + 1;
	PERFDB_TRY(perfdb_strbuf_addch(out, '\n'));   /* after the header */
	for (size_t i = 0; i < root->n; i++) {
		const struct perfdb_ynode_s *k = root->items[2 * i];
		size_t end = i + 1 < root->n ? root->items[2 * (i + 1)]->line : g->l.n + 1;
		const char *name = scalar_str(k);
		if (!name)
			continue;
		for (size_t p = 0; policies[p]; p++)
			if (strcmp(name, policies[p]) == 0) {
				PERFDB_TRY(put_lines(out, &g->l, k->line, trim_end(&g->l, k->line, end, k->col - 1)));
				PERFDB_TRY(perfdb_strbuf_addch(out, '\n'));
			}
		if (strcmp(name, "operator_mappings") == 0) {
			maps = root->items[2 * i + 1];
			maps_end = end;
		}
	}
	if (maps && perfdb_yscalar_is_null(maps))
		maps = NULL;
	if (maps && maps->type != PERFDB_Y_MAP)
		return perfdb_err_at(g->err, PERFDB_EPARSE, g->upname, maps->line, maps->col,
				     "op_mapping: 'operator_mappings' must be a mapping");
	size_t n = maps ? maps->n : 0;
	g->e = calloc(n ? n : 1, sizeof(*g->e));
	if (!g->e)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct entry *e = &g->e[g->ne];
		e->key = maps->items[2 * i];
		e->info = maps->items[2 * i + 1];
		e->torch = -1;
		if (!scalar_str(e->key))
			continue;
		size_t end = i + 1 < n ? maps->items[2 * (i + 1)]->line : maps_end;
		e->a = e->key->line;
		e->b = trim_end(&g->l, e->a, end, e->key->col - 1);
		if (i + 1 < n && maps->items[2 * (i + 1)]->line <= e->a)
			return perfdb_err_at(g->err, PERFDB_EPARSE, g->upname, e->key->line, e->key->col,
					     "op_mapping: operator_mappings must hold one entry per line");
		for (size_t j = i + 1; j < n; j++)
			if (scalar_str(maps->items[2 * j]) && strcmp(maps->items[2 * j]->text, e->key->text) == 0)
				e->dup = 1;
		g->ne++;
	}
	/* an Ascend database: upstream's zero-cost ops apply to it.  Comm tables
	 * do not tell: a PyTorch trace's collectives make them too. */
	for (size_t i = 0; i < g->ne && !g->ascend_db; i++) {
		const struct perfdb_ynode_s *info = g->e[i].info;
		if (g->e[i].dup || !info || info->type != PERFDB_Y_MAP || truthy(info, "composite") ||
		    comm_entry(info))
			continue;
		const struct perfdb_ynode_s *alts = perfdb_ymap_get(info, "alternate_kernel_types");
		g->ascend_db = present(&g->t, perfdb_ymap_get(info, "kernel_type"));
		for (size_t a = 0; alts && alts->type == PERFDB_Y_SEQ && a < alts->n; a++)
			g->ascend_db |= present(&g->t, alts->items[a]);
	}
	PERFDB_TRY(claim(g));

	size_t body_start = out->len;
	PERFDB_TRY(perfdb_strbuf_addstr(out, "operator_mappings:\n\n"));
	*nentries = 0;
	for (size_t i = 0; i < g->ne; i++) {
		struct entry *e = &g->e[i];
		if (e->dup)
			continue;
		if (e->torch >= 0) {
			PERFDB_TRY(put_torch_entry(g, out, e->key->text, &g->ts[e->torch], e));
		} else if (!g->ascend_db && comm_entry(e->info)) {
			/* a trace's comm table: the simulator's collective routed to it, and
			 * nothing that names the Ascend kernels this database lacks */
			const struct perfdb_ynode_s *kt = perfdb_ymap_get(e->info, "kernel_type");
			if (!present(&g->t, kt))
				continue;
			size_t nn = 0, hv = 0;
			kernel_names(&g->t, "kernel_type", kt, &nn, &hv, 1);   /* no placeholder for it */
			PERFDB_TRY(perfdb_strbuf_addf(out, "  \"%s\":\n    kernel_type: %s\n"
							   "    category: communication\n\n",
							   e->key->text, scalar_str(kt)));
		} else if (ascend_keeps(g, e)) {
			size_t names = 0, have = 0;
			kernel_names(&g->t, "", e->info, &names, &have, 1);
			PERFDB_TRY(put_lines(out, &g->l, e->a, e->b));
			PERFDB_TRY(perfdb_strbuf_addch(out, '\n'));
		} else {
			continue;
		}
		(*nentries)++;
	}
	for (size_t s = 0; s < g->nts; s++)
		if (g->ts[s].extra) {
			PERFDB_TRY(put_torch_entry(g, out, g->ts[s].extra, &g->ts[s], NULL));
			(*nentries)++;
		}
	PERFDB_TRY(put_placeholders(g, out, nentries));
	if (!*nentries) {
		/* an empty block would be null, and the consumer calls .get() on it */
		out->len = body_start;
		out->buf[out->len] = '\0';
		PERFDB_TRY(perfdb_strbuf_addstr(out, "operator_mappings: {}\n"));
	}
	size_t nun = 0;
	for (size_t i = 0; i < g->t.n; i++) {
		if (g->t.used[i])
			continue;
		if (!nun++)
			PERFDB_TRY(perfdb_strbuf_addstr(out, "# Tables without an entry (their names are not "
							     "printable ASCII):\n"));
		PERFDB_TRY(perfdb_strbuf_addstr(out, "#   "));
		for (const char *p = g->t.v[i]; *p; p++)
			PERFDB_TRY(perfdb_strbuf_addch(out, printable(*p) ? *p : '?'));
		PERFDB_TRY(perfdb_strbuf_addstr(out, "\n"));
	}
	return 0;
}

/* The result must read back as a mapping of exactly the entries written, each key once. */
static int self_check(const struct gen *g, const struct perfdb_strbuf *out, size_t nentries,
		      struct perfdb_err *err)
{
	struct perfdb_ydoc d;
	struct perfdb_err e2;
	perfdb_err_clear(&e2);
	int rc = perfdb_ydoc_load(&d, "generated op_mapping.yaml", out->buf, out->len, &e2);
	const struct perfdb_ynode_s *m = rc == 0 && d.root ? perfdb_ymap_get(d.root, "operator_mappings") : NULL;
	if (rc == 0 && (!m || m->type != PERFDB_Y_MAP || m->n != nentries))
		rc = -PERFDB_EPARSE;
	for (size_t i = 0; rc == 0 && i < m->n; i++)
		for (size_t j = i + 1; rc == 0 && j < m->n; j++)
			if (strcmp(m->items[2 * i]->text, m->items[2 * j]->text) == 0)
				rc = -PERFDB_EPARSE;
	perfdb_ydoc_release(&d);
	if (rc == -PERFDB_ENOMEM)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_EPARSE,
				      "%s: the op_mapping perfdb built from it does not read back (%s)",
				      g->upname, e2.msg[0] ? e2.msg : "entries lost or repeated");
	return 0;
}

static int ident_char(int c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

/* p: `op[<sep>overload]`, identifiers only; appended to base and ovl. */
static int stem_rest(const char *p, const char *sep, struct perfdb_strbuf *base,
		     struct perfdb_strbuf *ovl)
{
	struct perfdb_strbuf *cur = base;
	int start = 1;
	size_t sl = strlen(sep);
	for (; *p; p++) {
		if (strncasecmp(p, sep, sl) == 0) {
			if (cur == ovl || start)
				return 0;
			cur = ovl;
			start = 1;
			p += sl - 1;
			continue;
		}
		if (!ident_char((unsigned char)*p, start))
			return 0;
		if (perfdb_strbuf_addch(cur, *p) < 0)
			return -PERFDB_ENOMEM;
		start = 0;
	}
	return !start;
}

int perfdb_opmap_torch_stem(const char *stem, struct perfdb_strbuf *base,
			    struct perfdb_strbuf *ovl)
{
	perfdb_strbuf_reset(base);
	perfdb_strbuf_reset(ovl);
	/* the per-op rule: `ns.op`, the overload's '.' written %2E */
	const char *dot = strchr(stem, '.');
	const char *p = stem;
	while (dot && p < dot && ident_char((unsigned char)*p, p == stem))
		p++;
	if (dot && p == dot && p > stem) {
		if (perfdb_strbuf_add(base, stem, (size_t)(dot - stem + 1)) < 0)
			return -PERFDB_ENOMEM;
		size_t keep = base->len;
		int rc = stem_rest(dot + 1, "%2E", base, ovl);
		if (rc != 0)
			return rc;
		/* the readable rule (parse/trace_names.c) writes the overload's '.' as it is */
		base->len = keep;
		base->buf[keep] = '\0';
		perfdb_strbuf_reset(ovl);
		return stem_rest(dot + 1, ".", base, ovl);
	}
	/*
	 * Earlier perfdb versions named CPU-only traces' tables by the kernel
	 * rule, `aten::mm` -> `aten__mm`: a lower-case namespace, `__`, the
	 * op.  Databases parsed then keep their mapping.  Kernel names seldom
	 * look like that, and those that do get an entry no simulator op asks for.
	 */
	const char *us = strstr(stem, "__");
	for (p = stem; us && p < us; p++)
		if (!((*p >= 'a' && *p <= 'z') || (p > stem && *p >= '0' && *p <= '9')))
			return 0;
	if (!us || us == stem)
		return 0;
	if (perfdb_strbuf_add(base, stem, (size_t)(us - stem)) < 0 ||
	    perfdb_strbuf_addch(base, '.') < 0)
		return -PERFDB_ENOMEM;
	return stem_rest(us + 2, ".", base, ovl);
}

int perfdb_opmap_is_own(const char *text, size_t len)
{
	size_t ml = strlen(PERFDB_OPMAP_MARKER);
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		if (text[i] != '#')
			return 0;   /* the marker is in the leading comment block */
		if (e - i >= ml + 16 && memcmp(text + i, PERFDB_OPMAP_MARKER, ml) == 0) {
			char want[17];
			snprintf(want, sizeof(want), "%016llx",
				 (unsigned long long)perfdb_fnv1a64(text + e + (nl != NULL), len - e - (nl != NULL)));
			return e - i == ml + 16 && memcmp(text + i + ml, want, 16) == 0;
		}
		i = e + 1;
	}
	return 0;
}

static void gen_release(struct gen *g)
{
	free(g->l.start);
	perfdb_ydoc_release(&g->d);
	free(g->t.v);
	free(g->t.used);
	free(g->e);
	for (size_t i = 0; i < g->nts; i++) {
		perfdb_strbuf_release(&g->ts[i].base);
		perfdb_strbuf_release(&g->ts[i].ovl);
		free(g->ts[i].extra);
	}
	free(g->ts);
}

static int gen_tables(struct gen *g, const char *const *stems, size_t nstems)
{
	g->t.v = malloc((nstems ? nstems : 1) * sizeof(*g->t.v));
	g->t.used = calloc(nstems ? nstems : 1, 1);
	g->ts = calloc(nstems ? nstems : 1, sizeof(*g->ts));
	if (!g->t.v || !g->t.used || !g->ts)
		return -PERFDB_ENOMEM;
	if (nstems)
		memcpy(g->t.v, stems, nstems * sizeof(*stems));
	qsort(g->t.v, nstems, sizeof(*g->t.v), cmp_str);
	for (size_t i = 0; i < nstems; i++)
		if (!g->t.n || strcmp(g->t.v[g->t.n - 1], g->t.v[i]) != 0)
			g->t.v[g->t.n++] = g->t.v[i];
	for (size_t i = 0; i < g->t.n; i++) {
		struct torch_stem *ts = &g->ts[g->nts];
		perfdb_strbuf_init(&ts->base);
		perfdb_strbuf_init(&ts->ovl);
		int r = perfdb_opmap_torch_stem(g->t.v[i], &ts->base, &ts->ovl);
		if (r < 0)
			return r;
		if (r == 0) {
			perfdb_strbuf_release(&ts->base);
			perfdb_strbuf_release(&ts->ovl);
			continue;
		}
		ts->stem = g->t.v[i];
		g->nts++;
	}
	return 0;
}

int perfdb_opmap_generate(const char *upname, const char *up, size_t uplen,
			  const char *const *stems, size_t nstems, struct perfdb_strbuf *out,
			  struct perfdb_err *err)
{
	perfdb_strbuf_reset(out);
	perfdb_err_clear(err);   /* the PERFDB_TRY paths below return ENOMEM without a message */
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.upname = upname;
	g.err = err;
	int rc = perfdb_ydoc_load(&g.d, upname, up, uplen, err);
	if (rc == 0 && (rc = lines_index(&g.l, up, uplen)) == 0)
		rc = gen_tables(&g, stems, nstems);
	const struct perfdb_ynode_s *root = g.d.root;
	if (rc == 0 && (!root || root->type != PERFDB_Y_MAP))
		rc = perfdb_err_at(err, PERFDB_EPARSE, upname, root ? root->line : 1, root ? root->col : 1,
				   "op_mapping: the document must be a mapping");
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	size_t nentries = 0;
	if (rc == 0)
		rc = body(&g, root, &b, &nentries);
	if (rc == 0)
		rc = perfdb_strbuf_addf(out,
			"# op_mapping.yaml for TensorCast's ProfilingDataSource, written by perfdb for the\n"
			"# tables of this directory (docs/database.md \"op_mapping.yaml\"), from perfdb's copy\n"
			"# of %s (Ascend/msmodeling; provenance and licence:\n"
			"# op_mapping/PROVENANCE.md in perfdb's data).  perfdb rewrites this file when the\n"
			"# tables change while the checksum below matches; once edited, it is left alone.\n"
			PERFDB_OPMAP_MARKER "%016llx\n",
			upname, (unsigned long long)perfdb_fnv1a64(b.buf, b.len));
	if (rc == 0)
		rc = perfdb_strbuf_add(out, b.buf, b.len);
	if (rc == 0)
		rc = self_check(&g, out, nentries, err);
	perfdb_strbuf_release(&b);
	gen_release(&g);
	if (rc == -PERFDB_ENOMEM && !err->msg[0])
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}
