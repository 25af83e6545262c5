/*
 * Growable byte buffer.
 *
 * Invariants: buf is never NULL after perfdb_strbuf_init (it points at a
 * static empty string until the first allocation), buf[len] == '\0', and
 * len < alloc whenever alloc > 0.  Appends return 0 or -PERFDB_ENOMEM; on
 * failure the buffer is unchanged.
 */
#ifndef PERFDB_STRBUF_H
#define PERFDB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct perfdb_strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define PERFDB_STRBUF_INIT { perfdb_strbuf_empty_, 0, 0 }
extern char perfdb_strbuf_empty_[];

void perfdb_strbuf_init(struct perfdb_strbuf *sb);
void perfdb_strbuf_release(struct perfdb_strbuf *sb);
void perfdb_strbuf_reset(struct perfdb_strbuf *sb);
int perfdb_strbuf_grow(struct perfdb_strbuf *sb, size_t extra);
int perfdb_strbuf_add(struct perfdb_strbuf *sb, const void *data, size_t len);
int perfdb_strbuf_addstr(struct perfdb_strbuf *sb, const char *s);
int perfdb_strbuf_addch(struct perfdb_strbuf *sb, int c);
int perfdb_strbuf_addf(struct perfdb_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int perfdb_strbuf_vaddf(struct perfdb_strbuf *sb, const char *fmt, va_list ap);
/* Hand the buffer to the caller (malloc'd, NUL-terminated) and reset sb. */
char *perfdb_strbuf_detach(struct perfdb_strbuf *sb, size_t *len);

#endif
