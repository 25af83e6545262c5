/*
 * The comm stage (docs/spec/comm.md and its Decisions): collective
 * microbenchmarks over MPI (`perfdb comm`), the sweeps of run_comm_bench.sh
 * (`perfdb comm-suite`) and the alpha-beta check of the tables
 * (`perfdb validate`).
 *
 * This header is MPI-free: everything pure (collective and dtype tables,
 * topology tiers, the run plan, CSV rows, overhead tables, predictions,
 * suite command lines) is testable without a launcher, and the MPI run
 * itself is behind perfdb_comm_run().  The collectives' tables (struct
 * perfdb_coll, the op and dtype enums) live in the operator layer, src/ops/coll.h; the MPI pieces (the transports, the
 * harness) in src/backend/transport.h and src/comm/harness.h.
 *
 * The table written per collective (Decision 3), in this column order:
 *   message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps,
 *   busbw_gbps,Min Duration(us),Max Duration(us),Std Duration(us),Samples,Backend
 * Floats are Python's repr(round(x, 2)) (perfdb_stats_format_round2).
 */
#ifndef PERFDB_COMM_H
#define PERFDB_COMM_H

#include "perfdb/preflight.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/cpu_isa.h"
#include "perfdb/device.h"
#include "perfdb/err.h"
#include "perfdb/half.h"
#include "perfdb/stats.h"
#include "perfdb/strbuf.h"

#include "ops/coll.h"

/*
 * The 16-bit reductions behind the MPI transport's bf16/fp16 MPI_Ops
 * (half.c is the scalar reference; reduce16*.c the vectorised paths).
 * Per element: both operands widened to float, combined in float, rounded
 * once back to 16 bits as include/perfdb/half.h does (nearest, ties to
 * even; a NaN comes out a quiet NaN).
 *   sum: inout[i] = in[i] + inout[i]
 *   max: inout[i] = in[i] if in[i] is NaN or in[i] > inout[i], else inout[i]
 *        (a NaN wins; between +0 and -0 inout's is kept)
 * Every path gives the same bits, except that when both operands of a sum
 * are NaN the result may carry either one's payload.
 */
void perfdb_bf16_sum(const uint16_t *in, uint16_t *inout, size_t n);
void perfdb_fp16_sum(const uint16_t *in, uint16_t *inout, size_t n);
void perfdb_bf16_max(const uint16_t *in, uint16_t *inout, size_t n);
void perfdb_fp16_max(const uint16_t *in, uint16_t *inout, size_t n);

enum perfdb_half_op { PERFDB_HALF_SUM, PERFDB_HALF_MAX, PERFDB_HALF_NOPS };
typedef void perfdb_half_fn(const uint16_t *in, uint16_t *inout, size_t n);

/*
 * The kernel of (d, op) written for ISA level isa (the best one built at or
 * below it; sse2 is the scalar reference).  d is PERFDB_COMM_BF16 or
 * PERFDB_COMM_FP16 (NULL otherwise).  The caller picks isa once, normally
 * perfdb_cpu_isa(): a level above what the CPU has faults when run.
 */
perfdb_half_fn *perfdb_half_kernel(enum perfdb_comm_dtype d, enum perfdb_half_op op,
				   enum perfdb_cpu_isa isa);

/* ---- topology (docs/spec/comm.md §2) --------------------------------------- */

#define PERFDB_COMM_MAX_DIMS 8

/* A comm grid, outer -> inner (`48 8 2` = pods x nodes x dies). */
struct perfdb_comm_grid {
	long dim[PERFDB_COMM_MAX_DIMS];  /* each > 0 */
	size_t ndim;                     /* 1..PERFDB_COMM_MAX_DIMS */
};

/* Mixed-radix coordinates of rank (innermost first); ranks past the grid wrap. */
void perfdb_comm_rank_coords(const struct perfdb_comm_grid *g, long rank, long *coords);

/*
 * Tier of a group: index of the outermost dimension where the ranks'
 * coordinates differ; all identical (or n <= 1) -> ndim-1.
 */
long perfdb_comm_tier_of(const struct perfdb_comm_grid *g, const long *ranks, size_t n);
/* The same for the group [0..n-1]. */
long perfdb_comm_tier_of_first(const struct perfdb_comm_grid *g, long n);

/* prod(dim[tier:]), 1 when tier >= ndim.  tier must be >= 0. */
long perfdb_comm_span(const struct perfdb_comm_grid *g, long tier);

/*
 * The group of n ranks at tier anchored at rank anchor (spec §2): the
 * anchor's coordinates outside the tier's span are kept, the span is
 * enumerated from 0.  out receives n ranks.  n > span is -PERFDB_EINVAL
 * with the reference's text "num_devices=N exceeds span size S for tier=T,
 * grid_shape=[48, 8, 2]".
 */
int perfdb_comm_build_group(const struct perfdb_comm_grid *g, long anchor, long n,
			    long tier, long *out, struct perfdb_err *err);

/* "[48, 8, 2]" (Python's list repr). */
void perfdb_comm_grid_repr(const struct perfdb_comm_grid *g, char *buf, size_t cap);

/* ---- the run plan (spec §2 "Configs") --------------------------------- */

/* One (op, group size, tier): every size of the bytes grid is measured. */
struct perfdb_comm_batch {
	enum perfdb_comm_op op;
	long num_devices;
	long tier;
};

struct perfdb_comm_plan {
	struct perfdb_comm_batch *v;
	size_t n, cap;
};

void perfdb_comm_plan_init(struct perfdb_comm_plan *p);
void perfdb_comm_plan_release(struct perfdb_comm_plan *p);

typedef void (*perfdb_comm_warn_fn)(void *ctx, const char *msg);

/*
 * Loop op -> num_devices -> tier (spec §2).  tiers == NULL: the tier of
 * [0..n-1]; otherwise each given tier, written as given.  A group that does
 * not fit its tier's span is skipped with the reference's warning
 * "skipping tier=T, num_devices=N: num_devices=N exceeds span size S for
 * tier=T, grid_shape=[…]" passed to warn.
 */
int perfdb_comm_plan_build(struct perfdb_comm_plan *p, const enum perfdb_comm_op *ops,
			   size_t nops, const long *nd, size_t nnd, const long *tiers,
			   size_t ntiers, const struct perfdb_comm_grid *g,
			   perfdb_comm_warn_fn warn, void *ctx, struct perfdb_err *err);

/* ---- overhead tables (Decision 4) ------------------------------------- */

/*
 * An optional CSV of measured dispatch overheads, columns
 * `op,num_devices,overhead_us` (op as --ops spells it).  Keyed by (op, n)
 * as the reference's table; a missing key adds nothing.
 */
struct perfdb_comm_overhead_entry {
	enum perfdb_comm_op op;
	long num_devices;
	double us;
};

struct perfdb_comm_overhead {
	struct perfdb_comm_overhead_entry *v;
	size_t n;
	char *path;
};

void perfdb_comm_overhead_init(struct perfdb_comm_overhead *o);
void perfdb_comm_overhead_release(struct perfdb_comm_overhead *o);
int perfdb_comm_overhead_load(struct perfdb_comm_overhead *o, const char *path,
			      struct perfdb_err *err);
/* Overhead in µs for (op, n); 0 when absent (o may be NULL). */
double perfdb_comm_overhead_lookup(const struct perfdb_comm_overhead *o,
				   enum perfdb_comm_op op, long n);

/* ---- results and rows (Decision 3) ------------------------------------ */

#define PERFDB_COMM_NCOLS 12
extern const char *const perfdb_comm_columns[PERFDB_COMM_NCOLS];
/* The reference's six columns come first. */
#define PERFDB_COMM_NREF_COLS 6

/* One measured case: (op, group, tier, size) and its samples' statistics. */
struct perfdb_comm_case {
	enum perfdb_comm_op op;
	long num_devices;
	long tier;
	long long message_bytes;
	enum perfdb_comm_dtype dtype;
	double bus_bytes;            /* perfdb_comm_bus_bytes */
	struct perfdb_stats st;      /* µs; one sample = one iteration's max over ranks */
	size_t warmup;               /* warm-up iterations run */
	double overhead_us;          /* from --overhead-table, added to the row */
	/* correctness check (one untimed run, Decision 2) */
	int check;                   /* 1 ok, 0 not run, -1 failed */
	unsigned long long bad_elems;/* wrong elements, all ranks */
	int bad_rank;                /* lowest rank with a wrong element, -1 */
	/* environment during the case */
	double other_cpu;            /* CPU time of other processes / wall time (max over hosts) */
	bool contended;              /* other_cpu at or above the threshold (--contention) */
	/* the scheduler's judgement of the timed rounds (harness.h step 4) */
	size_t rounds, rounds_bad;   /* timed rounds run; of them, dropped (a rank was contended) */
	bool judged;                 /* the rounds were judged */
	bool unclean;                /* judged, too few clean rounds: not written */
	int attempts;                /* measurements made (1 + repeats) */
	bool nonmonotonic;           /* slower than a larger size of the same batch */
	long long mono_bytes;        /* that larger size */
	double mono_us;              /* and its Duration(us) */
	bool written;                /* row appended to a table */
};

/* The numbers of one row. */
struct perfdb_comm_row {
	double duration_us, bandwidth_gbps, busbw_gbps;
	double min_us, max_us, std_us;
	size_t samples;
};

/*
 * Row values of a case.  Without overhead: Duration = round(median, 2),
 * bandwidth_gbps = message_bytes / median / 1e3 from the unrounded median.
 * With overhead h: Duration = round(round(median, 2) + h, 2) and both
 * bandwidths from that Duration (the reference's rule); Min/Max move by h.
 * busbw_gbps = bus_bytes / Duration / 1e3 * factor.  Duration <= 0 gives
 * bandwidths 0.
 */
void perfdb_comm_row_compute(const struct perfdb_comm_case *c, struct perfdb_comm_row *r);

/* The 12 cells of a case's row, NUL-terminated, in perfdb_comm_columns order. */
#define PERFDB_COMM_CELL_MAX 48
void perfdb_comm_row_cells(const struct perfdb_comm_case *c, const char *backend,
			   char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX]);

/* Python's round(x, 2) (correctly rounded, via the decimal string). */
double perfdb_comm_round2(double x);

/*
 * Check a table before a run: a missing or empty file is fine; an existing
 * one must load and have the six reference columns.
 */
int perfdb_comm_table_check(const char *path, struct perfdb_err *err);

/*
 * Append one row to the table at path under the lock of lockdir: load it if
 * it exists (header only when new), add the columns it lacks at the end,
 * append, save atomically.
 */
int perfdb_comm_table_append(const char *path, const char *lockdir,
			     char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX],
			     struct perfdb_err *err);

/*
 * Flag the cases of one batch (same op, group, tier) that took longer than
 * a larger size by more than tolerance (0.10 = 10 %): c[i].nonmonotonic,
 * mono_bytes, mono_us.  Returns how many were flagged.
 */
size_t perfdb_comm_flag_nonmonotonic(struct perfdb_comm_case *c, size_t n, double tolerance);

/* ---- running (src/comm/comm_run.c; needs MPI) ------------------------------ */

struct perfdb_comm_transport;   /* src/backend/transport.h */
struct perfdb_comm_transport_i;

struct perfdb_comm_opts {
	const enum perfdb_comm_op *ops;
	size_t nops;
	const long *num_devices;
	size_t nnum_devices;
	const long *tiers;           /* NULL: auto */
	size_t ntiers;
	struct perfdb_comm_grid grid;
	enum perfdb_comm_dtype dtype;
	const long long *bytes;
	size_t nbytes;
	const char *output_csv;      /* all rows here (one op), or NULL */
	const char *database_path;   /* else <dir>/<prefix>.csv, or NULL: print only */
	const struct perfdb_comm_overhead *overhead;  /* may be NULL */
	long warmup;                 /* warm-up iterations (default 20) */
	long iters;                  /* timed iterations (default 100) */
	long min_iters;              /* at least this many under the budget (default 10) */
	double time_budget;          /* seconds per case for warm-up + timing (default 2) */
	long repeats;                /* re-measurements of a contended case (default 2) */
	bool require_quiet;          /* refuse to start when rank 0's preflight finds its host busy */
	double contention;           /* other_cpu threshold, in CPUs (default 0.25) */
	double mono_tolerance;       /* non-monotonic tolerance (default 0.10) */
	bool malloc_tune;            /* fix glibc's mmap/trim thresholds before MPI starts */
	bool nccl;                   /* --backend nccl: NCCL on device buffers */
	/* what runs the calls, opened by the caller: MPI's, or with nccl the
	 * cuda module's (src/backend/transport.h) */
	const struct perfdb_comm_transport *transport;
	const char *command_line;    /* recorded in the report */
};

void perfdb_comm_opts_defaults(struct perfdb_comm_opts *o);

/* The environment record of a run (rank 0's view; hosts from all ranks). */
struct perfdb_comm_context {
	char time_utc[32];           /* 2024-01-02T03:04:05Z */
	char perfdb_version[64];
	char mpi_library[256];       /* first line of MPI_Get_library_version */
	char mpi_standard[16];       /* "3.1" */
	char glibc[32];
	char cpu_model[128];
	int world_size;
	int nhosts;
	char hosts[512];             /* "host-a:8 host-b:8" (ranks per host) */
	char malloc_settings[512];   /* allocator settings in effect */
	char mca_env[512];           /* OMPI_MCA_* variables, space-separated */
	char shm_copy[128];          /* shared-memory single copy: "cma (btl_vader_single_copy_mechanism)" */
	bool shm_copy_pending;       /* two ranks share a host: shm_copy is read after the last case */
	char affinity[128];          /* CPUs of rank 0's host used by our ranks */
	double loadavg1;
	bool contention_known;       /* /proc/stat readable */
};

struct perfdb_comm_skip {
	enum perfdb_comm_op op;
	long num_devices;
	long tier;
	long long message_bytes;     /* -1: the whole batch */
	char reason[256];
};

struct perfdb_comm_report {
	struct perfdb_comm_context ctx;
	struct perfdb_comm_case *cases;
	size_t ncases, capcases;
	struct perfdb_comm_skip *skips;
	size_t nskips, capskips;
	size_t written, unclean, contended, nonmonotonic, check_failed;
	/* rank 0's preflight of its host (perfdb/preflight.h), before the first case */
	struct perfdb_preflight pf;
	bool preflight_ran;
	double seconds;
	char report_path[4096];      /* reports/comm_*.json written, or "" */
	const char *output;          /* where rows went: file, directory or "(no output)" */
	/* the transport that ran the calls (its name and clock are the
	 * report's backend and method; static, outliving the run), or NULL: MPI's */
	const struct perfdb_comm_transport_i *transport;
};

void perfdb_comm_report_init(struct perfdb_comm_report *r);
void perfdb_comm_report_release(struct perfdb_comm_report *r);

/* The report (context, options, cases, skips, totals) as a JSON object. */
int perfdb_comm_report_json(const struct perfdb_comm_report *r,
			    const struct perfdb_comm_opts *o, struct perfdb_strbuf *out);

/*
 * The run for people (run_text.c), appended to out: the header (after
 * the transport is open), one table line per case, and the closing lines:
 * the table's end on out unless json, the summary (unless quiet) and the
 * errors on err.  outcome returns the run's exit status (0 or 1; a failed
 * check, a size that could not be allocated, or nothing measured because
 * every group was larger than the world of world ranks: skipped_world
 * counts those warnings) or -PERFDB_ENOMEM.
 */
int perfdb_comm_header_text(const struct perfdb_comm_report *r, const struct perfdb_comm_opts *o,
			    struct perfdb_strbuf *out);
int perfdb_comm_case_text(const struct perfdb_comm_case *c, const struct perfdb_comm_opts *o,
			  struct perfdb_strbuf *out);
int perfdb_comm_outcome_text(const struct perfdb_comm_report *rep, size_t skipped_world, int world,
			     bool json, bool quiet, struct perfdb_strbuf *out, struct perfdb_strbuf *err);

/* Called on world rank 0 only; any may be NULL. */
struct perfdb_comm_events {
	void (*warn)(void *ctx, const char *msg);
	void (*begin)(void *ctx, const struct perfdb_comm_report *r, size_t ncases);
	void (*batch)(void *ctx, const struct perfdb_comm_batch *b, size_t index, size_t nbatches);
	void (*case_start)(void *ctx, const struct perfdb_comm_case *c, size_t index, size_t ncases);
	void (*case_done)(void *ctx, const struct perfdb_comm_case *c);
	void *ctx;
};


/*
 * Run the plan on every rank of the world (collective).  Rank 0 writes the
 * rows (the group leader of [0..n-1]), the report file and calls ev.  On
 * return every rank has the same return code, except when *fatal is set:
 * then an MPI call failed on this rank and the caller must abort the world.
 * A case whose check fails, that cannot be allocated, or whose group is
 * larger than the world is reported (skips, check_failed) and the run goes
 * on.
 */
int perfdb_comm_run(const struct perfdb_comm_opts *o, const struct perfdb_comm_events *ev,
		    struct perfdb_comm_report *out, bool *fatal, struct perfdb_err *err);

/* ---- validate (docs/spec/comm.md §5, Decision 6) --------------------------- */

enum perfdb_comm_status { PERFDB_COMM_PASS, PERFDB_COMM_WARN, PERFDB_COMM_FAIL };

const char *perfdb_comm_status_name(enum perfdb_comm_status s);

/*
 * Alpha-beta prediction in µs for message_bytes m on n ranks over link t
 * (bw = bandwidth * efficiency, L = latency):
 *   all_reduce     min(2(n-1)L + 2(n-1)m/n/bw, 2 log2(n) L + 2m/bw)
 *   all_gather     min((n-1)L, log2(n) L) + (n-1)m/bw
 *   reduce_scatter min((n-1)L, log2(n) L) + (n-1)m/bw   (m = per-rank output)
 *   all_to_all     min((n-1)L, log2(n) L) + m/bw
 * n <= 1 -> 0.
 */
double perfdb_comm_predict_us(enum perfdb_comm_op op, double m, long n,
			      const struct perfdb_comm_tier *t);

/* PASS if 1/tol <= r <= tol, WARN if 1/(2 tol) <= r <= 2 tol, else FAIL. */
enum perfdb_comm_status perfdb_comm_status_of(double ratio, double tolerance);

struct perfdb_comm_vrow {
	long long message_bytes;
	long num_devices;
	long tier;
	double measured_us, predicted_us, ratio;
	enum perfdb_comm_status status;
	size_t line;
};

struct perfdb_comm_vreport {
	bool present;                /* the file exists */
	char path[4096];
	struct perfdb_comm_vrow *rows;
	size_t nrows, caprows;
	size_t count[3];             /* PASS, WARN, FAIL */
	size_t skipped_rows;         /* rows with a tier the device lacks */
	double mean, min, max;       /* ratios (NaN without rows) */
};

struct perfdb_comm_validation {
	struct perfdb_comm_vreport op[PERFDB_COMM_NOPS];
	double tolerance;
	const struct perfdb_device *device;
	size_t total[3], rows;
	bool ok;                     /* no FAIL */
};

void perfdb_comm_validation_init(struct perfdb_comm_validation *v);
void perfdb_comm_validation_release(struct perfdb_comm_validation *v);

/*
 * Validate the four tables of dir against device's tiers.  A missing file
 * is not an error (present = false).  Rows whose message_bytes,
 * num_devices or topology_tier (1 when the column is absent) is not an
 * integer, or whose latency (`Average Duration(us)` when that column
 * exists, else `Duration(us)`) is not a number, are dropped silently; a
 * tier the device does not have is passed to warn and the row skipped.
 */
int perfdb_comm_validate_dir(const char *dir, const struct perfdb_device *device,
			     double tolerance, struct perfdb_comm_validation *v,
			     perfdb_comm_warn_fn warn, void *ctx, struct perfdb_err *err);

/* The validation as JSON (validate_json.c), a newline after it. */
int perfdb_comm_validation_json(const struct perfdb_comm_validation *v, const char *dir,
				struct perfdb_strbuf *out);

/* Python int() of a cell: trimmed, optional sign, digits with single '_'. */
int perfdb_comm_parse_pyint(const char *s, long long *out);

/* ---- comm-suite (docs/spec/comm.md §4, Decision 5) ------------------------- */

struct perfdb_comm_suite_opts {
	const char *output_dir;      /* NULL: the reference's default for the mode */
	const char *hostfile;        /* multi-node when set */
	long nproc;                  /* ranks per host (multi-node; default 16) */
	const long *num_devices;     /* override the mode's device list, or NULL */
	size_t nnum_devices;
	const long long *bytes;      /* override the mode's grid, or NULL */
	size_t nbytes;
	bool quick;                  /* the 5-point grid (multi-node) */
	const char *mpirun;          /* launcher program (default "mpirun") */
	const char *const *mpirun_args;  /* extra launcher arguments */
	size_t nmpirun_args;
	const char *perfdb;          /* this binary */
	const char *const *comm_args;    /* extra `perfdb comm` arguments */
	size_t ncomm_args;
};

struct perfdb_comm_launch {
	char title[96];              /* "Round 1: allReduce" */
	char **argv;                 /* NULL-terminated, owned */
	size_t argc;
};

#define PERFDB_COMM_SUITE_ROUNDS 3

struct perfdb_comm_suite {
	bool multi_node;
	long nhosts, nproc, world;
	long *nd;                    /* device list */
	size_t nnd;
	long long *bytes;
	size_t nbytes;
	char *output_dir;
	struct perfdb_comm_launch launch[PERFDB_COMM_SUITE_ROUNDS];
	size_t nlaunch;
};

void perfdb_comm_suite_init(struct perfdb_comm_suite *s);
void perfdb_comm_suite_release(struct perfdb_comm_suite *s);

/* The 23 powers of two 128 … 512 MiB, and QUICK's 5 sizes. */
#define PERFDB_COMM_SUITE_NBYTES 23
extern const long long perfdb_comm_suite_bytes[PERFDB_COMM_SUITE_NBYTES];
#define PERFDB_COMM_SUITE_NQUICK 5
extern const long long perfdb_comm_suite_quick_bytes[PERFDB_COMM_SUITE_NQUICK];

/* Hosts of an Open MPI hostfile (first word of each non-blank, non-comment line). */
int perfdb_comm_hostfile_count(const char *path, long *nhosts, struct perfdb_err *err);

/*
 * The multi-node device list: powers of two from 32 up to world, plus 384
 * and 768 when they fit, ascending and unique.  Returns the count (0:
 * empty) written to out (room for 64).
 */
size_t perfdb_comm_suite_nd_list(long world, long *out);

/*
 * Plan the launches: single node (no hostfile) = 16 8 4 2 devices on the
 * 23-point grid, -np max(devices); multi-node = the list above on the
 * hostfile's hosts x nproc ranks with --topology-tier 0 (QUICK grid when
 * quick).  Three rounds: all_reduce; all_gather reduce_scatter;
 * all_to_all.  An empty multi-node list is -PERFDB_EINVAL with the
 * reference's "empty device list for WORLD_SIZE=…" message.
 */
int perfdb_comm_suite_plan(const struct perfdb_comm_suite_opts *o, struct perfdb_comm_suite *s,
			   struct perfdb_err *err);

/* One line, each argument shell-quoted when needed. */
int perfdb_comm_argv_format(char *const *argv, struct perfdb_strbuf *out);

/*
 * Run argv (fork, exec, wait) with our stdin/stdout/stderr (stdout_to_stderr:
 * its stdout goes to our stderr); *status is its
 * exit status, 128+N for a signal N.  A program that cannot be executed
 * sets *status to 127 and returns -PERFDB_EIO ("cannot run 'x': reason").
 */
int perfdb_comm_spawn_to(char *const *argv, bool stdout_to_stderr, int *status,
			 struct perfdb_err *err);

/* One launch of a suite as it went. */
struct perfdb_comm_launch_result {
	const char *title;   /* the plan's */
	char *command;       /* the command line, shell-quoted */
	bool started;        /* false: it could not be run (why says so) */
	bool ok;             /* started and exited 0 */
	int status;          /* exit status, 128+N for a signal N, 127 when not started */
	double seconds;
	char why[PERFDB_ERR_MSG_MAX];
};

struct perfdb_comm_suite_result {
	struct perfdb_comm_launch_result *launch;
	size_t nlaunch, nfailed;
	struct { const char *file; long rows; } tables[PERFDB_COMM_NOPS];   /* rows -1: unreadable */
	size_t ntables;      /* the collectives' tables present after the launches */
};

void perfdb_comm_suite_result_release(struct perfdb_comm_suite_result *r);

/* What the launch loop tells its caller, before and after each launch. */
struct perfdb_comm_suite_events {
	void *ctx;
	void (*launch_begin)(void *ctx, const struct perfdb_comm_launch_result *l);
	void (*launch_end)(void *ctx, const struct perfdb_comm_launch_result *l);
};

/*
 * Run the planned launches in order (creating outdir first), each with our
 * standard streams (stdout_to_stderr: theirs to our stderr); a launch that
 * fails is recorded and the next one runs.  Then counts the rows of each
 * collective's table in outdir.  r is the caller's to release, also after
 * an error (-PERFDB_EIO: outdir; -PERFDB_ENOMEM).
 */
int perfdb_comm_suite_run(const struct perfdb_comm_suite *s, const char *outdir,
			  bool stdout_to_stderr, const struct perfdb_comm_suite_events *ev,
			  struct perfdb_comm_suite_result *r, struct perfdb_err *err);

/*
 * The suite for people (suite_text.c), appended to out: the planned
 * launches of --dry-run (a "# title" line, then the command), the log's
 * header (where, which mode, the group and message sizes, the start time)
 * and its summary (launches that succeeded, the end time, each table's
 * rows).  0 or -PERFDB_ENOMEM.  clock gives the local time in buf, with the
 * date when full.
 */
int perfdb_comm_suite_plan_text(const struct perfdb_comm_suite *s, struct perfdb_strbuf *out);
int perfdb_comm_suite_header_text(const struct perfdb_comm_suite *s, const char *outdir,
				  struct perfdb_strbuf *out);
int perfdb_comm_suite_summary_text(const struct perfdb_comm_suite *s,
				   const struct perfdb_comm_suite_result *r, struct perfdb_strbuf *out);
const char *perfdb_comm_suite_clock(char *buf, size_t cap, bool full);
/* --dry-run --json: the planned launches (suite_json.c), a newline after it. */
int perfdb_comm_suite_plan_json(const struct perfdb_comm_suite *s, struct perfdb_strbuf *out);
/* --json: the launches as they went and the tables left, a newline after it. */
int perfdb_comm_suite_json(const struct perfdb_comm_suite *s,
			   const struct perfdb_comm_suite_result *r, const char *outdir,
			   struct perfdb_strbuf *out);

/* An absolute form of path, not resolved (it need not exist yet); NULL: out of memory. */
char *perfdb_comm_path_absolute(const char *path);

#endif
