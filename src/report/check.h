/*
 * Table checks (perfdb check, docs/cli.md "perfdb check"): what is wrong
 * with one database table, without changing it.
 *
 * Rules, each a warning (a problem) with the line it concerns:
 *   - a collective table (stem hcom_*) lacks `message_bytes` or
 *     `num_devices` (the simulator skips it), a kernel table lacks
 *     `Input Shapes` or `Output Shapes` (line 1);
 *   - kernel tables: a shape cell whose slots do not parse (the first bad
 *     slot of the cell); a row sharing its signature with an earlier one
 *     (docs/spec/replay.md §1b: writeback only ever updates the first);
 *   - every column whose name holds `Duration(us)`: a cell that is not a
 *     number, or a negative, NaN or infinite one (empty cells are fine).
 * A table that does not read cleanly (CSV syntax, UTF-8, field counts,
 * duplicate header names) is an error, not a problem: the load fails.
 *
 * The module reads only; the CLI prints the result as text or JSON.
 */
#ifndef PERFDB_CHECK_H
#define PERFDB_CHECK_H

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/table.h"

struct perfdb_check_problem {
	size_t line;           /* the CSV line (1: the header) */
	long col;              /* the column it concerns, -1: the row or the header */
	char *msg;             /* one line, as printed (owned) */
};

struct perfdb_check_result {
	size_t rows, columns;
	size_t with_duration;  /* rows with a finite usable duration (below) */
	size_t duplicates;     /* rows whose signature an earlier row has */
	struct perfdb_check_problem *problems;  /* ordered by line, then by rule */
	size_t nproblems;
};

void perfdb_check_result_release(struct perfdb_check_result *r);

/*
 * Check table t, whose file stem (kernel type, or hcom_<collective>_) is
 * op, into res (released first by the caller, or zeroed).  A row has a
 * duration when perfdb_schema_usable_duration (finite) holds or its
 * `Duration(us)` (collective tables) is a finite number > 0.  Returns 0, or
 * -PERFDB_ENOMEM (res then holds what was found so far).
 */
int perfdb_check_table(const struct perfdb_table *t, const char *op,
		       struct perfdb_check_result *res, struct perfdb_err *err);

/*
 * Load the table at path and check it, its stem the file name less its
 * last four characters (`.csv`).  Returns 0, or < 0 with err naming what
 * failed (a table that does not load: the error check reports).
 */
int perfdb_check_file(const char *path, struct perfdb_check_result *res,
		      struct perfdb_err *err);

/* ---- which tables (check_paths.c) ----------------------------------------- */

struct perfdb_check_paths {
	char **v;
	size_t n, cap;
};

/*
 * The tables under paths[0..n): a file is itself, a directory its *.csv
 * (recursive, sorted; hidden entries, reports/ and links skipped), added to
 * out in that order.  -PERFDB_ENOENT for a path that does not exist,
 * -PERFDB_EIO for a directory that cannot be listed.
 */
int perfdb_check_paths_collect(const char *const *paths, size_t n, struct perfdb_check_paths *out,
			       struct perfdb_err *err);
void perfdb_check_paths_release(struct perfdb_check_paths *f);

#endif
