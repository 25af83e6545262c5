/* Functions shared by the files of src/parse/ (not public API). */
#ifndef PERFDB_PARSE_INTERNAL_H
#define PERFDB_PARSE_INTERNAL_H

#include "perfdb/fia.h"
#include "perfdb/parse.h"

/* src/parse/write_tables.c: merge agg into <outdir>/<Type>.csv under the lock. */
int perfdb_parse_write_tables(const char *outdir, const struct perfdb_agg *agg,
			      const struct perfdb_fia *fia, double lock_timeout,
			      struct perfdb_parse_result *res, struct perfdb_err *err);

#endif
