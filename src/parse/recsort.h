/*
 * External sort of fixed-size records (the parse stage, src/parse/recsort.c).
 *
 * The trace linker joins millions of small records (launches, kernels,
 * op intervals) that arrive in file order, not in the order a join needs.
 * A sorter keeps records in memory up to a byte limit, then writes each
 * full buffer as a sorted run to an unlinked temporary file; reading back
 * merges the runs.  Memory: the limit (plus one read buffer per run at
 * merge time, carved out of the same limit); disk: recsize per record
 * once spilled.  The comparator must be a total order: equal records are
 * interchangeable.
 */
#ifndef PERFDB_RECSORT_H
#define PERFDB_RECSORT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

struct perfdb_recsort;

/* mem_limit: bytes of records kept in memory (0 = 4 MiB); spill_dir: NULL =
 * $TMPDIR or /tmp. */
int perfdb_recsort_new(struct perfdb_recsort **out, size_t recsize,
		       int (*cmp)(const void *, const void *), size_t mem_limit,
		       const char *spill_dir, struct perfdb_err *err);
void perfdb_recsort_free(struct perfdb_recsort *s);

int perfdb_recsort_add(struct perfdb_recsort *s, const void *rec, struct perfdb_err *err);

/* Records added so far; whether any run went to disk. */
uint64_t perfdb_recsort_count(const struct perfdb_recsort *s);
int perfdb_recsort_spilled(const struct perfdb_recsort *s);

/* End the adding phase and sort.  Then next() yields the records in order:
 * 1 with rec filled, 0 at the end, or a negative code. */
int perfdb_recsort_sort(struct perfdb_recsort *s, struct perfdb_err *err);
int perfdb_recsort_next(struct perfdb_recsort *s, void *rec, struct perfdb_err *err);

#endif
