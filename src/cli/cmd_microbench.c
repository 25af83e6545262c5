/*
 * perfdb microbench: replay operators and write the measurements back
 * (docs/spec/replay.md §1 steps 1-9, §1a, §2, §3, §4; replaces
 * start_microbench.py).  This file holds the options, the order of the
 * steps and what they print; the stages are replay/msprof_run.c
 * (--backend msprof: msprof runs the replay command on an Ascend NPU, its
 * op_summary output is ingested exactly as `perfdb writeback` does) and
 * replay/native_run.c (--backend cpu|cuda: the replay engine).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/cpus.h"
#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"
#include "progress.h"
#include "replay/engine.h"
#include "replay/msprof_run.h"
#include "replay/native_run.h"
#include "closure/closure.h"
#include "replay/torch_run.h"
#include "replay_common.h"

static const char *const modes[] = { "all", "missing-only", NULL };
static const char *const backends[] = { "msprof", "cpu", "cuda", "torch", NULL };
static const char *const exec_modes[] = { "inprocess", "subprocess", NULL };

/* the reference's flags (start_microbench.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, "ops", "fail-fast", "repeat-count", "update-mode",
	"prune-empty-duration-rows", "dispatch-ffn-combine-ep-size",
	"dispatch-ffn-combine-nproc-per-node", "dispatch-ffn-combine-nnodes",
	"dispatch-ffn-combine-node-rank", "dispatch-ffn-combine-master-addr",
	"dispatch-ffn-combine-master-port", NULL
};

const struct cmd_help cmd_microbench_help = {
	.name = "microbench",
	.reference = reference_flags,
	.usage = "perfdb microbench [--backend {msprof,cpu,cuda,torch}] [--replay-command CMD] [--ops OP ...]\n"
		 "                         [--repeat-count N] [--threads N] [--force-device]\n"
		 "                         [--resume] [--execution-mode {inprocess,subprocess}]\n"
		 "                         [--op-timeout SECONDS] [--op-mapping auto|none|PATH]\n"
		 "                         [--update-mode {all,missing-only}] [--fail-fast]\n"
		 "                         [--prune-empty-duration-rows] [--json] [database flags]",
	.summary = "replay operators (on the CPU, or under msprof on Ascend) and write durations back",
	.description =
		"--backend cpu replays every row of the selected tables on this machine's CPU\n"
		"(oneDNN, own kernels) and writes mean/min/median/std back; it refuses a\n"
		"database of another device kind unless --force-device. --backend cuda does the\n"
		"same on this machine's NVIDIA GPU (cuBLASLt, own CUDA kernels; device time of\n"
		"CUDA-graph replays, per-kernel times from CUPTI; see docs/cuda.md). Both then write\n"
		"the database's op_mapping.yaml for the simulator (docs/database.md). --backend msprof\n"
		"runs the replay command under msprof, aggregates the op_summary output per\n"
		"(OP Type, signature), writes the results back into the database tables and the\n"
		"profile update report. On failure the profiling directory is kept ([PRESERVE]),\n"
		"on success removed ([CLEAN]). See docs/replay.md for the replay command's\n"
		"environment (PERFDB_OPS, PERFDB_DATABASE, PERFDB_STATUS_FILE, ...).",
};

/* ---- native backends (--backend cpu|cuda): the stage is replay/native_run.c ---- */

/* What the CLI keeps of the flags for printing and writeback. */
struct native_flags {
	const struct opt_list *ops;
	bool json;
	struct perfdb_opmap_opts op_mapping;   /* --op-mapping, applied under writeback's lock */
};

static void opmap_warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "perfdb microbench: warning: %s\n", msg);
}

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void native_progress(void *ud, size_t done, size_t total, size_t failed, double eta_s)
{
	struct progress *p = ud;
	p->total = total;
	p->failed = failed;
	p->eta_s = eta_s;
	p->eta_given = eta_s >= 0;
	progress_update(p, done);
}

/*
 * One rank's run.  Up to the replay every rank takes the same decisions
 * on the same arguments and files: rank 0 alone says why it stops (the
 * others stop with the same status), rather than once per rank.
 */
static int run_native_ranked(struct perfdb_native_opts *no, const struct native_flags *f)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_native_run run;
	int rank = no->rank, rc;
	if (perfdb_native_open(no, &run, &err) < 0) {
		rc = run.usage ? 2 : 1;
		if (rank == 0)
			cli_error("microbench", &err);
		goto out;
	}
	if (run.preflight_ran && !f->json) {
		char line[512];
		perfdb_preflight_line(&run.pf, line, sizeof(line));
		fprintf(stderr, "[PREFLIGHT] %s\n", line);
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct progress pr;
	progress_init(&pr, "microbench", 0, f->json);
	progress_set_unit(&pr, "rows");
	no->stop = &stop_flag;
	no->progress = rank == 0 ? native_progress : NULL;
	no->ud = &pr;
	rc = perfdb_native_measure(&run, &err);
	if (run.engine_ran && rank == 0)
		progress_done(&pr);
	if (rc < 0) {
		/* from here an error may be one rank's own: name the rank */
		if (run.engine_ran && no->nranks > 1)
			fprintf(stderr, "perfdb microbench: error: rank %d: %s\n", rank,
				err.msg[0] ? err.msg : "unknown error");
		rc = run.engine_ran && no->nranks > 1 ? 1 : cli_error("microbench", &err);
		goto out;
	}
	if (rank != 0) {
		/* rank 0 holds the run's rows and writes everything */
		rc = run.res.interrupted ? 1 : 0;
		goto out;
	}
	if (perfdb_native_record(&run, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	struct perfdb_strbuf notes = PERFDB_STRBUF_INIT;
	if (perfdb_native_notes(&run, &notes) < 0)
		fprintf(stderr, "perfdb microbench: warning: out of memory: the run's notes are not shown\n");
	fputs(notes.buf, stderr);
	perfdb_strbuf_release(&notes);
	struct ingest_opts io = { .cmd = "microbench", .dbdir = run.dir.buf, .ops = f->ops,
				  .missing_only = no->missing_only, .prune = no->prune,
				  .json = f->json, .ep = no->ep, .status = &run.st, .ts = run.ts,
				  .seen = no->prune ? &run.seen : NULL, .op_mapping = &f->op_mapping,
				  .aten = 1 };
	rc = replay_finish(&io, &run.res.measures);
	if (rc == 0 && !f->json)
		printf("[STATUS] %s\n", run.stp);
	if (rc == 0 && !f->json && run.kpath)
		printf("[KERNELS] %s\n", run.kpath);
	if (rc == 0 && (run.res.interrupted || (no->fail_fast && run.res.nfailed)))
		rc = 1;
	if (rc == 0)
		perfdb_native_journals_done(&run);   /* the run went through: nothing to resume */
out:
	perfdb_native_run_release(&run);
	return rc;
}

/* Under mpirun every rank runs; rank 0 alone says why the world could not start. */
static int run_native(struct perfdb_native_opts *no, const struct native_flags *f)
{
	struct perfdb_native_world w;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	int rc = perfdb_native_world_open(no, &w, &err);
	if (rc < 0)
		rc = no->rank == 0 ? cli_error("microbench", &err) : 1;
	else
		rc = run_native_ranked(no, f);
	perfdb_native_world_close(&w);
	return rc;
}

/* What --backend torch takes of the flags. */
struct mb_args_torch {
	const struct opt_list *ops;
	const char *sequence_trace;   /* --sequence-trace, or NULL */
	bool missing_only, prune, json;
	long threads, repeat, retries;
	double budget, row_timeout;
	const struct perfdb_opmap_opts *op_mapping;
};

/* ---- --backend msprof: the stage is replay/msprof_run.c ---- */

struct msprof_flags {
	const char *cmd, *mode, *master_addr;
	const struct opt_list *ops;
	bool prune, json, fail_fast;
	long ep, nproc, nnodes, node_rank, master_port;
};

struct msprof_print {
	struct ingest_opts io;
	int rc;
};

static void msprof_say(void *ctx, const char *line)
{
	(void)ctx;
	printf("%s\n", line);
}

static void msprof_finished(void *ctx, int rc, struct perfdb_finish_result *r,
			    const struct perfdb_err *err)
{
	struct msprof_print *p = ctx;
	p->rc = replay_print_finish(&p->io, rc, r, err);
}

static int run_msprof_backend(const struct perfdb_db_opts *o, const struct msprof_flags *m)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	if (perfdb_db_resolve(o, &dir, &err) < 0) {
		perfdb_strbuf_release(&dir);
		return cli_error("microbench", &err);
	}
	struct perfdb_msprof_opts mo = {
		.dbdir = dir.buf, .command = m->cmd, .ops = m->ops->v, .nops = m->ops->n,
		.missing_only = m->mode[0] == 'm', .prune = m->prune, .fail_fast = m->fail_fast,
		.ep = m->ep, .nproc = m->nproc, .nnodes = m->nnodes, .node_rank = m->node_rank,
		.master_port = m->master_port, .master_addr = m->master_addr,
	};
	struct msprof_print p = { .io = { .cmd = "microbench", .ops = m->ops, .json = m->json } };
	struct perfdb_msprof_events ev = { &p, msprof_say, msprof_finished };
	bool reported;
	int rc = perfdb_msprof_microbench(&mo, &ev, &reported, &err);
	perfdb_strbuf_release(&dir);
	if (reported)
		return p.rc;
	return rc < 0 ? cli_error("microbench", &err) : 0;
}

/* ---- --backend torch: the stage is replay/torch_run.c ---- */

static int run_torch_backend(const struct perfdb_db_opts *o, const struct mb_args_torch *t)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	if (perfdb_db_resolve(o, &dir, &err) < 0) {
		perfdb_strbuf_release(&dir);
		return cli_error("microbench", &err);
	}
	struct perfdb_torch_opts to = {
		.dbdir = dir.buf, .ops = t->ops->n ? t->ops->v : NULL, .nops = t->ops->n,
		.missing_only = t->missing_only, .threads = t->threads, .repeat = t->repeat,
		.budget = t->budget, .row_timeout = t->row_timeout, .retries = t->retries,
	};
	struct perfdb_torch_run run;
	int rc = t->sequence_trace ? perfdb_closure_torch_microbench(&to, t->sequence_trace, &run, &err) :
		 perfdb_torch_microbench(&to, &run, &err);
	if (rc < 0) {
		rc = cli_error("microbench", &err);
	} else {
		fprintf(stderr, "[TORCH] %zu row%s through PyTorch %s at %ld thread%s: %zu measured, %zu failed, "
			"%zu contended\n", run.rows, run.rows == 1 ? "" : "s",
			run.torch_version[0] ? run.torch_version : "(none asked)",
			t->threads, t->threads == 1 ? "" : "s", run.ok, run.failed, run.contended);
		if (t->sequence_trace)
			fprintf(stderr, "[TORCH] %zu of the %zu measured row%s timed in the op sequence of %s, "
				"the rest alone\n", run.in_sequence, run.ok, run.ok == 1 ? "" : "s", t->sequence_trace);
		for (size_t i = 0; i < run.st.nfailed; i++)
			fprintf(stderr, "[FAILED] %s: %s\n", run.st.failed[i].op, run.st.failed[i].reason);
		if (run.st.rows_again) {
			struct perfdb_strbuf again = PERFDB_STRBUF_INIT;
			if (perfdb_replay_again_note(run.st.rows_again, run.st.rows_again_written, &again) == 0)
				fputs(again.buf, stderr);
			perfdb_strbuf_release(&again);
		}
		for (size_t i = 0; i < run.st.ncontended; i++)
			fprintf(stderr, "[CONTENDED] %s: not written: %s\n", run.st.contended[i].op,
				run.st.contended[i].reason);
		if (run.st.nunreplayed)
			fprintf(stderr, "[NOT REPLAYED] %zu table%s that no replay selects; the status file says why\n",
				run.st.nunreplayed, run.st.nunreplayed == 1 ? "" : "s");
		struct ingest_opts io = { .cmd = "microbench", .dbdir = dir.buf, .ops = t->ops,
					  .missing_only = t->missing_only, .prune = t->prune, .json = t->json,
					  .ep = 16, .status = &run.st, .ts = run.ts, .op_mapping = t->op_mapping,
					  .aten = 1 };
		rc = replay_finish(&io, &run.measures);
		if (rc == 0 && !t->json)
			printf("[STATUS] %s\n", run.status_path);
	}
	perfdb_torch_run_release(&run);
	perfdb_strbuf_release(&dir);
	return rc;
}

/* The flags of microbench, with their defaults (args_init). */
struct mb_args {
	const char *backend, *cmd, *mode, *exec_mode, *op_mapping, *master_addr, *sequence_trace;
	struct opt_list ops;
	bool prune, json, fail_fast, force, resume, require_quiet;
	double op_timeout, budget, row_timeout;
	long repeat, threads, retries;   /* threads 0: not given */
	long ep, nproc, nnodes, node_rank, master_port;
};

/* 0, -1 after --help, or the usage status. */
/* DispatchFFNCombine's launch options (the reference's flags); returns how many. */
#define DFC_NOPTS 6
static size_t options_dfc(struct mb_args *a, struct opt *out)
{
	const struct opt t[DFC_NOPTS] = {
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-ep-size", .dest = &a->ep, .metavar = "N",
		  .help = "expert-parallel size of DispatchFFNCombine, written as EP Size (default: 16)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-nproc-per-node", .dest = &a->nproc,
		  .metavar = "N", .help = "DispatchFFNCombine processes per node (default: the EP size)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-nnodes", .dest = &a->nnodes, .metavar = "N",
		  .help = "DispatchFFNCombine nodes (default: 1)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-node-rank", .dest = &a->node_rank,
		  .metavar = "N", .help = "this node's rank (default: 0)" },
		{ .type = OPT_STRING, .name = "dispatch-ffn-combine-master-addr", .dest = &a->master_addr,
		  .metavar = "ADDR", .help = "rendezvous address (default: 127.0.0.1)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-master-port", .dest = &a->master_port,
		  .metavar = "PORT", .help = "rendezvous port (required for several nodes)" },
	};
	memcpy(out, t, sizeof(t));
	return DFC_NOPTS;
}

static int parse_args(int argc, char **argv, struct perfdb_db_opts *o, struct mb_args *a)
{
	*a = (struct mb_args){ .backend = "msprof", .mode = "all", .exec_mode = "inprocess",
			       .op_mapping = "auto", .repeat = 30, .retries = 2, .budget = 1.0,
			       .row_timeout = 60.0, .ep = 16, .nproc = -1, .nnodes = 1,
			       .master_port = -1, .master_addr = "127.0.0.1" };
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "backend", .dest = &a->backend, .choices = backends,
		  .help = "msprof: replay on an Ascend NPU under msprof; cpu: replay natively on this "
			  "CPU; cuda: replay natively on this machine's NVIDIA GPU; torch: the PyTorch op "
			  "tables through the PyTorch installed here, by its own kernels (default: msprof)" },
		{ .type = OPT_STRING, .name = "replay-command", .dest = &a->cmd, .metavar = "CMD",
		  .help = "shell command that replays the operators (run as: msprof "
			  "--output=DIR sh -c CMD); '{ops}' is replaced by the operator list "
			  "(required with --backend msprof)" },
		{ .type = OPT_INT, .name = "repeat-count", .dest = &a->repeat, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "native backends: at least N timed samples per row (default: 30)" },
		{ .type = OPT_INT, .name = "threads", .dest = &a->threads, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "native backends: threads per operator (default: the CPUs this process may use: "
			  "its affinity mask, within any cgroup CPU quota)" },
		{ .type = OPT_DOUBLE, .name = "row-budget", .dest = &a->budget, .metavar = "SECONDS",
		  .help = "native backends: sampling stops once the relative std is <= 1% or this much "
			  "time is spent on a row (default: 1)" },
		{ .type = OPT_DOUBLE, .name = "row-timeout", .dest = &a->row_timeout, .metavar = "SECONDS",
		  .help = "native backends: a row without N samples after this long fails (default: 60)" },
		{ .type = OPT_STRING, .name = "sequence-trace", .dest = &a->sequence_trace, .metavar = "TRACE",
		  .help = "torch backend: time each row inside the op sequence of TRACE (the PyTorch CPU "
			  "trace the database was parsed from), the step's calls run in its order so that "
			  "each op meets the threads, caches and allocator state the model left it; rows "
			  "the trace does not call are timed alone (default: every row alone)" },
		{ .type = OPT_INT, .name = "contention-retries", .dest = &a->retries, .metavar = "N",
		  .has_min = true, .min = 0,
		  .help = "cpu and torch backends: measure a row again, up to N times, when the memory "
			  "bandwidth probed around it was more than 20% below this machine's quiet figure "
			  "(else the run's median); a row still low is contended, not written (default: 2)" },
		{ .type = OPT_FLAG, .name = "require-quiet", .dest = &a->require_quiet,
		  .help = "native backends: refuse to start when the preflight finds the machine busy (other "
			  "processes using 0.25 CPUs or more, steal 2% or more, memory bandwidth below 80% of "
			  "this machine's quiet figure)" },
		{ .type = OPT_FLAG, .name = "resume", .dest = &a->resume,
		  .help = "native backends: take the rows that killed runs journaled in "
			  "<db>/reports/microbench_journal.<host>.<pid>.jsonl from there instead of "
			  "measuring them again" },
		{ .type = OPT_STRING, .name = "execution-mode", .dest = &a->exec_mode, .choices = exec_modes,
		  .help = "native backends: inprocess, or subprocess: each operator in a child process "
			  "under a watchdog; a crash or hang fails that operator only (default: inprocess)" },
		{ .type = OPT_DOUBLE, .name = "op-timeout", .dest = &a->op_timeout, .metavar = "SECONDS",
		  .help = "subprocess mode: kill an operator's process after this long (default: "
			  "--row-timeout x rows + 30)" },
		{ .type = OPT_STRING, .name = "op-mapping", .dest = &a->op_mapping, .metavar = "MODE",
		  .help = "native backends: auto writes <db>/op_mapping.yaml unless the user has one "
			  "(a file perfdb wrote and nobody edited is updated), none writes nothing, "
			  "a PATH gets the mapping instead of the database (default: auto)" },
		{ .type = OPT_FLAG, .name = "force-device", .dest = &a->force,
		  .help = "write into a database of another device kind than the backend's" },
		{ .type = OPT_LIST, .name = "ops", .dest = &a->ops, .metavar = "OP",
		  .help = "operators to replay (default: all replay operators, and with --backend cpu|cuda "
			  "the PyTorch op tables: aten.mm or aten::mm, docs/ops.md)" },
		{ .type = OPT_STRING, .name = "update-mode", .dest = &a->mode, .choices = modes,
		  .help = "all: update every matched row and append new ones; missing-only: only "
			  "replay and fill rows without a valid duration (default: all)" },
		{ .type = OPT_FLAG, .name = "fail-fast", .dest = &a->fail_fast,
		  .help = "stop at the first failure: no per-operator fallback runs" },
		{ .type = OPT_FLAG, .name = "prune-empty-duration-rows", .dest = &a->prune,
		  .help = "delete rows left without any valid duration" },
	};
	const struct opt tail[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &a->json,
		  .help = "print a JSON summary instead of the report" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	struct opt all[sizeof(opts) / sizeof(opts[0]) + DFC_NOPTS + sizeof(tail) / sizeof(tail[0])];
	size_t n = sizeof(opts) / sizeof(opts[0]);
	memcpy(all, opts, sizeof(opts));
	n += options_dfc(a, all + n);
	memcpy(all + n, tail, sizeof(tail));
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, all, &cmd_microbench_help, pos, &npos);
	return rc == 1 ? -1 : rc;
}

int cmd_microbench(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	struct mb_args args, *a = &args;
	int rc = parse_args(argc, argv, o, a);
	if (rc) {
		free(a->ops.v);
		return rc < 0 ? 0 : rc;
	}
	bool native = strcmp(a->backend, "msprof") != 0;
	if ((rc = replay_ops_normalize(&a->ops, native, &cmd_microbench_help))) {
		replay_ops_release(&a->ops);
		return rc;
	}
	if (strcmp(a->backend, "msprof") == 0 && !a->cmd) {
		fprintf(stderr, "perfdb microbench: error: the following arguments are required: "
			"--replay-command (with --backend msprof)\n");
		replay_ops_release(&a->ops);
		return 2;
	}
	if (a->sequence_trace && strcmp(a->backend, "torch") != 0) {
		replay_ops_release(&a->ops);
		return opt_usage_error(&cmd_microbench_help, "--sequence-trace needs --backend torch "
				       "(it runs the trace's ops through the framework that recorded them)");
	}
	if ((rc = db_opts_finish(db, &cmd_microbench_help))) {
		replay_ops_release(&a->ops);
		return rc;
	}
	if (strcmp(a->backend, "torch") == 0) {
		struct mb_args_torch t = { .ops = &a->ops, .sequence_trace = a->sequence_trace, .missing_only = a->mode[0] == 'm', .prune = a->prune,
					   .json = a->json, .threads = a->threads ? a->threads : perfdb_cpus_usable(""),
					   .repeat = a->repeat, .retries = a->retries, .budget = a->budget,
					   .row_timeout = a->row_timeout };
		struct perfdb_opmap_opts om;
		perfdb_opmap_opts_parse(a->op_mapping, &om);
		om.warn = opmap_warn;
		t.op_mapping = &om;
		rc = run_torch_backend(o, &t);
		replay_ops_release(&a->ops);
		return rc;
	}
	if (strcmp(a->backend, "msprof") != 0) {
		if (!a->threads)
			a->threads = perfdb_cpus_usable("");
		struct perfdb_native_opts no = {
			.db = o, .reg = &db->reg, .backend = a->backend, .ops = a->ops.v,
			.nops = a->ops.n,
			.missing_only = a->mode[0] == 'm', .prune = a->prune, .fail_fast = a->fail_fast,
			.force = a->force, .resume = a->resume, .require_quiet = a->require_quiet,
			.subprocess = strcmp(a->exec_mode, "subprocess") == 0, .repeat = a->repeat,
			.threads = a->threads, .ep = a->ep, .retries = a->retries, .budget = a->budget,
			.timeout = a->row_timeout, .op_timeout = a->op_timeout,
		};
		struct native_flags f = { .ops = &a->ops, .json = a->json };
		perfdb_opmap_opts_parse(a->op_mapping, &f.op_mapping);
		f.op_mapping.warn = opmap_warn;
		struct perfdb_err e;
		if (perfdb_opmap_opts_check(&f.op_mapping, &e) < 0) {
			replay_ops_release(&a->ops);
			return opt_usage_error(&cmd_microbench_help, "%s", e.msg);
		}
		rc = run_native(&no, &f);
		replay_ops_release(&a->ops);
		return rc;
	}
	struct msprof_flags mf = { .cmd = a->cmd, .mode = a->mode, .master_addr = a->master_addr,
				   .ops = &a->ops, .prune = a->prune, .json = a->json,
				   .fail_fast = a->fail_fast, .ep = a->ep, .nproc = a->nproc,
				   .nnodes = a->nnodes, .node_rank = a->node_rank,
				   .master_port = a->master_port };
	rc = run_msprof_backend(o, &mf);
	replay_ops_release(&a->ops);
	return rc;
}
