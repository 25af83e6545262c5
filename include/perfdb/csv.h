/*
 * Streaming CSV reader and byte-exact writer.
 *
 * Reader dialect: RFC 4180 plus what profilers write (docs/spec/parse.md §1):
 *   - optional UTF-8 BOM at the start (dropped);
 *   - records end with LF, CRLF or a lone CR; a blank line is no record;
 *   - fields separated by ',', quoted with '"', '""' inside quotes is one
 *     '"'; commas, CR and LF may appear inside quotes;
 *   - a '"' that does not open a field is literal (`ab"c`), and text after a
 *     closing quote is appended (`"ab"c` -> `abc`), as Python's csv module
 *     does with strict=False;
 *   - shape cells keep their literal quotes: `"""4,8;8,16"""` reads as
 *     `"4,8;8,16"`.
 * Errors (file:line:col): end of file inside a quoted field, a NUL byte,
 * invalid UTF-8 (when PERFDB_CSV_UTF8 is set), a record above max_record.
 *
 * Fields are zero-copy views into the reader's buffer; they stay valid until
 * the next call to perfdb_csv_next.  Memory is bounded by the longest
 * record, not the file.
 *
 * Writer: the database format (docs/design.md): UTF-8 without BOM, CRLF, a field
 * is quoted only if it holds ',', '"', CR or LF, and inner '"' are doubled.
 */
#ifndef PERFDB_CSV_H
#define PERFDB_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

struct perfdb_csv_field {
	const char *p;  /* not NUL-terminated */
	size_t len;
};

/*
 * Index of the first field (smallest index) whose non-empty text equals an
 * earlier field's, or n when no name repeats.  O(n log n).
 */
size_t perfdb_csv_first_duplicate(const struct perfdb_csv_field *f, size_t n);

struct perfdb_csv_row {
	struct perfdb_csv_field *f;
	size_t n;        /* fields in this record */
	size_t line;     /* 1-based physical line where the record starts */
};

enum perfdb_csv_flags {
	PERFDB_CSV_TRIM = 1 << 0,  /* trim ASCII whitespace (incl. tabs) around each field */
	PERFDB_CSV_UTF8 = 1 << 1,  /* reject invalid UTF-8 */
};

struct perfdb_csv_reader;

/*
 * Open a file for reading.  name is used in messages (defaults to path).
 * Returns 0 and sets *out, or -PERFDB_EIO / -PERFDB_ENOMEM.
 */
int perfdb_csv_open(struct perfdb_csv_reader **out, const char *path,
		    unsigned flags, struct perfdb_err *err);

/* Read from memory (copied).  name appears in error messages.  data must
 * outlive the reader. */
int perfdb_csv_open_mem(struct perfdb_csv_reader **out, const char *name,
			const void *data, size_t len, unsigned flags,
			struct perfdb_err *err);

/* Same, delivering the data chunk bytes at a time, as a slow pipe would
 * (tests and fuzzing use it to drive the record-restart path). */
int perfdb_csv_open_mem_chunked(struct perfdb_csv_reader **out, const char *name,
				const void *data, size_t len, size_t chunk,
				unsigned flags, struct perfdb_err *err);

/* Read from an open descriptor (not closed by the reader). */
int perfdb_csv_open_fd(struct perfdb_csv_reader **out, const char *name,
		       int fd, unsigned flags, struct perfdb_err *err);

/*
 * Read the next record.  Returns 1 with *row filled, 0 at end of input, or
 * a negative code with err set (the reader is then unusable).
 */
int perfdb_csv_next(struct perfdb_csv_reader *r, struct perfdb_csv_row *row,
		    struct perfdb_err *err);

/* Largest record accepted, in bytes (default 256 MiB). */
void perfdb_csv_set_max_record(struct perfdb_csv_reader *r, size_t bytes);

/* Bytes consumed so far (for progress reporting). */
unsigned long long perfdb_csv_offset(const struct perfdb_csv_reader *r);

/* The name given at open time. */
const char *perfdb_csv_name(const struct perfdb_csv_reader *r);

void perfdb_csv_close(struct perfdb_csv_reader *r);

/* 1-based column (in bytes) of a field of the current row, for messages. */
size_t perfdb_csv_field_col(const struct perfdb_csv_reader *r,
			    const struct perfdb_csv_row *row, size_t i);

/* --- writer ----------------------------------------------------------- */

/* True if the field must be quoted in the database dialect. */
bool perfdb_csv_needs_quote(const char *p, size_t len);

/* Append one field, quoted if needed. */
int perfdb_csv_put_field(struct perfdb_strbuf *out, const char *p, size_t len);

/* Append a record of n NUL-terminated fields and the CRLF terminator. */
int perfdb_csv_put_row(struct perfdb_strbuf *out, const char *const *fields,
		       size_t n);

#endif
