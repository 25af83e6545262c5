/*
 * The replay engine's timing (docs/replay.md "Timing", "Contention";
 * docs/spec/replay.md Decision 2; docs/style.md rule 8): warm-up, then
 * samples of one synchronous call each until the adaptive stop (repeat
 * samples and rsd, or the row budget), the caches flushed between samples
 * for memory-bound ops whose working set fits the LLC, the per-row timeout,
 * and the measurement repeated while the bandwidth probe says the row was
 * contended.  Collective rows are timed on every rank together.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/sched.h"
#include "perfdb/stats.h"
#include "replay/engine_internal.h"

#define MAX_SAMPLES 100000

/* Evict the case's data from the caches: stream through a buffer twice the LLC. */
static volatile uint64_t flush_sink;
static void cache_flush(uint64_t *buf, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i += 8) {
		buf[i] += 1;
		s += buf[i];
	}
	flush_sink += s;
}

/* Relative std of n samples from their sum and sum of squares. */
static double rsd_of(double sum, double sumsq, size_t n)
{
	if (!n)
		return 0;
	double mean = sum / (double)n, var = sumsq / (double)n - mean * mean;
	return mean > 0 && var > 0 ? sqrt(var) / mean : 0;
}

/* The scheduler's judgement of the timed blocks (perfdb/sched.h). */
struct judge {
	int on;
	struct perfdb_sched_reading a;
	double t0;   /* the block's start, on this rank's clock */
	int free_cpus;   /* the CPUs the row's --threads leave to other processes */
};

/*
 * Judging is on for host-timed rows unless turned off (o->no_sched) or
 * the kernel keeps no schedstats; on every rank of a collective, or none.
 */
static void judge_start(const struct perfdb_engine_opts *o, MPI_Comm *comm, struct judge *j)
{
	struct perfdb_err e;
	perfdb_err_clear(&e);
	j->on = !o->no_sched && !o->backend->time_run && perfdb_sched_read(&j->a, &e) == 0;
	if (comm) {
		int g;
		MPI_Allreduce(&j->on, &g, 1, MPI_INT, MPI_MIN, *comm);
		j->on = g;
	}
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int used = o->threads > 0 ? o->threads : 1;
	j->free_cpus = online > used ? (int)(online - used) : 0;
	j->t0 = engine_now_s(CLOCK_MONOTONIC);
}

/*
 * Judge the block that ends now and start the next; 1 when it was
 * contaminated (on any rank of a collective: a round counts only when no
 * rank was contended).  timed_s: the block's sampled time, against which
 * its wait is weighed (a block of flushed samples is mostly the untimed
 * flush: a 65 us wait in a 1.9 ms block is 3 % of the block, and up to
 * 14x a 5 us sample).  Counts go to row.
 */
static int judge_block(struct judge *j, MPI_Comm *comm, double timed_s, struct perfdb_engine_row *row)
{
	struct perfdb_sched_reading b;
	struct perfdb_sched_block blk;
	struct perfdb_err e;
	perfdb_err_clear(&e);
	double t1 = engine_now_s(CLOCK_MONOTONIC);
	int bad = 0;
	double wait = 0;
	if (perfdb_sched_read(&b, &e) == 0) {
		double wall = t1 - j->t0;
		perfdb_sched_judge(&j->a, &b, timed_s < wall ? timed_s : wall, j->free_cpus, &blk);
		bad = blk.contaminated;
		wait = wall > 0 ? (double)blk.wait_ns * 1e-9 / wall : 0;
		if (blk.others > row->worst_others)
			row->worst_others = blk.others;
		row->free_cpus = j->free_cpus;
		j->a = b;
	}
	if (comm) {
		double v[2] = { bad, wait }, g[2];
		MPI_Allreduce(v, g, 2, MPI_DOUBLE, MPI_MAX, *comm);
		bad = g[0] > 0;
		wait = g[1];
	}
	row->blocks++;
	if (bad) {
		row->blocks_bad++;
		if (wait > row->worst_wait)
			row->worst_wait = wait;
	}
	j->t0 = engine_now_s(CLOCK_MONOTONIC);
	return bad;
}

/*
 * Warm up, then sample until the adaptive stop (Decision 2).  pr: the
 * bandwidth probe read before the warm-up (which re-warms what the probe
 * evicted) and after the timed loop; the row keeps the lower of the two.
 */
/* The warm-up: at least 2 calls, up to 5 % of the budget; start: the row's
 * start on CLOCK_MONOTONIC.  --row-timeout holds here already. */
static int warm_up(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		   struct perfdb_op_case *c, MPI_Comm *comm, double start, struct perfdb_err *err)
{
	double el0 = 0, call = 0, need = 0;
	for (int w = 0;; w++) {
		int rc = impl->run(c, err);
		double el = engine_now_s(CLOCK_MONOTONIC) - start;
		int more = w < 1 || (el < 0.05 * o->budget_s && w < 20 && el <= o->timeout_s);
		/*
		 * --row-timeout holds early: a first call over the whole timeout, or
		 * the second call (past the first's one-time costs, and a stall of
		 * one call) times the samples still to take, stops the row here.
		 */
		if (w == 0) {
			el0 = el;
			call = el;
			need = el;
		} else if (w == 1) {
			call = el - el0;
			need = el + call * (double)o->repeat;
		}
		int over = w <= 1 && rc == 0 && need > o->timeout_s;
		if (comm) {
			/* a failure on any rank fails all; the first rank done warming up ends warm-up */
			int v[3] = { rc < 0, !more, over }, g[3];
			MPI_Allreduce(v, g, 3, MPI_INT, MPI_MAX, *comm);
			if (g[0])
				return rc < 0 ? rc : perfdb_err_set(err, PERFDB_EINVAL, "failed on another rank");
			more = !g[1];
			over = g[2];
		} else if (rc < 0) {
			return rc;
		}
		if (over)
			return perfdb_err_set(err, PERFDB_EINVAL, "timed out: a call took %.3g s, so the warm-up "
					      "and %zu samples would take at least %.3g s, over --row-timeout %g s",
					      call, o->repeat, need, o->timeout_s);
		if (!more)
			break;
	}
	return 0;
}

int timing_flushes(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		   const struct perfdb_op_case *c)
{
	size_t ws = 0;
	for (size_t i = 0; i < c->nin; i++)
		ws += c->in[i].bytes;
	for (size_t i = 0; i < c->nout; i++)
		ws += c->out[i].bytes;
	return o->flush && !impl->cold_itself && ws < ENGINE_FLUSH_BYTES && !o->backend->time_run;
}

static int time_case(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		     struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr,
		     struct perfdb_engine_row *row, struct perfdb_err *err)
{
	int flush = flushbuf && timing_flushes(o, impl, c);
	/*
	 * Collective: every rank runs each call together.  Ranks enter each
	 * sample after a barrier and the sample is the slowest rank's time
	 * (nccl-tests); every stop decision is taken on values all ranks share.
	 */
	MPI_Comm *comm = c->def->collective ? o->comm : NULL;
	double probe0 = pr ? perfdb_probe_gbs(pr) : 0;
	double start = engine_now_s(CLOCK_MONOTONIC);
	PERFDB_TRY(warm_up(o, impl, c, comm, start, err));
	size_t cap = o->repeat > 64 ? o->repeat : 64, n = 0;
	double *x = malloc(cap * sizeof(double));
	if (!x)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct judge jd;
	judge_start(o, comm, &jd);
	double t_start = engine_now_s(CLOCK_MONOTONIC), cpu_start = engine_now_s(CLOCK_PROCESS_CPUTIME_ID);
	double sum = 0, sumsq = 0, bsum = 0, bsumsq = 0, blk_el = 0;
	size_t n0 = 0;   /* samples before the block in progress */
	int rc = 0, contended = 0;
	for (;;) {
		if (flush)
			cache_flush(flushbuf, flushn);
		if (comm)
			MPI_Barrier(*comm);
		double t0 = engine_now_s(CLOCK_MONOTONIC), us = 0;
		if (o->backend->time_run)   /* device time, measured by the backend (flushing its own caches) */
			rc = o->backend->time_run(impl, c, o->flush && c->def->memory_bound, &us, err);
		else
			rc = impl->run(c, err);
		double t1 = engine_now_s(CLOCK_MONOTONIC);
		if (!o->backend->time_run)
			us = (t1 - t0) * 1e6;
		double since_start = t1 - start, el = t1 - t_start;
		if (comm) {
			/* the slowest rank's sample and clocks; a failure anywhere fails all */
			double v[4] = { us, since_start, el, rc < 0 }, g[4];
			MPI_Allreduce(v, g, 4, MPI_DOUBLE, MPI_MAX, *comm);
			if (g[3] > 0 && rc == 0)
				rc = perfdb_err_set(err, PERFDB_EINVAL, "failed on another rank");
			us = g[0];
			since_start = g[1];
			el = g[2];
		}
		if (rc < 0)
			break;
		if (n == cap) {
			void *p = realloc(x, 2 * cap * sizeof(double));
			if (!p) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			x = p;
			cap *= 2;
		}
		x[n++] = us;
		bsum += us;
		bsumsq += us * us;
		/*
		 * A block ends after ENGINE_BLOCK_S (on the clock every rank
		 * shares), or when the row would stop; only then is it judged,
		 * so a sample counts once the accounts say its block was clean.
		 */
		int timed_out = since_start > o->timeout_s;
		int may_stop = timed_out || el >= o->budget_s || n >= MAX_SAMPLES ||
			       (n >= o->repeat && rsd_of(sum + bsum, sumsq + bsumsq, n) <= o->rsd);
		if (jd.on && !may_stop && el - blk_el < ENGINE_BLOCK_S)
			continue;
		if (jd.on && judge_block(&jd, comm, bsum * 1e-6, row)) {
			row->discarded += n - n0;
			n = n0;
		} else {
			sum += bsum;
			sumsq += bsumsq;
		}
		bsum = bsumsq = 0;
		n0 = n;
		blk_el = el;
		if (n >= MAX_SAMPLES)
			break;
		if (n >= o->repeat && (rsd_of(sum, sumsq, n) <= o->rsd || el >= o->budget_s))
			break;
		/*
		 * Short of clean samples once the budget is spent: contended, when
		 * blocks were dropped, and once ENGINE_BAD_BLOCKS of them were, so
		 * that a row of one long sample (or --row-budget 0) gets that many
		 * tries at a clean block before it is given up.
		 */
		if (row->discarded && (timed_out || (el >= o->budget_s && row->blocks_bad >= ENGINE_BAD_BLOCKS))) {
			contended = 1;
			break;
		}
		if (timed_out) {
			if (n < o->repeat)
				rc = perfdb_err_set(err, PERFDB_EINVAL, "timed out after %.1f s with %zu of %zu samples",
						    since_start, n, o->repeat);
			break;
		}
	}
	double wall = engine_now_s(CLOCK_MONOTONIC) - t_start, cpu = engine_now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
	if (rc == 0) {
		struct perfdb_stats st;
		perfdb_stats_robust(x, n, &st, &row->outliers);
		row->samples = st.n;
		row->mean = st.mean;
		row->median = st.median;
		row->min = st.min;
		row->std = st.std;
		row->cpu_ratio = wall > 0 ? cpu / wall : 0;
		double probe1 = pr ? perfdb_probe_gbs(pr) : 0;
		row->probe_gbs = perfdb_probe_lower(probe0, probe1);
		row->status = contended ? PERFDB_ENGINE_CONTENDED : PERFDB_ENGINE_OK;
	}
	free(x);
	return rc;
}

/* The reason a contended row carries: what was dropped and why. */
static int contended_reason(const struct perfdb_engine_opts *o, struct perfdb_engine_row *row)
{
	char m[480];
	snprintf(m, sizeof(m),
		 "contended: %zu of %zu timed blocks had the threads waiting for a CPU, the VM losing time "
		 "to steal, or other processes running on the CPUs the run uses (worst: the threads waited "
		 "%.0f %% of the block's wall time, summed; %u tasks of other processes running where "
		 "--threads left %d CPUs free); %zu clean samples of the %zu needed, %zu dropped",
		 row->blocks_bad, row->blocks, 100.0 * row->worst_wait, row->worst_others, row->free_cpus,
		 row->samples, o->repeat, row->discarded);
	free(row->reason);
	row->reason = strdup(m);
	return row->reason ? 0 : -PERFDB_ENOMEM;
}

/*
 * time_case, again while the row's probe says it was measured under
 * contention (probe.h: against the machine's quiet figure, else the rows
 * measured before it), at most o->contention_retries more times and only
 * while another measurement as long as the last keeps the row within its
 * timeout (so the subprocess watchdog's timeout x rows still holds); the
 * row keeps the clean measurement taken with the most bandwidth, whose
 * reading joins the reference.  A row the scheduler's accounts left short
 * of clean samples (time_case's own re-measuring spent the budget) is
 * returned as PERFDB_ENGINE_CONTENDED with its reason, not retried.
 */
int timing_measure(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		   struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr,
		   struct perfdb_engine_row *row, struct perfdb_err *err)
{
	double t0 = engine_now_s(CLOCK_MONOTONIC);
	PERFDB_TRY(time_case(o, impl, c, flushbuf, flushn, pr, row, err));
	if (row->status == PERFDB_ENGINE_CONTENDED)
		return contended_reason(o, row);
	double ref = !pr ? 0 : o->probe_quiet_gbs > 0 ? o->probe_quiet_gbs : perfdb_probe_reference(pr);
	double last = engine_now_s(CLOCK_MONOTONIC) - t0;
	for (int k = 0; pr && k < o->contention_retries && perfdb_probe_contended(row->probe_gbs, ref) &&
			engine_now_s(CLOCK_MONOTONIC) - t0 + last <= o->timeout_s;
	     k++) {
		double t1 = engine_now_s(CLOCK_MONOTONIC);
		struct perfdb_engine_row again = *row;
		again.discarded = again.outliers = again.blocks = again.blocks_bad = 0;
		again.worst_wait = 0;
		again.worst_others = 0;
		struct perfdb_err rerr;
		perfdb_err_clear(&rerr);
		/* a retry that fails (say, times out) or is contended keeps the measurement already taken */
		if (time_case(o, impl, c, flushbuf, flushn, pr, &again, &rerr) < 0 ||
		    again.status != PERFDB_ENGINE_OK)
			break;
		last = engine_now_s(CLOCK_MONOTONIC) - t1;
		again.retries = row->retries + 1;
		if (again.probe_gbs > row->probe_gbs)
			*row = again;
		else
			row->retries = again.retries;
	}
	if (pr && perfdb_probe_note(pr, row->probe_gbs) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}
