/*
 * The native replay's end-of-run judgement of its rows' bandwidth readings
 * (native_run.h; docs/replay.md "Contention", docs/reliability.md 13).
 *
 * During the run a row is held to the median of the rows before it, which
 * is nothing for the first row and, when the run starts in the VM's slow
 * state, a figure as low as the row.  Once every row is in, each row is
 * held to the whole run's median.  A row read low against it that was
 * never measured again (retries 0: it had no reference to be retried
 * against) gets its retries now, in a second pass against that median;
 * what is still low is refused, not written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/probe.h"
#include "replay/native_run.h"

/*
 * The median probe reading of the run's measured rows (0: none): those
 * kept, and those refused for a low reading, so that refusing them does
 * not move the figure they were judged by.  rank < 0: every rank's rows.
 */
double perfdb_native_rows_median(const struct perfdb_engine_result *r, int rank)
{
	double *v = malloc((r->nrows ? r->nrows : 1) * sizeof(double));
	if (!v)
		return 0;   /* no reference: no row is judged contended */
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if ((r->rows[i].status == PERFDB_ENGINE_OK || r->rows[i].low_bandwidth) &&
		    (rank < 0 || r->rows[i].rank == rank))
			v[n++] = r->rows[i].probe_gbs;
	double m = perfdb_probe_median(v, n);
	free(v);
	return m;
}

/* Each rank's reference (*ref, nranks of them; the caller frees it). */
static int references(const struct perfdb_engine_result *r, double **ref, int *nranks)
{
	int n = 1;
	for (size_t i = 0; i < r->nrows; i++)
		n = r->rows[i].rank >= n ? r->rows[i].rank + 1 : n;
	*ref = calloc((size_t)n, sizeof(double));
	if (!*ref)
		return -PERFDB_ENOMEM;
	for (int k = 0; k < n; k++)
		(*ref)[k] = r->probe_quiet_gbs > 0 ? r->probe_quiet_gbs : perfdb_native_rows_median(r, n > 1 ? k : -1);
	*nranks = n;
	return 0;
}

static double row_ref(const double *ref, const struct perfdb_engine_row *x)
{
	return ref[x->rank >= 0 ? x->rank : 0];
}

static int refuse(struct perfdb_engine_result *r, const double *ref, int nranks)
{
	int rc = 0;
	for (size_t i = 0; i < r->nrows && rc == 0; i++) {
		const struct perfdb_engine_row *x = &r->rows[i];
		double y = row_ref(ref, x);
		if (x->status != PERFDB_ENGINE_OK || !perfdb_probe_contended(x->probe_gbs, y))
			continue;
		char why[256];
		snprintf(why, sizeof(why), "contended: measured with %.1f GB/s of memory bandwidth against %s "
			 "%.1f after %d %s", x->probe_gbs, r->probe_quiet_gbs > 0 ? "this machine's quiet" :
			 nranks > 1 ? "its rank's median" : "the run's median", y, x->retries,
			 x->retries == 1 ? "retry" : "retries");
		rc = perfdb_engine_result_refuse(r, i, why);
	}
	return rc;
}

/* ---- the second pass ------------------------------------------------------ */

/* The rows to measure again: indexes into r's rows.  The engine asks of
 * every row of every table, so the few picked are searched, not all. */
struct again {
	const struct perfdb_engine_result *r;
	const size_t *idx;
	size_t n;
};

/* The index into a->r of the picked row (op, line), or SIZE_MAX. */
static size_t picked_row(const struct again *a, const char *op, size_t line)
{
	for (size_t k = 0; k < a->n; k++) {
		const struct perfdb_engine_row *x = &a->r->rows[a->idx[k]];
		if (x->line == line && strcmp(x->op, op) == 0)
			return a->idx[k];
	}
	return SIZE_MAX;
}

static int picked(void *ud, const char *op, size_t line)
{
	return picked_row(ud, op, line) != SIZE_MAX;
}

/*
 * Row x of the first pass takes what the second pass measured of it (y),
 * when y is a measurement taken with more bandwidth, as timing_measure
 * keeps the best of its retries; its retries count both passes'.
 */
static void take(struct perfdb_engine_result *r, struct perfdb_engine_row *x, const struct perfdb_engine_row *y)
{
	int retries = x->retries + 1 + y->retries;
	if (y->status == PERFDB_ENGINE_OK && y->probe_gbs > x->probe_gbs) {
		x->samples = y->samples;
		x->mean = y->mean;
		x->median = y->median;
		x->min = y->min;
		x->std = y->std;
		x->cpu_ratio = y->cpu_ratio;
		x->probe_gbs = y->probe_gbs;
		x->discarded = y->discarded;
		x->outliers = y->outliers;
		x->blocks = y->blocks;
		x->blocks_bad = y->blocks_bad;
		x->worst_wait = y->worst_wait;
		x->resumed = 0;
		memcpy(x->kernel, y->kernel, sizeof(x->kernel));
		if (x->measure) {
			struct perfdb_measure *m = &r->measures.v[x->measure - 1];
			m->samples = y->samples;
			m->mean = y->mean;
			m->min = y->min;
			m->median = y->median;
			m->std = y->std;
		}
	}
	x->retries = retries;
}

int perfdb_native_judge_bandwidth(const struct perfdb_engine_opts *eo, struct perfdb_engine_result *r,
				  struct perfdb_err *err)
{
	r->nagain = r->nagain_written = 0;
	double *ref;
	int nranks;
	if (references(r, &ref, &nranks) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t *idx = malloc((r->nrows ? r->nrows : 1) * sizeof(*idx));
	if (!idx) {
		free(ref);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/*
	 * Only a one-process run held to its own median: with a quiet figure
	 * every row was held to it from the start, and under mpirun a second
	 * pass would be a collective of its own for a few ranks' rows.  A run
	 * that was stopped stays stopped.
	 */
	struct again a = { r, idx, 0 };
	if (!eo->comm && r->probe_quiet_gbs <= 0 && eo->contention_retries > 0 && !r->stopped)
		for (size_t i = 0; i < r->nrows; i++) {
			const struct perfdb_engine_row *x = &r->rows[i];
			if (x->status == PERFDB_ENGINE_OK && x->retries == 0 &&
			    perfdb_probe_contended(x->probe_gbs, row_ref(ref, x)))
				idx[a.n++] = i;
		}
	r->nagain = a.n;
	int rc = 0;
	if (a.n) {
		/* in this process, unjournaled: the rows ran once already, and a
		 * killed run resumes them from the first pass's journal lines and
		 * judges them again */
		struct perfdb_engine_opts o2 = *eo;
		o2.only = picked;
		o2.only_ud = &a;
		o2.missing_only = 0;
		o2.journal = NULL;
		o2.resume = 0;
		o2.subprocess = 0;
		o2.progress = NULL;
		o2.probe_quiet_gbs = ref[0];
		o2.contention_retries = eo->contention_retries - 1;
		struct perfdb_engine_result r2;
		rc = perfdb_engine_run(&o2, &r2, err);
		for (size_t j = 0; rc == 0 && j < r2.nrows; j++) {
			size_t i = picked_row(&a, r2.rows[j].op, r2.rows[j].line);
			if (i != SIZE_MAX)
				take(r, &r->rows[i], &r2.rows[j]);
		}
		perfdb_engine_result_release(&r2);
	}
	if (rc == 0 && refuse(r, ref, nranks) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t k = 0; rc == 0 && k < a.n; k++)
		r->nagain_written += r->rows[idx[k]].status == PERFDB_ENGINE_OK;
	free(idx);
	free(ref);
	return rc;
}
