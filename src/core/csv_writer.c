/*
 * CSV writer for the database dialect (docs/design.md "The database contract"):
 * UTF-8 without BOM, CRLF record ends, a field quoted only when it holds
 * ',', '"', CR or LF, inner '"' doubled.  This is exactly what Python's
 * csv.writer(lineterminator="\r\n") produces with QUOTE_MINIMAL, so the
 * simulator reading the tables cannot tell who wrote them.
 */
#include "perfdb/csv.h"

#include <string.h>

bool perfdb_csv_needs_quote(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (c == ',' || c == '"' || c == '\r' || c == '\n')
			return true;
	}
	return false;
}

int perfdb_csv_put_field(struct perfdb_strbuf *out, const char *p, size_t len)
{
	if (!perfdb_csv_needs_quote(p, len))
		return perfdb_strbuf_add(out, p, len);
	PERFDB_TRY(perfdb_strbuf_grow(out, len + 2 + len / 4));
	PERFDB_TRY(perfdb_strbuf_addch(out, '"'));
	const char *s = p, *e = p + len;
	while (s < e) {
		const char *q = memchr(s, '"', (size_t)(e - s));
		if (!q) {
			PERFDB_TRY(perfdb_strbuf_add(out, s, (size_t)(e - s)));
			break;
		}
		PERFDB_TRY(perfdb_strbuf_add(out, s, (size_t)(q - s) + 1));
		PERFDB_TRY(perfdb_strbuf_addch(out, '"'));
		s = q + 1;
	}
	return perfdb_strbuf_addch(out, '"');
}

int perfdb_csv_put_row(struct perfdb_strbuf *out, const char *const *fields,
		       size_t n)
{
	/* A record of one empty field is written `""` so that it does not read
	 * back as a blank line (Python's csv does the same). */
	if (n == 1 && (!fields[0] || !fields[0][0]))
		return perfdb_strbuf_add(out, "\"\"\r\n", 4);
	for (size_t i = 0; i < n; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, ','));
		const char *f = fields[i] ? fields[i] : "";
		PERFDB_TRY(perfdb_csv_put_field(out, f, strlen(f)));
	}
	return perfdb_strbuf_add(out, "\r\n", 2);
}
