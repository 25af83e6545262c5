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

/*
 * The statistics of a set of clean timing samples (docs/measuring.md
 * "What is kept"): sorted in place, then every sample above the fence,
 * max(Q3 + 3 * IQR, 2 * median), is left out of all the figures;
 * *outliers says how many.  A sample is cast out only when it is both far
 * out by Tukey's rule and more than twice the typical time: an
 * interruption, not the operator.  Only the slow side is fenced (noise
 * only ever adds time), and a heavy tail of samples within twice the
 * median stays in the mean, as the reference's column means.  Quartiles by
 * linear interpolation (numpy's default).
 */
void perfdb_stats_robust(double *x, size_t n, struct perfdb_stats *out, size_t *outliers);

/* The q-quantile (0..1) of n sorted values, by linear interpolation; 0 for n == 0. */
double perfdb_stats_quantile_sorted(const double *x, size_t n, double q);

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
