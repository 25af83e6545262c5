/*
 * The replay engine (docs/spec/replay.md §4 "Parsing", "Building a tensor",
 * Decisions 2, 3, 6; docs/style.md rule 8): database rows -> tensors -> timed
 * runs on a native backend -> measurements for writeback.
 *
 * The engine owns the method: tensors are built from the row's shape,
 * dtype and format cells; buffers are 64-byte aligned, pre-faulted when
 * they grow and reused from row to row; inputs get deterministic random
 * data; the op is warmed up, then timed sample by sample (caches flushed
 * between samples for memory-bound ops whose working set fits the last-level
 * cache) until at least `repeat` samples and a relative std <= rsd, or the
 * per-row budget is spent; the per-row timeout fails a row that could not
 * collect `repeat` samples in time.  Per row it records the process's CPU
 * time / wall time over the timed loop, so a measurement taken while the
 * machine was contended can be recognised.  Nothing here prints.
 */
#ifndef PERFDB_REPLAY_ENGINE_H
#define PERFDB_REPLAY_ENGINE_H

#include <stdint.h>

#include "backend/backend.h"
#include "replay/replay.h"

/*
 * Test hooks: what the tests make a run do that a real run never does
 * (set by the CLI from PERFDB_TEST_* variables).  Zero fields are off.
 */
struct perfdb_engine_hooks {
	size_t exit_after;                /* _exit(75) after this many measured rows, like a killed run */
	const char *crash_op;             /* SIGSEGV in the child of this table (subprocess mode) */
	/* The probe's readings, in order (the last repeats); NULL: measured. */
	const double *probe_script;
	size_t probe_script_n;
	/* Where the script stands (NULL: at its start): the run's probe starts
	 * there and leaves it where it stopped, so that the native replay's
	 * second pass (native_contended.c) goes on with the next reading. */
	size_t *probe_script_pos;
};

struct perfdb_engine_opts {
	const char *dbdir;
	const struct perfdb_backend_i *backend;
	void *backend_ctx;                /* backend->open's context, given to every case (the caller frees it) */
	const char *const *ops;           /* normalised --ops, or NULL: every replay op */
	size_t nops;
	int missing_only;                 /* replay only rows without a valid duration (Decision 6) */
	int fail_fast;                    /* stop at the first failed row */
	size_t repeat;                    /* minimum timed samples (>= 1) */
	double rsd;                       /* adaptive stop: relative std (0.01) */
	double budget_s;                  /* per-row time budget for sampling */
	double timeout_s;                 /* per-row timeout */
	int threads;
	uint64_t seed;
	int flush;                        /* flush caches between samples of memory-bound ops */
	/* Optional: the run stops before the next row once *stop is non-zero (a signal). */
	const volatile int *stop;
	/*
	 * Journal (Decision 7): when set, every finished row (ok or failed) is
	 * appended to this file as one JSON line (op, table, line, signature,
	 * status, samples, mean, median, min, std, cpu_ratio, probe_gbs,
	 * retries, reason) and
	 * fsync'd before the next row starts.  Without resume the file is
	 * truncated first; with resume, rows whose (table, signature) has an
	 * ok line are not measured again: the journaled measurement is used.
	 */
	const char *journal;
	int resume;
	/*
	 * With resume: the journals of earlier, killed runs to take rows from
	 * too (each with its rank files); native_run.c finds them, one journal
	 * per run, so that concurrent runs never share one (issue 49).
	 */
	const char *const *resume_from;
	size_t nresume_from;
	/*
	 * Subprocess mode (Decision 7): each table is replayed in a forked
	 * child that journals its rows; the parent waits at most op_timeout_s
	 * (0: timeout_s x rows + 30 s), kills a child that runs longer, and
	 * collects the rows from the journal.  A child killed by a signal or
	 * the watchdog fails its table's unjournaled rows; the run goes on.
	 * Needs journal.
	 */
	int subprocess;
	double op_timeout_s;
	/* Tensor memory one row may take (0: 60 % of physical memory). */
	size_t row_max_bytes;
	/* --dispatch-ffn-combine-ep-size, given to the ops (perfdb_op_case.ep_size). */
	int ep_size;
	/*
	 * Contention (probe.h, docs/replay.md): probe memory bandwidth before
	 * and after each row's timed loop (host-timed backends, rows of
	 * ordinary ops) and measure a row whose probe fell more than 20 %
	 * below the median of the rows before it up to contention_retries
	 * more times, keeping the measurement with the most bandwidth.
	 * no_probe: neither.
	 */
	int contention_retries;
	int no_probe;
	/* This machine's quiet row figure (perfdb/preflight.h), the probe's
	 * reference instead of the run's own median when > 0. */
	double probe_quiet_gbs;
	/*
	 * The scheduler's accounts (perfdb/sched.h, docs/replay.md
	 * "Contention"): host-timed rows are sampled in blocks of about
	 * ENGINE_BLOCK_S; a block during which the threads waited for a CPU
	 * (or the VM lost time to steal) is discarded and measured again
	 * within the row's budget.  A row left without `repeat` clean samples
	 * is PERFDB_ENGINE_CONTENDED: not written.  no_sched: no judging
	 * (PERFDB_SCHED=0; make valgrind, whose serialised threads always wait).
	 */
	int no_sched;
	/*
	 * Scale-out (issue 5): under mpirun, comm points to the run's MPI_Comm,
	 * rank/nranks place this process.  Rows of ordinary ops are sharded
	 * round-robin over the rows of every selected table (one device per
	 * rank); rows of collective ops are replayed by every rank together.
	 * Each rank journals to `<journal>.rank<R>`; resume reads the journal
	 * and every rank file.  At the end the rows are gathered on rank 0,
	 * whose result holds the whole run (other ranks' results hold nothing);
	 * every rank must call perfdb_engine_run.  NULL comm: one process.
	 */
	void *comm;
	int rank, nranks;
	/*
	 * Optional: replay only the rows only(only_ud, op, line) keeps (line:
	 * the CSV line, header = 1); the others are not in the result.  The
	 * native replay's second pass (native_contended.c) measures again the
	 * rows read low against a reference they were never held to.
	 */
	int (*only)(void *ud, const char *op, size_t line);
	void *only_ud;
	/* Optional: called after each row (counts of this rank's rows). */
	void (*progress)(void *ud, size_t done, size_t total, size_t failed, double eta_s);
	void *ud;
	const struct perfdb_engine_hooks *hooks;   /* NULL: no hooks */
};

enum perfdb_engine_status {
	PERFDB_ENGINE_OK = 0,
	PERFDB_ENGINE_FAILED,
	PERFDB_ENGINE_SKIPPED,            /* kept: valid in missing-only mode, or op unsupported */
	PERFDB_ENGINE_CONTENDED,          /* too few clean samples: not written, retried by missing-only */
};

/* "ok", "failed", "skipped", "contended". */
const char *perfdb_engine_status_name(enum perfdb_engine_status st);

struct perfdb_engine_row {
	char *op;                          /* table stem */
	char *table;                       /* the table's path */
	size_t line;                       /* CSV line (header = 1) */
	enum perfdb_engine_status status;
	char *reason;                      /* failed/skipped: why */
	size_t samples;
	double mean, median, min, std;     /* us */
	double cpu_ratio;                  /* process CPU time / wall time over the timed loop */
	double probe_gbs;                  /* memory bandwidth around the kept measurement (0: not probed) */
	int retries;                       /* measurements repeated because of contention */
	size_t discarded;                  /* samples dropped with their contaminated block */
	size_t outliers;                   /* clean samples above the far fence (perfdb_stats_robust) */
	size_t blocks, blocks_bad;         /* timed blocks judged, and of them contaminated */
	double worst_wait;                 /* the worst bad block's run-queue wait / its wall time */
	unsigned worst_others;             /* the most other processes' tasks seen running (only in the reason) */
	int free_cpus;                     /* the CPUs the row's --threads left them (only in the reason) */
	int resumed;                       /* taken from the journal (--resume), not measured */
	int low_bandwidth;                 /* contended: its probe read low against the run's reference */
	size_t measure;                    /* 1 + its index in the result's measures (0: none) */
	int rank;                          /* the MPI rank that replayed it (0 outside mpirun) */
	int threads;                       /* --threads it was measured with */
	char kernel[64];                   /* Kernel Used: the case's kernel, "own" when it named none */
};

struct perfdb_engine_result {
	struct perfdb_engine_row *rows;
	size_t nrows, cap;
	struct perfdb_measures measures;   /* one per successful row, for perfdb_writeback */
	size_t nok, nfailed, nskipped, ncontended;
	size_t nresumed;                   /* ok rows taken from the journal (resume) */
	/* rows read low at the end of the run, measured again then, and of them
	 * those now ok (perfdb_native_judge_bandwidth; docs/replay.md "Contention") */
	size_t nagain, nagain_written;
	double probe_quiet_gbs;            /* the opts' quiet figure the rows were judged against (0: none) */
	int stopped;                       /* --fail-fast or *stop ended the run early */
	int interrupted;                   /* *stop ended it */
	char *absent;                      /* --ops named without a table under the database, ", "-joined (NULL: none) */
};

void perfdb_engine_result_release(struct perfdb_engine_result *r);

/*
 * Row i, measured ok, is contended after all: it is not written (its
 * measure goes) and keeps reason ("contended: ..."), with low_bandwidth
 * set.  Returns 0 or -PERFDB_ENOMEM (the row is then left as it was).
 */
int perfdb_engine_result_refuse(struct perfdb_engine_result *r, size_t i, const char *reason);

/*
 * Replay every selected table <dbdir>/<Op>.csv.  A row that fails (bad
 * shapes, unsupported dtype, timeout) is recorded and the run goes on
 * (Decision 3) unless fail_fast.  Returns 0, or -PERFDB_E* when a table
 * cannot be read (err filled).
 */
int perfdb_engine_run(const struct perfdb_engine_opts *o, struct perfdb_engine_result *res,
		      struct perfdb_err *err);

/* Remove a run's journal and every rank's journal of it (the run went through). */
void perfdb_engine_journal_remove(const char *journal);

/* perfdb_case_build (ops/opdef.h), under the engine's name its callers use. */
int perfdb_engine_build_case(const char *op, const char *in_shapes, const char *in_dtypes,
			     const char *in_formats, const char *out_shapes, const char *out_dtypes,
			     const char *out_formats, struct perfdb_op_case *c, struct perfdb_err *err);

/* The tensor bytes a case takes: present inputs and the outputs not in place. */
size_t perfdb_engine_case_bytes(const struct perfdb_op_case *c);

/*
 * Allocate (page-aligned, pre-faulted: hugebuf.c) and fill the case's
 * buffers with deterministic random data from seed: floats uniform in
 * [-1, 1), ints in [0, 8), bools in {0, 1}.  Buffers are taken from pool,
 * which keeps them for the next case.  Returns 0 or -PERFDB_ENOMEM.
 */
struct perfdb_engine_pool {
	void *buf[2 * PERFDB_OP_MAX_TENSORS];
	size_t cap[2 * PERFDB_OP_MAX_TENSORS];
};
/*
 * Fill t->data (t->numel elements of t->dtype) from seed, as
 * perfdb_engine_alloc_case fills input slots: element i is splitmix64's
 * (i+1)-th output from state seed, shaped per dtype (docs/replay.md
 * "Buffers").  Large tensors are filled on the OpenMP threads.
 */
void perfdb_engine_fill(struct perfdb_tensor *t, uint64_t seed);

int perfdb_engine_alloc_case(struct perfdb_engine_pool *pool, struct perfdb_op_case *c, uint64_t seed,
			     struct perfdb_err *err);
void perfdb_engine_pool_release(struct perfdb_engine_pool *pool);

struct perfdb_device;
/*
 * This CPU's peaks as the backend's kernels reach them at o's threads
 * (peaks.c): mma_flops fp32/bf16/fp16 from a 2048^3 MatMulV2 (0 where the
 * backend refuses the dtype), vector_flops = the fp32 GEMM's, and
 * memory_bandwidth from a 384 MiB Add, into dev.  o: the run's options
 * (backend, its context, threads).  -PERFDB_EIO when fp32 GEMM or Add
 * cannot be timed.
 */
int perfdb_engine_cpu_peaks(const struct perfdb_engine_opts *o, struct perfdb_device *dev,
			    struct perfdb_err *err);

#endif
