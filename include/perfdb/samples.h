/*
 * Exact per-key medians in bounded memory.
 *
 * The parse stage aggregates millions of launches into a few thousand keys;
 * the mean, std, min and max stream, but an exact median needs every sample.
 * A sample store keeps (key, value) pairs in memory up to a limit, then
 * spills them to an unlinked temporary file, and computes each key's median
 * at the end in batches that fit the same limit (keys with more samples than
 * the limit are resolved by exact histogram refinement over the spill file).
 * Memory: about 20 bytes x limit; disk: 12 bytes per sample once spilled.
 * Results equal sorting each key's samples and taking the middle value (mean
 * of the two middle values when the count is even).
 */
#ifndef PERFDB_SAMPLES_H
#define PERFDB_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

#define PERFDB_SAMPLES_DEFAULT_LIMIT ((size_t)1 << 16)

struct perfdb_samples;

/*
 * limit: samples kept in memory (0 = default); spill_dir: where the
 * temporary file goes (NULL = $TMPDIR or /tmp).
 */
int perfdb_samples_new(struct perfdb_samples **out, size_t limit,
		       const char *spill_dir, struct perfdb_err *err);
void perfdb_samples_free(struct perfdb_samples *s);

/* Record one finite sample for key. */
int perfdb_samples_add(struct perfdb_samples *s, uint32_t key, double v,
		       struct perfdb_err *err);

/* Samples recorded so far, and whether the store has spilled to disk. */
uint64_t perfdb_samples_count(const struct perfdb_samples *s);
int perfdb_samples_spilled(const struct perfdb_samples *s);

/* Call fn for every sample, in insertion order.  Not after medians(). */
int perfdb_samples_foreach(const struct perfdb_samples *s,
			   int (*fn)(void *ctx, uint32_t key, double v, struct perfdb_err *err),
			   void *ctx, struct perfdb_err *err);

/*
 * Median of every key 0..nkeys-1 into medians[] (NAN for a key without
 * samples).  Call once, after the last add.
 */
int perfdb_samples_medians(struct perfdb_samples *s, uint32_t nkeys,
			   double *medians, struct perfdb_err *err);

#endif
