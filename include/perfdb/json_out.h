/*
 * The --json documents every command prints (json_out.c): one jansson
 * value dumped once, the same way everywhere.
 */
#ifndef PERFDB_JSON_OUT_H
#define PERFDB_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

#include "perfdb/strbuf.h"

/*
 * Append j's text, dumped with jansson's flags (JSON_INDENT(2) | ...), and a
 * newline to out; j is released.  -PERFDB_ENOMEM when j is NULL (a build
 * that ran out of memory) or the dump fails.
 */
int perfdb_json_dump(json_t *j, size_t flags, struct perfdb_strbuf *out);

#endif
