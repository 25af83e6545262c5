/*
 * Markdown tables (md_table.c).
 */
#ifndef PERFDB_MD_TABLE_H
#define PERFDB_MD_TABLE_H

#include <stddef.h>

#include "perfdb/strbuf.h"

/*
 * The md_table of the reference: `_None_` when there are no rows, padded
 * columns.  rows[r][c] for r < nrows, c < ncols (at most 16 columns).
 */
int perfdb_md_table(struct perfdb_strbuf *out, const char *const *headers, size_t ncols,
		    char ***rows, size_t nrows);

#endif
