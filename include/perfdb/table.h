/*
 * A database table: one `<Kernel>.csv` held in memory (docs/design.md, "The
 * database contract").
 *
 * Cells are NUL-terminated strings kept verbatim (a shape cell stays
 * `"4,8;8,16"` with its literal quotes).  Unknown columns are carried in
 * place.  Every cell belongs to the table's arena; perfdb_table_release
 * frees everything at once.  Row order is file order.
 *
 * Load rules: the first record is the header (names must be unique and
 * non-empty); a record with fewer fields is padded with empty cells (as
 * Python's DictReader does); a record with more fields is an error naming
 * the file, line and column of the first extra field; invalid UTF-8 and NUL
 * bytes are errors.
 */
#ifndef PERFDB_TABLE_H
#define PERFDB_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "perfdb/strbuf.h"

struct perfdb_arena_block;

struct perfdb_table_row {
	char **cells;   /* ncols cells, never NULL */
	size_t line;    /* source line (0 for rows added in memory) */
};

struct perfdb_table {
	char *name;                  /* for messages: the path it came from */
	char **cols;                 /* header names */
	size_t ncols;
	struct perfdb_table_row *rows;
	size_t nrows, caprows;
	struct perfdb_arena_block *arena;
	bool dirty;                  /* a cell, row or column changed */
};

void perfdb_table_init(struct perfdb_table *t);
void perfdb_table_release(struct perfdb_table *t);

/* Load a CSV file.  t must be freshly initialised. */
int perfdb_table_load(struct perfdb_table *t, const char *path,
		      struct perfdb_err *err);

/*
 * Load a CSV file whose columns need[0..n) must all be there (col[i]: their
 * indexes; col may be NULL).  A missing one is "<path>: not <what>: no
 * column '<name>'", with " (<hint>)" when hint is given.
 */
int perfdb_table_load_cols(struct perfdb_table *t, const char *path, const char *what,
			   const char *const *need, size_t n, long *col, const char *hint,
			   struct perfdb_err *err);

/* Load from memory (tests, fuzzing); name is used in messages. */
int perfdb_table_load_mem(struct perfdb_table *t, const char *name,
			  const char *data, size_t len, struct perfdb_err *err);

/*
 * Streaming, for a table too large to hold (writeback): the header of an
 * open reader into a fresh t, then its records one at a time as rows of t
 * (1 per row, 0 at the end, <0 on error), with the messages of
 * perfdb_table_load.  A mark taken after the header and a rewind before
 * each row keep t at one row's memory.
 */
struct perfdb_csv_reader;
int perfdb_table_read_header(struct perfdb_table *t, struct perfdb_csv_reader *r,
			     struct perfdb_err *err);
int perfdb_table_read_row(struct perfdb_table *t, struct perfdb_csv_reader *r,
			  struct perfdb_err *err);

/* A point in a table's rows and memory, and the way back to it: what was
 * allocated since (rows, changed cells) is freed.  The mark's header and
 * rows must not have been edited in between. */
struct perfdb_table_mark {
	struct perfdb_arena_block *block;
	size_t used, nrows;
};
void perfdb_table_mark(const struct perfdb_table *t, struct perfdb_table_mark *m);
void perfdb_table_rewind(struct perfdb_table *t, const struct perfdb_table_mark *m);

/* Set the header of an empty table (no rows yet).  Names must be unique. */
int perfdb_table_set_header(struct perfdb_table *t, const char *const *names,
			    size_t n, struct perfdb_err *err);

/* Index of a column, or -1. */
long perfdb_table_col(const struct perfdb_table *t, const char *name);

/*
 * Insert a column named name at position at (0..ncols), every row getting
 * an empty cell; returns its index.  An existing name is an error.
 */
long perfdb_table_insert_col(struct perfdb_table *t, const char *name,
			     size_t at, struct perfdb_err *err);

/* Rename column i (the new name must not exist). */
int perfdb_table_rename_col(struct perfdb_table *t, size_t i, const char *name,
			    struct perfdb_err *err);

/* Remove column i from the header and every row. */
void perfdb_table_drop_col(struct perfdb_table *t, size_t i);

/* Append a row of empty cells; returns its index or <0. */
long perfdb_table_append_row(struct perfdb_table *t, struct perfdb_err *err);

/* Cell text ("" for an out-of-range column). */
const char *perfdb_table_get(const struct perfdb_table *t, size_t row, long col);

/* Set a cell to a copy of [v, v+len).  Marks the table dirty only on change. */
int perfdb_table_set(struct perfdb_table *t, size_t row, size_t col,
		     const char *v, size_t len, struct perfdb_err *err);

/* Keep only rows with keep[i] true (order preserved). */
void perfdb_table_filter_rows(struct perfdb_table *t, const bool *keep);

/* The file image: header + rows, database dialect (CRLF, minimal quoting). */
int perfdb_table_serialize(const struct perfdb_table *t, struct perfdb_strbuf *out);

/*
 * Save to path atomically (perfdb_file_write_atomic).  lock must be held on
 * the database directory that contains path: saving without it is a bug.
 */
int perfdb_table_save(struct perfdb_table *t, const char *path,
		      const struct perfdb_lock *lock, struct perfdb_err *err);

/* --- signature index ------------------------------------------------- */

struct perfdb_sig_index_entry {
	char *sig;      /* owned */
	size_t row;     /* first row with this signature */
	size_t count;   /* rows with this signature */
};

struct perfdb_sig_index {
	struct perfdb_sig_index_entry *slots; /* open addressing, sig == NULL: free */
	size_t cap;     /* power of two */
	size_t n;       /* distinct signatures */
};

void perfdb_sig_index_init(struct perfdb_sig_index *ix);
void perfdb_sig_index_release(struct perfdb_sig_index *ix);

/*
 * Add (sig, row): a new signature records row; a known one counts a
 * duplicate (the first row wins, as in the reference).
 */
int perfdb_sig_index_add(struct perfdb_sig_index *ix, const char *sig,
			 size_t row);

/* Entry for sig, or NULL. */
const struct perfdb_sig_index_entry *
perfdb_sig_index_find(const struct perfdb_sig_index *ix, const char *sig);

/*
 * Index every row of t by its signature for operator op (usually the file
 * stem), reading the columns `Input Shapes`, `Input Data Types`, `Input
 * Formats`, `Output Shapes`, `Output Data Types` and `EP Size`.
 */
int perfdb_table_index(const struct perfdb_table *t, const char *op,
		       struct perfdb_sig_index *ix, struct perfdb_err *err);

/* The signature of one row (out reset first). */
int perfdb_table_row_sig(const struct perfdb_table *t, size_t row,
			 const char *op, struct perfdb_strbuf *out);

#endif
