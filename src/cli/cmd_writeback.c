/*
 * perfdb writeback: aggregate msprof output that already exists and write
 * it back into the database (docs/spec/replay.md §1 step 8, §1a, §2, §3) — the
 * data half of start_microbench.py, for op_summary files produced
 * anywhere.
 */
#include <stdio.h>
#include <stdlib.h>

#include "builtin.h"
#include "dbopts.h"
#include "replay_common.h"

static const char *const modes[] = { "all", "missing-only", NULL };

/* the reference's flags (start_microbench.py, whose writeback this is): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, "ops", "update-mode", "prune-empty-duration-rows",
	"dispatch-ffn-combine-ep-size", NULL
};

const struct cmd_help cmd_writeback_help = {
	.name = "writeback",
	.reference = reference_flags,
	.usage = "perfdb writeback --profiling-path DIR [--ops OP ...] [--update-mode {all,missing-only}]\n"
		 "                        [--prune-empty-duration-rows] [--json] [database flags]",
	.summary = "write msprof op_summary results back into the database",
	.description =
		"Finds PROF_*/mindstudio_profiler_output/op_summary_*.csv under DIR, aggregates\n"
		"the launches per (OP Type, signature), merges them into <Op>.csv tables\n"
		"(Average Duration(us), MicroBench statistics and counters), and writes the\n"
		"profile update report under <database>/reports/.",
};

int cmd_writeback(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	const char *path = NULL, *mode = "all";
	struct opt_list ops = { 0 };
	bool prune = false, json = false;
	long ep = 16;
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "profiling-path", .dest = &path, .metavar = "DIR",
		  .required = true, .help = "msprof output: a PROF_* directory or a directory holding some" },
		{ .type = OPT_LIST, .name = "ops", .dest = &ops, .metavar = "OP",
		  .help = "operators to write back (MatMulV2, MatMulV2_run.py and MatMulV2.csv are "
			  "the same); default: every replay operator" },
		{ .type = OPT_STRING, .name = "update-mode", .dest = &mode, .choices = modes,
		  .help = "all: update every matched row and append new ones; missing-only: only "
			  "fill rows without a valid duration (default: all)" },
		{ .type = OPT_FLAG, .name = "prune-empty-duration-rows", .dest = &prune,
		  .help = "delete rows left without any valid duration" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-ep-size", .dest = &ep, .metavar = "N",
		  .help = "EP Size written for DispatchFFNCombine rows (default: 16)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON summary (tables[], gaps, report, hotspots_csv) instead of the report" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_writeback_help, pos, &npos);
	if (rc) {
		free(ops.v);
		return rc == 1 ? 0 : rc;
	}
	if ((rc = replay_ops_normalize(&ops, 0, &cmd_writeback_help))) {
		replay_ops_release(&ops);
		return rc;
	}
	if ((rc = db_opts_finish(db, &cmd_writeback_help))) {
		replay_ops_release(&ops);
		return rc;
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	char **files = NULL;
	size_t nfiles = 0, nprof = 0;
	rc = perfdb_db_resolve(o, &dir, &err);
	if (rc == 0)
		rc = perfdb_msprof_find(path, &files, &nfiles, &nprof, &err);
	if (rc == 0 && !nprof)
		rc = perfdb_err_set(&err, PERFDB_ENOENT, "No PROF_* directories under %s", path);
	else if (rc == 0 && !nfiles)
		rc = perfdb_err_set(&err, PERFDB_ENOENT, "No op_summary_*.csv found");
	if (rc < 0) {
		rc = cli_error("writeback", &err);
	} else {
		struct ingest_opts io = { .cmd = "writeback", .dbdir = dir.buf, .ops = &ops,
					  .missing_only = mode[0] == 'm', .prune = prune,
					  .json = json, .ep = ep };
		rc = replay_ingest(&io, files, nfiles);
	}
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	replay_ops_release(&ops);
	perfdb_strbuf_release(&dir);
	return rc;
}
