/*
 * The msprof microbench stage (`perfdb microbench --backend msprof`,
 * docs/spec/replay.md §1 steps 3-7, 9): the checks of the Ascend
 * environment and the database before a run, and the msprof driver.  The
 * CLI sequences the steps and prints; ingest is perfdb_msprof_find and
 * perfdb_msprof_aggregate (replay/replay.h).  Nothing here prints.
 */
#ifndef PERFDB_REPLAY_MSPROF_RUN_H
#define PERFDB_REPLAY_MSPROF_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* op is selected by the normalised --ops list ops[0..nops) (none: every op). */
int perfdb_msprof_selected(const char *const *ops, size_t nops, const char *op);

/*
 * Step 3: every selected table <dbdir>/<Op>.csv that exists has rows and
 * every row a valid duration, and at least one such table exists.
 */
int perfdb_msprof_all_usable(const char *dbdir, const char *const *ops, size_t nops);

/*
 * Step 4: the NPUs visible to the run, counted from
 * ASCEND_RT_VISIBLE_DEVICES (0 when unset or empty: unknown).
 */
long perfdb_msprof_visible_npus(void);

/*
 * Step 5: the selected operators that need the vLLM-Ascend custom OPP,
 * ", "-separated into need (reset first), when ASCEND_CUSTOM_OPP_PATH or
 * LD_LIBRARY_PATH is unset or blank.  Returns 1 when need is not empty
 * (the run cannot go on), else 0.
 */
int perfdb_msprof_custom_opp_missing(const char *const *ops, size_t nops, struct perfdb_strbuf *need);

/* The replay command with every `{ops}` replaced by ops_spaced (out reset first). */
void perfdb_msprof_expand_command(const char *cmd, const char *ops_spaced, struct perfdb_strbuf *out);

/* What the replay command learns from its environment (docs/replay.md). */
struct perfdb_msprof_env {
	const char *dbdir, *mode, *status;     /* PERFDB_DATABASE, _UPDATE_MODE, _STATUS_FILE */
	long ep, nproc, nnodes, node_rank, master_port;   /* the reference's --dispatch-ffn-combine-* */
	const char *master_addr;
};

/*
 * Run `msprof --output=<outdir> sh -c <cmd>` with PERFDB_OPS=ops_csv and
 * e in its environment; msprof gets SIGTERM when this process dies.
 * Returns msprof's exit status (128 + signal when killed), or -1 when
 * msprof cannot be started.
 */
int perfdb_msprof_run(const char *outdir, const char *cmd, const char *ops_csv,
		      const struct perfdb_msprof_env *e);

/* Step 9: remove a profiling directory and everything under it. */
void perfdb_msprof_run_remove(const char *root);

/* ---- the whole recipe (msprof_microbench.c) ----------------------------- */

struct perfdb_msprof_opts {
	const char *dbdir;               /* resolved */
	const char *command;             /* --replay-command, {ops} expanded per run */
	const char *const *ops;          /* normalised --ops; nops 0: all */
	size_t nops;
	bool missing_only, prune, fail_fast;
	long ep, nproc, nnodes, node_rank, master_port;   /* --dispatch-ffn-combine-* */
	const char *master_addr;
};

struct perfdb_finish_result;

struct perfdb_msprof_events {
	void *ctx;
	/* one line for the user ([SKIP], [SUMMARY], [WARN], [CLEAN], [PRESERVE]) */
	void (*say)(void *ctx, const char *line);
	/* the ingest's outcome (rc 0, or its error in err), before the profiling
	 * directory is removed or kept */
	void (*finished)(void *ctx, int rc, struct perfdb_finish_result *r,
			 const struct perfdb_err *err);
};

/*
 * Steps 3-9 of docs/spec/replay.md §1.  Returns 0, or -PERFDB_E* with err
 * set; *reported: the outcome (success or error) already went to
 * ev->finished, so the caller has nothing more to print of it.
 */
int perfdb_msprof_microbench(const struct perfdb_msprof_opts *o,
			     const struct perfdb_msprof_events *ev, bool *reported,
			     struct perfdb_err *err);

#endif
