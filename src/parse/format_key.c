/*
 * Equivalent format spellings are one key (issue 47): older CANN writes
 * `FORMAT_ND`, newer `ND`, so rows pooled from both would otherwise be two
 * rows of one kernel launch.  Only the key is canonical: a table keeps the
 * spelling it first saw, which is what a simulator reading that profile's
 * layout looks up (docs/parse.md "Aggregation").
 */
#include <string.h>

#include "parse_internal.h"

#define PREFIX "FORMAT_"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

size_t perfdb_format_key(const char *in, size_t n, char *out)
{
	size_t w = 0, i = 0;
	while (i <= n) {
		/* one ';'-separated token: drop a leading FORMAT_ when something follows it */
		size_t j = i;
		while (j < n && in[j] != ';')
			j++;
		size_t s = i;
		if (j - i > PREFIX_LEN && memcmp(in + i, PREFIX, PREFIX_LEN) == 0)
			s += PREFIX_LEN;
		if (j > s)   /* an empty cell may be a NULL span */
			memcpy(out + w, in + s, j - s);
		w += j - s;
		if (j < n)
			out[w++] = ';';
		i = j + 1;
	}
	return w;
}

int perfdb_format_key_str(const char *in, struct perfdb_strbuf *out)
{
	size_t n = strlen(in);
	PERFDB_TRY(perfdb_strbuf_grow(out, n));
	out->len += perfdb_format_key(in, n, out->buf + out->len);
	out->buf[out->len] = '\0';
	return 0;
}
