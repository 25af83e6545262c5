/*
 * Shared by `perfdb writeback` and `perfdb microbench`: --ops handling,
 * aggregation + writeback + report of msprof output (docs/spec/replay.md §1
 * steps 8-9, §2, §3).
 */
#ifndef PERFDB_CLI_REPLAY_COMMON_H
#define PERFDB_CLI_REPLAY_COMMON_H

#include "opt.h"
#include "replay/replay.h"

/*
 * Normalise --ops entries (strip _run.py / _run / .csv) and check them
 * against the replay operator list.  Returns 0, or 2 after printing the
 * usage error "Unsupported --ops: …".
 */
int replay_ops_normalize(struct opt_list *ops, int aten_ok, const struct cmd_help *h);

/* Free what replay_ops_normalize allocated (call even after it failed). */
void replay_ops_release(struct opt_list *ops);

struct ingest_opts {
	const char *cmd;             /* command name for messages */
	const char *dbdir;
	const struct opt_list *ops;  /* normalised, may be empty */
	int missing_only, prune, json;
	long ep;
	const struct perfdb_status *status; /* NULL: none */
	const char *ts;              /* the run's report timestamp; NULL: taken when the report is written */
	const struct perfdb_wb_seen *seen; /* prune: the rows the run read (NULL: read under the lock) */
	const struct perfdb_opmap_opts *op_mapping; /* native backends' --op-mapping; NULL: none */
	int aten;                    /* native backends: the PyTorch op tables are written back too */
};

/*
 * Aggregate op_summary files, keep the selected ops (and their matmul
 * aliases), write back, print the warnings and the report (or the JSON
 * summary), then the [REPORT] lines.  Returns 0 or the exit code 1, the
 * error printed.
 */
int replay_ingest(const struct ingest_opts *o, char *const *files, size_t nfiles);

/*
 * Write measurements back and report (the second half of replay_ingest,
 * shared by the native backends).  Takes ownership of m.  Returns 0 or 1.
 */
int replay_finish(const struct ingest_opts *o, struct perfdb_measures *m);

/*
 * Print a finished run as replay_ingest does: writeback's warnings, then
 * the report (or the JSON summary) and the [REPORT] lines, or the error
 * and the tables already replaced.  Returns 0 or the exit code 1.
 */
int replay_print_finish(const struct ingest_opts *o, int rc, const struct perfdb_finish_result *r,
			const struct perfdb_err *err);

#endif
