/*
 * perfdb microbench --backend msprof: replay under msprof on an Ascend NPU
 * and write the measurements back (docs/spec/replay.md §1 steps 1-9, §1a, §2, §3;
 * replaces start_microbench.py).
 *
 * perfdb runs `msprof --output=<db>/msprof_run_XXXXXX sh -c "<replay
 * command>"`, then ingests PROF_<id>/mindstudio_profiler_output/op_summary_<ts>.csv
 * exactly as `perfdb writeback` does.  The replay command learns what to
 * replay from its environment: PERFDB_OPS (comma-separated, empty = all),
 * PERFDB_DATABASE (the database directory), PERFDB_UPDATE_MODE,
 * PERFDB_EP_SIZE and PERFDB_STATUS_FILE (where it may write the
 * run_all_op_status.json of the reference, read for the report); `{ops}` in
 * the command is replaced by the space-separated operator list.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"
#include "backend/backend.h"
#include "perfdb/comm.h"
#include <mpi.h>
#include "perfdb/strbuf.h"
#include "progress.h"
#include "replay/engine.h"
#include "replay/probe.h"
#include "replay_common.h"

static const char *const modes[] = { "all", "missing-only", NULL };
static const char *const backends[] = { "msprof", "cpu", "cuda", NULL };
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
	.usage = "perfdb microbench [--backend {msprof,cpu,cuda}] [--replay-command CMD] [--ops OP ...]\n"
		 "                         [--repeat-count N] [--threads N] [--force-device]\n"
		 "                         [--resume] [--execution-mode {inprocess,subprocess}]\n"
		 "                         [--op-timeout SECONDS]\n"
		 "                         [--update-mode {all,missing-only}] [--fail-fast]\n"
		 "                         [--prune-empty-duration-rows] [--json] [database flags]",
	.summary = "replay operators (on the CPU, or under msprof on Ascend) and write durations back",
	.description =
		"--backend cpu replays every row of the selected tables on this machine's CPU\n"
		"(oneDNN, OpenBLAS, own kernels) and writes mean/min/median/std back; it refuses a\n"
		"database of another device kind unless --force-device. --backend cuda does the\n"
		"same on this machine's NVIDIA GPU (cuBLASLt, own CUDA kernels; device time of\n"
		"CUDA-graph replays, per-kernel times from CUPTI; see docs/cuda.md). --backend msprof\n"
		"runs the replay command under msprof, aggregates the op_summary output per\n"
		"(OP Type, signature), writes the results back into the database tables and the\n"
		"profile update report. On failure the profiling directory is kept ([PRESERVE]),\n"
		"on success removed ([CLEAN]). See docs/replay.md for the replay command's\n"
		"environment (PERFDB_OPS, PERFDB_DATABASE, PERFDB_STATUS_FILE, ...).",
};

/* Ops that need the vLLM-Ascend custom OPP (docs/spec/replay.md §1 step 5). */
static const char *const custom_opp_ops[] = {
	"AddRmsNormBias", "DispatchFFNCombine", "KvRmsNormRopeCache", "RINGMLAPrefillBF16Kernel",
	"split_qkv_rmsnorm_rope_kernel",
};

static int blank(const char *v)
{
	if (!v)
		return 1;
	while (*v == ' ' || *v == '\t')
		v++;
	return !*v;
}

static int check_custom_opp(const struct opt_list *ops)
{
	struct perfdb_strbuf need = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < sizeof(custom_opp_ops) / sizeof(custom_opp_ops[0]); i++) {
		int sel = !ops->n;
		for (size_t k = 0; k < ops->n; k++)
			sel |= strcmp(ops->v[k], custom_opp_ops[i]) == 0;
		if (sel)
			perfdb_strbuf_addf(&need, "%s%s", need.len ? ", " : "", custom_opp_ops[i]);
	}
	int rc = 0;
	if (need.len && (blank(getenv("ASCEND_CUSTOM_OPP_PATH")) || blank(getenv("LD_LIBRARY_PATH")))) {
		fprintf(stderr,
			"perfdb microbench: error: Missing env vars for operators: %s.\n"
			"Please run:\n"
			"  export ASCEND_CUSTOM_OPP_PATH=<vllm-ascend>/_cann_ops_custom/vendors/vllm-ascend:$ASCEND_CUSTOM_OPP_PATH\n"
			"  export LD_LIBRARY_PATH=<vllm-ascend>/_cann_ops_custom/vendors/vllm-ascend/op_api/lib/:$LD_LIBRARY_PATH\n",
			need.buf);
		rc = 1;
	}
	perfdb_strbuf_release(&need);
	return rc;
}

/* `{ops}` replaced by the operator list. */
static void expand(const char *cmd, const char *ops_spaced, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	for (const char *p = cmd; *p;) {
		if (strncmp(p, "{ops}", 5) == 0) {
			perfdb_strbuf_addstr(out, ops_spaced);
			p += 5;
		} else {
			perfdb_strbuf_addch(out, *p++);
		}
	}
}

struct run_env {
	const char *dbdir, *mode, *status;
	long ep, nproc, nnodes, node_rank, master_port;
	const char *master_addr;
};

static void setenv_long(const char *name, long v)
{
	char b[32];
	snprintf(b, sizeof(b), "%ld", v);
	setenv(name, b, 1);
}

/* Run msprof; returns its exit status, or -1 when msprof cannot be started. */
static int run_msprof(const char *outdir, const char *cmd, const char *ops_csv,
		      const struct run_env *e)
{
	char out[4200];
	snprintf(out, sizeof(out), "--output=%s", outdir);
	fflush(NULL);
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* msprof ends with perfdb (SIGTERM: it may still save its data) */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(127);
		close(pipefd[0]);
		char ep[32];
		snprintf(ep, sizeof(ep), "%ld", e->ep);
		setenv("PERFDB_OPS", ops_csv, 1);
		setenv("PERFDB_DATABASE", e->dbdir, 1);
		setenv("PERFDB_UPDATE_MODE", e->mode, 1);
		setenv("PERFDB_EP_SIZE", ep, 1);
		setenv("PERFDB_STATUS_FILE", e->status, 1);
		/* the reference's --dispatch-ffn-combine-* arguments of the DFC script */
		setenv_long("PERFDB_DFC_EP_SIZE", e->ep);
		setenv_long("PERFDB_DFC_NPROC_PER_NODE", e->nproc > 0 ? e->nproc : e->ep);
		setenv_long("PERFDB_DFC_NNODES", e->nnodes);
		setenv_long("PERFDB_DFC_NODE_RANK", e->node_rank);
		setenv("PERFDB_DFC_MASTER_ADDR", e->master_addr, 1);
		if (e->master_port > 0)
			setenv_long("PERFDB_DFC_MASTER_PORT", e->master_port);
		execlp("msprof", "msprof", out, "sh", "-c", cmd, (char *)NULL);
		int code = errno;
		(void)!write(pipefd[1], &code, sizeof(code));
		_exit(127);
	}
	close(pipefd[1]);
	int code = 0;
	ssize_t n = read(pipefd[0], &code, sizeof(code));
	close(pipefd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(code))
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Every row of every candidate table valid (spec §1 step 3). */
static int all_usable(const char *dbdir, const struct opt_list *ops)
{
	struct perfdb_err err;
	int found = 0, usable = 1;
	for (size_t i = 0; i < perfdb_replay_nops && usable; i++) {
		const char *op = perfdb_replay_ops[i];
		int sel = !ops->n;
		for (size_t k = 0; k < ops->n; k++)
			sel |= strcmp(ops->v[k], op) == 0;
		if (!sel)
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s.csv", dbdir, op);
		if (access(p, R_OK) != 0)
			continue;
		struct perfdb_table t;
		perfdb_table_init(&t);
		if (perfdb_table_load(&t, p, &err) < 0 || t.nrows == 0) {
			usable = 0;
		} else {
			for (size_t r = 0; r < t.nrows && usable; r++)
				usable = perfdb_wb_valid(perfdb_table_get(&t, r, perfdb_table_col(&t, PERFDB_COL_MB_DUR))) ||
					 perfdb_wb_valid(perfdb_table_get(&t, r, perfdb_table_col(&t, PERFDB_COL_PROF_AVG)));
			found++;
		}
		perfdb_table_release(&t);
	}
	return found && usable;
}

/* ---- native backends (--backend cpu): docs/spec/replay.md §4, Decisions 2, 3, 8 ---- */

struct native_opts {
	const char *backend, *mode;
	const struct opt_list *ops;
	bool prune, json, fail_fast, force, resume, subprocess;
	long repeat, threads, ep, retries;
	double budget, timeout, op_timeout;
};

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/*
 * OpenBLAS picks its kernels when it loads, from OPENBLAS_CORETYPE.  This
 * environment sets OPENBLAS_CORETYPE=Haswell, which halves fp32 GEMM speed
 * on AVX-512 machines, so the CPU backend chooses deliberately: the core in
 * $PERFDB_OPENBLAS_CORETYPE if set, else OpenBLAS's own detection (the
 * variable removed), re-executing once when the environment disagrees
 * (OMP_NUM_THREADS is set to --threads the same way, for oneDNN).  The
 * core in use is recorded (openblas_core in the environment record).
 */
static void choose_openblas_core(long threads)
{
	if (getenv("PERFDB_OPENBLAS_REEXEC"))
		return;
	const char *want = getenv("PERFDB_OPENBLAS_CORETYPE"), *have = getenv("OPENBLAS_CORETYPE");
	const char *omp = getenv("OMP_NUM_THREADS");
	char nt[32];
	snprintf(nt, sizeof(nt), "%ld", threads);
	/* oneDNN's OpenMP runtime also reads its thread count only when it loads */
	int omp_ok = omp && strcmp(omp, nt) == 0;
	if (omp_ok && ((!want && !have) || (want && have && strcmp(want, have) == 0)))
		return;
	if (want)
		setenv("OPENBLAS_CORETYPE", want, 1);
	else
		unsetenv("OPENBLAS_CORETYPE");
	setenv("OMP_NUM_THREADS", nt, 1);
	setenv("PERFDB_OPENBLAS_REEXEC", "1", 1);
	/* the original argv, from /proc/self/cmdline */
	int fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	static char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || n == (ssize_t)sizeof(buf) - 1)
		return;
	buf[n] = '\0';
	char *av[1024];
	size_t ac = 0;
	for (char *p = buf; p < buf + n && ac < 1023; p += strlen(p) + 1)
		av[ac++] = p;
	av[ac] = NULL;
	fflush(NULL);
	execv("/proc/self/exe", av);   /* on failure: go on with the core we have */
}

/* The registry device that names a component of dir, or NULL. */
static const struct perfdb_device *device_of_dir(const struct perfdb_device_registry *reg,
						 const char *dir)
{
	const struct perfdb_device *found = NULL;
	char *d = strdup(dir), *save = NULL;
	if (!d)
		return NULL;
	for (char *c = strtok_r(d, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		const struct perfdb_device *x = perfdb_device_find(reg, c);
		if (x)
			found = x;   /* the deepest one wins */
	}
	free(d);
	return found;
}

static void native_progress(void *ud, size_t done, size_t total, size_t failed)
{
	struct progress *p = ud;
	p->total = total;
	p->failed = failed;
	progress_update(p, done);
}

/* Status (run_all_op_status.json form): ops all ok, per-row failures, ops skipped. */
static int build_status(const struct perfdb_engine_result *r, struct perfdb_status *st)
{
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < r->nrows; i++) {
		const struct perfdb_engine_row *row = &r->rows[i];
		if (row->status == PERFDB_ENGINE_FAILED) {
			void *p = realloc(st->failed, (st->nfailed + 1) * sizeof(*st->failed));
			if (!p)
				return -1;
			st->failed = p;
			struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
			perfdb_strbuf_addf(&b, "%s.csv:%zu", row->op, row->line);
			st->failed[st->nfailed].op = perfdb_strbuf_detach(&b, NULL);
			st->failed[st->nfailed].reason = strdup(row->reason ? row->reason : "");
			st->nfailed++;
		}
	}
	/* per op: success when no row failed and one ran; skipped when none ran */
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i, ok = 0, bad = 0;
		for (; j < r->nrows && strcmp(r->rows[j].op, r->rows[i].op) == 0; j++) {
			ok += r->rows[j].status == PERFDB_ENGINE_OK;
			bad += r->rows[j].status == PERFDB_ENGINE_FAILED;
		}
		char ***list = bad ? NULL : ok ? &st->success : &st->skipped;
		size_t *cnt = ok ? &st->nsuccess : &st->nskipped;
		if (list) {
			void *p = realloc(*list, (*cnt + 1) * sizeof(char *));
			if (!p)
				return -1;
			*list = p;
			struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
			perfdb_strbuf_addf(&b, "%s.csv", r->rows[i].op);
			(*list)[(*cnt)++] = perfdb_strbuf_detach(&b, NULL);
		}
		i = j;
	}
	return 0;
}

/*
 * The run's reference memory bandwidth (replay/probe.h): the median of the
 * probe readings its rows kept (every rank's, resumed ones included), the
 * same rule the engine applied to the rows before each one.
 */
static double probe_reference(const struct perfdb_engine_result *r)
{
	double *v = malloc((r->nrows ? r->nrows : 1) * sizeof(double));
	if (!v)
		return 0;   /* no reference: no row is listed as contended */
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].status == PERFDB_ENGINE_OK)
			v[n++] = r->rows[i].probe_gbs;
	double m = perfdb_probe_median(v, n);
	free(v);
	return m;
}

static int row_contended(const struct perfdb_engine_row *x, double ref)
{
	return x->status == PERFDB_ENGINE_OK && perfdb_probe_contended(x->probe_gbs, ref);
}

/* PERFDB_PROBE=0 turns the bandwidth probe off (docs/replay.md "Contention"; make valgrind does). */
static int probe_off(void)
{
	const char *v = getenv("PERFDB_PROBE");
	return v && strcmp(v, "0") == 0;
}

/* Environment record and per-row measurements under <db>/reports/ (Decision 8). */
static int write_records(const char *dbdir, const char *ts, const char *device, const char *env,
			 const struct perfdb_engine_result *r, struct perfdb_err *err)
{
	char p[4400];
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&b, "%s", env);
	perfdb_strbuf_addf(&b, "device=%s\nrows_ok=%zu\nrows_failed=%zu\nrows_skipped=%zu\ninterrupted=%d\n",
			   device, r->nok, r->nfailed, r->nskipped, r->interrupted);
	double ref = probe_reference(r);
	size_t ncont = 0;
	for (size_t i = 0; i < r->nrows; i++)
		ncont += (size_t)row_contended(&r->rows[i], ref);
	if (ref > 0)
		perfdb_strbuf_addf(&b, "probe_median_gbs=%.1f\nrows_contended=%zu\n", ref, ncont);
	else if (probe_off())
		perfdb_strbuf_addstr(&b, "probe=off\n");
	snprintf(p, sizeof(p), "%s/reports/microbench_env_%s.txt", dbdir, ts);
	int rc = perfdb_file_write_atomic(p, b.buf, b.len, err);
	perfdb_strbuf_reset(&b);
	perfdb_strbuf_addstr(&b, "Operator,Line,Status,Samples,Mean(us),Median(us),Min(us),Std(us),CPU/Wall,"
			     "Probe(GB/s),Retries,Rank,Reason\r\n");
	for (size_t i = 0; i < r->nrows && rc == 0; i++) {
		const struct perfdb_engine_row *x = &r->rows[i];
		static const char *const names[] = { "ok", "failed", "skipped" };
		perfdb_strbuf_addf(&b, "%s,%zu,%s,%zu,%.6f,%.6f,%.6f,%.6f,%.3f,%.1f,%d,%d,\"", x->op, x->line,
				   names[x->status], x->samples, x->mean, x->median, x->min, x->std, x->cpu_ratio,
				   x->probe_gbs, x->retries, x->rank);
		for (const char *q = x->reason ? x->reason : ""; *q; q++) {
			if (*q == '"')
				perfdb_strbuf_addch(&b, '"');
			perfdb_strbuf_addch(&b, *q);
		}
		perfdb_strbuf_addstr(&b, "\"\r\n");
	}
	if (rc == 0) {
		snprintf(p, sizeof(p), "%s/reports/microbench_rows_%s.csv", dbdir, ts);
		rc = perfdb_file_write_atomic(p, b.buf, b.len, err);
	}
	perfdb_strbuf_release(&b);
	return rc;
}

static int run_native_ranked(struct perfdb_db_opts *o, struct perfdb_device_registry *reg,
			     const struct native_opts *no, MPI_Comm *world, int rank, int nranks);

/*
 * Scale-out: launched by mpirun, every rank replays its shard of the rows
 * (collective ops: every row together) and rank 0 writes the tables, the
 * report and the status; other ranks print only their own errors.
 */
static int run_native(struct perfdb_db_opts *o, struct perfdb_device_registry *reg,
		      const struct native_opts *no)
{
	/* before MPI_Init: choosing the OpenBLAS core may re-exec the process */
	const struct perfdb_backend_i *be = perfdb_backend_find(no->backend);
	if (be && strcmp(be->device_kind, "cpu") == 0)
		choose_openblas_core(no->threads);
	if (perfdb_comm_launcher_rank() < 0)
		return run_native_ranked(o, reg, no, NULL, 0, 1);
	struct perfdb_comm_world w;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_comm_mpi_init(NULL, NULL, false, &w, &err) < 0)
		return cli_error("microbench", &err);
	MPI_Comm world = MPI_COMM_WORLD;
	int rc = run_native_ranked(o, reg, no, w.size > 1 ? &world : NULL, w.rank, w.size);
	/* the exit status is the worst of the ranks: mpirun reports the first non-zero one */
	perfdb_comm_mpi_finalize();
	return rc;
}

static int run_native_ranked(struct perfdb_db_opts *o, struct perfdb_device_registry *reg,
			     const struct native_opts *no, MPI_Comm *world, int rank, int nranks)
{
	/*
	 * Up to the replay every rank takes the same decisions on the same
	 * arguments and files: rank 0 alone says why it stops (the others stop
	 * with the same status), rather than once per rank.
	 */
	FILE *say = rank == 0 ? stderr : NULL;
	if (!(no->budget >= 0) || !(no->timeout > 0) || !(no->op_timeout >= 0)) {
		if (say)
			fprintf(say, "perfdb microbench: error: --row-budget and --op-timeout must be >= 0 and "
			"--row-timeout > 0\n");
		return 2;
	}
	const struct perfdb_backend_i *be;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_backend_get(no->backend, &be, &err) < 0) {
		/* not built: a usage error; a module that does not load: a runtime one */
		if (say)
			fprintf(say, "perfdb microbench: error: %s\n", err.msg);
		return err.code == PERFDB_EINVAL ? 2 : 1;
	}
	const char *host = NULL;
	if ((be->detect_device ? be->detect_device(reg, &host, &err)
			       : perfdb_device_detect_host_cpu(reg, &host, &err)) < 0)
		return say ? cli_error("microbench", &err) : 1;
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, env = PERFDB_STRBUF_INIT;
	struct perfdb_wb_seen seen = { 0 };
	int rc = 0;
	char *kpath = NULL;   /* the backend's own report (cuda: per-kernel durations) */
	const struct perfdb_device *dev;
	if (o->database_path || o->device) {
		if (perfdb_db_resolve(o, &dir, &err) < 0) {
			rc = say ? cli_error("microbench", &err) : 1;
			goto out;
		}
		dev = o->database_path ? device_of_dir(reg, dir.buf) : perfdb_device_find(reg, o->device);
	} else {
		/* native layout: <root>/<device>/<backend>/<stack-version>/ */
		const char *src;
		if (perfdb_db_root(o, &dir, &src, &err) < 0) {
			rc = say ? cli_error("microbench", &err) : 1;
			goto out;
		}
		struct perfdb_strbuf d = PERFDB_STRBUF_INIT;
		if (be->describe)
			be->describe(&d);
		const char *key = be->stack ? be->stack : be->name;
		char pat[64];
		snprintf(pat, sizeof(pat), "%s=", key);
		const char *v = strstr(d.buf ? d.buf : "", pat);
		int maj = 0, min = 0;
		if (v)
			sscanf(v + strlen(pat), "%d.%d", &maj, &min);
		perfdb_strbuf_addf(&dir, "/%s/%s/%s%d.%d", host, be->name, key, maj, min);
		perfdb_strbuf_release(&d);
		dev = perfdb_device_find(reg, host);
	}
	/* Decision 8: only into a database of the backend's device kind */
	if (!no->force && (!dev || strcmp(dev->kind, be->device_kind) != 0)) {
		if (say && dev)
			fprintf(say, "perfdb microbench: error: '%s' is a database of device '%s' (kind %s); "
				"the %s backend measures %s (kind %s); use --force-device to write anyway\n",
				dir.buf, dev->name, dev->kind, be->name, host, be->device_kind);
		else if (say)
			fprintf(say, "perfdb microbench: error: cannot tell the device of '%s'; the %s backend "
				"measures %s (kind %s); use --force-device to write anyway\n",
				dir.buf, be->name, host, be->device_kind);
		rc = 1;
		goto out;
	}
	char rep[4200];
	snprintf(rep, sizeof(rep), "%s/reports", dir.buf);
	if (perfdb_report_dir_prepare(dir.buf, &err) < 0) {
		rc = say ? cli_error("microbench", &err) : 1;
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct progress pr;
	progress_init(&pr, "microbench", 0, no->json);
	progress_set_unit(&pr, "rows");
	/* Decision 7: every finished row is journaled; --resume continues from it */
	char journal[4300];
	snprintf(journal, sizeof(journal), "%s/microbench_journal.jsonl", rep);
	const char *hook = getenv("PERFDB_TEST_EXIT_AFTER_ROWS"), *crash = getenv("PERFDB_TEST_CRASH_OP");
	/* test hook: PERFDB_TEST_PROBE_GBS=a,b,... are the bandwidth probe's readings, in order */
	double script[64];
	size_t nscript = 0;
	for (const char *q = getenv("PERFDB_TEST_PROBE_GBS"); q && *q && nscript < 64; nscript++) {
		char *e;
		script[nscript] = strtod(q, &e);
		q = *e == ',' ? e + 1 : e + strlen(e);
	}
	struct perfdb_engine_hooks hooks = {
		.exit_after = hook && *hook ? (size_t)strtoul(hook, NULL, 10) : 0,
		.crash_op = crash && *crash ? crash : NULL,
		.probe_script = nscript ? script : NULL, .probe_script_n = nscript,
	};
	struct perfdb_engine_opts eo = {
		.dbdir = dir.buf, .backend = be,
		.ops = no->ops->n ? (const char *const *)no->ops->v : NULL, .nops = no->ops->n,
		.missing_only = no->mode[0] == 'm', .fail_fast = no->fail_fast,
		.repeat = (size_t)no->repeat, .rsd = 0.01, .budget_s = no->budget,
		.timeout_s = no->timeout, .threads = (int)no->threads, .seed = 0x5eed,
		.flush = 1, .stop = &stop_flag, .progress = rank == 0 ? native_progress : NULL, .ud = &pr,
		.ep_size = (int)no->ep, .comm = world, .rank = rank, .nranks = nranks,
		.journal = journal, .resume = no->resume, .subprocess = no->subprocess,
		.op_timeout_s = no->op_timeout, .contention_retries = (int)no->retries,
		.no_probe = probe_off(),
		.hooks = &hooks,
	};
	/* prune decides from what the run saw: the rows read before measuring */
	if (no->prune && rank == 0 && perfdb_wb_seen_take(dir.buf, &seen, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	struct perfdb_engine_result res;
	rc = perfdb_engine_run(&eo, &res, &err);
	if (rank == 0)
		progress_done(&pr);
	if (rc < 0) {
		perfdb_engine_result_release(&res);
		/* from here an error may be one rank's own: name the rank */
		if (nranks > 1)
			fprintf(stderr, "perfdb microbench: error: rank %d: %s\n", rank,
				err.msg[0] ? err.msg : "unknown error");
		rc = nranks > 1 ? 1 : cli_error("microbench", &err);
		goto out;
	}
	if (rank != 0) {
		/* rank 0 holds the run's rows and writes everything */
		rc = res.interrupted ? 1 : 0;
		perfdb_engine_result_release(&res);
		goto out;
	}
	char ts[64];
	perfdb_report_timestamp(ts, sizeof(ts));
	perfdb_strbuf_addf(&env, "backend=%s\nhost=%s\n", be->name, host);
	if (be->describe)
		be->describe(&env);
	perfdb_strbuf_addf(&env, "mpi_ranks=%d\n", nranks);
	perfdb_strbuf_addf(&env, "repeat_count=%ld\nrow_budget_s=%g\nrow_timeout_s=%g\nrsd_target=0.01\n"
			   "cache_flush=memory-bound ops below 32 MiB\n"
			   "weights_rotated=GEMM weights below 32 MiB rotate through 64 MiB of copies\n",
			   no->repeat, no->budget, no->timeout);
	/* the status is written first: it survives a failing writeback */
	struct perfdb_status st;
	char stp[4300];
	snprintf(stp, sizeof(stp), "%s/run_all_op_status_%s.json", rep, ts);
	if (build_status(&res, &st) < 0 || perfdb_status_write(stp, &st, &err) < 0 ||
	    write_records(dir.buf, ts, dev ? dev->name : "?", env.buf, &res, &err) < 0) {
		rc = cli_error("microbench", &err);
	} else if (be->write_reports && be->write_reports(rep, ts, &kpath, &err) < 0) {
		rc = cli_error("microbench", &err);
	} else {
		for (size_t i = 0; i < res.nrows; i++)
			if (res.rows[i].status == PERFDB_ENGINE_FAILED)
				fprintf(stderr, "[FAILED] %s:%zu: %s\n", res.rows[i].table, res.rows[i].line,
					res.rows[i].reason);
		double ref = probe_reference(&res);
		for (size_t i = 0; i < res.nrows; i++)
			if (row_contended(&res.rows[i], ref))
				fprintf(stderr, "[CONTENDED] %s:%zu: measured with %.1f GB/s of memory bandwidth "
					"against the run's median %.1f (%d retries)\n", res.rows[i].table,
					res.rows[i].line, res.rows[i].probe_gbs, ref, res.rows[i].retries);
		if (res.nresumed)
			fprintf(stderr, "[RESUME] %zu rows taken from %s\n", res.nresumed, journal);
		if (res.interrupted)
			fprintf(stderr, "[INTERRUPTED] writing back the rows measured so far\n");
		else if (res.stopped)
			fprintf(stderr, "[STOP] --fail-fast: stopped at the first failure\n");
		struct ingest_opts io = { .cmd = "microbench", .dbdir = dir.buf, .ops = no->ops,
					  .missing_only = no->mode[0] == 'm', .prune = no->prune,
					  .json = no->json, .ep = no->ep, .status = &st, .ts = ts,
					  .seen = no->prune ? &seen : NULL };
		rc = replay_finish(&io, &res.measures);
		if (rc == 0 && !no->json)
			printf("[STATUS] %s\n", stp);
		if (rc == 0 && !no->json && kpath)
			printf("[KERNELS] %s\n", kpath);
		if (rc == 0 && (res.interrupted || (no->fail_fast && res.nfailed)))
			rc = 1;
		if (rc == 0)
			perfdb_engine_journal_remove(journal);   /* the run went through: nothing to resume */
	}
	perfdb_status_release(&st);
	perfdb_engine_result_release(&res);
	free(kpath);
out:
	perfdb_wb_seen_release(&seen);
	perfdb_strbuf_release(&dir);
	perfdb_strbuf_release(&env);
	return rc;
}

int cmd_microbench(int argc, char **argv)
{
	struct perfdb_db_opts o = { 0 };
	const char *backend = "msprof", *cmd = NULL, *mode = "all";
	struct opt_list ops = { 0 };
	bool prune = false, json = false, fail_fast = false, force = false, resume = false;
	const char *exec_mode = "inprocess";
	double op_timeout = 0;
	long repeat = 30, threads = 1, retries = 2;
	double budget = 1.0, row_timeout = 60.0;
	long ep = 16, nproc = -1, nnodes = 1, node_rank = 0, master_port = -1;
	const char *master_addr = "127.0.0.1";
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "backend", .dest = &backend, .choices = backends,
		  .help = "msprof: replay on an Ascend NPU under msprof; cpu: replay natively on this "
			  "CPU; cuda: replay natively on this machine's NVIDIA GPU (default: msprof)" },
		{ .type = OPT_STRING, .name = "replay-command", .dest = &cmd, .metavar = "CMD",
		  .help = "shell command that replays the operators (run as: msprof "
			  "--output=DIR sh -c CMD); '{ops}' is replaced by the operator list "
			  "(required with --backend msprof)" },
		{ .type = OPT_INT, .name = "repeat-count", .dest = &repeat, .metavar = "N",
		  .has_min = true, .min = 1,
		  .help = "native backends: at least N timed samples per row (default: 30)" },
		{ .type = OPT_INT, .name = "threads", .dest = &threads, .metavar = "N",
		  .has_min = true, .min = 1, .help = "native backends: threads per operator (default: 1)" },
		{ .type = OPT_DOUBLE, .name = "row-budget", .dest = &budget, .metavar = "SECONDS",
		  .help = "native backends: sampling stops once the relative std is <= 1% or this much "
			  "time is spent on a row (default: 1)" },
		{ .type = OPT_DOUBLE, .name = "row-timeout", .dest = &row_timeout, .metavar = "SECONDS",
		  .help = "native backends: a row without N samples after this long fails (default: 60)" },
		{ .type = OPT_INT, .name = "contention-retries", .dest = &retries, .metavar = "N",
		  .has_min = true, .min = 0,
		  .help = "cpu backend: measure a row again, up to N times, when the memory bandwidth "
			  "probed around it was more than 20% below the median of the rows before it "
			  "(default: 2)" },
		{ .type = OPT_FLAG, .name = "resume", .dest = &resume,
		  .help = "native backends: take the rows already in <db>/reports/microbench_journal.jsonl "
			  "from there instead of measuring them again" },
		{ .type = OPT_STRING, .name = "execution-mode", .dest = &exec_mode, .choices = exec_modes,
		  .help = "native backends: inprocess, or subprocess: each operator in a child process "
			  "under a watchdog; a crash or hang fails that operator only (default: inprocess)" },
		{ .type = OPT_DOUBLE, .name = "op-timeout", .dest = &op_timeout, .metavar = "SECONDS",
		  .help = "subprocess mode: kill an operator's process after this long (default: "
			  "--row-timeout x rows + 30)" },
		{ .type = OPT_FLAG, .name = "force-device", .dest = &force,
		  .help = "write into a database of another device kind than the backend's" },
		{ .type = OPT_LIST, .name = "ops", .dest = &ops, .metavar = "OP",
		  .help = "operators to replay (default: all replay operators)" },
		{ .type = OPT_STRING, .name = "update-mode", .dest = &mode, .choices = modes,
		  .help = "all: update every matched row and append new ones; missing-only: only "
			  "replay and fill rows without a valid duration (default: all)" },
		{ .type = OPT_FLAG, .name = "fail-fast", .dest = &fail_fast,
		  .help = "stop at the first failure: no per-operator fallback runs" },
		{ .type = OPT_FLAG, .name = "prune-empty-duration-rows", .dest = &prune,
		  .help = "delete rows left without any valid duration" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-ep-size", .dest = &ep, .metavar = "N",
		  .help = "expert-parallel size of DispatchFFNCombine, written as EP Size (default: 16)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-nproc-per-node", .dest = &nproc,
		  .metavar = "N", .help = "DispatchFFNCombine processes per node (default: the EP size)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-nnodes", .dest = &nnodes, .metavar = "N",
		  .help = "DispatchFFNCombine nodes (default: 1)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-node-rank", .dest = &node_rank,
		  .metavar = "N", .help = "this node's rank (default: 0)" },
		{ .type = OPT_STRING, .name = "dispatch-ffn-combine-master-addr", .dest = &master_addr,
		  .metavar = "ADDR", .help = "rendezvous address (default: 127.0.0.1)" },
		{ .type = OPT_INT, .name = "dispatch-ffn-combine-master-port", .dest = &master_port,
		  .metavar = "PORT", .help = "rendezvous port (required for several nodes)" },
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON summary instead of the report" },
		DB_OPTIONS(&o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_microbench_help, pos, &npos);
	if (rc) {
		free(ops.v);
		return rc == 1 ? 0 : rc;
	}
	if ((rc = replay_ops_normalize(&ops, &cmd_microbench_help))) {
		replay_ops_release(&ops);
		return rc;
	}
	if (strcmp(backend, "msprof") == 0 && !cmd) {
		fprintf(stderr, "perfdb microbench: error: the following arguments are required: "
			"--replay-command (with --backend msprof)\n");
		replay_ops_release(&ops);
		return 2;
	}
	struct perfdb_device_registry reg;
	perfdb_device_registry_init(&reg);
	if ((rc = db_opts_finish(&o, &reg, &cmd_microbench_help))) {
		perfdb_device_registry_release(&reg);
		replay_ops_release(&ops);
		return rc;
	}
	if (strcmp(backend, "msprof") != 0) {
		struct native_opts no = { .backend = backend, .mode = mode, .ops = &ops, .prune = prune,
					  .json = json, .fail_fast = fail_fast, .force = force,
					  .repeat = repeat, .threads = threads, .budget = budget,
					  .timeout = row_timeout, .resume = resume, .retries = retries,
					  .subprocess = strcmp(exec_mode, "subprocess") == 0,
					  .op_timeout = op_timeout, .ep = ep };
		rc = run_native(&o, &reg, &no);
		perfdb_device_registry_release(&reg);
		replay_ops_release(&ops);
		return rc;
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, ops_csv = PERFDB_STRBUF_INIT,
			     ops_sp = PERFDB_STRBUF_INIT, full = PERFDB_STRBUF_INIT;
	char root[4200] = "", status_path[4300] = "";
	struct perfdb_wb_seen seen = { 0 };
	char **files = NULL;
	size_t nfiles = 0, nprof = 0;
	int succeeded = 0;
	rc = 0;
	if (perfdb_db_resolve(&o, &dir, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	for (size_t i = 0; i < ops.n; i++) {
		perfdb_strbuf_addf(&ops_csv, "%s%s", i ? "," : "", ops.v[i]);
		perfdb_strbuf_addf(&ops_sp, "%s%s", i ? " " : "", ops.v[i]);
	}
	/* step 3: nothing to do in missing-only mode */
	if (mode[0] == 'm' && all_usable(dir.buf, &ops)) {
		for (size_t i = 0; i < perfdb_replay_nops; i++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s.csv", dir.buf, perfdb_replay_ops[i]);
			int sel = !ops.n;
			for (size_t k = 0; k < ops.n; k++)
				sel |= strcmp(ops.v[k], perfdb_replay_ops[i]) == 0;
			if (sel && access(p, R_OK) == 0)
				printf("[SKIP] %s already has usable durations.\n", p);
		}
		printf("[SUMMARY] All target CSV files already have usable replay durations.\n");
		goto out;
	}
	/*
	 * step 4: DispatchFFNCombine needs nproc (or EP size) NPUs; with fewer
	 * visible ones a missing-only run skips it.  Visible NPUs are counted
	 * from ASCEND_RT_VISIBLE_DEVICES (0 when unset: the skip does not apply).
	 */
	long need = nproc > 0 ? nproc : ep, visible = 0;
	const char *vis = getenv("ASCEND_RT_VISIBLE_DEVICES");
	if (vis && *vis)
		for (visible = 1; *vis; vis++)
			visible += *vis == ',';
	int dfc_only = ops.n > 0;
	for (size_t i = 0; i < ops.n; i++)
		dfc_only &= strcmp(ops.v[i], "DispatchFFNCombine") == 0;
	if (mode[0] == 'm' && ep > 1 && visible > 0 && visible < need && (!ops.n || dfc_only)) {
		printf("[SKIP] DispatchFFNCombine needs %ld NPUs (EP size %ld) but %ld are visible.\n",
		       need, ep, visible);
		printf("[SUMMARY] DispatchFFNCombine skipped in missing-only mode.\n");
		if (dfc_only) {
			/* nothing to replay: writeback of nothing (prune still applies) and the report */
			struct ingest_opts io = { .cmd = "microbench", .dbdir = dir.buf, .ops = &ops,
						  .missing_only = 1, .prune = prune, .json = json,
						  .ep = ep, .status = NULL };
			rc = replay_ingest(&io, NULL, 0);
			goto out;
		}
		/* a full run goes on without it */
		perfdb_strbuf_reset(&ops_csv);
		perfdb_strbuf_reset(&ops_sp);
		for (size_t i = 0; i < perfdb_replay_nops; i++) {
			if (strcmp(perfdb_replay_ops[i], "DispatchFFNCombine") == 0)
				continue;
			perfdb_strbuf_addf(&ops_csv, "%s%s", ops_csv.len ? "," : "", perfdb_replay_ops[i]);
			perfdb_strbuf_addf(&ops_sp, "%s%s", ops_sp.len ? " " : "", perfdb_replay_ops[i]);
		}
	}
	/* step 5 */
	if ((rc = check_custom_opp(&ops)))
		goto out;
	/* step 6 */
	if (perfdb_mkdir_p(dir.buf, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	/* prune decides from what the run saw: the rows read before measuring */
	if (prune && perfdb_wb_seen_take(dir.buf, &seen, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	snprintf(root, sizeof(root), "%s/msprof_run_XXXXXX", dir.buf);
	if (!mkdtemp(root)) {
		perfdb_err_errno(&err, errno, "cannot create a profiling directory under '%s'", dir.buf);
		rc = cli_error("microbench", &err);
		root[0] = '\0';
		goto out;
	}
	snprintf(status_path, sizeof(status_path), "%s/run_all_op_status.json", root);
	struct run_env env = { dir.buf, mode, status_path, ep, nproc, nnodes, node_rank,
			       master_port, master_addr };
	expand(cmd, ops_sp.buf, &full);
	int st = run_msprof(root, full.buf, ops_csv.buf, &env);
	if (st < 0) {
		fprintf(stderr, "perfdb microbench: error: msprof not found. Activate Ascend toolkit environment.\n");
		rmdir(root);   /* nothing was profiled: leave no directory behind */
		root[0] = '\0';
		rc = 1;
		goto out;
	}
	if (perfdb_msprof_find(root, &files, &nfiles, &nprof, &err) < 0) {
		rc = cli_error("microbench", &err);
		goto out;
	}
	/* step 7: a failed msprof run */
	if (st != 0) {
		if (nfiles) {
			printf("[WARN] msprof exited with %d. Continuing with generated profiling data.\n", st);
		} else if (!ops.n) {
			fprintf(stderr, "perfdb microbench: error: combined msprof failed without op_summary "
				"data; rerun with --ops to enable per-op fallback. Profiling data kept at %s\n",
				root);
			rc = 1;
			goto out;
		} else if (ops.n == 1 || fail_fast) {
			fprintf(stderr, "perfdb microbench: error: msprof exited with %d; profiling data kept "
				"at %s\n", st, root);
			rc = 1;
			goto out;
		} else {
			/* once per op, each into its own directory */
			for (size_t i = 0; i < ops.n; i++) {
				char sub[4400];
				snprintf(sub, sizeof(sub), "%s/per_op_%s", root, ops.v[i]);
				if (perfdb_mkdir_p(sub, &err) < 0) {
					rc = cli_error("microbench", &err);
					goto out;
				}
				expand(cmd, ops.v[i], &full);
				int s1 = run_msprof(sub, full.buf, ops.v[i], &env);
				char **f1 = NULL;
				size_t n1 = 0, p1 = 0;
				if (perfdb_msprof_find(sub, &f1, &n1, &p1, &err) < 0) {
					rc = cli_error("microbench", &err);
					goto out;
				}
				for (size_t k = 0; k < n1; k++)
					free(f1[k]);
				free(f1);
				if (s1 != 0 && n1 == 0) {
					fprintf(stderr, "perfdb microbench: error: msprof exited with %d for %s; "
						"profiling data kept at %s\n", s1, ops.v[i], root);
					rc = 1;
					goto out;
				}
			}
			for (size_t k = 0; k < nfiles; k++)
				free(files[k]);
			free(files);
			files = NULL;
			if (perfdb_msprof_find(root, &files, &nfiles, &nprof, &err) < 0) {
				rc = cli_error("microbench", &err);
				goto out;
			}
		}
	}
	if (!nprof) {
		fprintf(stderr, "perfdb microbench: error: No PROF_* directories under %s\n", root);
		rc = 1;
		goto out;
	}
	if (!nfiles) {
		fprintf(stderr, "perfdb microbench: error: No op_summary_*.csv found\n");
		rc = 1;
		goto out;
	}
	/* step 8 */
	struct perfdb_status status;
	int have_status = perfdb_status_read(status_path, &status);
	struct ingest_opts io = { .cmd = "microbench", .dbdir = dir.buf, .ops = &ops,
				  .missing_only = mode[0] == 'm', .prune = prune, .json = json,
				  .ep = ep, .status = have_status ? &status : NULL,
				  .seen = prune ? &seen : NULL };
	rc = replay_ingest(&io, files, nfiles);
	if (have_status)
		perfdb_status_release(&status);
	succeeded = rc == 0;
out:
	perfdb_wb_seen_release(&seen);
	/* step 9 */
	if (root[0]) {
		if (succeeded) {
			nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
			printf("[CLEAN] removed %s\n", root);
		} else {
			printf("[PRESERVE] profiling data kept for debugging: %s\n", root);
		}
	}
	for (size_t k = 0; k < nfiles; k++)
		free(files[k]);
	free(files);
	replay_ops_release(&ops);
	perfdb_strbuf_release(&dir);
	perfdb_strbuf_release(&ops_csv);
	perfdb_strbuf_release(&ops_sp);
	perfdb_strbuf_release(&full);
	perfdb_device_registry_release(&reg);
	return rc;
}
