/*
 * perfdb parse: profiler output into per-kernel database tables
 * (docs/spec/parse.md; replaces parsers/parse_kernel_details.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "dbopts.h"
#include "parse/parse.h"
#include "progress.h"

/* the reference's flags (parse_kernel_details.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	"profiling-path", OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_parse_help = {
	.name = "parse",
	.reference = reference_flags,
	.usage = "perfdb parse --profiling-path PATH [--jobs N] [--per-kernel] [--op-mapping auto|none|PATH]\n"
		 "       [--json] [--quiet] [database flags]",
	.summary = "turn profiler output into per-kernel database tables",
	.description =
		"Reads kernel_details*.csv (torch_npu / MindSpore profiler), msprof\n"
		"op_summary_*.csv, Ascend SQLite profiles (msprof --type=db, torch_npu\n"
		"export_type db: *.db, read-only) or PyTorch profiler Chrome traces\n"
		"(*.pt.trace.json, gzip or not), a file or a directory searched recursively,\n"
		"aggregates every launch by\n"
		"(Type, input shapes, dtypes, formats, output shapes) and merges one <Type>.csv\n"
		"per kernel type into the database (for GPU traces one table per PyTorch op,\n"
		"each call's device time summed: docs/chrome_trace.md): existing rows keep\n"
		"their other columns, new keys are appended, and nothing is written if any\n"
		"input or table is malformed. A database a PyTorch trace is parsed into also\n"
		"gets an op_mapping.yaml for the simulator (docs/database.md \"op_mapping.yaml\").",
};

struct ctx {
	struct progress prog;
	int quiet;
	struct perfdb_db_opts *o;
	struct perfdb_device_registry *reg;
	struct perfdb_strbuf *outdir;
};

/*
 * PyTorch traces describe the machine they were recorded on, not an Ascend
 * stack: their tables go to the device's native home <root>/<device>/torch/
 * torch<T>/ (perfdb_db_native_dir: T from --torch-version, else the one
 * already there), the device being the trace's GPU (deviceProperties name)
 * or, for a CPU-only trace, this host's CPU.  Grid and --backend cpu|cuda
 * replay find the same directory (docs/database.md "Layout").
 */
static int trace_outdir(void *vctx, const struct perfdb_parse_result *res,
			const struct perfdb_parse_db *db, struct perfdb_strbuf *out,
			struct perfdb_err *err)
{
	(void)res;
	struct ctx *c = vctx;
	char dev[160];
	PERFDB_TRY(perfdb_parse_trace_device_given(db, c->o->device_given ? c->o->device : NULL, c->reg,
						   dev, sizeof(dev), err));
	PERFDB_TRY(perfdb_db_native_dir(c->o, dev, out, err));
	/* the summary line names the first database */
	if (c->outdir->len)
		return 0;
	return perfdb_strbuf_addstr(c->outdir, out->buf);
}

static void on_warn(void *vctx, const char *msg)
{
	struct ctx *c = vctx;
	if (c->quiet)
		return;
	progress_done(&c->prog);
	fprintf(stderr, "perfdb parse: warning: %s\n", msg);
}

static void on_progress(void *vctx, unsigned long long done, unsigned long long total)
{
	struct ctx *c = vctx;
	(void)total;
	progress_update(&c->prog, done);
}

/* The summary line (and the counts on stderr unless quiet). */
static void print_text(const struct perfdb_parse_result *res, const char *outdir, const char *path,
		       bool trace_mode, bool quiet)
{
	/* traces of several devices: one database each, all named */
	printf("Generated %zu csv file(s) under ", res->ntables);
	if (res->ndbs > 1 && trace_mode)
		for (size_t i = 0; i < res->ndbs; i++)
			printf("%s%s", i ? ", " : "", res->dbs[i].outdir);
	else
		printf("%s", outdir);
	printf(" from %s\n", path);
	if (!quiet) {
		size_t created = 0, updated = 0, unchanged = 0, added = 0, upd = 0;
		for (size_t i = 0; i < res->ntables; i++) {
			const struct perfdb_parse_table *t = &res->tables[i];
			added += t->added;
			upd += t->updated;
			if (t->created)
				created++;
			else if (t->written)
				updated++;
			else
				unchanged++;
		}
		fprintf(stderr,
			"perfdb parse: %zu input file(s), %zu rows, %zu keys; tables: %zu created, "
			"%zu updated, %zu unchanged; rows: %zu added, %zu updated; %zu warning(s)\n",
			res->inputs, res->totals.rows, res->groups, created, updated, unchanged,
			added, upd, res->warnings);
	}
}

static const char *parse_replaced(const void *ctx, size_t i)
{
	const struct perfdb_parse_result *r = ctx;
	return r->tables[i].written ? r->tables[i].path : NULL;
}

struct cmd_parse_args {
	const char *path, *op_mapping;
	long jobs;
	bool json, quiet, per_kernel;
};

/* 0, -1 after --help, or the usage status. */
static int parse_args(int argc, char **argv, struct perfdb_db_opts *o, struct cmd_parse_args *a)
{
	*a = (struct cmd_parse_args){ .op_mapping = "auto" };
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "profiling-path", .dest = &a->path, .metavar = "PATH",
		  .required = true,
		  .help = "a kernel_details / op_summary CSV, an Ascend *.db, a *.pt.trace.json[.gz], or a "
			  "directory searched recursively (several ranks are pooled)" },
		{ .type = OPT_INT, .name = "jobs", .short_name = 'j', .dest = &a->jobs, .metavar = "N",
		  .has_min = true, .min = 0,
		  .help = "files read in parallel (default 0: one per CPU)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &a->json,
		  .help = "print a JSON summary instead of the reference's line (keys in docs/cli.md)" },
		{ .type = OPT_FLAG, .name = "per-kernel", .dest = &a->per_kernel,
		  .help = "PyTorch traces: one table per GPU kernel name, not per op" },
		{ .type = OPT_STRING, .name = "op-mapping", .dest = &a->op_mapping, .metavar = "MODE",
		  .help = "PyTorch traces: auto writes <db>/op_mapping.yaml unless the user has one "
			  "(a file perfdb wrote and nobody edited is updated), none writes nothing, "
			  "a PATH gets the mapping instead of the database (default: auto)" },
		{ .type = OPT_FLAG, .name = "quiet", .short_name = 'q', .dest = &a->quiet,
		  .help = "no progress and no warnings on stderr" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_parse_help, pos, &npos);
	return rc == 1 ? -1 : rc;
}

int cmd_parse(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	struct cmd_parse_args args, *a = &args;
	int rc = parse_args(argc, argv, o, a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = db_opts_finish(db, &cmd_parse_help)))
		return rc;
	struct perfdb_opmap_opts om;
	perfdb_opmap_opts_parse(a->op_mapping, &om);
	{
		struct perfdb_err e;
		if (perfdb_opmap_opts_check(&om, &e) < 0)
			return opt_usage_error(&cmd_parse_help, "%s", e.msg);
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf outdir = PERFDB_STRBUF_INIT;
	struct perfdb_parse_result res;
	memset(&res, 0, sizeof(res));
	/*
	 * A missing input is said first (issue 47: the reference said a missing
	 * version first, which sent a user after the wrong flag); then the
	 * versions, except for PyTorch traces, whose tables do not live under a
	 * vLLM-Ascend/CANN directory (see trace_outdir).
	 */
	struct stat in_st;
	int traces = 0;
	if (stat(a->path, &in_st) < 0)
		rc = perfdb_err_set(&err, PERFDB_ENOENT, "kernel_details source path not found: %s", a->path);
	else
		traces = o->database_path ? 0 : perfdb_parse_trace_kind(a->path);
	int trace_mode = traces == 1;
	if (rc < 0)
		;   /* said above */
	else if (traces == 2)
		rc = perfdb_err_set(&err, PERFDB_EINVAL,
			"%s holds both Ascend profiler tables and PyTorch traces, which belong to "
			"different databases: pass --database-path to put them in one", a->path);
	else if (!trace_mode)
		rc = perfdb_db_resolve(o, &outdir, &err);
	/* an Ascend table does not name its device: say which one the rows are filed under */
	if (rc == 0 && !trace_mode && !o->database_path && !o->device_given && !a->quiet && !a->json)
		fprintf(stderr, "perfdb parse: note: the profile does not name its device; its tables go to "
			"the default device %s (--device names another)\n", o->device);
	if (rc == 0) {
		struct ctx c = { .o = o, .reg = &db->reg, .outdir = &outdir };
		c.quiet = a->quiet || a->json;
		progress_init(&c.prog, "parse", 0, c.quiet);
		struct perfdb_parse_opts po = {
			.profiling_path = a->path, .outdir = trace_mode ? NULL : outdir.buf,
			.resolve_outdir = trace_outdir, .reg = &db->reg, .jobs = (unsigned)a->jobs, .per_kernel = a->per_kernel,
			.lock_timeout = -1, .warn = on_warn, .progress = on_progress, .ctx = &c,
			.op_mapping = &om,
		};
		rc = perfdb_parse_run(&po, &res, &err);
		progress_done(&c.prog);
	}
	if (rc < 0) {
		rc = cli_error("parse", &err);
		cli_replaced("parse", parse_replaced, &res, res.ntables);
	} else if (a->json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		rc = perfdb_parse_result_json(&res, outdir.buf, a->path, &js) < 0 ? cli_oom("parse") : 0;
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
	} else {
		print_text(&res, outdir.buf, a->path, trace_mode, a->quiet);
		rc = 0;
	}
	perfdb_parse_result_release(&res);
	perfdb_strbuf_release(&outdir);
	return rc;
}
