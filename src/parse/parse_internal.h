/* Functions shared by the files of src/parse/ (not public API). */
#ifndef PERFDB_PARSE_INTERNAL_H
#define PERFDB_PARSE_INTERNAL_H

#include "parse/fia.h"
#include "perfdb/op_mapping.h"
#include "parse/parse.h"
#include "parse/comm_agg.h"

/*
 * src/parse/write_tables.c: merge agg into <outdir>/<Type>.csv and comm
 * (NULL: none) into <outdir>/hcom_<op>_.csv under the lock, then, still
 * under it, apply opmap (NULL: the database's op_mapping.yaml is not
 * touched).  An hcom_* table that holds kernel rows is left as it is and
 * counted in res->comm_raw.
 */
int perfdb_parse_write_tables(const char *outdir, const struct perfdb_agg *agg,
			      const struct perfdb_comm_agg *comm,
			      const struct perfdb_fia *fia, double lock_timeout,
			      const struct perfdb_opmap_opts *opmap,
			      struct perfdb_parse_result *res, struct perfdb_err *err);

/*
 * src/parse/format_key.c: the key form of an Input Formats cell: each
 * ';'-separated token without a leading FORMAT_ (FORMAT_ND and ND are one
 * key).  out holds at least n bytes; returns its length (not terminated).
 */
size_t perfdb_format_key(const char *in, size_t n, char *out);

/* The same appended to out, terminated. */
int perfdb_format_key_str(const char *in, struct perfdb_strbuf *out);

#endif
