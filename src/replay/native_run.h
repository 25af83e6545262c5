/*
 * The native microbench stage (`perfdb microbench --backend cpu|cuda`,
 * docs/spec/replay.md §4, Decisions 2, 3, 7 and 8): which database a
 * backend may write, the engine run, and the run's status and records under
 * <db>/reports/.  Writeback and the report come after it (the CLI's
 * replay_finish), from the run's measurements.
 *
 * A run is three steps, so that the caller can arm its signal handler and
 * draw progress between them: perfdb_native_open (checks, backend, device,
 * database directory), perfdb_native_measure (the engine) and, on rank 0,
 * perfdb_native_record (status, records, the backend's own reports).
 * Nothing here prints.
 */
#ifndef PERFDB_REPLAY_NATIVE_RUN_H
#define PERFDB_REPLAY_NATIVE_RUN_H

#include <stddef.h>

#include "perfdb/dbpath.h"
#include <mpi.h>

#include "perfdb/device.h"
#include "perfdb/preflight.h"
#include "replay/engine.h"

struct perfdb_native_opts {
	const struct perfdb_db_opts *db;       /* the database-location flags, finished */
	struct perfdb_device_registry *reg;    /* the backend may add the device it measures */
	const char *backend;                   /* registry name: "cpu", "cuda" */
	const char *const *ops;                /* normalised --ops, or NULL: every replay op */
	size_t nops;
	int missing_only, prune, fail_fast, force, resume, subprocess;
	int require_quiet;                     /* open refuses a busy machine (the preflight's judgement) */
	long repeat, threads, ep, retries;
	double budget, timeout, op_timeout;    /* seconds */
	const volatile int *stop;              /* set by a signal: the run ends after the current row */
	void (*progress)(void *ud, size_t done, size_t total, size_t failed, double eta_s); /* NULL: none */
	void *ud;
	void *comm;                            /* MPI_Comm * under mpirun with several ranks, else NULL */
	int rank, nranks;
};

struct perfdb_native_run {
	const struct perfdb_native_opts *o;
	const struct perfdb_backend_i *be;
	const char *host;                      /* the device the backend measures */
	const struct perfdb_device *dev;       /* the database's device, or NULL: unknown */
	struct perfdb_strbuf dir;              /* the database directory */
	char rep[4200];                        /* <dir>/reports */
	char journal[4300];                    /* Decision 7: this run's journal of finished rows */
	char **resumed_from;                   /* --resume: the killed runs' journals taken (freed by release) */
	size_t nresumed_from;
	struct perfdb_wb_seen seen;            /* prune: the rows read before measuring */
	int usage;                             /* open failed on a usage error (exit 2) */
	int engine_ran;                        /* measure reached the engine */
	int rep_made;                          /* open created <dir>/reports (and the run wrote nothing yet) */
	struct perfdb_engine_result res;
	char ts[64];                           /* the run's report timestamp */
	struct perfdb_status st;
	char stp[4300];                        /* the status file written */
	char *kpath;                           /* the backend's own report (cuda: per-kernel), or NULL */
	void *bctx;                            /* the backend's context (open in measure), freed by release */
	struct perfdb_preflight pf;            /* how busy the machine was before the run (one process only) */
	int preflight_ran;
	char peaks_file[4300];                 /* record: this CPU's peaks were measured into it ("" = not) */
	struct perfdb_device peaks;            /* and what they are (mma_flops, memory_bandwidth) */
};

/*
 * oneDNN reads its thread count when it loads, so a CPU run may re-exec the
 * process with OMP_NUM_THREADS = threads (see native_run.c); call before
 * MPI_Init.  Returns only when no re-exec happened or it failed.
 */
void perfdb_native_set_threads_env(const char *backend, long threads);

/*
 * The run's MPI world (native_world.c).  Launched by mpirun, every rank
 * replays its shard of the rows (collective ops: every row together) and
 * rank 0 writes the tables; without a launcher there is no MPI at all.
 * open sets oneDNN's thread count first (it may re-exec the process, so
 * before MPI_Init), then, under a launcher, starts MPI, fills o->comm,
 * o->rank and o->nranks, and makes the ranks agree on one thread count.
 * On failure o->rank says whether this rank should speak (0).  close ends
 * MPI when open started it, failed or not.
 */
struct perfdb_native_world {
	int started;
	MPI_Comm comm;
};
int perfdb_native_world_open(struct perfdb_native_opts *o, struct perfdb_native_world *w,
			     struct perfdb_err *err);
void perfdb_native_world_close(struct perfdb_native_world *w);

/*
 * What the run says before writeback, appended to out, one tagged line each
 * ([FAILED], [CONTENDED], [NOT REPLAYED], [NO TABLE],
 * [NOTHING MEASURED], [PEAKS], [RESUME], [INTERRUPTED], [STOP]): 0, or
 * -PERFDB_ENOMEM when some of it could not be kept.  Rank 0, after record.
 */
int perfdb_native_notes(const struct perfdb_native_run *run, struct perfdb_strbuf *out);

/*
 * Check the options, get the backend, detect its device, find the
 * database directory and apply Decision 8 (only a database of the
 * backend's device kind, unless force), prepare <dir>/reports.  run is
 * initialised even on failure (release it).  Returns 0 or -PERFDB_E*
 * with err filled; run->usage tells a usage error.
 */
int perfdb_native_open(const struct perfdb_native_opts *o, struct perfdb_native_run *run,
		       struct perfdb_err *err);

/*
 * One thread count per database (native_threads.c): -PERFDB_EINVAL naming
 * the run when an earlier run's record under <dbdir>/reports/ measured rows
 * with a --threads other than threads; 0 otherwise.  Called by open.
 */
int perfdb_native_check_threads(const char *dbdir, long threads, struct perfdb_err *err);

/*
 * Take the rows seen (prune, rank 0) and run the engine.  Returns 0 or
 * -PERFDB_E*; run->engine_ran tells whether the error is the engine's.
 */
int perfdb_native_measure(struct perfdb_native_run *run, struct perfdb_err *err);

/*
 * Rank 0 after measuring: the status file (first: it survives a failing
 * writeback), the environment record and per-row records, the backend's
 * own reports.  Returns 0 or -PERFDB_E* (err filled, except on ENOMEM
 * while building the status).
 */
int perfdb_native_record(struct perfdb_native_run *run, struct perfdb_err *err);

/*
 * The run went through: its journal and the killed runs' journals it
 * resumed from are removed (nothing left to resume).
 */
void perfdb_native_journals_done(const struct perfdb_native_run *run);

void perfdb_native_run_release(struct perfdb_native_run *run);

/*
 * The end of a native run's bandwidth judgement (native_contended.c,
 * docs/reliability.md 13).  A row whose probe still read more than 20 %
 * low after its retries was measured while the host's memory was slow,
 * which no scheduler account shows: it becomes contended, not written, as
 * the torch backend's do.  Its reference: this machine's quiet figure
 * (r->probe_quiet_gbs), else the median reading of the run's measured
 * rows, taken once every row is in so that the first rows are held to the
 * same figure as the last; under mpirun each rank's rows to that rank's
 * own median, since the ranks may be different hosts.
 *
 * Before refusing, in a one-process run held to its own median (no quiet
 * figure, no mpirun, not stopped, contention retries allowed), the rows
 * read low against that median that were never measured again (retries 0:
 * the run had no reference for them yet) are replayed again with eo, held
 * to the median, up to the same retries; a row keeps the measurement with
 * the most bandwidth.  r->nagain: the rows measured again; r->nagain_written:
 * of them, those now written.  perfdb_native_measure calls it.  Returns 0 or
 * -PERFDB_E* (err filled).
 */
int perfdb_native_judge_bandwidth(const struct perfdb_engine_opts *eo, struct perfdb_engine_result *r,
				  struct perfdb_err *err);

/* The median probe reading of the run's measured rows, of rank's (-1: all); 0: none. */
double perfdb_native_rows_median(const struct perfdb_engine_result *r, int rank);

/* Status (run_all_op_status.json form): ops all ok, per-row failures, ops skipped.
 * Returns 0 or -PERFDB_ENOMEM; st is filled either way (release it). */
int perfdb_native_status_build(const struct perfdb_engine_result *r, struct perfdb_status *st);

/*
 * Why the skipped rows were skipped, for a run that measured nothing:
 * "225 rows: has a valid duration; 3 rows: ..." (the first four reasons,
 * the rest counted together) appended to out.
 */
int perfdb_native_skip_reasons(const struct perfdb_engine_result *r, struct perfdb_strbuf *out);

/*
 * The environment record (env, then the device and counts) and the per-row
 * records <dbdir>/reports/microbench_{env,rows}_<ts>.{txt,csv}.  probe_off:
 * the bandwidth probe was turned off (PERFDB_PROBE=0).
 */
int perfdb_native_write_records(const char *dbdir, const char *ts, const char *device,
				const char *env, const struct perfdb_engine_result *r, int probe_off,
				struct perfdb_err *err);

/* The per-row records CSV text (microbench_rows_<ts>.csv) appended to out. */
int perfdb_native_records_csv(const struct perfdb_engine_result *r, struct perfdb_strbuf *out);

#endif
