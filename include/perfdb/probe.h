/*
 * Memory-bandwidth probe of the replay engine (docs/replay.md
 * "Contention").  These machines share their memory bandwidth with other
 * tenants of the host: a DRAM-bound row measured while a neighbour streams
 * memory comes out slower, and process CPU time / wall time (which shows a
 * neighbour taking our core) cannot see it.  The probe reads a buffer
 * twice the last-level cache on one thread before and after a row's timed
 * loop, and the row keeps the lower reading.  A row whose reading falls
 * more than PERFDB_PROBE_TOLERANCE below the median of the rows measured
 * before it was measured under contention and is measured again
 * (--contention-retries), keeping the measurement with the most bandwidth.
 *
 * Why the median of the rows and not the best reading: one reading varies
 * by +-10 % on a quiet machine (the L3 is shared with other tenants and
 * keeps part of the buffer from one reading to the next: back-to-back
 * readings of a 64 MiB buffer measured 51-55 GB/s where readings separated
 * by a row's work measured 41-46), so a maximum follows the luckiest
 * reading and flags every row; hence also the 20 % tolerance.
 */
#ifndef PERFDB_PROBE_H
#define PERFDB_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/schema.h"   /* PERFDB_PROBE_TOLERANCE */

#define PERFDB_PROBE_BYTES ((size_t)64 << 20)  /* twice the 32 MiB LLC: the reads come from DRAM */
/* A reading waits for the process's other threads to run under this share of the wall time ... */
#define PERFDB_PROBE_OTHERS 0.1
/* ... for at most this long (OpenBLAS's workers spin ~130 ms after a GEMM; OpenMP's ~5 ms) */
#define PERFDB_PROBE_SETTLE_S 0.25

struct perfdb_probe {
	uint64_t *buf;
	size_t n;                          /* uint64_t words in buf */
	double *rows;                      /* the kept reading of every row so far */
	size_t nrows, caprows;
	/* Test hook: readings returned in order instead of measuring (the last repeats). */
	const double *script;
	size_t nscript, pos;
};

/* Allocate and write the buffer (so its pages are real, not the shared zero page); bytes 0: none. */
int perfdb_probe_init(struct perfdb_probe *p, size_t bytes, struct perfdb_err *err);
void perfdb_probe_release(struct perfdb_probe *p);

/*
 * Read bandwidth now, GB/s: the fastest of three passes over the buffer
 * (about 5 ms), once the process's other threads are at rest
 * (PERFDB_PROBE_SETTLE_S at most).  0, no reading, when they ran over
 * PERFDB_PROBE_OTHERS of the reading's time all the same: it read them.
 */
double perfdb_probe_gbs(struct perfdb_probe *p);

/* The lower of a row's two readings, of those taken (0: no reading). */
double perfdb_probe_lower(double a, double b);

/* Add a row's kept reading to the reference (readings <= 0 are ignored); -PERFDB_ENOMEM. */
int perfdb_probe_note(struct perfdb_probe *p, double gbs);

/* The reference: the median of the noted readings (0: none yet). */
double perfdb_probe_reference(const struct perfdb_probe *p);

/* The median of n readings (those <= 0 left out; 0 when none); v is reordered. */
double perfdb_probe_median(double *v, size_t n);

/* Whether a row whose probe read gbs was measured under contention, judged against ref. */
int perfdb_probe_contended(double gbs, double ref);

#endif
