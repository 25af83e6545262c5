/*
 * One jansson value dumped into a buffer (perfdb/json_out.h): the stages'
 * --json documents share it.
 */
#include <stdlib.h>

#include "perfdb/err.h"
#include "perfdb/json_out.h"

int perfdb_json_dump(json_t *j, size_t flags, struct perfdb_strbuf *out)
{
	char *s = j ? json_dumps(j, flags) : NULL;
	json_decref(j);
	if (!s)
		return -PERFDB_ENOMEM;
	int rc = perfdb_strbuf_addstr(out, s);
	free(s);
	return rc < 0 ? rc : perfdb_strbuf_addch(out, '\n');
}
