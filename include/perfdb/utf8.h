/*
 * UTF-8 validation: the one rule for every byte perfdb reads and writes
 * (docs/csv.md "Encoding"): no overlong forms, no surrogates, nothing past
 * U+10FFFF, no truncated sequence.  The CSV reader refuses a table that
 * breaks it, so every string from another input (a trace) is held to it
 * before it can reach a table.
 */
#ifndef PERFDB_UTF8_H
#define PERFDB_UTF8_H

#include <stddef.h>

/* The offset of the first invalid byte in [p, p+len), or len when all is valid. */
size_t perfdb_utf8_check(const void *p, size_t len);

#endif
