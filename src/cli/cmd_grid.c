/*
 * perfdb grid: theory shape rows from model configs (docs/spec/grid.md;
 * replaces generate_shape_grid.py).  docs/grid.md describes the behaviour.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/fsio.h"
#include "grid/grid.h"
#include "perfdb/op_mapping.h"
#include "progress.h"

/* the reference's flags (generate_shape_grid.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	"target-models", OPT_REFERENCE_DB, "rows", "seed", "max-hbm-gb", NULL
};

const struct cmd_help cmd_grid_help = {
	.name = "grid",
	.reference = reference_flags,
	.usage = "perfdb grid [--target-models IDS] [--model-config PATH ...] [--rows N] [--seed S]\n"
		 "                  [--max-hbm-gb GB] [--max-row-seconds S] [--dry-run] [--json]\n"
		 "                  [database flags]",
	.summary = "append theory shape rows (model-derived grids) to the database tables",
	.description =
		"For every <Kernel>.csv of the database (recursively) that the grid\n"
		"configuration routes to a pattern, generates candidate shapes from axis\n"
		"grids and model configs, copies the table's first row as the template\n"
		"(durations 0), drops rows over the HBM budget, rows the table's device\n"
		"could not replay within --max-row-seconds and rows the table already\n"
		"has (same signature), and appends the rest sorted by input shapes. Every\n"
		"input is checked first; each table is then replaced atomically under the\n"
		"database lock. Without --database-path or --vllm-version the whole\n"
		"database root is searched.",
};

struct ctx {
	struct progress prog;
	int quiet;
	bool json;
	uint64_t budget;                       /* --max-hbm-gb in bytes, for [MEMORY] */
	double max_row_s;                      /* --max-row-seconds, for [TIME] */
	long rows;
	double gb;
	const struct perfdb_grid_session *s;   /* for the header */
	struct perfdb_strbuf text;             /* what the stage words for people */
};

static void on_progress(void *vctx, size_t done, size_t total)
{
	struct ctx *c = vctx;
	c->prog.total = total;
	progress_update(&c->prog, done);
}

static void on_memory(void *vctx, const char *file, size_t filtered, size_t total)
{
	struct ctx *c = vctx;
	if (c->quiet)
		return;
	progress_done(&c->prog);
	cli_print_text("grid", stderr, perfdb_grid_memory_text(file, filtered, total, c->budget, &c->text),
		       &c->text);
}

static void on_slow(void *vctx, const char *file, const char *device, size_t filtered, size_t total)
{
	struct ctx *c = vctx;
	if (c->quiet)
		return;
	progress_done(&c->prog);
	cli_print_text("grid", stderr,
		       perfdb_grid_slow_text(file, device, filtered, total, c->max_row_s, &c->text), &c->text);
}

static int parse_seed(const char *v, uint64_t *out)
{
	const char *p = v;
	while (*p == ' ')
		p++;
	if (*p == '+')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(p, &end, 10);
	while (*end == ' ')
		end++;
	if (errno || *end)
		return -1;
	*out = x;
	return 0;
}

static void on_start(void *vctx)
{
	struct ctx *c = vctx;
	if (!c->json)
		cli_print_text("grid", stdout, perfdb_grid_session_header(c->s, c->rows, c->gb, &c->text),
			       &c->text);
}

static const char *grid_replaced(const void *ctx, size_t i)
{
	const struct perfdb_grid_result *r = ctx;
	return r->files[i].written ? r->files[i].path : NULL;
}

struct cmd_grid_args {
	const char *targets, *seed_s, *grid_cfg, *opmap_path;
	struct opt_list model_cfgs;
	long rows;
	double gb, max_row_s;
	bool dry, json, quiet;
};

/* 0, -1 after --help, or the usage status. */
static int parse_args(int argc, char **argv, struct perfdb_db_opts *o, struct cmd_grid_args *a)
{
	*a = (struct cmd_grid_args){ .rows = 1000, .gb = 32.0, .max_row_s = 60.0 };
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "target-models", .dest = &a->targets, .metavar = "IDS",
		  .help = "comma-separated model ids (e.g. deepseek-ai/DeepSeek-V3,Qwen/Qwen3-32B): "
			  "GEMM (N,K) from these models, and the models of the attention, MoE and "
			  "split_qkv generators (default: every built-in model, full GEMM grid)" },
		{ .type = OPT_LIST, .name = "model-config", .dest = &a->model_cfgs, .metavar = "PATH",
		  .help = "a HuggingFace config.json, a directory holding one, or a directory of "
			  "model directories; each becomes a model whose id is its path (repeatable)" },
		{ .type = OPT_INT, .name = "rows", .dest = &a->rows, .metavar = "N", .has_min = true,
		  .min = 0,
		  .help = "at most N new rows per CSV, sampled with --seed (0 = no cap; default 1000)" },
		{ .type = OPT_STRING, .name = "seed", .dest = &a->seed_s, .metavar = "S",
		  .help = "seed of the sampling PRNG, 0 to 2^64-1 (default: chosen at random and "
			  "printed)" },
		{ .type = OPT_DOUBLE, .name = "max-hbm-gb", .dest = &a->gb, .metavar = "GB",
		  .help = "drop rows whose inputs and outputs exceed GB GiB (0 disables; default 32)" },
		{ .type = OPT_DOUBLE, .name = "max-row-seconds", .dest = &a->max_row_s, .metavar = "S",
		  .help = "drop rows whose replay on the table's device (a warm-up and 30 samples at its "
			  "peaks, by the row's roofline) would exceed S seconds; a device without peaks "
			  "keeps them (0 disables; default 60, microbench's --row-timeout)" },
		{ .type = OPT_STRING, .name = "grid-config", .dest = &a->grid_cfg, .metavar = "PATH",
		  .help = "grid configuration (default: the installed grid.yaml)" },
		{ .type = OPT_STRING, .name = "op-mapping", .dest = &a->opmap_path, .metavar = "PATH",
		  .help = "op_mapping.yaml for routing flags (default: <database>/op_mapping.yaml "
			  "when present)" },
		{ .type = OPT_FLAG, .name = "dry-run", .dest = &a->dry,
		  .help = "print per-CSV candidate, filtered and appended counts; write nothing" },
		{ .type = OPT_FLAG, .name = "json", .dest = &a->json,
		  .help = "print a JSON summary instead of the text lines (keys in docs/grid.md)" },
		{ .type = OPT_FLAG, .name = "quiet", .short_name = 'q', .dest = &a->quiet,
		  .help = "no progress and no [MEMORY] or [TIME] lines on stderr" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_grid_help, pos, &npos);
	return rc == 1 ? -1 : rc;
}

/* The values a flag's type does not check; 0 or the usage error's status. */
static int check_values(const struct cmd_grid_args *a, uint64_t *seed)
{
	if (a->seed_s && parse_seed(a->seed_s, seed) < 0)
		return opt_usage_error(&cmd_grid_help,
				       "argument --seed: invalid value: '%s' (an integer from 0 to "
				       "18446744073709551615)", a->seed_s);
	if (!(a->gb >= 0) || a->gb > 8e9)
		return opt_usage_error(&cmd_grid_help,
				       "argument --max-hbm-gb: invalid value: '%g' (0 disables the "
				       "filter; at most 8e9)", a->gb);
	if (!(a->max_row_s >= 0) || a->max_row_s > 1e12)
		return opt_usage_error(&cmd_grid_help,
				       "argument --max-row-seconds: invalid value: '%g' (0 disables the "
				       "filter; at most 1e12)", a->max_row_s);
	return 0;
}

int cmd_grid(int argc, char **argv, struct cmd_db *cdb)
{
	struct perfdb_db_opts *o = &cdb->o;   /* filled by DB_OPTIONS, finished below */
	struct cmd_grid_args args, *a = &args;
	int rc = parse_args(argc, argv, o, a);
	if (rc) {
		free(a->model_cfgs.v);
		return rc < 0 ? 0 : rc;
	}
	uint64_t seed = 0;
	if ((rc = check_values(a, &seed)) || (rc = db_opts_finish(cdb, &cmd_grid_help))) {
		free(a->model_cfgs.v);
		return rc;
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf db = PERFDB_STRBUF_INIT;
	struct perfdb_grid_session s = { 0 };
	/*
	 * the database directory: the reference walks the whole root without
	 * versions; a native device's home is named by --device alone
	 */
	if (!o->database_path && !o->vllm_version && !(o->native && o->device_given)) {
		const char *src;
		rc = perfdb_db_root(o, &db, &src, &err);
	} else {
		rc = perfdb_db_resolve(o, &db, &err);
	}
	struct ctx c = { .quiet = a->quiet || a->json, .json = a->json, .rows = a->rows,
			 .gb = a->gb, .s = &s, .max_row_s = a->max_row_s, .text = PERFDB_STRBUF_INIT,
			 .budget = perfdb_grid_hbm_budget(a->gb) };
	struct perfdb_grid_request rq = {
		.db_dir = db.buf, .grid_config = a->grid_cfg, .op_mapping = a->opmap_path,
		.model_configs = a->model_cfgs.v, .nmodel_configs = a->model_cfgs.n, .targets = a->targets,
		.seed_given = a->seed_s != NULL,
		.base = { .rows = (size_t)a->rows, .seed = seed, .max_hbm_bytes = c.budget,
			  .reg = &cdb->reg, .max_row_s = a->max_row_s,
			  .dry_run = a->dry, .lock_timeout = -1, .start = on_start,
			  .progress = on_progress, .memory = on_memory, .slow = on_slow, .ctx = &c },
	};
	if (rc == 0) {
		progress_init(&c.prog, "grid", 0, c.quiet);
		rc = perfdb_grid_session_run(&rq, &s, &err);
		progress_done(&c.prog);
	}
	if (rc < 0 && s.bad_targets) {
		rc = opt_usage_error(&cmd_grid_help, "argument --target-models: %s", err.msg);
	} else if (rc < 0) {
		rc = cli_error("grid", &err);
		cli_replaced("grid", grid_replaced, &s.res, s.res.nfiles);
	} else if (a->json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		if (perfdb_grid_session_json(&s, db.buf, &js) < 0)
			rc = cli_oom("grid");
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
	} else {
		rc = cli_print_text("grid", stdout, perfdb_grid_session_text(&s, db.buf, &c.text),
				    &c.text);
	}
	perfdb_grid_session_release(&s);
	perfdb_strbuf_release(&c.text);
	perfdb_strbuf_release(&db);
	free(a->model_cfgs.v);
	return rc;
}
