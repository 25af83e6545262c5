/*
 * FusedInferAttentionScore runtime metadata from operator_details.csv
 * (docs/spec/parse.md §5, Decision 8).
 *
 * While kernel files stream through the aggregator, a per-file collector
 * notes each FIA kernel row's (Input Shapes, Output Shapes) and its position;
 * afterwards the i-th FIA kernel row of a directory is paired with the i-th
 * FIA row of that directory's operator_details.csv, and the first pairing
 * of each (in, out) key gives that key's `Runtime …` values.
 */
#ifndef PERFDB_FIA_H
#define PERFDB_FIA_H

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/shape.h"

#define PERFDB_FIA_TYPE "FusedInferAttentionScore"
#define PERFDB_FIA_NCOLS 16
extern const char *const perfdb_fia_columns[PERFDB_FIA_NCOLS];

struct perfdb_fia_file;
struct perfdb_fia;

int perfdb_fia_file_new(struct perfdb_fia_file **out, struct perfdb_err *err);
void perfdb_fia_file_free(struct perfdb_fia_file *f);
/* One FIA kernel row (Type exactly FusedInferAttentionScore), in file order. */
int perfdb_fia_file_row(struct perfdb_fia_file *f, struct perfdb_span in_shapes,
			struct perfdb_span out_shapes, struct perfdb_err *err);

int perfdb_fia_new(struct perfdb_fia **out, struct perfdb_err *err);
void perfdb_fia_free(struct perfdb_fia *x);

/* Add a file's collector, in input order.  kernel_path locates its directory. */
int perfdb_fia_add_file(struct perfdb_fia *x, const char *kernel_path,
			const struct perfdb_fia_file *f, struct perfdb_err *err);

/*
 * Pair with the operator_details.csv files (any order) and compute the
 * metadata.  warn(ctx, message) receives each warning (count mismatch,
 * non-integer slot); it may be NULL.
 */
int perfdb_fia_resolve(struct perfdb_fia *x, char *const *operator_details, size_t nops,
		       void (*warn)(void *ctx, const char *msg), void *wctx,
		       struct perfdb_err *err);

/* The 16 values for (in, out), or NULL when the key has no metadata. */
const char *const *perfdb_fia_lookup(const struct perfdb_fia *x, const char *in_shapes,
				     const char *out_shapes);

/* Mean of the integers of a kv-values cell as "%.6f", or "" (spec §6 helper). */
int perfdb_fia_avg_seq_len(const char *values, char *out, size_t cap);

#endif
