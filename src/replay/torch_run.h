/*
 * `perfdb microbench --backend torch` (docs/replay.md "The torch backend"):
 * the rows of a database's PyTorch op tables timed through the framework
 * installed on the machine, by its own kernels.  perfdb orchestrates as it
 * does msprof: the rows go out as a request, data/torch_replay.py times each
 * one under PyTorch in a child process, and the answers come back as
 * measurements for the writeback and a status for the reports.
 */
#ifndef PERFDB_REPLAY_TORCH_RUN_H
#define PERFDB_REPLAY_TORCH_RUN_H

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/opseq.h"
#include "replay/replay.h"

struct perfdb_torch_opts {
	const char *dbdir;
	const char *const *ops;      /* normalised --ops (table stems), or NULL: every aten table */
	size_t nops;
	int missing_only;            /* rows with a usable duration are not timed */
	long threads, repeat;
	double budget;               /* seconds a row samples for (at least repeat samples) */
	double row_timeout;          /* the child's limit: rows x (2 budget + row_timeout) + 60 s */
	long retries;                /* --contention-retries: a row alone measured again while its
				      * memory bandwidth reads low (PERFDB_PROBE=0: no probe) */
	const char *python;          /* NULL: $PERFDB_TORCH_PYTHON, else /usr/bin/python3 */
	/*
	 * --sequence-trace (docs/replay.md "In the trace's sequence"): the
	 * step's calls as rows, run in their order, each timed there; rows it
	 * names that are not to be timed (--ops, missing-only) still run in
	 * it, untimed.  NULL: every row alone.
	 */
	const struct perfdb_opseq *sequence;
	const char *sequence_trace;  /* the trace it came from, for the env record */
};

struct perfdb_torch_run {
	struct perfdb_measures measures;   /* the ok rows, for perfdb_replay_finish */
	struct perfdb_status st;           /* success / failed / contended / not_replayed */
	char ts[32];                       /* the report timestamp */
	char status_path[4300], env_path[4300];
	char torch_version[64];
	size_t rows, ok, failed, contended;
	size_t in_sequence;                /* of the ok rows, those timed in the sequence */
	/* the bandwidth probe: this machine's quiet figure it was held to (0:
	 * none, the run's median instead), the median of all the run's
	 * readings, the readings taken and of them refused (the process's own
	 * threads ran beside them), the rows left contended for it, and the
	 * sequence's passes (all, dropped, dropped for low bandwidth) */
	double probe_quiet_gbs, probe_median_gbs;
	size_t probe_readings, probe_none;
	size_t nlow;
	size_t passes, passes_dropped, passes_low;
};

void perfdb_torch_run_release(struct perfdb_torch_run *r);

/*
 * Collect the rows, run the replay, read its answers, write the status file
 * and the env record under <dbdir>/reports/.  Errors: no PyTorch for the
 * interpreter (the apt-get line), the child's failure or timeout, an answer
 * that does not parse.  Nothing in the database is written here.
 */
int perfdb_torch_microbench(const struct perfdb_torch_opts *o, struct perfdb_torch_run *r,
			    struct perfdb_err *err);

#endif
