/*
 * Replay results into the database: measurements, writeback, reports and
 * the run status (docs/spec/replay.md §1a, §2, §3 and Decisions 2-6).
 *
 * A measurement is one aggregated (operator, signature) result in the
 * shape writeback needs: the descriptive cells of its representative row,
 * the duration statistics (Decision 2) and the 25 MicroBench counters.
 * Writeback merges a list of measurements into <db>/<Op>.csv tables; the
 * report module renders what writeback did.
 */
#ifndef PERFDB_REPLAY_H
#define PERFDB_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "perfdb/err.h"
#include "perfdb/op_mapping.h"
#include "perfdb/schema.h"
#include "perfdb/strbuf.h"

#define PERFDB_DFC_OP "DispatchFFNCombine"

struct perfdb_measure {
	char *op;                        /* OP Type: the table it routes to */
	char *base[8];                   /* OP State … Output Formats */
	char *ep_size;                   /* DispatchFFNCombine only, else NULL */
	size_t samples;                  /* steady-state samples (0: no valid duration) */
	double mean, min, median, std;
	/* msprof counters: PERFDB_NCOUNTERS means, NaN where a counter had no
	 * valid sample; NULL when none had (the replay backends, most rows),
	 * so a measurement costs its strings, not 400 bytes of empty counters */
	double *cmean;
};

struct perfdb_measures {
	struct perfdb_measure *v;
	size_t n, cap;
};

/* Free one measurement's strings (the struct itself is the caller's). */
void perfdb_measure_release(struct perfdb_measure *m);
void perfdb_measures_release(struct perfdb_measures *m);

/* The seed's replay operators (stems of op_replay/<Op>_run.py), sorted. */
extern const char *const perfdb_replay_ops[];
extern const size_t perfdb_replay_nops;
int perfdb_replay_op_known(const char *op);
/*
 * Whether stem is a PyTorch op table the native backends replay
 * ("aten.mm"; docs/ops.md "PyTorch operators"), and the operator its rows
 * lower to by default ("MatMulV2"; a row may lower to a sibling, matmul
 * to BatchMatMulV2), or NULL.
 */
const char *perfdb_replay_aten_target(const char *stem);

/* ---- msprof op_summary ingest (§1a, Decisions 2 and 5) ---------------- */

/*
 * Find the op_summary files of msprof output under root: every
 * PROF_<id> directory (recursively, sorted) and its
 * mindstudio_profiler_output/op_summary_<ts>.csv, sorted.  *nprof counts the
 * PROF_<id> directories.  Fills files (caller frees each and the array).
 */
int perfdb_msprof_find(const char *root, char ***files, size_t *nfiles, size_t *nprof,
		       struct perfdb_err *err);

/*
 * Aggregate op_summary files: group by (OP Type, signature), the first row
 * representing the group; Accelerator Core from Task Type; EP Size (ep) for
 * DispatchFFNCombine; durations per Decision 2 (the first launch of a group
 * dropped as warm-up when there are more; empty/junk/negative not samples);
 * counters averaged over their numeric cells.  Groups in first-appearance
 * order.
 */
int perfdb_msprof_aggregate(char *const *files, size_t nfiles, long ep,
			    struct perfdb_measures *out, struct perfdb_err *err);

/* ---- status (run_all_op_status.json) --------------------------------- */

struct perfdb_status_failure {
	char *op;
	char *reason;
};

struct perfdb_status {
	char **success, **skipped;
	size_t nsuccess, nskipped;
	struct perfdb_status_failure *failed;
	size_t nfailed;
	/* rows left without enough clean samples ("contended", perfdb's own key):
	 * each "<Op>.csv:<line>" with its reason, as failed ones are */
	struct perfdb_status_failure *contended;
	size_t ncontended;
	/* tables of the database no replay selects ("not_replayed", perfdb's own
	 * key): each table with its rows and why (unreplayed.c) */
	struct perfdb_status_unreplayed *unreplayed;
	size_t nunreplayed;
	/*
	 * A native run's rows (perfdb's own "rows" key): success and skipped
	 * count tables and failed counts rows, so these say what happened to
	 * every row.  has_rows: 0 for msprof runs, which have no rows.
	 * rows_again: of them, the rows measured again at the end of the run
	 * (docs/replay.md "Contention"); rows_again_written: of those, written.
	 */
	int has_rows;
	size_t rows_measured, rows_failed, rows_contended, rows_skipped;
	size_t rows_again, rows_again_written;
};

struct perfdb_status_unreplayed {
	char *table;     /* file stem: aten.cat */
	size_t rows;
	char *reason;
};

/*
 * The tables of dbdir that a native run without --ops does not select: not
 * a replay operator and not a PyTorch op with a lowering (docs/replay.md
 * "Tables not replayed"), each with its rows and the reason, appended to
 * st->unreplayed.  A table that does not load counts 0 rows.
 */
int perfdb_status_unreplayed(const char *dbdir, struct perfdb_status *st, struct perfdb_err *err);

void perfdb_status_release(struct perfdb_status *s);
/* Read a status JSON; returns 1 if read, 0 if missing or malformed (as the reference). */
int perfdb_status_read(const char *path, struct perfdb_status *s);
/* The same from len bytes at data. */
int perfdb_status_parse(const char *data, size_t len, struct perfdb_status *s);
/* Write one atomically (indent 2, the reference's keys). */
int perfdb_status_write(const char *path, const struct perfdb_status *s, struct perfdb_err *err);
/* The "rows" object of a status (has_rows), for the file and for --json; a
 * new reference, NULL when out of memory. */
struct json_t *perfdb_status_rows_json(const struct perfdb_status *s);

/* ---- writeback (§2) -------------------------------------------------- */

struct perfdb_wb_gap {
	char *op, *csv_name, *shape;
	double mb, prof, diff, ratio;
};

struct perfdb_wb_dup {
	char *sig;
	size_t count;
};

struct perfdb_wb_file {
	char *path, *stem;
	size_t updated, added, unchanged;
	char **missing;  size_t nmissing;
	char **deleted;  size_t ndeleted;
	struct perfdb_wb_dup *dups; size_t ndups;
	int written;
};

struct perfdb_wb_result {
	struct perfdb_wb_file *files;
	size_t nfiles;
	struct perfdb_wb_gap *gaps;      /* every gap (mb > 0 and prof > 0) */
	size_t ngaps;
	char **warnings;                 /* the reference's [WARN] lines */
	size_t nwarnings;
};

void perfdb_wb_result_release(struct perfdb_wb_result *r);

/*
 * The rows every table under a database held when a run read it, by
 * signature.  A run that measures between reading and writing (microbench)
 * takes this first, so that prune deletes only rows it saw and could not
 * fill, never rows another writer added meanwhile (docs/reliability.md
 * "One serial order").
 */
struct perfdb_wb_seen {
	size_t n;
	char **paths;                    /* canonical table paths (owned) */
	struct perfdb_sig_index *ix;     /* their rows' signatures (owned) */
};

/* Snapshot every table under dbdir (a missing dbdir holds none; a table
 * that cannot be read is left out: the writeback will name it). */
int perfdb_wb_seen_take(const char *dbdir, struct perfdb_wb_seen *s, struct perfdb_err *err);
void perfdb_wb_seen_release(struct perfdb_wb_seen *s);
/* The signatures the run saw in the table at path (canonical or not); NULL: none taken. */
const struct perfdb_sig_index *perfdb_wb_seen_find(const struct perfdb_wb_seen *s, const char *path);

struct perfdb_wb_opts {
	const char *dbdir;
	const char *const *ops;          /* normalised --ops, or NULL */
	size_t nops;
	int missing_only;                /* --update-mode missing-only */
	int prune;                       /* --prune-empty-duration-rows */
	double lock_timeout;             /* < 0: default */
	/* with prune: only rows in this snapshot, or appended by this
	 * writeback, may be deleted; NULL: every row (read under the lock) */
	const struct perfdb_wb_seen *seen;
	/* microbench --backend cpu|cuda: the database's op_mapping.yaml, written
	 * under the same lock after the tables (NULL: not touched) */
	const struct perfdb_opmap_opts *op_mapping;
	/* microbench --backend cpu|cuda: the PyTorch op tables (aten.*.csv) are targets too */
	int aten;
};

/*
 * The table of op that writeback updates (spec §2 targets): with --ops
 * (search_subdirs) the last `<op>.csv` of a sorted rglob under dbdir,
 * otherwise `<dbdir>/<op>.csv`.  Writes its path into out; returns 1 when
 * it exists, 0 when not (out is then the top-level path), <0 on error.
 * The replay engine reads the same table, so measurements land in the rows
 * they were taken from.
 */
int perfdb_replay_table_path(const char *dbdir, const char *op, int search_subdirs,
			     struct perfdb_strbuf *out);

/* True when a cell is a valid duration: a number > 0 (§2 "Validity");
 * perfdb_schema_duration with infinity counting, kept for its callers. */
int perfdb_wb_valid(const char *cell);

/*
 * Merge measurements into the tables of o->dbdir under the database lock,
 * each changed table replaced atomically.  Every table is prepared in
 * memory first: a table that does not load fails the run before any write.
 */
int perfdb_writeback(const struct perfdb_wb_opts *o, const struct perfdb_measures *m,
		     struct perfdb_wb_result *res, struct perfdb_err *err);

/* ---- report (§3) ----------------------------------------------------- */

/*
 * Before the first table is replaced: <dbdir>/reports exists (created) as
 * a real directory, not a link out of the database, and can be written.
 * Returns 0 or -PERFDB_EIO naming the path.
 */
int perfdb_report_dir_prepare(const char *dbdir, struct perfdb_err *err);

/*
 * Render the markdown report (the text the reference prints) into md, and
 * write <dbdir>/reports/profile_update_report_<ts>.md (md + "Full hotspot
 * CSV: …") and duration_gap_hotspots_full_<ts>.csv.  ts is the run's
 * timestamp (so every file of one run carries the same one), or NULL for
 * perfdb_report_timestamp() now.  The two paths are returned malloc'd.
 */
int perfdb_report_write(const char *dbdir, const struct perfdb_wb_result *r,
			const struct perfdb_status *st, const char *ts, struct perfdb_strbuf *md,
			char **md_path, char **csv_path, struct perfdb_err *err);

/*
 * The timestamp of report and run files: $PERFDB_TIMESTAMP when set
 * (reproducible runs and tests), else local time as %Y%m%d_%H%M%S.
 */
void perfdb_report_timestamp(char *ts, size_t cap);

/* ---- the end of a run: writeback, then the report ---------------------- */

struct perfdb_finish_opts {
	const char *dbdir;
	const char *const *ops;      /* the selected operators (normalised); nops 0: all */
	size_t nops;
	int missing_only, prune;
	long ep;                     /* msprof: DispatchFFNCombine's EP size for aggregation */
	const struct perfdb_status *status;   /* NULL: none */
	const char *ts;              /* the run's report timestamp; NULL: taken when the report is written */
	const struct perfdb_wb_seen *seen;    /* prune: the rows the run read (NULL: read under the lock) */
	const struct perfdb_opmap_opts *op_mapping;   /* native backends' --op-mapping; NULL: none */
	int aten;                    /* native backends: the PyTorch op tables are written back too */
};

struct perfdb_finish_result {
	struct perfdb_wb_result wb;  /* what writeback did (files replaced, warnings), also on error */
	bool written_back;           /* writeback went through (a later error is the report's) */
	struct perfdb_strbuf md;     /* the report's markdown */
	char *md_path, *csv_path;    /* the report file and the hotspot table */
};

void perfdb_finish_result_release(struct perfdb_finish_result *r);
/*
 * The line both replays print when rows read low at the end of the run,
 * against a median they were never held to, were measured again (n) and
 * of them kept (docs/replay.md "Contention"): "[MEASURED AGAIN] ...\n"
 * appended to out.  Returns 0 or -PERFDB_ENOMEM.
 */
int perfdb_replay_again_note(size_t n, size_t kept, struct perfdb_strbuf *out);
/* The finished run as JSON (finish_json.c), a newline after it. */
int perfdb_finish_result_json(const struct perfdb_finish_result *r, const struct perfdb_status *st,
			      struct perfdb_strbuf *out);

/*
 * Write the measurements m back (taking them over) and write the report.
 * r is filled as far as the run went, and is the caller's to release also
 * after an error: its wb.files say which tables were already replaced.
 */
int perfdb_replay_finish(const struct perfdb_finish_opts *o, struct perfdb_measures *m,
			 struct perfdb_finish_result *r, struct perfdb_err *err);

/*
 * msprof's op_summary files aggregated (o->ep), the selected operators
 * and their matmul aliases kept, then perfdb_replay_finish.
 */
int perfdb_replay_ingest(const struct perfdb_finish_opts *o, char *const *files, size_t nfiles,
			 struct perfdb_finish_result *r, struct perfdb_err *err);

#endif
