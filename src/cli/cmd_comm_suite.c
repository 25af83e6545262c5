/*
 * perfdb comm-suite: the collection sweeps of run_comm_bench.sh as three
 * MPI launches of `perfdb comm` (docs/spec/comm.md §4, Decision 5; the plan is
 * src/comm/suite.c).  A failed launch is reported and the suite goes on;
 * the exit status says whether every launch succeeded.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"

const struct cmd_help cmd_comm_suite_help = {
	.name = "comm-suite",
	.usage = "perfdb comm-suite [OUTPUT_DIR] [--hostfile FILE] [--nproc-per-node N] [--quick]\n"
		 "         [--num-devices N ...] [--bytes-grid B ...] [--mpirun PROG] [--mpirun-args ARGS]\n"
		 "         [--dry-run] [--json] [-- COMM_ARGS ...]",
	.summary = "run the standard collective sweeps (launches mpirun)",
	.description =
		"Single node (no --hostfile): group sizes 16 8 4 2 on the 23 powers of two\n"
		"128 B .. 512 MiB, tiers from the 48 8 2 grid, into OUTPUT_DIR (default\n"
		"./hccl_bench_data). Multi-node (--hostfile): powers of two from 32 plus 384 and\n"
		"768 up to hosts x --nproc-per-node ranks, all at tier 0 (default\n"
		"./hccl_bench_inter_pod_v8.5). Three launches, one per round: all_reduce;\n"
		"all_gather and reduce_scatter; all_to_all. Arguments after `--` are passed\n"
		"to every `perfdb comm`. Exit status 1 if any launch failed.",
	.positional = "  OUTPUT_DIR  database directory for the hcom_*.csv tables (created)",
	.max_positional = 1,
};

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);
	long long x;
	return v && *v && perfdb_comm_parse_pyint(v, &x) == 0 && x > 0 && x <= LONG_MAX ? (long)x : dflt;
}

static char *self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return strdup("perfdb");
	buf[n] = '\0';
	return strdup(buf);
}

/* Split on blanks (no quoting: one word per argument). */
static size_t split_words(char *s, char **out, size_t cap)
{
	size_t n = 0;
	for (char *tok = strtok(s, " \t\n"); tok && n < cap; tok = strtok(NULL, " \t\n"))
		out[n++] = tok;
	return n;
}

/* Group sizes and message sizes from their option lists; 0, or the usage status. */
static int parse_lists(const struct cmd_help *h, const struct opt_list *nd, long **ndv,
		       const struct opt_list *bytes, long long **bv)
{
	if (nd->n && !(*ndv = calloc(nd->n, sizeof(long))))
		return cli_oom("comm-suite");
	for (size_t i = 0; i < nd->n; i++) {
		long long v;
		if (perfdb_comm_parse_pyint(nd->v[i], &v) < 0 || v < 1 || v > INT_MAX)
			return opt_usage_error(h, "argument --num-devices: invalid group size: '%s'",
					       nd->v[i]);
		(*ndv)[i] = (long)v;
	}
	if (bytes->n && !(*bv = calloc(bytes->n, sizeof(long long))))
		return cli_oom("comm-suite");
	for (size_t i = 0; i < bytes->n; i++) {
		long long v;
		if (perfdb_comm_parse_pyint(bytes->v[i], &v) < 0 || v < 1)
			return opt_usage_error(h, "argument --bytes-grid: message sizes must be "
						  "positive integers, got '%s'", bytes->v[i]);
		(*bv)[i] = v;
	}
	return 0;
}

static void on_launch_begin(void *ctx, const struct perfdb_comm_launch_result *l)
{
	char tbuf[64];
	fprintf(ctx, "\n--- [%s] %s ---\n    $ %s\n", l->title,
		perfdb_comm_suite_clock(tbuf, sizeof(tbuf), false), l->command);
	fflush(ctx);
}

static void on_launch_end(void *ctx, const struct perfdb_comm_launch_result *l)
{
	char tbuf[64];
	if (!l->started)
		fprintf(stderr, "perfdb comm-suite: warning: %s: %s, continuing\n", l->title, l->why);
	else if (l->status == 0)
		fprintf(ctx, "    OK (%s)\n", perfdb_comm_suite_clock(tbuf, sizeof(tbuf), false));
	else if (l->status == 139)
		fprintf(stderr, "perfdb comm-suite: warning: %s: exit status 139 (a rank crashed "
				"with SIGSEGV); rows written before the crash are kept, continuing\n",
			l->title);
	else
		fprintf(stderr, "perfdb comm-suite: warning: %s: exit status %d, continuing\n",
			l->title, l->status);
}

struct suite_args {
	int split;                      /* argv index of "--", or argc */
	const char *hostfile, *mpirun, *mpirun_args;
	long nproc;
	bool quick, dry, json;
	struct opt_list nd, bytes;
	const char *pos[1];
	size_t npos;
};

/* The options (those of perfdb comm after "--"); 0, or the exit status (-1: --help). */
static int parse_args(int argc, char **argv, const struct cmd_help *h, struct suite_args *a)
{
	a->split = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			a->split = i;
			break;
		}
	a->mpirun = getenv("PERFDB_MPIRUN");
	a->mpirun_args = getenv("PERFDB_MPIRUN_ARGS");
	a->nproc = env_long("NPROC", 16);
	const char *quick_env = getenv("QUICK");
	a->quick = quick_env && strcmp(quick_env, "1") == 0;
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "hostfile", .dest = &a->hostfile, .metavar = "FILE",
		  .help = "Open MPI hostfile: one host per line; multi-node mode (the rank 0 host "
			  "writes the tables: run from it or use a shared OUTPUT_DIR)" },
		{ .type = OPT_INT, .name = "nproc-per-node", .dest = &a->nproc, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "ranks per host in multi-node mode (default: $NPROC or 16)" },
		{ .type = OPT_FLAG, .name = "quick", .dest = &a->quick,
		  .help = "multi-node: the 5 sizes 1024 65536 1048576 16777216 268435456 "
			  "(default: $QUICK=1)" },
		{ .type = OPT_LIST, .name = "num-devices", .dest = &a->nd, .metavar = "N",
		  .help = "group sizes instead of the mode's list (a quick single-node run: "
			  "--num-devices 4 2)" },
		{ .type = OPT_LIST, .name = "bytes-grid", .dest = &a->bytes, .metavar = "B",
		  .help = "message sizes instead of the mode's grid" },
		{ .type = OPT_STRING, .name = "mpirun", .dest = &a->mpirun, .metavar = "PROG",
		  .help = "MPI launcher (default: $PERFDB_MPIRUN or mpirun)" },
		{ .type = OPT_STRING, .name = "mpirun-args", .dest = &a->mpirun_args, .metavar = "ARGS",
		  .help = "extra launcher arguments, split on blanks, e.g. '--oversubscribe "
			  "--mca btl self,vader' (default: $PERFDB_MPIRUN_ARGS)" },
		{ .type = OPT_FLAG, .name = "dry-run", .dest = &a->dry,
		  .help = "print the launch commands and exit" },
		{ .type = OPT_FLAG, .name = "json", .dest = &a->json,
		  .help = "print a JSON summary on stdout (the launches' output goes to stderr)" },
		{ .type = OPT_END },
	};
	int rc = opt_parse(a->split, argv, opts, h, a->pos, &a->npos);
	return rc == 1 ? -1 : rc;
}

int cmd_comm_suite(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	const struct cmd_help *h = &cmd_comm_suite_help;
	struct suite_args a = { 0 };
	int rc = parse_args(argc, argv, h, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	const char *hostfile = a.hostfile, *mpirun = a.mpirun, *mpirun_args = a.mpirun_args;
	bool dry = a.dry, json = a.json;
	int split = a.split;
	const char **pos = a.pos;
	size_t npos = a.npos;
	struct opt_list nd = a.nd, bytes = a.bytes;
	long *ndv = NULL;
	long long *bv = NULL;
	char *words_buf = NULL, *words[256];
	size_t nwords = 0;
	char *exe = self_exe(), *outabs = NULL;
	struct perfdb_strbuf text = PERFDB_STRBUF_INIT;
	struct perfdb_comm_suite s;
	struct perfdb_comm_suite_result res = { 0 };
	perfdb_comm_suite_init(&s);
	int status = parse_lists(h, &nd, &ndv, &bytes, &bv);
	if (status)
		goto out;
	if (mpirun_args && (words_buf = strdup(mpirun_args)))
		nwords = split_words(words_buf, words, sizeof(words) / sizeof(words[0]));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	/* the output directory is passed absolute: ranks may start elsewhere */
	outabs = perfdb_comm_path_absolute(npos ? pos[0] : hostfile ? "./hccl_bench_inter_pod_v8.5"
									: "./hccl_bench_data");
	struct perfdb_comm_suite_opts so = {
		.output_dir = outabs, .hostfile = hostfile, .nproc = a.nproc,
		.num_devices = ndv, .nnum_devices = nd.n, .bytes = bv, .nbytes = bytes.n,
		.quick = a.quick, .mpirun = mpirun && *mpirun ? mpirun : "mpirun",
		.mpirun_args = (const char *const *)words, .nmpirun_args = nwords, .perfdb = exe,
		.comm_args = split < argc ? (const char *const *)argv + split + 1 : NULL,
		.ncomm_args = split < argc ? (size_t)(argc - split - 1) : 0,
	};
	if (!outabs || !exe) {
		status = cli_oom("comm-suite");
	} else if (perfdb_comm_suite_plan(&so, &s, &err) < 0) {
		status = cli_error("comm-suite", &err);
	} else if (dry) {
		rc = json ? perfdb_comm_suite_plan_json(&s, &text) : perfdb_comm_suite_plan_text(&s, &text);
		status = cli_print_text("comm-suite", stdout, rc, &text);
	} else {
		FILE *log = json ? stderr : stdout;
		struct perfdb_comm_suite_events ev = { log, on_launch_begin, on_launch_end };
		if (perfdb_mkdir_p(outabs, &err) == 0)
			cli_print_text("comm-suite", log, perfdb_comm_suite_header_text(&s, outabs, &text),
				       &text);
		if (perfdb_comm_suite_run(&s, outabs, json, &ev, &res, &err) < 0) {
			status = cli_error("comm-suite", &err);
		} else {
			rc = perfdb_comm_suite_summary_text(&s, &res, &text);
			status = cli_print_text("comm-suite", log, rc, &text);
			if (status == 0 && json) {
				rc = perfdb_comm_suite_json(&s, &res, outabs, &text);
				status = cli_print_text("comm-suite", stdout, rc, &text);
			}
			status = status ? status : res.nfailed ? 1 : 0;
		}
	}
out:
	perfdb_comm_suite_result_release(&res);
	perfdb_comm_suite_release(&s);
	perfdb_strbuf_release(&text);
	free(outabs);
	free(exe);
	free(words_buf);
	free(ndv);
	free(bv);
	free(nd.v);
	free(bytes.v);
	return status;
}
