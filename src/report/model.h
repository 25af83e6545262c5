/*
 * What the report's model files share (model.c, model_runs.c,
 * model_comm.c): directory listing, table times, the collectives' loader
 * and the run records' lookup.
 */
#ifndef PERFDB_REPORT_MODEL_H
#define PERFDB_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "report/dbreport.h"

/* Sorted names of dir's entries that end with suffix and start with prefix (dirs: directories only). */
int report_list_dir(const char *dir, const char *prefix, const char *suffix, bool dirs, char ***out, size_t *n);
void report_free_list(char **v, size_t n);
/* Widen r's [mtime_min, mtime_max] by path's modification time. */
void report_note_mtime(struct perfdb_dbreport *r, const char *path);
/* The collective tables of hccl_dir, else of the newest <dbdir>/../../hccl/<ver>/ holding any. */
int report_load_hccl_near(struct perfdb_dbreport *r, const char *dbdir, const char *hccl_dir,
			  struct perfdb_err *err);

/* One row's newest measuring record (model_runs.c). */
struct report_run_row {
	char *op;                  /* table stem (owned) */
	size_t line;
	size_t seq;                /* order read: a later record is newer */
	bool failed, contended;
	bool unwritten;            /* status "contended": the run left the row unwritten */
	double noise;              /* Noise: std / mean of the kept samples; -1 unknown */
	const char *host;          /* the run's host= (owned by the run list) */
};

struct report_runs {
	struct report_run_row *v;
	size_t n;
	char **hosts;              /* one per run record (owned) */
	size_t nruns;
};

/*
 * Read every microbench_env_<ts>.txt of <dbdir>/reports/ with its
 * microbench_rows_<ts>.csv, oldest first.  A missing reports directory is
 * no record; a rows file that cannot be read is an error naming it.
 */
int report_runs_load(struct report_runs *rr, const char *dbdir, struct perfdb_err *err);
void report_runs_release(struct report_runs *rr);
/* The newest record that measured (ok or failed) table op's line, or NULL. */
const struct report_run_row *report_runs_find(const struct report_runs *rr, const char *op, size_t line);

#endif
