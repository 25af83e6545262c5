/* Error records: see include/perfdb/err.h. */
#include "perfdb/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void perfdb_err_clear(struct perfdb_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

/*
 * A message longer than the record keeps its head and its tail with "..."
 * between: the tail holds the reason (": File name too long") and the file
 * name, which a cut at the end would lose (issue 49: a 4,080-byte path
 * hid why it failed).  Cuts fall between UTF-8 characters.
 */
static void put_elided(char *dst, size_t cap, const char *s, size_t len)
{
	if (len < cap) {
		memcpy(dst, s, len + 1);
		return;
	}
	size_t head = cap / 4, tail = cap - head - 4;   /* "..." and the NUL */
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
		head--;
	size_t from = len - tail;
	while (from < len && ((unsigned char)s[from] & 0xC0) == 0x80)
		from++;
	memcpy(dst, s, head);
	memcpy(dst + head, "...", 3);
	memcpy(dst + head + 3, s + from, len - from);
	dst[head + 3 + (len - from)] = '\0';
}

static int vset(struct perfdb_err *err, int code, const char *prefix,
		const char *suffix, const char *fmt, va_list ap)
{
	if (!err)
		return -code;
	err->code = code;
	va_list aq;
	va_copy(aq, ap);
	int m = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	size_t plen = prefix ? strlen(prefix) : 0, slen = suffix ? strlen(suffix) + 2 : 0;
	size_t total = plen + (m > 0 ? (size_t)m : 0) + slen;
	char *full = m >= 0 ? malloc(total + 1) : NULL;
	if (!full) {
		/* no memory for the whole: the head, as far as it goes */
		size_t n = 0;
		if (prefix)
			n = (size_t)snprintf(err->msg, sizeof(err->msg), "%s", prefix);
		if (n < sizeof(err->msg))
			n += (size_t)vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
		if (suffix && n < sizeof(err->msg))
			snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", suffix);
		return -code;
	}
	if (prefix)
		memcpy(full, prefix, plen);
	vsnprintf(full + plen, (size_t)m + 1, fmt, ap);
	if (suffix)
		snprintf(full + plen + (size_t)m, slen + 1, ": %s", suffix);
	put_elided(err->msg, sizeof(err->msg), full, total);
	free(full);
	return -code;
}

int perfdb_err_set(struct perfdb_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vset(err, code, NULL, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

int perfdb_err_at(struct perfdb_err *err, int code, const char *file,
		  size_t line, size_t col, const char *fmt, ...)
{
	/* the file's whole name: vset shortens the message, not the prefix alone */
	char small[512], *prefix = small;
	size_t need = strlen(file) + 48;
	if (need > sizeof(small) && !(prefix = malloc(need))) {
		prefix = small;
		need = sizeof(small);
	}
	if (line && col)
		snprintf(prefix, need, "%s:%zu:%zu: ", file, line, col);
	else if (line)
		snprintf(prefix, need, "%s:%zu: ", file, line);
	else
		snprintf(prefix, need, "%s: ", file);
	va_list ap;
	va_start(ap, fmt);
	int rc = vset(err, code, prefix, NULL, fmt, ap);
	va_end(ap);
	if (prefix != small)
		free(prefix);
	return rc;
}

int perfdb_err_errno(struct perfdb_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vset(err, PERFDB_EIO, NULL, strerror(errnum), fmt, ap);
	va_end(ap);
	return rc;
}

const char *perfdb_err_name(int code)
{
	if (code < 0)
		code = -code;
	switch (code) {
	case PERFDB_OK: return "ok";
	case PERFDB_EIO: return "io";
	case PERFDB_ENOMEM: return "nomem";
	case PERFDB_EPARSE: return "parse";
	case PERFDB_EINVAL: return "invalid";
	case PERFDB_ENOENT: return "notfound";
	case PERFDB_ELOCKED: return "locked";
	case PERFDB_ESCHEMA: return "schema";
	}
	return "unknown";
}
