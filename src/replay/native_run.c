/*
 * The native microbench stage (native_run.h; docs/spec/replay.md §4,
 * Decisions 2, 3, 7 and 8; docs/replay.md "CPU backend").
 *
 * microbench_rows_<ts>.csv is the database dialect (include/perfdb/csv.h)
 * with one fixed exception kept from its first version: the last field,
 * Reason, is always quoted, so that a reader splitting on commas finds the
 * empty reasons of ok rows as `""`.  Columns: Operator, Line, Status,
 * Samples, Mean/Median/Min/Std(us) (%.6f), CPU/Wall (%.3f), Probe(GB/s)
 * (%.1f), Retries, Rank, Threads (the --threads it was measured with),
 * Kernel Used (what the backend ran it with: "onednn:<implementation>",
 * "own", ...), Reason.
 */
#include "perfdb/env_check.h"
#include "replay/native_run.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <errno.h>
#include <signal.h>
#include <glob.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/csv.h"
#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"
#include "perfdb/probe.h"

/*
 * oneDNN's OpenMP runtime reads OMP_NUM_THREADS once, when it loads, so a
 * CPU run whose environment disagrees with --threads re-executes itself
 * once with OMP_NUM_THREADS = --threads.  PERFDB_REEXEC, set in the new
 * process (or by a wrapper such as tests/valgrind/perfdb-vg.sh), stops a
 * second one.
 */
static void set_threads_env(long threads)
{
	if (getenv("PERFDB_REEXEC"))
		return;
	const char *omp = getenv("OMP_NUM_THREADS");
	char nt[32];
	snprintf(nt, sizeof(nt), "%ld", threads);
	if (omp && strcmp(omp, nt) == 0)
		return;
	setenv("OMP_NUM_THREADS", nt, 1);
	setenv("PERFDB_REEXEC", "1", 1);
	/* the original argv, from /proc/self/cmdline */
	int fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	enum { CAP = 65536 };
	char *buf = malloc(CAP);
	if (!buf) {
		close(fd);
		return;
	}
	ssize_t n = read(fd, buf, CAP - 1);
	close(fd);
	if (n <= 0 || n == (ssize_t)CAP - 1) {
		free(buf);
		return;
	}
	buf[n] = '\0';
	char *av[1024];
	size_t ac = 0;
	for (char *p = buf; p < buf + n && ac < 1023; p += strlen(p) + 1)
		av[ac++] = p;
	av[ac] = NULL;
	fflush(NULL);
	execv("/proc/self/exe", av);   /* on failure: go on with the environment we have */
	free(buf);
}

void perfdb_native_set_threads_env(const char *backend, long threads)
{
	const struct perfdb_backend_i *be = perfdb_backend_find(backend);
	if (be && strcmp(be->device_kind, "cpu") == 0)
		set_threads_env(threads);
}


/* PERFDB_PROBE=0 turns the bandwidth probe off (docs/replay.md "Contention"; make valgrind does). */
static int probe_off(void)
{
	return perfdb_env_off("PERFDB_PROBE");
}

/* PERFDB_SCHED=0 turns the scheduler's judgement of timed blocks off (docs/replay.md "Contention"). */
static int sched_off(void)
{
	return perfdb_env_off("PERFDB_SCHED");
}

/* Decision 8: only into a database of the backend's device kind. */
static int check_device_kind(const struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_device *dev = run->dev;
	const struct perfdb_backend_i *be = run->be;
	if (run->o->force || (dev && strcmp(dev->kind, be->device_kind) == 0))
		return 0;
	if (dev)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "'%s' is a database of device '%s' (kind %s); the %s backend measures "
				      "%s (kind %s); use --force-device to write anyway",
				      run->dir.buf, dev->name, dev->kind, be->name, run->host, be->device_kind);
	return perfdb_err_set(err, PERFDB_EINVAL,
			      "cannot tell the device of '%s'; the %s backend measures %s (kind %s); "
			      "use --force-device to write anyway",
			      run->dir.buf, be->name, run->host, be->device_kind);
}

/*
 * The database directory, and its device: --database-path, else --device's
 * database (a native device's <root>/<device>/torch/torch<T>/) or the one
 * --vllm-version/--cann-version name under the default device, else this
 * machine's: the backend's device's home, where parse of its traces and
 * grid meet it (docs/database.md "Layout").
 */
static int find_database(struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_db_opts *db = run->o->db;
	if (db->database_path) {
		PERFDB_TRY(perfdb_db_resolve(db, &run->dir, err));
		run->dev = perfdb_device_of_dir(run->o->reg, run->dir.buf);
		return 0;
	}
	/*
	 * --vllm-version or --cann-version name an Ascend-layout database, so the
	 * flags resolve as every other command resolves them (the guide's step 3);
	 * only without them is the database this machine's own.
	 */
	if (db->device_given || db->vllm_version || db->cann_version) {
		PERFDB_TRY(perfdb_db_resolve(db, &run->dir, err));
		run->dev = perfdb_device_find(run->o->reg, db->device ? db->device : PERFDB_DEFAULT_DEVICE);
		return 0;
	}
	PERFDB_TRY(perfdb_db_native_dir(db, run->host, &run->dir, err));
	run->dev = perfdb_device_find(run->o->reg, run->host);
	return 0;
}

/*
 * The preflight (perfdb/preflight.h): one process's view of its machine.
 * Under mpirun rank 0 watches its host while the other ranks wait asleep
 * (a broadcast polled with sleeps, so their waiting is not the busy CPU it
 * sees), and its judgement stops every rank with --require-quiet.
 */
static int preflight(struct perfdb_native_run *run, const struct perfdb_backend_i *be, struct perfdb_err *err)
{
	const struct perfdb_native_opts *o = run->o;
	int busy = 0;   /* 1: busy and --require-quiet; 2: rank 0's /proc/stat unreadable */
	/* PERFDB_PREFLIGHT=0: no preflight unless --require-quiet needs its judgement (rank 0 decides) */
	if (o->rank == 0 && (!perfdb_env_off("PERFDB_PREFLIGHT") || o->require_quiet)) {
		int rc = perfdb_preflight_run(!probe_off() && strcmp(be->device_kind, "cpu") == 0, &run->pf, err);
		run->preflight_ran = rc == 0;
		busy = rc < 0 ? 2 : o->require_quiet && !run->pf.quiet;
	}
	if (o->comm && o->nranks > 1) {
		MPI_Request req;
		const struct timespec nap = { 0, 200000 };   /* 0.2 ms */
		int done = 0;
		if (MPI_Ibcast(&busy, 1, MPI_INT, 0, *(MPI_Comm *)o->comm, &req) != MPI_SUCCESS)
			return perfdb_err_set(err, PERFDB_EIO, "MPI_Ibcast of the preflight failed");
		while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
			nanosleep(&nap, NULL);
	}
	if (busy == 2)
		return o->rank == 0 ? -err->code : perfdb_err_set(err, PERFDB_EIO, "rank 0 could not read /proc/stat");
	if (busy)
		return o->rank == 0 ? perfdb_err_set(err, PERFDB_EINVAL, "the machine is busy: %s (--require-quiet)",
						     run->pf.why)
				    : perfdb_err_set(err, PERFDB_EINVAL, "rank 0 found its host busy (--require-quiet)");
	return 0;
}

int perfdb_native_open(const struct perfdb_native_opts *o, struct perfdb_native_run *run,
		       struct perfdb_err *err)
{
	memset(run, 0, sizeof(*run));
	run->o = o;
	perfdb_strbuf_init(&run->dir);
	if (!(o->budget >= 0) || !(o->timeout > 0) || !(o->op_timeout >= 0)) {
		run->usage = 1;
		return perfdb_err_set(err, PERFDB_EINVAL, "--row-budget and --op-timeout must be >= 0 and "
				      "--row-timeout > 0");
	}
	int rc = perfdb_backend_get(o->backend, &run->be, err);
	if (rc < 0) {
		/* not built: a usage error; a module that does not load: a runtime one */
		run->usage = err->code == PERFDB_EINVAL;
		return rc;
	}
	const struct perfdb_backend_i *be = run->be;
	PERFDB_TRY(be->detect_device ? be->detect_device(o->reg, &run->host, err)
				     : perfdb_device_detect_host_cpu(o->reg, &run->host, err));
	PERFDB_TRY(find_database(run, err));
	PERFDB_TRY(check_device_kind(run, err));
	PERFDB_TRY(perfdb_native_check_threads(run->dir.buf, o->threads, err));
	PERFDB_TRY(preflight(run, be, err));
	snprintf(run->rep, sizeof(run->rep), "%s/reports", run->dir.buf);
	struct stat st;
	run->rep_made = lstat(run->rep, &st) < 0;
	return perfdb_report_dir_prepare(run->dir.buf, err);
}

/*
 * One journal per run (issue 49): `microbench_journal.<host>.<pid>.jsonl`,
 * <pid> rank 0's under mpirun (each rank appends `.rank<R>`), so two runs
 * on one database never truncate or remove each other's, and a killed run's
 * journal waits for a --resume whatever ran in between.
 */
/* This host's name as a journal name's component (no '.', which separates the parts). */
static void journal_host(char *host, size_t cap)
{
	snprintf(host, cap, "host");
	(void)gethostname(host, cap - 1);
	host[cap - 1] = '\0';
	for (char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-')
			*c = '_';
}

static int name_journal(struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_native_opts *no = run->o;
	long id = (long)getpid();
	if (no->comm && no->nranks > 1 &&
	    MPI_Bcast(&id, 1, MPI_LONG, 0, *(MPI_Comm *)no->comm) != MPI_SUCCESS)
		return perfdb_err_set(err, PERFDB_EIO, "MPI_Bcast of the journal's name failed");
	char host[64];
	journal_host(host, sizeof(host));
	snprintf(run->journal, sizeof(run->journal), "%s/microbench_journal.%s.%ld.jsonl", run->rep, host, id);
	return 0;
}

/* Whether the run that wrote journal base (a per-run name) is still running on this host. */
static int journal_owner_alive(const char *base, const char *myhost)
{
	const char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
	char host[64];
	long pid;
	/* microbench_journal.<host>.<pid>.jsonl; the pre-2026-12 name has neither: its run is over */
	if (sscanf(name, "microbench_journal.%63[^.].%ld.jsonl", host, &pid) != 2)
		return 0;
	if (strcmp(host, myhost) != 0)
		return 0;   /* another host's: it cannot be asked; a resume there is the user's call */
	if (pid == (long)getpid())
		return 0;
	/*
	 * Alive: a perfdb process of that pid that is not a zombie (mpirun's
	 * daemon may not have reaped a killed rank yet when the next run
	 * starts, and a pid may have been reused by another program).
	 */
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return kill((pid_t)pid, 0) == 0 && errno != ESRCH;
	size_t n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* "<pid> (<comm>) <state> ...": comm may hold ')' only at its end here */
	char *lp = strchr(stat, '('), *rp = strrchr(stat, ')');
	if (!lp || !rp || rp < lp || rp[1] != ' ')
		return 0;
	if (rp[2] == 'Z' || rp[2] == 'X')
		return 0;   /* exited, not yet reaped */
	/* a perfdb binary (comm is "exe" after the CPU backend's re-exec through /proc/self/exe) */
	char exe[4096];
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	ssize_t k = readlink(path, exe, sizeof(exe) - 1);
	if (k < 0)
		return errno == EACCES || errno == EPERM;   /* another user's process: not ours to judge */
	exe[k] = '\0';
	const char *b = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	return strncmp(b, "perfdb", 6) == 0;
}

/* --resume: the journals under reports/ of runs no longer running (this one's excluded). */
static int find_killed_journals(struct perfdb_native_run *run, struct perfdb_err *err)
{
	char pat[4400], myhost[64];
	journal_host(myhost, sizeof(myhost));
	snprintf(pat, sizeof(pat), "%s/microbench_journal*.jsonl*", run->rep);
	glob_t g;
	if (glob(pat, 0, NULL, &g) != 0)
		return 0;
	int rc = 0;
	for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
		/* a base name once: the plain file or its rank files */
		char base[4400];
		snprintf(base, sizeof(base), "%s", g.gl_pathv[i]);
		char *rk = strstr(base, ".jsonl.rank");
		if (rk)
			rk[strlen(".jsonl")] = '\0';
		else if (strlen(base) < 6 || strcmp(base + strlen(base) - 6, ".jsonl") != 0)
			continue;
		size_t k = 0;
		while (k < run->nresumed_from && strcmp(run->resumed_from[k], base) != 0)
			k++;
		if (k < run->nresumed_from || strcmp(base, run->journal) == 0 || journal_owner_alive(base, myhost))
			continue;
		char **nv = realloc(run->resumed_from, (run->nresumed_from + 1) * sizeof(*nv));
		if (!nv || !(nv[run->nresumed_from] = strdup(base))) {
			if (nv)
				run->resumed_from = nv;
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		run->resumed_from = nv;
		run->nresumed_from++;
	}
	globfree(&g);
	return rc;
}

void perfdb_native_journals_done(const struct perfdb_native_run *run)
{
	perfdb_engine_journal_remove(run->journal);
	for (size_t i = 0; i < run->nresumed_from; i++)
		perfdb_engine_journal_remove(run->resumed_from[i]);
}

int perfdb_native_measure(struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_native_opts *no = run->o;
	/* Decision 7: every finished row is journaled; --resume continues from killed runs' journals */
	PERFDB_TRY(name_journal(run, err));
	if (no->resume)
		PERFDB_TRY(find_killed_journals(run, err));
	const char *hook = getenv("PERFDB_TEST_EXIT_AFTER_ROWS"), *crash = getenv("PERFDB_TEST_CRASH_OP");
	/* test hook: PERFDB_TEST_PROBE_GBS=a,b,... are the bandwidth probe's readings, in order */
	double script[64];
	size_t nscript = 0, script_pos = 0;
	for (const char *q = getenv("PERFDB_TEST_PROBE_GBS"); q && *q && nscript < 64; nscript++) {
		char *e;
		script[nscript] = strtod(q, &e);
		q = *e == ',' ? e + 1 : e + strlen(e);
	}
	const struct perfdb_engine_hooks hooks = {
		.exit_after = hook && *hook ? (size_t)strtoul(hook, NULL, 10) : 0,
		.crash_op = crash && *crash ? crash : NULL,
		.probe_script = nscript ? script : NULL, .probe_script_n = nscript,
		.probe_script_pos = &script_pos,
	};
	struct perfdb_engine_opts eo = {
		.dbdir = run->dir.buf, .backend = run->be,
		.ops = no->nops ? no->ops : NULL, .nops = no->nops,
		.missing_only = no->missing_only, .fail_fast = no->fail_fast,
		.repeat = (size_t)no->repeat, .rsd = 0.01, .budget_s = no->budget,
		.timeout_s = no->timeout, .threads = (int)no->threads, .seed = 0x5eed,
		.flush = 1, .stop = no->stop, .progress = no->progress, .ud = no->ud,
		.ep_size = (int)no->ep, .comm = no->comm, .rank = no->rank, .nranks = no->nranks,
		.journal = run->journal, .resume = no->resume, .subprocess = no->subprocess,
		.resume_from = (const char *const *)run->resumed_from, .nresume_from = run->nresumed_from,
		.op_timeout_s = no->op_timeout, .contention_retries = (int)no->retries,
		.no_probe = probe_off(), .no_sched = sched_off(), .hooks = &hooks,
		/* one host's quiet figure judges its own rows only: not the rows of a scale-out run */
		.probe_quiet_gbs = no->nranks <= 1 ? run->pf.row_quiet_gbs : 0,
	};
	/* prune decides from what the run saw: the rows read before measuring */
	if (no->prune && no->rank == 0)
		PERFDB_TRY(perfdb_wb_seen_take(run->dir.buf, &run->seen, err));
	/* the backend level, on the device the device level picks (the local rank's GPU) */
	const struct perfdb_backend_i *be = run->be;
	int ndev = be->device_count ? be->device_count(err) : 1;
	int rc = ndev < 0 ? ndev : be->open((int)no->threads, be->device_count ? perfdb_pick_gpu(ndev) : 0, &run->bctx, err);
	if (rc < 0) {
		/* no device, no GPU runtime, no oneDNN: nothing was measured, so the
		 * reports directory this run made goes too (rmdir: only if empty) */
		if (run->rep_made)
			(void)rmdir(run->rep);
		return rc;
	}
	eo.backend_ctx = run->bctx;
	run->engine_ran = 1;
	PERFDB_TRY(perfdb_engine_run(&eo, &run->res, err));
	/* every table --ops named is absent: a run that measures nothing is an error, not "0 rows" */
	if (run->res.absent && !run->res.nrows) {
		/* nothing was measured: the journal, and a reports directory this run made, go */
		perfdb_engine_journal_remove(run->journal);
		if (run->rep_made)
			(void)rmdir(run->rep);
		return perfdb_err_set(err, PERFDB_EINVAL, "no table of --ops %s under '%s': nothing to replay "
				      "(`perfdb path` shows the database the flags name)", run->res.absent,
				      run->dir.buf);
	}
	return perfdb_native_judge_bandwidth(&eo, &run->res, err);
}

int perfdb_native_skip_reasons(const struct perfdb_engine_result *r, struct perfdb_strbuf *out)
{
	/* the first few distinct reasons with their counts; the rest counted together */
	enum { KEEP = 4 };
	const char *why[KEEP];
	size_t cnt[KEEP] = { 0 }, nwhy = 0, other = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		if (r->rows[i].status != PERFDB_ENGINE_SKIPPED)
			continue;
		const char *w = r->rows[i].reason && r->rows[i].reason[0] ? r->rows[i].reason : "no reason recorded";
		size_t k = 0;
		while (k < nwhy && strcmp(why[k], w) != 0)
			k++;
		if (k == nwhy && nwhy < KEEP)
			why[nwhy++] = w;
		if (k < nwhy)
			cnt[k]++;
		else
			other++;
	}
	for (size_t k = 0; k < nwhy; k++)
		PERFDB_TRY(perfdb_strbuf_addf(out, "%s%zu %s: %s", k ? "; " : "", cnt[k],
					      cnt[k] == 1 ? "row" : "rows", why[k]));
	if (other)
		PERFDB_TRY(perfdb_strbuf_addf(out, "; %zu for other reasons (the rows CSV has each)", other));
	return 0;
}

/*
 * A CPU database of this machine (<root>/<host CPU>/...): its peaks are
 * measured once, after the first run, into the device's met file, so the
 * report draws the CPU's roofline (docs/devices.md "Devices perfdb met").
 * PERFDB_PEAKS=0 leaves them out (tests whose time must stay small).
 */
static int record_peaks(struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_native_opts *no = run->o;
	if (strcmp(run->be->device_kind, "cpu") != 0 || !run->dev || strcmp(run->dev->name, run->host) != 0 ||
	    no->rank != 0 || no->nranks > 1 || run->res.interrupted || perfdb_env_off("PERFDB_PEAKS"))
		return 0;
	/* <root>/<device>/torch/torch<T>: the device directory, named as the host */
	char devdir[4096];
	const char *base;
	if (perfdb_db_device_dir(run->dir.buf, devdir, sizeof(devdir), &base) < 0 ||
	    strcmp(base, run->host) != 0 || perfdb_device_met_has_peaks(devdir))
		return 0;
	struct perfdb_engine_opts eo = { .backend = run->be, .backend_ctx = run->bctx, .threads = (int)no->threads,
					 .no_probe = 1, .no_sched = sched_off(), .seed = 0x5eed };
	struct perfdb_device *d = &run->peaks;
	memset(d, 0, sizeof(*d));
	d->name = (char *)run->host;
	d->kind = "cpu";
	d->vendor = run->dev->vendor;
	d->description = "this machine's CPU; peaks measured by perfdb microbench --backend cpu";
	d->memory_bytes = run->dev->memory_bytes;
	PERFDB_TRY(perfdb_engine_cpu_peaks(&eo, d, err));
	PERFDB_TRY(perfdb_device_met_add_peaks(devdir, d, err));
	snprintf(run->peaks_file, sizeof(run->peaks_file), "%s/perfdb-device.json", devdir);
	return 0;
}

int perfdb_native_record(struct perfdb_native_run *run, struct perfdb_err *err)
{
	const struct perfdb_native_opts *no = run->o;
	const struct perfdb_backend_i *be = run->be;
	perfdb_report_timestamp(run->ts, sizeof(run->ts));
	struct perfdb_strbuf env = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&env, "backend=%s\nhost=%s\nthreads=%ld\n", be->name, run->host, no->threads);
	if (be->describe)
		be->describe(run->bctx, &env);
	perfdb_strbuf_addf(&env, "mpi_ranks=%d\n", no->nranks);
	if (run->preflight_ran)
		perfdb_strbuf_addf(&env, "preflight=%s\npreflight_other_cpus=%.2f\npreflight_steal=%.4f\n"
				   "preflight_probe_gbs=%.1f\npreflight_quiet_gbs=%.1f\n",
				   run->pf.quiet ? "quiet" : "busy", run->pf.other_cpus, run->pf.steal,
				   run->pf.probe_gbs, run->pf.quiet_gbs);
	perfdb_strbuf_addf(&env, "repeat_count=%ld\nrow_budget_s=%g\nrow_timeout_s=%g\nrsd_target=0.01\n"
			   "cache_flush=ops below 64 MiB (inputs and outputs) but the MatMul family, before each sample\n"
			   "weights_rotated=GEMM weights below 64 MiB rotate through ceil(64 MiB / size) copies, at most 64\n",
			   no->repeat, no->budget, no->timeout);
	/* the status is written first: it survives a failing writeback */
	snprintf(run->stp, sizeof(run->stp), "%s/run_all_op_status_%s.json", run->rep, run->ts);
	int rc = perfdb_native_status_build(&run->res, &run->st);
	/* with --ops the user chose the tables; without, say which were left alone */
	if (rc == 0 && !no->ops)
		rc = perfdb_status_unreplayed(run->dir.buf, &run->st, err);
	size_t unrows = 0;
	for (size_t i = 0; i < run->st.nunreplayed; i++)
		unrows += run->st.unreplayed[i].rows;
	perfdb_strbuf_addf(&env, "tables_not_replayed=%zu\nrows_not_replayed=%zu\n", run->st.nunreplayed,
			   unrows);
	/* native_contended.c: the second pass over rows read low against the run's median */
	perfdb_strbuf_addf(&env, "rows_measured_again=%zu\nrows_measured_again_written=%zu\n", run->res.nagain,
			   run->res.nagain_written);
	if (rc == 0)
		rc = perfdb_status_write(run->stp, &run->st, err);
	if (rc == 0)
		rc = perfdb_native_write_records(run->dir.buf, run->ts, run->dev ? run->dev->name : "?",
						 env.buf, &run->res, probe_off(), err);
	if (rc == 0 && be->write_reports)
		rc = be->write_reports(run->bctx, run->rep, run->ts, &run->kpath, err);
	if (rc == 0)
		rc = record_peaks(run, err);
	/* a quiet run without contended rows: its rows' median probe is a quiet row reading */
	if (rc == 0 && run->preflight_ran && run->pf.quiet && !run->res.ncontended && !run->res.interrupted &&
	    !probe_off() && no->nranks <= 1) {
		struct perfdb_err ignored;
		(void)perfdb_quiet_note(PERFDB_QUIET_ROW, perfdb_native_rows_median(&run->res, -1), &ignored);
	}
	perfdb_strbuf_release(&env);
	return rc;
}

void perfdb_native_run_release(struct perfdb_native_run *run)
{
	for (size_t i = 0; i < run->nresumed_from; i++)
		free(run->resumed_from[i]);
	free(run->resumed_from);
	run->resumed_from = NULL;
	run->nresumed_from = 0;
	perfdb_status_release(&run->st);
	perfdb_engine_result_release(&run->res);
	perfdb_wb_seen_release(&run->seen);
	perfdb_strbuf_release(&run->dir);
	free(run->kpath);
	run->kpath = NULL;
	if (run->be && run->be->free)
		run->be->free(run->bctx);
	run->bctx = NULL;
}

/* Append "<op>.csv" to a status list. */
static int add_table(char ***list, size_t *cnt, const char *op)
{
	void *p = realloc(*list, (*cnt + 1) * sizeof(char *));
	if (!p)
		return -PERFDB_ENOMEM;
	*list = p;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&b, "%s.csv", op);
	(*list)[(*cnt)++] = perfdb_strbuf_detach(&b, NULL);
	return 0;
}

/* Append "<op>.csv:<line>" and the row's reason to a status list of failures. */
static int add_row(struct perfdb_status_failure **list, size_t *cnt, const struct perfdb_engine_row *row)
{
	void *p = realloc(*list, (*cnt + 1) * sizeof(**list));
	if (!p)
		return -PERFDB_ENOMEM;
	*list = p;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&b, "%s.csv:%zu", row->op, row->line);
	(*list)[*cnt].op = perfdb_strbuf_detach(&b, NULL);
	(*list)[*cnt].reason = strdup(row->reason ? row->reason : "");
	(*cnt)++;
	return (*list)[*cnt - 1].op && (*list)[*cnt - 1].reason ? 0 : -PERFDB_ENOMEM;
}

int perfdb_native_status_build(const struct perfdb_engine_result *r, struct perfdb_status *st)
{
	memset(st, 0, sizeof(*st));
	st->has_rows = 1;
	st->rows_measured = r->nok;
	st->rows_failed = r->nfailed;
	st->rows_contended = r->ncontended;
	st->rows_skipped = r->nskipped;
	st->rows_again = r->nagain;
	st->rows_again_written = r->nagain_written;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct perfdb_engine_row *row = &r->rows[i];
		if (row->status == PERFDB_ENGINE_FAILED)
			PERFDB_TRY(add_row(&st->failed, &st->nfailed, row));
		else if (row->status == PERFDB_ENGINE_CONTENDED)
			PERFDB_TRY(add_row(&st->contended, &st->ncontended, row));
	}
	/* per op: success when every row that ran was measured; skipped when none ran */
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i, ok = 0, bad = 0;
		for (; j < r->nrows && strcmp(r->rows[j].op, r->rows[i].op) == 0; j++) {
			ok += r->rows[j].status == PERFDB_ENGINE_OK;
			bad += r->rows[j].status == PERFDB_ENGINE_FAILED || r->rows[j].status == PERFDB_ENGINE_CONTENDED;
		}
		if (!bad)
			PERFDB_TRY(ok ? add_table(&st->success, &st->nsuccess, r->rows[i].op)
				      : add_table(&st->skipped, &st->nskipped, r->rows[i].op));
		i = j;
	}
	return 0;
}

int perfdb_native_records_csv(const struct perfdb_engine_result *r, struct perfdb_strbuf *out)
{
	static const char *const header[] = {
		"Operator", "Line", "Status", "Samples", "Mean(us)", "Median(us)", "Min(us)", "Std(us)",
		"Noise", "CPU/Wall", "Probe(GB/s)", "Retries", "Blocks", "Contended Blocks", "Discarded",
		"Outliers", "Rank", "Threads", "Kernel Used", "Reason",
	};
	PERFDB_TRY(perfdb_csv_put_row(out, header, sizeof(header) / sizeof(header[0])));
	for (size_t i = 0; i < r->nrows; i++) {
		const struct perfdb_engine_row *x = &r->rows[i];
		PERFDB_TRY(perfdb_csv_put_field(out, x->op, strlen(x->op)));
		PERFDB_TRY(perfdb_strbuf_addf(out, ",%zu,%s,%zu,%.6f,%.6f,%.6f,%.6f,", x->line,
					      perfdb_engine_status_name(x->status), x->samples, x->mean, x->median,
					      x->min, x->std));
		/* Noise: std / mean of the kept samples, as nvbench's "Noise"; empty without samples */
		if (x->samples && x->mean > 0)
			PERFDB_TRY(perfdb_strbuf_addf(out, "%.2f%%", 100.0 * x->std / x->mean));
		PERFDB_TRY(perfdb_strbuf_addf(out, ",%.3f,%.1f,%d,%zu,%zu,%zu,%zu,%d,%d,", x->cpu_ratio, x->probe_gbs,
					      x->retries, x->blocks, x->blocks_bad, x->discarded, x->outliers, x->rank,
					      x->threads));
		/* Kernel Used: empty for rows that never reached prepare (skipped, refused) */
		PERFDB_TRY(perfdb_csv_put_field(out, x->kernel, strlen(x->kernel)));
		PERFDB_TRY(perfdb_strbuf_addstr(out, ",\""));
		for (const char *q = x->reason ? x->reason : ""; *q; q++) {
			if (*q == '"')
				PERFDB_TRY(perfdb_strbuf_addch(out, '"'));
			PERFDB_TRY(perfdb_strbuf_addch(out, *q));
		}
		PERFDB_TRY(perfdb_strbuf_addstr(out, "\"\r\n"));
	}
	return 0;
}

int perfdb_native_write_records(const char *dbdir, const char *ts, const char *device,
				const char *env, const struct perfdb_engine_result *r, int no_probe,
				struct perfdb_err *err)
{
	char p[4400];
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&b, "%s", env);
	perfdb_strbuf_addf(&b, "device=%s\nrows_ok=%zu\nrows_failed=%zu\nrows_skipped=%zu\n"
			   "rows_contended=%zu\ninterrupted=%d\n",
			   device, r->nok, r->nfailed, r->nskipped, r->ncontended, r->interrupted);
	size_t ncont = 0;
	for (size_t i = 0; i < r->nrows; i++)
		ncont += (size_t)r->rows[i].low_bandwidth;
	double median = perfdb_native_rows_median(r, -1);
	if (r->probe_quiet_gbs > 0 || median > 0) {
		perfdb_strbuf_addf(&b, "probe_median_gbs=%.1f\n", median);
		if (r->probe_quiet_gbs > 0)
			perfdb_strbuf_addf(&b, "probe_quiet_gbs=%.1f\n", r->probe_quiet_gbs);
		perfdb_strbuf_addf(&b, "rows_probe_low=%zu\n", ncont);
	}
	else if (no_probe)
		perfdb_strbuf_addstr(&b, "probe=off\n");
	snprintf(p, sizeof(p), "%s/reports/microbench_env_%s.txt", dbdir, ts);
	int rc = perfdb_file_write_atomic(p, b.buf, b.len, err);
	perfdb_strbuf_reset(&b);
	if (rc == 0 && perfdb_native_records_csv(r, &b) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0) {
		snprintf(p, sizeof(p), "%s/reports/microbench_rows_%s.csv", dbdir, ts);
		rc = perfdb_file_write_atomic(p, b.buf, b.len, err);
	}
	perfdb_strbuf_release(&b);
	return rc;
}
