/*
 * The measuring harness of perfdb comm (docs/spec/comm.md Decision 2, docs/style.md
 * rule 8, nccl-tests' common.cu): it owns warm-up, timing, the correctness
 * check, the time budget, the CPU-contention probe and the environment
 * record.  Collectives only describe themselves (coll.h), transports only
 * run the calls (transport.h: MPI or NCCL, the same method for both);
 * reporting is run_report.c.
 *
 * Method, per (collective, group, size):
 *   1. host buffers are allocated on every member (a failure anywhere skips
 *      the size on all of them), then the transport's begin (a failure
 *      anywhere fails the case on all of them);
 *   2. check: the collective's deterministic data is written and uploaded,
 *      the collective runs once untimed, the result is downloaded and
 *      every element compared with the expected value (counts summed over
 *      the group);
 *   3. buffers are zeroed and uploaded, then warm-up: up to `warmup`
 *      iterations, each a barrier then the collective, stopped early once
 *      a quarter of the budget is spent (at least 2 iterations run);
 *   4. timed: N iterations, each MPI_Barrier(group) then the collective,
 *      timed by the transport (MPI: MPI_Wtime just around the call; NCCL:
 *      CUDA events); N = the budget left divided by the warm-up's median
 *      iteration, clamped to [min_iters, iters];
 *      each rank reads its scheduler accounts (perfdb/sched.h) between
 *      iterations once HARNESS_BLOCK_S has passed, and marks every
 *      iteration of a block during which its threads waited for a CPU (or
 *      its VM lost time to steal);
 *   5. one MPI_Allreduce(MAX) over the N per-rank times gives each
 *      iteration's time as the slowest rank saw it, and one over the marks
 *      says which iterations a rank was contended in: the others are the
 *      samples.  A pass left with fewer than min_iters of them is followed
 *      by another, up to HARNESS_PASSES; a size still short is contended,
 *      and perfdb comm does not write it (docs/comm.md "Contention").
 */
#ifndef PERFDB_COMM_HARNESS_H
#define PERFDB_COMM_HARNESS_H

#include <mpi.h>
#include <sched.h>
#include <stdbool.h>

#include "comm/comm.h"
#include "ops/coll.h"
#include "backend/mpi_world.h"
#include "backend/transport.h"

struct perfdb_harness_cfg {
	long warmup;         /* at most this many warm-up iterations */
	long iters;          /* at most this many timed iterations */
	long min_iters;      /* at least this many timed iterations */
	double budget;       /* seconds for warm-up + timing of one size */
	bool no_sched;       /* no judging of rounds (PERFDB_SCHED=0) */
};

#define HARNESS_BLOCK_S 1e-3   /* rounds judged together, as the replay engine's blocks */
#define HARNESS_PASSES 4       /* timed passes at most per size */

struct perfdb_harness_case {
	const struct perfdb_coll *coll;
	enum perfdb_comm_dtype dtype;
	long long message_bytes;
	MPI_Comm comm;       /* the group; called by its members only */
	/* what runs the calls, opened (transport.h): MPI on the host
	 * buffers, or NCCL on device buffers (the cuda module's) */
	const struct perfdb_comm_transport *transport;
};

struct perfdb_harness_result {
	double *samples;     /* µs, one per clean timed iteration, max over ranks (malloc'd) */
	size_t nsamples;
	size_t rounds;       /* timed iterations run, over every pass */
	size_t rounds_bad;   /* of them, dropped: a rank was contended */
	bool judged;         /* the rounds were judged (a rank could read its accounts) */
	bool unclean;        /* judged, and fewer than min_iters clean rounds: not written */
	size_t warmup;       /* warm-up iterations run */
	int check;           /* 1 ok, -1 wrong elements */
	unsigned long long bad;   /* wrong elements over the group */
	int bad_rank;        /* lowest group rank with a wrong element, or -1 */
	bool alloc_failed;   /* buffers could not be allocated: nothing measured */
	bool transport_failed; /* a transport's begin or call failed on a member:
				* every member knows, err says what (the call) */
};

/*
 * Measure one size (collective over hc->comm).  0 (a transport's failure
 * included: res->transport_failed, err set, the group still in step), or
 * an MPI failure (-PERFDB_EIO, err set) after which the group is in an
 * unknown state.
 */
int perfdb_harness_measure(const struct perfdb_harness_cfg *cfg,
			   const struct perfdb_harness_case *hc,
			   struct perfdb_harness_result *res, struct perfdb_err *err);

/* ---- the world around a case (collective over the world) ------------- */

/*
 * Whether other processes used the CPUs our ranks run on during a case:
 * each host's first rank reads /proc/stat for the union of the CPUs its
 * ranks may run on (busy = user+nice+system+irq+softirq+steal); our ranks'
 * CPU time (getrusage) is summed per host; the difference, per second of
 * wall time, is the case's other_cpu (max over hosts), in CPUs.  /proc/stat
 * counts clock ticks, so less than (ranks on the host + 1) ticks of foreign
 * CPU time counts as none.
 */
struct perfdb_harness_env {
	MPI_Comm world;
	MPI_Comm node;           /* ranks sharing this host */
	int node_rank, node_size;
	cpu_set_t cpus;          /* CPUs any rank of this host may use */
	int ncpus;
	bool proc_ok;            /* /proc/stat readable (host leader) */
	double tick;             /* seconds per /proc/stat unit */
	double t0, busy0, ours0; /* snapshot at case begin */
};

int perfdb_harness_env_init(struct perfdb_harness_env *e, MPI_Comm world,
			    struct perfdb_err *err);
void perfdb_harness_env_release(struct perfdb_harness_env *e);

/*
 * Start a case on every rank of the world.  *stop: in, rank 0's request to
 * stop (a write failed); out, set on every rank when any asked.  need:
 * bytes this rank will allocate; *mem_ok is false on every rank when some
 * host's ranks together need more than 90 % of its MemAvailable.  Waits by
 * polling with short sleeps so idle ranks leave the CPUs to the group.
 */
int perfdb_harness_case_begin(struct perfdb_harness_env *e, int *stop,
			      unsigned long long need, bool *mem_ok, struct perfdb_err *err);

/* End a case on every rank: *other_cpu as above, or -1 when unknown. */
int perfdb_harness_case_end(struct perfdb_harness_env *e, double *other_cpu,
			    struct perfdb_err *err);

/* Wait for req, sleeping between tests once a short spin is over, so a
 * rank that is not measuring leaves its CPU to those that are. */
int perfdb_harness_idle_wait(MPI_Request *req, struct perfdb_err *err);

/* Rank 0's environment record (collective: host names are gathered). */
int perfdb_harness_context(struct perfdb_harness_env *e, bool malloc_tune,
			   struct perfdb_comm_context *ctx, struct perfdb_err *err);

/*
 * Rank 0: fill ctx->shm_copy where perfdb_harness_context left it pending,
 * after the last case (harness.c: shm_single_copy says why not before).
 * Local; no other rank takes part.
 */
void perfdb_harness_context_finish(struct perfdb_comm_context *ctx);

#define MPI_TRY(err, call)                                                  \
	do {                                                                \
		int mpi_try_rc_ = (call);                                   \
		if (mpi_try_rc_ != MPI_SUCCESS)                             \
			return perfdb_mpi_error((err), mpi_try_rc_, #call);  \
	} while (0)

#endif
