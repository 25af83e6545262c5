/* Functions shared by the files of src/parse/ (not public API). */
#ifndef PERFDB_PARSE_INTERNAL_H
#define PERFDB_PARSE_INTERNAL_H

#include "parse/fia.h"
#include "perfdb/op_mapping.h"
#include "parse/parse.h"

/*
 * src/parse/write_tables.c: merge agg into <outdir>/<Type>.csv under the
 * lock, then, still under it, apply opmap (NULL: the database's
 * op_mapping.yaml is not touched).
 */
int perfdb_parse_write_tables(const char *outdir, const struct perfdb_agg *agg,
			      const struct perfdb_fia *fia, double lock_timeout,
			      const struct perfdb_opmap_opts *opmap,
			      struct perfdb_parse_result *res, struct perfdb_err *err);

#endif
