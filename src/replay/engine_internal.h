/*
 * What the replay engine's files share (engine.h is the engine's interface
 * to the CLI; this is not).  The engine is split by job:
 *
 *   engine.c      the run and the row loop that ties the others together
 *   case.c        a row's cells to a perfdb_op_case (tensors, bytes, memory cap)
 *   pool.c        the buffer pool and the deterministic input fill
 *   timing.c      warm-up, samples until the adaptive stop, cache flush,
 *                 the timeout, contention retries
 *   result.c      the run's result: its rows and the measures for writeback
 *   subprocess.c  a table replayed in a forked child under a watchdog
 *   scaleout.c    MPI: rows sharded over ranks, per-rank journals, rows
 *                 gathered on rank 0, agreement on collective rows
 */
#ifndef PERFDB_REPLAY_ENGINE_INTERNAL_H
#define PERFDB_REPLAY_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "perfdb/strbuf.h"
#include "perfdb/table.h"
#include "replay/engine.h"
#include "replay/journal.h"
#include "perfdb/probe.h"

/*
 * The flush between samples reads this much (twice the 32 MiB L3 of one
 * EPYC/Zen CCD), and a row whose working set is below it is flushed
 * (timing_flushes).  Below 64 MiB, not only below the L3's 32: a working
 * set of 36-60 MiB timed back to back kept enough of itself in the L3 to
 * read 1.1-1.5x the bandwidth of the same op flushed (docs/measuring.md
 * "Working sets between one and two L3s").
 */
#define ENGINE_FLUSH_BYTES ((size_t)64 << 20)
/* A timed block (perfdb/sched.h): long enough that reading the accounts
 * costs little, short enough that one busy loop per core leaves most
 * blocks clean (docs/measuring.md "The scheduler's accounts"). */
#define ENGINE_BLOCK_S 1e-3
/* Contaminated blocks a row may lose, past its budget, before it is contended. */
#define ENGINE_BAD_BLOCKS 4

/* Inline: the timed loop reads the clock around every sample. */
static inline double engine_now_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- engine.c: the row loop ------------------------------------------- */

/* What a table pass does with a row that is to be measured. */
enum engine_pass {
	ENGINE_PASS_MEASURE,               /* measure (or resume) and journal */
	ENGINE_PASS_CHILD,                 /* the same, in a child: no progress, no results kept */
	ENGINE_PASS_COLLECT,               /* the parent after a child: rows from the journal */
};

/* ---- eta.c: the ETA from the rows to come ------------------------------ */

struct eta_row;
struct engine_eta {
	struct eta_row *rows;              /* every loaded row, in the order the engine visits them */
	size_t n;
	double wall_sum;                   /* wall time of the rows replayed so far */
	size_t wall_n;
	double last_at, last_eta;          /* the last estimate and when it was made */
};

/* Each row's cost (0 or -PERFDB_ENOMEM). */
int eta_init(struct engine_eta *e, const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
	     const char *const *names, size_t ntab);
void eta_release(struct engine_eta *e);
/* A replayed row took wall_s. */
void eta_row_done(struct engine_eta *e, double wall_s);
/*
 * One call of a row's cost (flops on the matrix or vector unit, bytes) at
 * rates (vector FLOP/s, matrix FLOP/s, bytes/s): the slower term of those
 * whose rate is known; *known = every term the cost has has a rate.
 */
double eta_call_s(const double *rates, int matrix, double flops, double bytes, int *known);
/* Seconds for the rows from index next on (share: ranks splitting them); < 0: no estimate yet. */
double eta_estimate(const struct engine_eta *e, const struct perfdb_engine_opts *o, const double *rates,
		    size_t next, size_t share);

struct engine_run_ctx {
	const struct perfdb_engine_opts *o;
	const struct perfdb_engine_hooks *hooks;   /* never NULL: o->hooks or none */
	struct perfdb_engine_result *res;
	struct journal *jr;
	int jfd;
	struct perfdb_engine_pool *pool;
	uint64_t *flushbuf;
	struct perfdb_probe *probe;        /* NULL: rows are not probed */
	size_t flushn, done, total, measured;
	size_t ordinal;                    /* rows seen over every table: the shard of a row */
	const char *jpath;                 /* this rank's journal */
	/*
	 * The best rates this run's measured rows reached: FLOP/s per unit
	 * (vector, matrix) and bytes/s.  A row whose cost at those rates is
	 * over --row-timeout is not started (engine.c row_over_timeout).
	 */
	double rates[3];
	struct engine_eta eta;             /* rows.n == 0: no ETA (no progress callback) */
};

/* One table's rows; crash: why rows missing from the journal failed (ENGINE_PASS_COLLECT). */
typedef int engine_table_fn(struct engine_run_ctx *x, const char *op, const struct perfdb_table *t,
			    enum engine_pass pass, const char *crash, struct perfdb_err *err);
engine_table_fn engine_run_table;

/* ---- case.c ------------------------------------------------------------ */

/* The row a case reads its extra cells from (perfdb_op_case.cell_ctx). */
struct case_cells {
	const struct perfdb_table *t;
	size_t r;
};

/*
 * Row r of table op's t as a case, tensors only (an aten table's row
 * lowered: c->op is then the operator it runs as).  0 or -PERFDB_E* with
 * the reason.
 */
int case_build_row(const char *op, const struct perfdb_table *t, size_t r, struct perfdb_op_case *c,
		   struct perfdb_err *err);

/*
 * Row r of table op's t as a case of impl, ready for check: tensors from
 * the row's cells (case_build_row; the case's op must be impl's), the
 * run's context (threads, ep_size, ranks), in-place outputs.  cc must
 * outlive c (c->cell_ctx points to it).  Fails a row needing more tensor
 * memory than o->row_max_bytes (0: 60 % of physical memory).  Returns 0
 * or -PERFDB_E* with the reason.
 */
int case_from_row(const struct perfdb_engine_opts *o, const char *op, const struct perfdb_op_impl *impl,
		  const struct perfdb_table *t, size_t r, size_t line, struct case_cells *cc,
		  struct perfdb_op_case *c, struct perfdb_err *err);

/* Whether the op's skip hook keeps row r without replay (why filled). */
int case_skipped(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		 const struct perfdb_table *t, size_t r, char *why, size_t whylen);

/* ---- timing.c ---------------------------------------------------------- */

/*
 * Measure a prepared case into row (samples, statistics, CPU/wall, probe):
 * warm-up, samples until the adaptive stop (Decision 2), again while the
 * probe pr (NULL: none) says the row was contended.  flushbuf (flushn
 * words, NULL: no flush) evicts the caches between samples.  Returns 0 or
 * -PERFDB_E* (a timeout, a failed call).
 */
int timing_measure(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		   struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr,
		   struct perfdb_engine_row *row, struct perfdb_err *err);

/*
 * Whether case c's samples are each preceded by the flush: an op whose
 * inputs and outputs together are below ENGINE_FLUSH_BYTES and that does
 * not keep them cold itself (impl->cold_itself: the GEMMs' weight
 * rotation), when the run flushes (o->flush) and the backend does not time
 * the device itself (a device flushes its own caches).  Compute-bound ops
 * too: an int8 GEMM's weight of 7-14 MiB, back to back, read 70-76 GB/s,
 * where a cold one reads about 45 (docs/measuring.md "Working sets between
 * one and two L3s").
 */
int timing_flushes(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		   const struct perfdb_op_case *c);

/* ---- result.c ---------------------------------------------------------- */

/* Append a row (op and table copied; table NULL: op).  NULL when out of memory. */
struct perfdb_engine_row *result_add_row(struct perfdb_engine_result *r, const char *op, const char *table,
					 size_t line);

/* Append the measure writeback takes for row r of t, and note its index in
 * row->measure.  0 or -PERFDB_ENOMEM. */
int result_add_measure(struct perfdb_measures *m, const char *op, const struct perfdb_table *t, size_t r,
		       struct perfdb_engine_row *row);

/* ---- subprocess.c ------------------------------------------------------ */

/*
 * Subprocess mode: the table in a child under a watchdog, then its rows
 * from the journal.  run is what the engine hands over to replay a table:
 * the child runs it with ENGINE_PASS_CHILD, the parent with
 * ENGINE_PASS_COLLECT (so this file never calls back into the engine).
 */
int subprocess_run_table(struct engine_run_ctx *x, const char *op, const struct perfdb_table *t,
			 engine_table_fn *run, struct perfdb_err *err);

/* ---- scaleout.c -------------------------------------------------------- */

/* Whether op's rows are replayed by every rank together. */
int scaleout_table_collective(const struct perfdb_engine_opts *o, const char *op);

/* Whether the row of this ordinal is this rank's (always, outside mpirun). */
int scaleout_row_mine(const struct perfdb_engine_opts *o, size_t ord);

/* The rows this rank replays: collective tables whole, the rest round-robin. */
size_t scaleout_rank_share(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
			   const char *const *names, size_t ntab);

/* A collective row's step: rc, failed on every rank when it failed on one. */
int scaleout_agree(const struct perfdb_engine_opts *o, int rc, struct perfdb_err *err);

/* Before a collective row: whether any rank stops (*interrupted |= a rank's signal). */
int scaleout_agree_stop(const struct perfdb_engine_opts *o, int stop, int sig_stop, int *interrupted);

/* Resume: the journal and every rank's journal of an earlier MPI run.  0 or -PERFDB_E*. */
int scaleout_journal_load_all(const char *journal, struct journal *j);

/* A fresh run: remove the journals of earlier runs a later --resume would find.  0 or -PERFDB_EIO. */
int scaleout_journal_reset(const struct perfdb_engine_opts *o);

/* One result row as a record: op, then fields split by 0x1f, ended by 0x1e. */
void scaleout_pack_row(struct perfdb_strbuf *b, const struct perfdb_engine_row *w);

/*
 * A record's fields after its op (the line first) into w, but its op, table
 * and line; the reason is copied for rows not ok.  0 or -PERFDB_ENOMEM.
 */
int scaleout_unpack_row(const char *f, struct perfdb_engine_row *w);

/*
 * Every rank's rows to rank 0, which rebuilds the run's result in table and
 * line order; rc is this rank's outcome so far.  Returns the run's outcome.
 */
int scaleout_gather_rows(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
			 const char *const *names, size_t ntab, struct perfdb_engine_result *res, int rc,
			 struct perfdb_err *err);

#endif
