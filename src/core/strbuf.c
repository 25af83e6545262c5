/* Growable byte buffer: see include/perfdb/strbuf.h for the invariants. */
#include "perfdb/strbuf.h"
#include "perfdb/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char perfdb_strbuf_empty_[1];

void perfdb_strbuf_init(struct perfdb_strbuf *sb)
{
	sb->buf = perfdb_strbuf_empty_;
	sb->len = 0;
	sb->alloc = 0;
}

void perfdb_strbuf_release(struct perfdb_strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	perfdb_strbuf_init(sb);
}

void perfdb_strbuf_reset(struct perfdb_strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

int perfdb_strbuf_grow(struct perfdb_strbuf *sb, size_t extra)
{
	if (extra >= (size_t)-1 / 2 - sb->len)
		return -PERFDB_ENOMEM;
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	char *p = realloc(sb->alloc ? sb->buf : NULL, n);
	if (!p)
		return -PERFDB_ENOMEM;
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return 0;
}

int perfdb_strbuf_add(struct perfdb_strbuf *sb, const void *data, size_t len)
{
	PERFDB_TRY(perfdb_strbuf_grow(sb, len));
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int perfdb_strbuf_addstr(struct perfdb_strbuf *sb, const char *s)
{
	return perfdb_strbuf_add(sb, s, strlen(s));
}

int perfdb_strbuf_addch(struct perfdb_strbuf *sb, int c)
{
	char ch = (char)c;
	return perfdb_strbuf_add(sb, &ch, 1);
}

int perfdb_strbuf_vaddf(struct perfdb_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -PERFDB_EINVAL;
	PERFDB_TRY(perfdb_strbuf_grow(sb, (size_t)n));
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int perfdb_strbuf_addf(struct perfdb_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = perfdb_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return rc;
}

char *perfdb_strbuf_detach(struct perfdb_strbuf *sb, size_t *len)
{
	char *p;
	if (!sb->alloc) {
		p = malloc(1);
		if (p)
			p[0] = '\0';
	} else {
		p = sb->buf;
	}
	if (len)
		*len = sb->len;
	perfdb_strbuf_init(sb);
	return p;
}
