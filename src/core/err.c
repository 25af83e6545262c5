/* Error records: see include/perfdb/err.h. */
#include "perfdb/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void perfdb_err_clear(struct perfdb_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

static int vset(struct perfdb_err *err, int code, const char *prefix,
		const char *suffix, const char *fmt, va_list ap)
{
	if (err) {
		size_t n = 0;
		err->code = code;
		if (prefix)
			n = (size_t)snprintf(err->msg, sizeof(err->msg), "%s", prefix);
		if (n < sizeof(err->msg))
			n += (size_t)vsnprintf(err->msg + n, sizeof(err->msg) - n, fmt, ap);
		if (suffix && n < sizeof(err->msg))
			snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", suffix);
	}
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
	char prefix[512];
	if (line && col)
		snprintf(prefix, sizeof(prefix), "%s:%zu:%zu: ", file, line, col);
	else if (line)
		snprintf(prefix, sizeof(prefix), "%s:%zu: ", file, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", file);
	va_list ap;
	va_start(ap, fmt);
	int rc = vset(err, code, prefix, NULL, fmt, ap);
	va_end(ap);
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
