/*
 * In-memory database table (include/perfdb/table.h): load, edit, save.
 *
 * Memory: every string lives in a bump arena owned by the table; a changed
 * cell points at a fresh copy and the old bytes stay until release (tables
 * are at most a few MB, and edits are few per cell).
 */
#include "perfdb/table.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/csv.h"
#include "perfdb/hash.h"
#include "perfdb/schema.h"
#include "perfdb/signature.h"

struct perfdb_arena_block {
	struct perfdb_arena_block *next;
	size_t used, cap;
	char data[];
};

static void *arena_alloc(struct perfdb_table *t, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	struct perfdb_arena_block *b = t->arena;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = t->arena;
		b->used = 0;
		b->cap = cap;
		t->arena = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static char *arena_strndup(struct perfdb_table *t, const char *s, size_t len)
{
	char *p = arena_alloc(t, len + 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static char empty_cell[1];

void perfdb_table_init(struct perfdb_table *t)
{
	memset(t, 0, sizeof(*t));
}

void perfdb_table_release(struct perfdb_table *t)
{
	struct perfdb_arena_block *b = t->arena;
	while (b) {
		struct perfdb_arena_block *n = b->next;
		free(b);
		b = n;
	}
	free(t->rows);
	free(t->name);
	perfdb_table_init(t);
}

long perfdb_table_col(const struct perfdb_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return (long)i;
	return -1;
}

static int reserve_rows(struct perfdb_table *t, size_t n)
{
	if (n <= t->caprows)
		return 0;
	size_t cap = t->caprows ? t->caprows : 64;
	while (cap < n)
		cap *= 2;
	struct perfdb_table_row *r = realloc(t->rows, cap * sizeof(*r));
	if (!r)
		return -PERFDB_ENOMEM;
	t->rows = r;
	t->caprows = cap;
	return 0;
}

static int oom(struct perfdb_table *t, struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory",
			      t->name ? t->name : "table");
}

int perfdb_table_set_header(struct perfdb_table *t, const char *const *names,
			    size_t n, struct perfdb_err *err)
{
	assert(t->nrows == 0);
	char **cols = arena_alloc(t, (n ? n : 1) * sizeof(char *));
	if (!cols)
		return oom(t, err);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return perfdb_err_set(err, PERFDB_ESCHEMA,
					"%s: duplicate column '%s'",
					t->name ? t->name : "table", names[i]);
		cols[i] = arena_strndup(t, names[i], strlen(names[i]));
		if (!cols[i])
			return oom(t, err);
	}
	t->cols = cols;
	t->ncols = n;
	t->dirty = true;
	return 0;
}

int perfdb_table_read_header(struct perfdb_table *t, struct perfdb_csv_reader *r,
			     struct perfdb_err *err)
{
	struct perfdb_csv_row row;
	int rc = perfdb_csv_next(r, &row, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return perfdb_err_at(err, PERFDB_ESCHEMA, t->name, 1, 0,
				     "empty file: no header row");
	char **cols = arena_alloc(t, row.n * sizeof(char *));
	if (!cols)
		return oom(t, err);
	size_t dup = perfdb_csv_first_duplicate(row.f, row.n);
	for (size_t i = 0; i < row.n; i++) {
		if (row.f[i].len == 0)
			return perfdb_err_at(err, PERFDB_ESCHEMA, t->name, row.line,
					     perfdb_csv_field_col(r, &row, i),
					     "empty column name in header (column %zu)", i + 1);
		cols[i] = arena_strndup(t, row.f[i].p, row.f[i].len);
		if (!cols[i])
			return oom(t, err);
		if (i == dup)
			return perfdb_err_at(err, PERFDB_ESCHEMA, t->name, row.line,
				perfdb_csv_field_col(r, &row, i),
				"duplicate column '%s' in header", cols[i]);
	}
	t->cols = cols;
	t->ncols = row.n;
	return 0;
}

int perfdb_table_read_row(struct perfdb_table *t, struct perfdb_csv_reader *r,
			  struct perfdb_err *err)
{
	struct perfdb_csv_row row;
	int rc = perfdb_csv_next(r, &row, err);
	if (rc <= 0)
		return rc;
	if (row.n > t->ncols)
		return perfdb_err_at(err, PERFDB_EPARSE, t->name, row.line,
			perfdb_csv_field_col(r, &row, t->ncols),
			"record has %zu fields, header has %zu", row.n, t->ncols);
	if (reserve_rows(t, t->nrows + 1) < 0)
		return oom(t, err);
	size_t total = 0;
	for (size_t i = 0; i < row.n; i++)
		total += row.f[i].len + 1;
	/* the row's pointers and its strings in one piece of the arena */
	char **cells = arena_alloc(t, t->ncols * sizeof(char *) + total);
	if (!cells)
		return oom(t, err);
	char *s = (char *)(cells + t->ncols);
	for (size_t i = 0; i < t->ncols; i++) {
		if (i < row.n) {
			memcpy(s, row.f[i].p, row.f[i].len);
			s[row.f[i].len] = '\0';
			cells[i] = s;
			s += row.f[i].len + 1;
		} else {
			cells[i] = empty_cell;
		}
	}
	t->rows[t->nrows].cells = cells;
	t->rows[t->nrows].line = row.line;
	t->nrows++;
	return 1;
}

static int load_reader(struct perfdb_table *t, struct perfdb_csv_reader *r,
		       struct perfdb_err *err)
{
	int rc = perfdb_table_read_header(t, r, err);
	while (rc >= 0 && (rc = perfdb_table_read_row(t, r, err)) > 0)
		;
	return rc;
}

void perfdb_table_mark(const struct perfdb_table *t, struct perfdb_table_mark *m)
{
	m->block = t->arena;
	m->used = t->arena ? t->arena->used : 0;
	m->nrows = t->nrows;
}

void perfdb_table_rewind(struct perfdb_table *t, const struct perfdb_table_mark *m)
{
	while (t->arena && t->arena != m->block) {
		struct perfdb_arena_block *n = t->arena->next;
		free(t->arena);
		t->arena = n;
	}
	if (t->arena)
		t->arena->used = m->used;
	t->nrows = m->nrows;
}

static int set_name(struct perfdb_table *t, const char *name, struct perfdb_err *err)
{
	free(t->name);
	t->name = strdup(name);
	return t->name ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

int perfdb_table_load(struct perfdb_table *t, const char *path,
		      struct perfdb_err *err)
{
	PERFDB_TRY(set_name(t, path, err));
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open(&r, path, PERFDB_CSV_UTF8, err));
	int rc = load_reader(t, r, err);
	perfdb_csv_close(r);
	t->dirty = false;
	return rc < 0 ? rc : 0;
}

int perfdb_table_load_cols(struct perfdb_table *t, const char *path, const char *what,
			   const char *const *need, size_t n, long *col, const char *hint,
			   struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_table_load(t, path, err));
	for (size_t i = 0; i < n; i++) {
		long c = perfdb_table_col(t, need[i]);
		if (c < 0)
			return perfdb_err_set(err, PERFDB_ESCHEMA, "%s: not %s: no column '%s'%s%s%s",
					      path, what, need[i], hint ? " (" : "", hint ? hint : "",
					      hint ? ")" : "");
		if (col)
			col[i] = c;
	}
	return 0;
}

int perfdb_table_load_mem(struct perfdb_table *t, const char *name,
			  const char *data, size_t len, struct perfdb_err *err)
{
	PERFDB_TRY(set_name(t, name, err));
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open_mem(&r, name, data, len, PERFDB_CSV_UTF8, err));
	int rc = load_reader(t, r, err);
	perfdb_csv_close(r);
	t->dirty = false;
	return rc < 0 ? rc : 0;
}

long perfdb_table_insert_col(struct perfdb_table *t, const char *name,
			     size_t at, struct perfdb_err *err)
{
	if (at > t->ncols)
		at = t->ncols;
	if (perfdb_table_col(t, name) >= 0)
		return perfdb_err_set(err, PERFDB_ESCHEMA, "%s: column '%s' already exists",
				      t->name ? t->name : "table", name);
	size_t n = t->ncols + 1;
	char **cols = arena_alloc(t, n * sizeof(char *));
	char *copy = arena_strndup(t, name, strlen(name));
	if (!cols || !copy)
		return oom(t, err);
	memcpy(cols, t->cols, at * sizeof(char *));
	cols[at] = copy;
	memcpy(cols + at + 1, t->cols + at, (t->ncols - at) * sizeof(char *));
	for (size_t r = 0; r < t->nrows; r++) {
		char **cells = arena_alloc(t, n * sizeof(char *));
		if (!cells)
			return oom(t, err);
		memcpy(cells, t->rows[r].cells, at * sizeof(char *));
		cells[at] = empty_cell;
		memcpy(cells + at + 1, t->rows[r].cells + at, (t->ncols - at) * sizeof(char *));
		t->rows[r].cells = cells;
	}
	t->cols = cols;
	t->ncols = n;
	t->dirty = true;
	return (long)at;
}

int perfdb_table_rename_col(struct perfdb_table *t, size_t i, const char *name,
			    struct perfdb_err *err)
{
	assert(i < t->ncols);
	if (strcmp(t->cols[i], name) == 0)
		return 0;
	if (perfdb_table_col(t, name) >= 0)
		return perfdb_err_set(err, PERFDB_ESCHEMA, "%s: column '%s' already exists",
				      t->name ? t->name : "table", name);
	char *copy = arena_strndup(t, name, strlen(name));
	if (!copy)
		return oom(t, err);
	t->cols[i] = copy;
	t->dirty = true;
	return 0;
}

void perfdb_table_drop_col(struct perfdb_table *t, size_t i)
{
	assert(i < t->ncols);
	memmove(t->cols + i, t->cols + i + 1, (t->ncols - i - 1) * sizeof(char *));
	for (size_t r = 0; r < t->nrows; r++)
		memmove(t->rows[r].cells + i, t->rows[r].cells + i + 1,
			(t->ncols - i - 1) * sizeof(char *));
	t->ncols--;
	t->dirty = true;
}

long perfdb_table_append_row(struct perfdb_table *t, struct perfdb_err *err)
{
	if (reserve_rows(t, t->nrows + 1) < 0)
		return oom(t, err);
	char **cells = arena_alloc(t, (t->ncols ? t->ncols : 1) * sizeof(char *));
	if (!cells)
		return oom(t, err);
	for (size_t i = 0; i < t->ncols; i++)
		cells[i] = empty_cell;
	t->rows[t->nrows].cells = cells;
	t->rows[t->nrows].line = 0;
	t->dirty = true;
	return (long)t->nrows++;
}

const char *perfdb_table_get(const struct perfdb_table *t, size_t row, long col)
{
	assert(row < t->nrows);
	if (col < 0 || (size_t)col >= t->ncols)
		return "";
	return t->rows[row].cells[col];
}

int perfdb_table_set(struct perfdb_table *t, size_t row, size_t col,
		     const char *v, size_t len, struct perfdb_err *err)
{
	assert(row < t->nrows && col < t->ncols);
	const char *old = t->rows[row].cells[col];
	if (strlen(old) == len && memcmp(old, v, len) == 0)
		return 0;
	char *copy = len ? arena_strndup(t, v, len) : empty_cell;
	if (!copy)
		return oom(t, err);
	t->rows[row].cells[col] = copy;
	t->dirty = true;
	return 0;
}

void perfdb_table_filter_rows(struct perfdb_table *t, const bool *keep)
{
	size_t w = 0;
	for (size_t r = 0; r < t->nrows; r++)
		if (keep[r])
			t->rows[w++] = t->rows[r];
	if (w != t->nrows)
		t->dirty = true;
	t->nrows = w;
}

int perfdb_table_serialize(const struct perfdb_table *t, struct perfdb_strbuf *out)
{
	PERFDB_TRY(perfdb_csv_put_row(out, (const char *const *)t->cols, t->ncols));
	for (size_t r = 0; r < t->nrows; r++)
		PERFDB_TRY(perfdb_csv_put_row(out, (const char *const *)t->rows[r].cells,
					      t->ncols));
	return 0;
}

int perfdb_table_save(struct perfdb_table *t, const char *path,
		      const struct perfdb_lock *lock, struct perfdb_err *err)
{
	assert(lock && lock->fd >= 0);
	(void)lock;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	if (perfdb_table_serialize(t, &sb) < 0) {
		perfdb_strbuf_release(&sb);
		return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", path);
	}
	int rc = perfdb_file_write_atomic(path, sb.buf, sb.len, err);
	perfdb_strbuf_release(&sb);
	if (rc == 0)
		t->dirty = false;
	return rc;
}

/* ---- signature index ------------------------------------------------- */

void perfdb_sig_index_init(struct perfdb_sig_index *ix)
{
	memset(ix, 0, sizeof(*ix));
}

void perfdb_sig_index_release(struct perfdb_sig_index *ix)
{
	for (size_t i = 0; i < ix->cap; i++)
		free(ix->slots[i].sig);
	free(ix->slots);
	perfdb_sig_index_init(ix);
}

static struct perfdb_sig_index_entry *probe(const struct perfdb_sig_index *ix,
					    const char *sig)
{
	size_t mask = ix->cap - 1;
	for (size_t i = perfdb_fnv1a64(sig, strlen(sig)) & mask;; i = (i + 1) & mask) {
		struct perfdb_sig_index_entry *e = &ix->slots[i];
		if (!e->sig || strcmp(e->sig, sig) == 0)
			return e;
	}
}

static int grow_index(struct perfdb_sig_index *ix)
{
	size_t ncap = ix->cap ? ix->cap * 2 : 64;
	struct perfdb_sig_index old = *ix;
	ix->slots = calloc(ncap, sizeof(*ix->slots));
	if (!ix->slots) {
		*ix = old;
		return -PERFDB_ENOMEM;
	}
	ix->cap = ncap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].sig)
			*probe(ix, old.slots[i].sig) = old.slots[i];
	free(old.slots);
	return 0;
}

int perfdb_sig_index_add(struct perfdb_sig_index *ix, const char *sig, size_t row)
{
	if ((ix->n + 1) * 4 > ix->cap * 3)
		PERFDB_TRY(grow_index(ix));
	struct perfdb_sig_index_entry *e = probe(ix, sig);
	if (e->sig) {
		e->count++;
		return 0;
	}
	e->sig = strdup(sig);
	if (!e->sig)
		return -PERFDB_ENOMEM;
	e->row = row;
	e->count = 1;
	ix->n++;
	return 0;
}

const struct perfdb_sig_index_entry *
perfdb_sig_index_find(const struct perfdb_sig_index *ix, const char *sig)
{
	if (!ix->cap)
		return NULL;
	const struct perfdb_sig_index_entry *e = probe(ix, sig);
	return e->sig ? e : NULL;
}

int perfdb_table_row_sig(const struct perfdb_table *t, size_t row,
			 const char *op, struct perfdb_strbuf *out)
{
	struct perfdb_sig_row sr = {
		.in_shapes = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_IN_SHAPES)),
		.in_dtypes = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_IN_DTYPES)),
		.in_formats = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_IN_FORMATS)),
		.out_shapes = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_OUT_SHAPES)),
		.out_dtypes = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_OUT_DTYPES)),
		.ep_size = perfdb_table_get(t, row, perfdb_table_col(t, PERFDB_COL_EP_SIZE)),
	};
	return perfdb_sig_compute(op, &sr, out);
}

int perfdb_table_index(const struct perfdb_table *t, const char *op,
		       struct perfdb_sig_index *ix, struct perfdb_err *err)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (size_t r = 0; r < t->nrows; r++) {
		if (perfdb_table_row_sig(t, r, op, &sb) < 0 ||
		    perfdb_sig_index_add(ix, sb.buf, r) < 0) {
			perfdb_strbuf_release(&sb);
			return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory",
					      t->name ? t->name : "table");
		}
	}
	perfdb_strbuf_release(&sb);
	return 0;
}
