/*
 * perfdb error reporting.
 *
 * Every library function that can fail returns 0 on success or a negative
 * PERFDB_E* code, and fills a caller-owned struct perfdb_err with a one-line
 * message.  Only the CLI layer prints or exits.  Messages follow the house
 * style: "file:line:col: what failed: 'subject'", lowercase, no final period.
 */
#ifndef PERFDB_ERR_H
#define PERFDB_ERR_H

#include <stddef.h>

enum perfdb_errcode {
	PERFDB_OK = 0,
	PERFDB_EIO = 1,      /* read/write/fsync/rename failed */
	PERFDB_ENOMEM = 2,   /* allocation failed */
	PERFDB_EPARSE = 3,   /* malformed input (file, line, col set) */
	PERFDB_EINVAL = 4,   /* bad argument or value (a usage-level error) */
	PERFDB_ENOENT = 5,   /* file, column or entry not found */
	PERFDB_ELOCKED = 6,  /* database lock not acquired in time */
	PERFDB_ESCHEMA = 7,  /* valid CSV but not a valid table (columns) */
};

#define PERFDB_ERR_MSG_MAX 1024

struct perfdb_err {
	int code;                       /* positive enum perfdb_errcode, 0 = none */
	char msg[PERFDB_ERR_MSG_MAX];   /* complete one-line message */
};

/* Clear an error record before (re)use. */
void perfdb_err_clear(struct perfdb_err *err);

/*
 * Record an error and return -code so callers can write
 * `return perfdb_err_set(err, PERFDB_EIO, "...", ...);`.
 * err may be NULL (the message is then dropped).
 */
int perfdb_err_set(struct perfdb_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like perfdb_err_set, with a "file:line:col: " prefix (line/col 0 = omitted). */
int perfdb_err_at(struct perfdb_err *err, int code, const char *file,
		  size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Like perfdb_err_set, appending ": strerror(errnum)". */
int perfdb_err_errno(struct perfdb_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Short name of a code, for --json output ("io", "parse", ...). */
const char *perfdb_err_name(int code);

/* Propagate a negative return code unchanged. */
#define PERFDB_TRY(expr)                     \
	do {                                 \
		int perfdb_try_rc_ = (expr); \
		if (perfdb_try_rc_ < 0)      \
			return perfdb_try_rc_; \
	} while (0)

#endif
