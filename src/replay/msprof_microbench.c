/*
 * `perfdb microbench --backend msprof` as one recipe (docs/spec/replay.md
 * §1 steps 3-9): skip what is already measured, check the NPUs and the
 * custom operator paths, run the replay command under msprof (once per op
 * when the combined run fails), ingest op_summary like `perfdb writeback`,
 * then remove the profiling directory ([CLEAN]) or keep it ([PRESERVE]).
 * The pieces are msprof_run.c's; what is printed is the caller's, through
 * the events.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "replay/msprof_run.h"
#include "replay/replay.h"

struct mrun {
	const struct perfdb_msprof_opts *o;
	const struct perfdb_msprof_events *ev;
	struct perfdb_strbuf ops_csv, ops_sp, full;
	char root[4200], status_path[4300];
	struct perfdb_msprof_env env;
	char **files;
	size_t nfiles, nprof;
};

static void say(const struct mrun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct mrun *r, const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (r->ev && r->ev->say)
		r->ev->say(r->ev->ctx, line);
}

static void free_files(struct mrun *r)
{
	for (size_t k = 0; k < r->nfiles; k++)
		free(r->files[k]);
	free(r->files);
	r->files = NULL;
	r->nfiles = r->nprof = 0;
}

/* Step 8 (and the DispatchFFNCombine-only skip): ingest, handed to the caller. */
static int ingest(struct mrun *r, bool missing_only, const struct perfdb_status *st,
		  const struct perfdb_wb_seen *seen, struct perfdb_err *err)
{
	const struct perfdb_msprof_opts *o = r->o;
	struct perfdb_finish_opts fo = { .dbdir = o->dbdir, .ops = o->ops, .nops = o->nops,
					 .missing_only = missing_only, .prune = o->prune, .ep = o->ep,
					 .status = st, .seen = seen };
	struct perfdb_finish_result res;
	int rc = perfdb_replay_ingest(&fo, r->files, r->nfiles, &res, err);
	if (r->ev && r->ev->finished)
		r->ev->finished(r->ev->ctx, rc, &res, err);
	perfdb_finish_result_release(&res);
	return rc;
}

/* Steps 3-4: 1 when there is nothing to run (said), 0 to go on. */
static int skip_steps(struct mrun *r, struct perfdb_err *err, int *rc)
{
	const struct perfdb_msprof_opts *o = r->o;
	bool missing = o->missing_only;
	if (missing && perfdb_msprof_all_usable(o->dbdir, o->ops, o->nops)) {
		for (size_t i = 0; i < perfdb_replay_nops; i++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s.csv", o->dbdir, perfdb_replay_ops[i]);
			if (perfdb_msprof_selected(o->ops, o->nops, perfdb_replay_ops[i]) &&
			    access(p, R_OK) == 0)
				say(r, "[SKIP] %s already has usable durations.", p);
		}
		say(r, "[SUMMARY] All target CSV files already have usable replay durations.");
		return 1;
	}
	/* DispatchFFNCombine needs nproc (or EP size) NPUs; with fewer visible
	 * ones a missing-only run skips it (none counted: the skip does not apply) */
	long need = o->nproc > 0 ? o->nproc : o->ep, visible = perfdb_msprof_visible_npus();
	int dfc_only = o->nops > 0;
	for (size_t i = 0; i < o->nops; i++)
		dfc_only &= strcmp(o->ops[i], "DispatchFFNCombine") == 0;
	if (!(missing && o->ep > 1 && visible > 0 && visible < need && (!o->nops || dfc_only)))
		return 0;
	say(r, "[SKIP] DispatchFFNCombine needs %ld NPUs (EP size %ld) but %ld are visible.", need,
	    o->ep, visible);
	say(r, "[SUMMARY] DispatchFFNCombine skipped in missing-only mode.");
	if (dfc_only) {
		/* nothing to replay: writeback of nothing (prune still applies) and the report */
		*rc = ingest(r, true, NULL, NULL, err);
		return 1;
	}
	/* a full run goes on without it */
	perfdb_strbuf_reset(&r->ops_csv);
	perfdb_strbuf_reset(&r->ops_sp);
	for (size_t i = 0; i < perfdb_replay_nops; i++) {
		if (strcmp(perfdb_replay_ops[i], "DispatchFFNCombine") == 0)
			continue;
		perfdb_strbuf_addf(&r->ops_csv, "%s%s", r->ops_csv.len ? "," : "", perfdb_replay_ops[i]);
		perfdb_strbuf_addf(&r->ops_sp, "%s%s", r->ops_sp.len ? " " : "", perfdb_replay_ops[i]);
	}
	return 0;
}

/* Step 7's fallback: once per op, each into its own directory. */
static int per_op_runs(struct mrun *r, struct perfdb_err *err)
{
	const struct perfdb_msprof_opts *o = r->o;
	for (size_t i = 0; i < o->nops; i++) {
		char sub[4400];
		snprintf(sub, sizeof(sub), "%s/per_op_%s", r->root, o->ops[i]);
		PERFDB_TRY(perfdb_mkdir_p(sub, err));
		perfdb_msprof_expand_command(o->command, o->ops[i], &r->full);
		int s1 = perfdb_msprof_run(sub, r->full.buf, o->ops[i], &r->env);
		char **f1 = NULL;
		size_t n1 = 0, p1 = 0;
		PERFDB_TRY(perfdb_msprof_find(sub, &f1, &n1, &p1, err));
		for (size_t k = 0; k < n1; k++)
			free(f1[k]);
		free(f1);
		if (s1 != 0 && n1 == 0)
			return perfdb_err_set(err, PERFDB_EIO, "msprof exited with %d for %s; profiling "
					      "data kept at %s", s1, o->ops[i], r->root);
	}
	free_files(r);
	return perfdb_msprof_find(r->root, &r->files, &r->nfiles, &r->nprof, err);
}

/* Steps 6-7: the profiling directory, msprof, and what it left. */
static int profile(struct mrun *r, struct perfdb_err *err)
{
	const struct perfdb_msprof_opts *o = r->o;
	snprintf(r->root, sizeof(r->root), "%s/msprof_run_XXXXXX", o->dbdir);
	if (!mkdtemp(r->root)) {
		r->root[0] = '\0';
		return perfdb_err_errno(err, errno, "cannot create a profiling directory under '%s'",
					o->dbdir);
	}
	snprintf(r->status_path, sizeof(r->status_path), "%s/run_all_op_status.json", r->root);
	r->env = (struct perfdb_msprof_env){ o->dbdir, o->missing_only ? "missing-only" : "all",
		r->status_path, o->ep, o->nproc, o->nnodes, o->node_rank, o->master_port,
		o->master_addr };
	perfdb_msprof_expand_command(o->command, r->ops_sp.buf, &r->full);
	int st = perfdb_msprof_run(r->root, r->full.buf, r->ops_csv.buf, &r->env);
	if (st < 0) {
		rmdir(r->root);   /* nothing was profiled: leave no directory behind */
		r->root[0] = '\0';
		return perfdb_err_set(err, PERFDB_EIO,
				      "msprof not found. Activate Ascend toolkit environment.");
	}
	PERFDB_TRY(perfdb_msprof_find(r->root, &r->files, &r->nfiles, &r->nprof, err));
	if (st != 0) {
		if (r->nfiles)
			say(r, "[WARN] msprof exited with %d. Continuing with generated profiling data.", st);
		else if (!o->nops)
			return perfdb_err_set(err, PERFDB_EIO, "combined msprof failed without op_summary "
					      "data; rerun with --ops to enable per-op fallback. Profiling "
					      "data kept at %s", r->root);
		else if (o->nops == 1 || o->fail_fast)
			return perfdb_err_set(err, PERFDB_EIO, "msprof exited with %d; profiling data "
					      "kept at %s", st, r->root);
		else
			PERFDB_TRY(per_op_runs(r, err));
	}
	if (!r->nprof)
		return perfdb_err_set(err, PERFDB_EIO, "No PROF_* directories under %s", r->root);
	if (!r->nfiles)
		return perfdb_err_set(err, PERFDB_EIO, "No op_summary_*.csv found");
	return 0;
}

static int run_steps(struct mrun *r, struct perfdb_wb_seen *seen, bool *done,
		     struct perfdb_err *err)
{
	const struct perfdb_msprof_opts *o = r->o;
	int rc = 0;
	if (skip_steps(r, err, &rc)) {
		*done = true;
		return rc;
	}
	/* step 5 */
	struct perfdb_strbuf opp = PERFDB_STRBUF_INIT;
	if (perfdb_msprof_custom_opp_missing(o->ops, o->nops, &opp)) {
		perfdb_err_set(err, PERFDB_EINVAL,
			"Missing env vars for operators: %s.\nPlease run:\n"
			"  export ASCEND_CUSTOM_OPP_PATH=<vllm-ascend>/_cann_ops_custom/vendors/vllm-ascend:$ASCEND_CUSTOM_OPP_PATH\n"
			"  export LD_LIBRARY_PATH=<vllm-ascend>/_cann_ops_custom/vendors/vllm-ascend/op_api/lib/:$LD_LIBRARY_PATH",
			opp.buf);
		perfdb_strbuf_release(&opp);
		return -PERFDB_EINVAL;
	}
	perfdb_strbuf_release(&opp);
	/* step 6; prune decides from what the run saw: the rows read before measuring */
	PERFDB_TRY(perfdb_mkdir_p(o->dbdir, err));
	if (o->prune)
		PERFDB_TRY(perfdb_wb_seen_take(o->dbdir, seen, err));
	PERFDB_TRY(profile(r, err));
	return 0;
}

int perfdb_msprof_microbench(const struct perfdb_msprof_opts *o,
			     const struct perfdb_msprof_events *ev, bool *reported,
			     struct perfdb_err *err)
{
	struct mrun r = { .o = o, .ev = ev, .ops_csv = PERFDB_STRBUF_INIT,
			  .ops_sp = PERFDB_STRBUF_INIT, .full = PERFDB_STRBUF_INIT };
	struct perfdb_wb_seen seen = { 0 };
	bool done = false, succeeded = false;
	*reported = false;
	for (size_t i = 0; i < o->nops; i++) {
		perfdb_strbuf_addf(&r.ops_csv, "%s%s", i ? "," : "", o->ops[i]);
		perfdb_strbuf_addf(&r.ops_sp, "%s%s", i ? " " : "", o->ops[i]);
	}
	int rc = run_steps(&r, &seen, &done, err);
	if (done) {
		*reported = true;   /* an ingest's error went to the caller's finished() */
	} else if (rc == 0) {
		/* step 8 */
		struct perfdb_status status;
		int have_status = perfdb_status_read(r.status_path, &status);
		rc = ingest(&r, o->missing_only, have_status ? &status : NULL, o->prune ? &seen : NULL,
			    err);
		if (have_status)
			perfdb_status_release(&status);
		*reported = true;
		succeeded = rc == 0;
	}
	perfdb_wb_seen_release(&seen);
	/* step 9 */
	if (r.root[0] && succeeded) {
		perfdb_msprof_run_remove(r.root);
		say(&r, "[CLEAN] removed %s", r.root);
	} else if (r.root[0]) {
		say(&r, "[PRESERVE] profiling data kept for debugging: %s", r.root);
	}
	free_files(&r);
	perfdb_strbuf_release(&r.ops_csv);
	perfdb_strbuf_release(&r.ops_sp);
	perfdb_strbuf_release(&r.full);
	return rc;
}
