/*
 * perfdb comm: collective microbenchmarks over MPI (docs/spec/comm.md §1-§3 and
 * Decisions 1-4; replaces comm_bench/generate_comm_microbench.py).
 *
 *   mpirun -np N perfdb comm [--ops …] [--num-devices …] [--database-path DIR]
 *
 * Every rank parses the same arguments before MPI starts; only the rank a
 * launcher calls 0 (or a process started without one) prints usage errors
 * and help.  After MPI_Init only world rank 0 prints: the run's header and
 * one line per case on stdout, progress and warnings on stderr, and the
 * reference's last line "Completed N benchmarks. Results saved to …".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "builtin.h"
#include "backend/module.h"
#include "backend/mpi_world.h"
#include "backend/transport.h"
#include "comm/comm.h"

/* the reference's flags (generate_comm_microbench.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	"database-path", "ops", "num-devices", "topology-tier", "grid-shape", "dtype",
	"bytes-grid", "output-csv", NULL
};

const struct cmd_help cmd_comm_help = {
	.name = "comm",
	.reference = reference_flags,
	.usage = "mpirun -np N perfdb comm [--ops OP ...] [--num-devices N ...] [--topology-tier T ...]\n"
		 "         [--grid-shape D ...] [--dtype DTYPE] [--bytes-grid B ...]\n"
		 "         [--database-path DIR | --output-csv FILE] [--backend mpi|nccl|hccl] [options]",
	.summary = "collective microbenchmarks over MPI (run under mpirun)",
	.description =
		"Measures all_reduce, all_gather, reduce_scatter and all_to_all on groups of\n"
		"ranks [0..n-1] of the MPI world, one group per --num-devices value, for every\n"
		"size of the bytes grid. Per size: one checked run, warm-up, then timed\n"
		"iterations (a barrier, then the collective); an iteration's time is the\n"
		"slowest rank's and Duration(us) is their median. Rank 0 appends one row per\n"
		"size to hcom_allReduce_.csv, hcom_allGather_.csv, hcom_reduceScatter_.csv or\n"
		"hcom_alltoallv_.csv (docs/comm.md).",
};

struct cli {
	struct opt_list ops, nd, tiers, grid, bytes;
	const char *dtype, *database_path, *output_csv, *backend, *overhead;
	long warmup, iters, min_iters, repeats;
	double budget, contention;
	bool malloc_tune, json, quiet, require_quiet;
};

static const char *const dtype_choices[] = {
	"torch.bfloat16", "torch.float16", "torch.float32", "torch.int8", NULL,
};
static const char *const backend_choices[] = { "mpi", "hccl", "nccl", NULL };

/* ---- output of rank 0 ------------------------------------------------- */

struct ui {
	bool json, quiet, tty;
	bool progress_shown;
	double last;
	size_t skipped_world;
	const struct perfdb_comm_opts *o;
	struct perfdb_strbuf text;   /* a line or the header, worded by the stage */
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void clear_progress(struct ui *u)
{
	if (u->progress_shown && u->tty)
		fprintf(stderr, "\r%*s\r", 79, "");
	u->progress_shown = false;
}

/* Print what the stage worded on stdout, or that it ran out of memory. */
static void put(struct ui *u, int rc)
{
	if (rc < 0)
		fprintf(stderr, "perfdb comm: warning: out of memory: a line of the table is not shown\n");
	fputs(u->text.buf, stdout);
	fflush(stdout);
	perfdb_strbuf_reset(&u->text);
}

static void on_warn(void *ctx, const char *msg)
{
	struct ui *u = ctx;
	if (strstr(msg, "larger than the world"))
		u->skipped_world++;
	if (u->quiet)
		return;
	clear_progress(u);
	fprintf(stderr, "perfdb comm: warning: %s\n", msg);
}

static void on_begin(void *ctx, const struct perfdb_comm_report *r, size_t ncases)
{
	struct ui *u = ctx;
	const struct perfdb_comm_context *x = &r->ctx;
	const struct perfdb_comm_opts *o = u->o;
	u->last = mono();
	if (!u->quiet && !u->tty)
		fprintf(stderr, "perfdb comm: %zu case(s) on %d rank(s)\n", ncases, x->world_size);
	if (r->preflight_ran && !u->quiet) {
		char line[512];
		perfdb_preflight_line(&r->pf, line, sizeof(line));
		fprintf(stderr, "perfdb comm: preflight: %s\n", line);
	}
	if (!u->json)
		put(u, perfdb_comm_header_text(r, o, &u->text));
}

static void on_batch(void *ctx, const struct perfdb_comm_batch *b, size_t i, size_t n)
{
	struct ui *u = ctx;
	if (u->quiet || u->tty)
		return;
	fprintf(stderr, "perfdb comm: [%zu/%zu] %s num_devices=%ld tier=%ld\n", i + 1, n,
		perfdb_comm_op_name(b->op), b->num_devices, b->tier);
}

static void on_case_start(void *ctx, const struct perfdb_comm_case *c, size_t i, size_t n)
{
	struct ui *u = ctx;
	if (u->quiet)
		return;
	double t = mono();
	if (u->tty) {
		fprintf(stderr, "\rperfdb comm: [%zu/%zu] %s num_devices=%ld %lld bytes   ", i + 1, n,
			perfdb_comm_op_name(c->op), c->num_devices, c->message_bytes);
		u->progress_shown = true;
	} else if (t - u->last >= 5.0) {
		fprintf(stderr, "perfdb comm: [%zu/%zu] %s num_devices=%ld %lld bytes\n", i + 1, n,
			perfdb_comm_op_name(c->op), c->num_devices, c->message_bytes);
		u->last = t;
	}
}

static void on_case_done(void *ctx, const struct perfdb_comm_case *c)
{
	struct ui *u = ctx;
	if (u->json)
		return;
	clear_progress(u);
	put(u, perfdb_comm_case_text(c, u->o, &u->text));
}

/* ---- arguments --------------------------------------------------------- */

static int int_list(const struct cmd_help *h, const char *name, const struct opt_list *l,
		    long min, long *out)
{
	for (size_t i = 0; i < l->n; i++) {
		long long v;
		if (perfdb_comm_parse_pyint(l->v[i], &v) < 0 || v > LONG_MAX || v < LONG_MIN)
			return opt_usage_error(h, "argument --%s: invalid int value: '%s'", name, l->v[i]);
		if (v < min)
			return opt_usage_error(h, "argument --%s: must be at least %ld, got %lld", name,
					       min, v);
		out[i] = (long)v;
	}
	return 0;
}

/* Silence stdout/stderr while a rank other than the launcher's 0 parses. */
static int mute(int *saved)
{
	saved[0] = dup(1);
	saved[1] = dup(2);
	int null = open("/dev/null", O_WRONLY);
	if (null < 0 || saved[0] < 0 || saved[1] < 0)
		return -1;
	dup2(null, 1);
	dup2(null, 2);
	close(null);
	return 0;
}

static void unmute(int *saved)
{
	fflush(stdout);
	fflush(stderr);
	if (saved[0] >= 0) {
		dup2(saved[0], 1);
		close(saved[0]);
	}
	if (saved[1] >= 0) {
		dup2(saved[1], 2);
		close(saved[1]);
	}
}

static char *join_args(int argc, char **argv)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addstr(&sb, "perfdb");
	for (int i = 0; i < argc; i++) {
		perfdb_strbuf_addch(&sb, ' ');
		perfdb_strbuf_addstr(&sb, argv[i]);
	}
	return perfdb_strbuf_detach(&sb, NULL);
}

/* The options (the table is long: two pieces); returns how many were written. */
static size_t options_main(struct cli *c, struct opt *out)
{
	const struct opt t[] = {
		{ .type = OPT_STRING, .name = "database-path", .dest = &c->database_path,
		  .metavar = "DIR",
		  .help = "directory of the tables hcom_allReduce_.csv, hcom_allGather_.csv, "
			  "hcom_reduceScatter_.csv and hcom_alltoallv_.csv (created if needed; rows "
			  "are appended; a run report goes to DIR/reports/). Without it and "
			  "--output-csv, results are only printed" },
		{ .type = OPT_LIST, .name = "ops", .dest = &c->ops, .metavar = "OP",
		  .choices = perfdb_comm_op_names,
		  .help = "collectives to measure (default: all four)" },
		{ .type = OPT_LIST, .name = "num-devices", .dest = &c->nd, .metavar = "N",
		  .help = "group sizes: each is the ranks [0..N-1] of the world (default: 16); a "
			  "group larger than the world is skipped with a warning" },
		{ .type = OPT_LIST, .name = "topology-tier", .dest = &c->tiers, .metavar = "T",
		  .help = "tiers to label the rows with (0 = outermost grid dimension); default: the "
			  "tier of [0..N-1] on --grid-shape. A group larger than the tier's span is "
			  "skipped with a warning" },
		{ .type = OPT_LIST, .name = "grid-shape", .dest = &c->grid, .metavar = "D",
		  .help = "communication grid, outer to inner (default: 48 8 2 = pods x nodes x "
			  "dies of ATLAS_800_A3)" },
		{ .type = OPT_STRING, .name = "dtype", .dest = &c->dtype, .choices = dtype_choices,
		  .help = "element type; sums of bf16 and fp16 are rounded once per add, as on a "
			  "device (default: torch.bfloat16)" },
		{ .type = OPT_LIST, .name = "bytes-grid", .dest = &c->bytes, .metavar = "B",
		  .help = "message sizes in bytes, used in this order (default: 1024 2048 ... "
			  "536870912, the 20 powers of two); what a size means per collective: "
			  "docs/comm.md" },
		{ .type = OPT_STRING, .name = "output-csv", .dest = &c->output_csv, .metavar = "FILE",
		  .help = "append every row to FILE instead (one --ops value only)" },
		{ .type = OPT_STRING, .name = "backend", .dest = &c->backend,
		  .choices = backend_choices,
		  .help = "mpi: host buffers over MPI (default); hccl: Ascend NPUs, CANN's libhccl "
			  "loaded at run time (docs/comm.md); nccl needs a perfdb built with CUDA" },
		{ .type = OPT_STRING, .name = "overhead-table", .dest = &c->overhead,
		  .metavar = "FILE",
		  .help = "CSV op,num_devices,overhead_us of measured dispatch overheads added to "
			  "Duration(us) (default: none; the reference's hard-coded values are in "
			  "share/perfdb/comm_overhead_vllm0.18_cann8.5.csv)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &c->json,
		  .help = "print the run report as JSON instead of the table (keys in docs/comm.md)" },
		{ .type = OPT_FLAG, .name = "quiet", .short_name = 'q', .dest = &c->quiet,
		  .help = "no progress and no warnings on stderr" },
	};
	memcpy(out, t, sizeof(t));
	return sizeof(t) / sizeof(t[0]);
}

static size_t options_measurement(struct cli *c, struct opt *out)
{
	const struct opt t[] = {
		{ .type = OPT_GROUP, .name = "measurement" },
		{ .type = OPT_INT, .name = "warmup", .dest = &c->warmup, .metavar = "N",
		  .has_min = true, .min = 0,
		  .help = "warm-up iterations per size (default: 20; fewer once a quarter of the "
			  "time budget is spent)" },
		{ .type = OPT_INT, .name = "iters", .dest = &c->iters, .metavar = "N",
		  .has_min = true, .min = 1, .help = "timed iterations per size (default: 100)" },
		{ .type = OPT_INT, .name = "min-iters", .dest = &c->min_iters, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "timed iterations even when over the time budget (default: 10)" },
		{ .type = OPT_DOUBLE, .name = "time-budget", .dest = &c->budget, .metavar = "SECONDS",
		  .help = "warm-up plus timing per size before iterations are cut (default: 2)" },
		{ .type = OPT_INT, .name = "repeats", .dest = &c->repeats, .metavar = "N",
		  .has_min = true, .min = 0,
		  .help = "measure a size again up to N times while other processes use the CPUs "
			  "(default: 2)" },
		{ .type = OPT_DOUBLE, .name = "contention", .dest = &c->contention, .metavar = "CPUS",
		  .help = "CPU used by other processes, in CPUs, from which a size counts as "
			  "contended and is measured again (default: 0.25)" },
		{ .type = OPT_FLAG, .name = "require-quiet", .dest = &c->require_quiet,
		  .help = "refuse to start when rank 0's preflight finds its host busy (other processes "
			  "using 0.25 CPUs or more, steal 2% or more, memory bandwidth below 80% of the "
			  "host's quiet figure)" },
		{ .type = OPT_FLAG, .name = "malloc-tune", .dest = &c->malloc_tune,
		  .help = "fix glibc's malloc thresholds (no mmap, no trimming) so MPI's per-call "
			  "scratch buffers are reused (default: glibc defaults; docs/comm.md)" },
		{ .type = OPT_END },
	};
	memcpy(out, t, sizeof(t));
	return sizeof(t) / sizeof(t[0]);
}

/* --backend and --ops; 0 or the usage status. */
static int fill_ops(const struct cmd_help *h, struct cli *c, struct perfdb_comm_opts *o,
		    enum perfdb_comm_op *ops)
{
	o->nccl = strcmp(c->backend, "nccl") == 0;
	if (o->nccl && !perfdb_module_expected("cuda"))
		return opt_usage_error(h, "argument --backend: 'nccl' needs a perfdb built with the "
					  "CUDA backend (NCCL); this build has only 'mpi'");
	size_t nops = c->ops.n ? c->ops.n : PERFDB_COMM_NOPS;
	for (size_t i = 0; i < nops; i++)
		ops[i] = (enum perfdb_comm_op)(c->ops.n ? perfdb_comm_op_from_name(c->ops.v[i]) : (int)i);
	if (c->output_csv && nops > 1) {
		fprintf(stderr, "usage: %s\n", h->usage);
		fprintf(stderr, "perfdb comm: error: --output-csv only supports a single --ops value. "
				"Use --database-path for multiple ops.\n");
		return 2;
	}
	o->ops = ops;
	o->nops = nops;
	return 0;
}

/* --num-devices, --topology-tier, --grid-shape; 0 or the exit status. */
static int fill_lists(const struct cmd_help *h, struct cli *c, struct perfdb_comm_opts *o,
		      long **bufs)
{
	int rc;
	size_t nnd = c->nd.n ? c->nd.n : 1;
	size_t ntier = c->tiers.n, ngrid = c->grid.n ? c->grid.n : 3;
	bufs[0] = calloc(nnd + 1, sizeof(long));
	bufs[1] = calloc(ntier + 1, sizeof(long));
	bufs[2] = calloc(ngrid + 1, sizeof(long));
	if (!bufs[0] || !bufs[1] || !bufs[2]) {
		fprintf(stderr, "perfdb comm: error: out of memory\n");
		return 1;
	}
	if (c->nd.n) {
		if ((rc = int_list(h, "num-devices", &c->nd, 1, bufs[0])))
			return rc;
	} else {
		bufs[0][0] = 16;
	}
	size_t distinct = 0;
	for (size_t i = 0; i < nnd; i++) {
		size_t j = 0;
		while (j < i && bufs[0][j] != bufs[0][i])
			j++;
		distinct += j == i;
	}
	if (distinct > 64)
		return opt_usage_error(h, "argument --num-devices: at most 64 different group sizes");
	o->num_devices = bufs[0];
	o->nnum_devices = nnd;
	if (ntier) {
		if ((rc = int_list(h, "topology-tier", &c->tiers, 0, bufs[1])))
			return rc;
		o->tiers = bufs[1];
		o->ntiers = ntier;
	}
	if (c->grid.n) {
		if (c->grid.n > PERFDB_COMM_MAX_DIMS)
			return opt_usage_error(h, "argument --grid-shape: at most %d dimensions",
					       PERFDB_COMM_MAX_DIMS);
		if ((rc = int_list(h, "grid-shape", &c->grid, 1, bufs[2])))
			return rc;
		for (size_t i = 0; i < c->grid.n; i++)
			o->grid.dim[i] = bufs[2][i];
		o->grid.ndim = c->grid.n;
	}
	return 0;
}

/* --dtype and --bytes-grid; 0 or the exit status. */
static int fill_bytes(const struct cmd_help *h, struct cli *c, struct perfdb_comm_opts *o,
		      long long **bytes)
{
	o->dtype = (enum perfdb_comm_dtype)perfdb_comm_dtype_from_name(c->dtype);
	size_t esz = perfdb_comm_dtype(o->dtype)->size;
	if (c->bytes.n) {
		*bytes = calloc(c->bytes.n, sizeof(long long));
		if (!*bytes) {
			fprintf(stderr, "perfdb comm: error: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < c->bytes.n; i++) {
			long long v;
			if (perfdb_comm_parse_pyint(c->bytes.v[i], &v) < 0)
				return opt_usage_error(h, "argument --bytes-grid: invalid int value: '%s'",
						       c->bytes.v[i]);
			if (v <= 0)
				return opt_usage_error(h, "argument --bytes-grid: message sizes must be "
							  "positive, got %lld", v);
			if ((unsigned long long)v / esz > INT_MAX)
				return opt_usage_error(h, "argument --bytes-grid: %lld bytes is more than "
							  "%d elements of %s (MPI counts are int)",
						       v, INT_MAX, c->dtype);
			(*bytes)[i] = v;
		}
		o->bytes = *bytes;
		o->nbytes = c->bytes.n;
	} else {
		o->bytes = perfdb_comm_default_bytes;
		o->nbytes = PERFDB_COMM_DEFAULT_NBYTES;
	}
	return 0;
}

static int parse(int argc, char **argv, struct cli *c, struct perfdb_comm_opts *o,
		 long **bufs, long long **bytes, enum perfdb_comm_op *ops)
{
	const struct cmd_help *h = &cmd_comm_help;
	struct opt opts[64];
	size_t n = options_main(c, opts);
	options_measurement(c, opts + n);
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, h, pos, &npos);
	if (rc)
		return rc == 1 ? -1 : 2;
	if ((rc = fill_ops(h, c, o, ops)) || (rc = fill_lists(h, c, o, bufs)) ||
	    (rc = fill_bytes(h, c, o, bytes)))
		return rc;
	if (!(c->budget > 0) || !isfinite(c->budget))
		return opt_usage_error(h, "argument --time-budget: must be a positive number of seconds");
	if (!(c->contention > 0) || !isfinite(c->contention))
		return opt_usage_error(h, "argument --contention: must be a positive number of CPUs");
	o->output_csv = c->output_csv && *c->output_csv ? c->output_csv : NULL;
	o->database_path = c->database_path && *c->database_path ? c->database_path : NULL;
	o->warmup = c->warmup;
	o->iters = c->iters;
	o->min_iters = c->min_iters;
	o->time_budget = c->budget;
	o->repeats = c->repeats;
	o->require_quiet = c->require_quiet;
	o->contention = c->contention;
	o->malloc_tune = c->malloc_tune;
	return 0;
}


/*
 * The arguments, on every rank; only the launcher's rank 0 talks about
 * them.  0, -1 after --help, or the exit status.
 */
static int read_args(int argc, char **argv, struct cli *c, struct perfdb_comm_opts *o,
		     long **bufs, long long **bytes, enum perfdb_comm_op *ops,
		     struct perfdb_comm_overhead *overhead)
{
	int launcher = perfdb_mpi_launcher_rank();
	int saved[2] = { -1, -1 };
	if (launcher > 0 && mute(saved) < 0)
		launcher = 0;
	int rc = parse(argc, argv, c, o, bufs, bytes, ops);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (rc == 0 && c->overhead) {
		if (perfdb_comm_overhead_load(overhead, c->overhead, &err) < 0)
			rc = cli_error("comm", &err);
		else
			o->overhead = overhead;
	}
	if (launcher > 0)
		unmute(saved);
	return rc;
}

/* Rank 0's table end, summary and exit status of a run that went through. */
static int print_outcome(const struct cli *c, const struct perfdb_comm_opts *o,
			 const struct perfdb_comm_report *rep, const struct ui *ui, int world)
{
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT, err = PERFDB_STRBUF_INIT;
	int status = 0;
	if (c->json && perfdb_comm_report_json(rep, o, &out) < 0)
		status = -PERFDB_ENOMEM;
	if (status == 0)
		status = perfdb_comm_outcome_text(rep, ui->skipped_world, world, c->json, c->quiet, &out, &err);
	fputs(out.buf, stdout);
	fputs(err.buf, stderr);
	perfdb_strbuf_release(&out);
	perfdb_strbuf_release(&err);
	return status < 0 ? cli_oom("comm") : status;
}

/* MPI, the transport and the run, on every rank; every rank returns rank 0's status. */
static int measure(const struct cli *c, struct perfdb_comm_opts *o, int argc, char **argv)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	int status = 0, rc;
	struct perfdb_mpi_world w;
	if (perfdb_mpi_init(&argc, &argv, o->malloc_tune, &w, &err) < 0)
		return cli_error("comm", &err);
	struct ui ui = {
		.json = c->json, .quiet = c->quiet, .tty = w.rank == 0 && isatty(2), .o = o,
		.text = PERFDB_STRBUF_INIT,
	};
	struct perfdb_comm_events ev = {
		.warn = on_warn, .begin = on_begin, .batch = on_batch,
		.case_start = on_case_start, .case_done = on_case_done, .ctx = &ui,
	};
	/* the transport: MPI's, HCCL (CANN opened by its open), or the cuda module's NCCL */
	struct perfdb_comm_transport tr;
	bool speaker = false;
	if (perfdb_comm_transport_start(c->backend, MPI_COMM_WORLD, &tr, &speaker, &err) < 0) {
		if (speaker)
			cli_error("comm", &err);
		perfdb_mpi_finalize();
		return 1;
	}
	o->transport = &tr;
	struct perfdb_comm_report rep;
	perfdb_comm_report_init(&rep);
	bool fatal = false;
	rc = perfdb_comm_run(o, &ev, &rep, &fatal, &err);
	perfdb_comm_transport_release(&tr);
	perfdb_strbuf_release(&ui.text);
	if (w.rank == 0)
		clear_progress(&ui);
	if (fatal) {
		fprintf(stderr, "perfdb comm: error: rank %d: %s\n", w.rank,
			err.msg[0] ? err.msg : "MPI failure");
		fflush(NULL);
		perfdb_mpi_abort(1);
		return 1;
	}
	if (w.rank == 0) {
		if (rc < 0)
			status = cli_error("comm", &err);
		else
			status = print_outcome(c, o, &rep, &ui, w.size);
		fflush(stdout);
	} else if (rc < 0) {
		status = 1;
	}
	/* every rank exits with rank 0's status */
	status = perfdb_mpi_share_status(status);
	perfdb_comm_report_release(&rep);
	perfdb_mpi_finalize();
	return status;
}

int cmd_comm(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	struct perfdb_comm_opts o;
	perfdb_comm_opts_defaults(&o);
	struct cli c = {
		.dtype = "torch.bfloat16", .backend = "mpi", .warmup = o.warmup, .iters = o.iters,
		.min_iters = o.min_iters, .repeats = o.repeats, .budget = o.time_budget,
		.contention = o.contention,
	};
	long *bufs[3] = { NULL, NULL, NULL };
	long long *bytes = NULL;
	enum perfdb_comm_op ops[64];
	struct perfdb_comm_overhead overhead;
	perfdb_comm_overhead_init(&overhead);
	char *cmdline = NULL;
	int status = 0;

	int rc = read_args(argc, argv, &c, &o, bufs, &bytes, ops, &overhead);
	if (rc) {
		status = rc < 0 ? 0 : rc;   /* -1: help printed */
		goto out;
	}
	cmdline = join_args(argc, argv);
	o.command_line = cmdline;

	status = measure(&c, &o, argc, argv);
out:
	perfdb_comm_overhead_release(&overhead);
	free(cmdline);
	free(bytes);
	for (size_t i = 0; i < 3; i++)
		free(bufs[i]);
	free(c.ops.v);
	free(c.nd.v);
	free(c.tiers.v);
	free(c.grid.v);
	free(c.bytes.v);
	return status;
}
