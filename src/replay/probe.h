/*
 * Memory-bandwidth probe of the replay engine (docs/replay.md
 * "Contention").  These machines share their memory bandwidth with other
 * tenants of the host: a DRAM-bound row measured while a neighbour streams
 * memory comes out slower, and process CPU time / wall time (which shows a
 * neighbour taking our core) cannot see it.  The probe reads a buffer
 * twice the last-level cache on one thread before and after a row's timed
 * loop; a row whose probe falls more than PERFDB_PROBE_TOLERANCE below the
 * best the run has seen was measured under contention and is measured
 * again (--contention-retries), keeping the measurement with the best
 * probe.
 */
#ifndef PERFDB_REPLAY_PROBE_H
#define PERFDB_REPLAY_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

#define PERFDB_PROBE_BYTES ((size_t)64 << 20)  /* twice the 32 MiB LLC: every read comes from DRAM */
#define PERFDB_PROBE_TOLERANCE 0.10            /* contended: probe below (1 - this) x the run's best */

struct perfdb_probe {
	uint64_t *buf;
	size_t n;                          /* uint64_t words in buf */
	double best;                       /* the highest GB/s seen by this run (0: none yet) */
	/* Test hook: readings returned in order instead of measuring (the last repeats). */
	const double *script;
	size_t nscript, pos;
};

/* Allocate and write the buffer (so its pages are real, not the shared zero page); bytes 0: none. */
int perfdb_probe_init(struct perfdb_probe *p, size_t bytes, struct perfdb_err *err);
void perfdb_probe_release(struct perfdb_probe *p);

/*
 * Read bandwidth now, GB/s: the fastest of three passes over the buffer
 * (about 5 ms; one pass varies by +-5 % on a quiet machine, the fastest
 * of three by less).  Raises p->best.
 */
double perfdb_probe_gbs(struct perfdb_probe *p);

/* Whether a row whose probe read gbs was measured under contention, judged against best. */
int perfdb_probe_contended(double gbs, double best);

#endif
