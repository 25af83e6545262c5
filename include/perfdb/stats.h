/*
 * Sample statistics for durations (docs/spec/parse.md §3, docs/spec/replay.md
 * Decision 2).  Population std, computed in two passes around the mean so
 * there is no sum-of-squares cancellation; the mean is a compensated
 * (Neumaier) sum so large n keep full precision.
 */
#ifndef PERFDB_STATS_H
#define PERFDB_STATS_H

#include <stddef.h>

struct perfdb_stats {
	size_t n;
	double mean;
	double median;  /* middle value; mean of the two middle values if n is even */
	double std;     /* population: sqrt(sum((x-mean)^2)/n); 0 for n == 1 */
	double min;
	double max;
};

/*
 * Summarise n samples.  The array is reordered (sorted in place).  n == 0
 * gives all zeros with n = 0; callers must treat that as "no data".
 * Non-finite samples must be filtered by the caller.
 */
void perfdb_stats_compute(double *x, size_t n, struct perfdb_stats *out);

/* Compensated mean of n values (0 for n == 0); does not reorder. */
double perfdb_stats_mean(const double *x, size_t n);

/*
 * Parse a duration or counter cell the way Python's float() would for the
 * cases we accept: trimmed, decimal or exponent notation, `inf`/`nan` in any
 * case.  Returns 0 and sets *out, or -1 when the cell is empty or junk.
 */
int perfdb_stats_parse_double(const char *s, size_t len, double *out);

/* Format a statistic as the reference does: `%.6f`, `nan`, `inf`, `-inf`. */
int perfdb_stats_format6(double v, char *buf, size_t cap);

/*
 * Format as Python's repr(round(v, 2)): shortest round-trip digits with at
 * least one decimal (`107.7`, `100.0`), scientific past 1e16 (`1e+16`).
 * Used for the comm tables.
 */
int perfdb_stats_format_round2(double v, char *buf, size_t cap);

#endif
