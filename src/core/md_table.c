/*
 * Markdown tables as the reference's reports print them (md_table in
 * start_microbench.py): `_None_` when empty, columns padded to their widest
 * cell.  In core because the replay reports and the report page both print them.
 */
#include <string.h>

#include "perfdb/err.h"
#include "perfdb/md_table.h"

int perfdb_md_table(struct perfdb_strbuf *out, const char *const *headers, size_t ncols,
		    char ***rows, size_t nrows)
{
	if (!nrows)
		return perfdb_strbuf_addstr(out, "_None_");
	size_t w[16];
	for (size_t c = 0; c < ncols; c++) {
		w[c] = strlen(headers[c]);
		for (size_t r = 0; r < nrows; r++)
			if (strlen(rows[r][c]) > w[c])
				w[c] = strlen(rows[r][c]);
	}
	for (size_t r = 0; r <= nrows + 1; r++) {
		PERFDB_TRY(perfdb_strbuf_addstr(out, r ? "\n| " : "| "));
		for (size_t c = 0; c < ncols; c++) {
			if (c)
				PERFDB_TRY(perfdb_strbuf_addstr(out, " | "));
			if (r == 1) {
				for (size_t k = 0; k < w[c]; k++)
					PERFDB_TRY(perfdb_strbuf_addch(out, '-'));
				continue;
			}
			const char *v = r == 0 ? headers[c] : rows[r - 2][c];
			PERFDB_TRY(perfdb_strbuf_addf(out, "%-*s", (int)w[c], v));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(out, " |"));
	}
	return 0;
}
