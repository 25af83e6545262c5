/*
 * The measuring harness of perfdb comm: warm-up, timing, the correctness
 * check, the time budget, the contention probe and the environment record
 * (method in harness.h; docs/spec/comm.md Decision 2; docs/comm.md defines every
 * number).
 */
#include "harness.h"

#include <errno.h>
#include <limits.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/sched.h"
#include "perfdb/stats.h"
#include "perfdb_build.h"

/* ---- check data ------------------------------------------------------ */

typedef int (*value_fn)(long rank, long n, size_t i, size_t count);

static void fill(enum perfdb_comm_dtype d, void *buf, size_t elems, value_fn f, long rank,
		 long n, size_t count)
{
	switch (d) {
	case PERFDB_COMM_BF16:
		for (size_t i = 0; i < elems; i++)
			((uint16_t *)buf)[i] = perfdb_bf16_from_float((float)f(rank, n, i, count));
		break;
	case PERFDB_COMM_FP16:
		for (size_t i = 0; i < elems; i++)
			((uint16_t *)buf)[i] = perfdb_fp16_from_float((float)f(rank, n, i, count));
		break;
	case PERFDB_COMM_FP32:
		for (size_t i = 0; i < elems; i++)
			((float *)buf)[i] = (float)f(rank, n, i, count);
		break;
	default:
		for (size_t i = 0; i < elems; i++)
			((int8_t *)buf)[i] = (int8_t)f(rank, n, i, count);
		break;
	}
}

/* A value no collective produces (the data are in [-8, 8]): what a receive
 * buffer holds before the check, so an element never written is wrong. */
static int sentinel(long rank, long n, size_t i, size_t count)
{
	(void)rank, (void)n, (void)i, (void)count;
	return 99;
}

static double get(enum perfdb_comm_dtype d, const void *buf, size_t i)
{
	switch (d) {
	case PERFDB_COMM_BF16:
		return perfdb_bf16_to_float(((const uint16_t *)buf)[i]);
	case PERFDB_COMM_FP16:
		return perfdb_fp16_to_float(((const uint16_t *)buf)[i]);
	case PERFDB_COMM_FP32:
		return ((const float *)buf)[i];
	default:
		return ((const int8_t *)buf)[i];
	}
}

static unsigned long long verify(enum perfdb_comm_dtype d, const void *buf, size_t elems,
				 value_fn f, long rank, long n, size_t count)
{
	unsigned long long bad = 0;
	for (size_t i = 0; i < elems; i++)
		if (get(d, buf, i) != (double)f(rank, n, i, count))
			bad++;
	return bad;
}

/* ---- measuring ------------------------------------------------------- */

static void *alloc_buf(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, bytes ? bytes : 64) != 0)
		return NULL;
	memset(p, 0, bytes ? bytes : 64);   /* touch every page before timing */
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * Whether a transport's begin or call (rc < 0: this member's, err set)
 * failed on any member of comm, which all then learn: res->transport_failed,
 * and err is the message of the lowest member that failed ("rank R: ..."
 * on the others), so rank 0 can name the call.  0, or an MPI failure.
 *
 * A member whose call failed may be alone: its peers can be waiting inside
 * the collective it never joined (HCCL, NCCL and MPI alike only return
 * when every member has called), and would never come here.  So the
 * agreement is non-blocking, and a member that failed waits for it at most
 * grace seconds; then it gives up with -PERFDB_EIO, its own message and the
 * reason, which the CLI prints before it aborts the job (comm_run.c: fatal).
 * Members that did not fail wait as long as it takes: either the agreement
 * completes or the job is aborted under them.
 */
static int agree_call(int rc, MPI_Comm comm, double grace, struct perfdb_harness_result *res,
		      struct perfdb_err *err)
{
	int rank, who;
	MPI_TRY(err, MPI_Comm_rank(comm, &rank));
	int mine = rc < 0 ? rank : INT_MAX;
	MPI_Request req;
	MPI_TRY(err, MPI_Iallreduce(&mine, &who, 1, MPI_INT, MPI_MIN, comm, &req));
	if (rc < 0) {
		const struct timespec nap = { 0, 1000000 };   /* 1 ms */
		double until = MPI_Wtime() + grace;
		int done = 0;
		for (;;) {
			MPI_TRY(err, MPI_Test(&req, &done, MPI_STATUS_IGNORE));
			if (done)
				break;
			if (MPI_Wtime() > until) {
				char msg[PERFDB_ERR_MSG_MAX];
				snprintf(msg, sizeof(msg), "%s", err->msg);
				perfdb_err_set(err, PERFDB_EIO,
					       "%s; the group's other ranks did not reach the agreement "
					       "within %.0f s (they wait inside a collective call)",
					       msg, grace);
				return -PERFDB_EIO;
			}
			nanosleep(&nap, NULL);
		}
	} else {
		MPI_TRY(err, MPI_Wait(&req, MPI_STATUS_IGNORE));
	}
	res->transport_failed = who != INT_MAX;
	if (!res->transport_failed)
		return 0;
	char msg[PERFDB_ERR_MSG_MAX];
	snprintf(msg, sizeof(msg), "%s", rank == who ? err->msg : "");
	MPI_TRY(err, MPI_Bcast(msg, (int)sizeof(msg), MPI_CHAR, who, comm));
	if (rank != who)
		perfdb_err_set(err, PERFDB_EIO, "rank %d: %s", who, msg);
	return 0;
}

/* How long a member whose call failed waits for the others (agree_call):
 * 5 s, and 10 times the slowest call it has seen, for groups whose
 * iterations take seconds. */
static double grace_of(double slowest)
{
	return 5.0 + 10.0 * slowest;
}

/*
 * One timed pass: iters rounds of nothing but the barrier, the clock and
 * the call, into t (seconds, this rank's).  When judged, the scheduler's
 * accounts are read between rounds once a block of HARNESS_BLOCK_S has
 * passed (and after the last round); every round of a contaminated block
 * gets bad[i] = 1 (perfdb/sched.h).  *bad_call: a failed call's error
 * (err holds its message), the pass stopped there.  Returns whether this
 * rank judged the pass (no accounts: it could not).
 */
static int timed_pass(const struct perfdb_comm_transport_i *tr, void *ctx, const struct perfdb_coll *coll,
		      const struct perfdb_harness_case *hc, MPI_Comm comm, size_t count, long iters,
		      int judged, double *t, unsigned char *bad, int *bad_call, struct perfdb_err *err)
{
	struct perfdb_sched_reading a, b;
	struct perfdb_sched_block blk;
	struct perfdb_err e;
	perfdb_err_clear(&e);
	memset(bad, 0, (size_t)iters);
	judged = judged && perfdb_sched_read(&a, &e) == 0;
	double b0 = MPI_Wtime();
	long first = 0;
	for (long i = 0; i < iters; i++) {
		MPI_Barrier(comm);
		double sec = 0;
		int r = tr->call(ctx, coll, hc->dtype, count, &sec, err);
		t[i] = sec;
		if (r < 0) {
			*bad_call = r;   /* as in the warm-up: straight to the agreement */
			break;
		}
		double now = MPI_Wtime();
		if (!judged || (now - b0 < HARNESS_BLOCK_S && i + 1 < iters))
			continue;
		if (perfdb_sched_read(&b, &e) == 0) {
			perfdb_sched_judge(&a, &b, now - b0, -1, &blk);
			if (blk.contaminated)
				memset(bad + first, 1, (size_t)(i + 1 - first));
			a = b;
		}
		first = i + 1;
		b0 = MPI_Wtime();
	}
	return judged;
}

/* The timed iterations the budget leaves after nw warm-up calls of times t
 * (sorted here), spent seconds in, within [min_iters, iters]. */
static long iters_for(const struct perfdb_harness_cfg *cfg, double *t, size_t nw, double spent)
{
	long iters = cfg->iters;
	if (nw == 0)
		return iters;
	size_t from = nw > 1 ? 1 : 0;   /* the first iteration is the slowest */
	qsort(t + from, nw - from, sizeof(double), cmp_double);
	double est = t[from + (nw - from) / 2];
	if (est > 0) {
		double left = cfg->budget - spent;
		double fit = left > 0 ? left / est : 0;
		if (fit < (double)iters)
			iters = (long)fit;
	}
	if (iters < cfg->min_iters)
		iters = cfg->min_iters;
	if (iters > cfg->iters)
		iters = cfg->iters;
	return iters;
}

/* The check's outcome over the group: wrong elements summed, the first rank
 * that saw one. */
static int check_result(const struct perfdb_harness_case *hc, const struct perfdb_comm_layout *l,
			void *recv, int rank, int n, MPI_Comm comm, struct perfdb_harness_result *res,
			struct perfdb_err *err)
{
	const struct perfdb_coll *coll = hc->coll;
	/* fault injection for the test suite (docs/testing.md): the last rank
	 * spoils one received element, so the check must catch it */
	const char *fault = getenv("PERFDB_COMM_FAULT");
	if (fault && *fault && rank == n - 1 && l->recv_elems)
		fill(hc->dtype, recv, 1, sentinel, rank, n, l->count);
	unsigned long long bad = verify(hc->dtype, recv, l->recv_elems, coll->expected, rank, n,
					l->count);
	int bad_rank = bad ? rank : n;
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &bad_rank, 1, MPI_INT, MPI_MIN, comm));
	res->check = bad ? -1 : 1;
	res->bad = bad;
	res->bad_rank = bad ? bad_rank : -1;
	return 0;
}

int perfdb_harness_measure(const struct perfdb_harness_cfg *cfg,
			   const struct perfdb_harness_case *hc,
			   struct perfdb_harness_result *res, struct perfdb_err *err)
{
	const struct perfdb_coll *coll = hc->coll;
	MPI_Comm comm = hc->comm;
	int rank, n;
	MPI_TRY(err, MPI_Comm_rank(comm, &rank));
	MPI_TRY(err, MPI_Comm_size(comm, &n));
	memset(res, 0, sizeof(*res));
	res->bad_rank = -1;

	size_t esz = perfdb_comm_dtype(hc->dtype)->size;
	size_t elems = (size_t)hc->message_bytes / esz;
	struct perfdb_comm_layout l;
	coll->layout(elems, n, &l);

	void *send = NULL, *recv = alloc_buf(l.recv_elems * esz);
	if (l.send_elems)
		send = alloc_buf(l.send_elems * esz);
	double *t = malloc(((size_t)(cfg->iters > cfg->warmup ? cfg->iters : cfg->warmup) + 1) *
			   sizeof(double));
	int ok = recv && (send || !l.send_elems) && t;
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
	int rc = 0;
	if (!ok) {
		res->alloc_failed = true;
		goto out;
	}
	const struct perfdb_comm_transport_i *tr = hc->transport->i;
	void *ctx = hc->transport->ctx;
	size_t send_bytes = send ? l.send_elems * esz : 0, recv_bytes = l.recv_elems * esz;
	/* the transport's buffers (and group): a failure on any member fails all */
	rc = tr->begin(ctx, comm, send, send_bytes, recv, recv_bytes, err);
	if ((rc = agree_call(rc, comm, grace_of(0), res, err)) < 0 || res->transport_failed)
		goto out;

	/* 2. the check: one untimed run on deterministic data */
	if (send) {
		fill(hc->dtype, send, l.send_elems, coll->send_value, rank, n, l.count);
		fill(hc->dtype, recv, l.recv_elems, sentinel, rank, n, l.count);
	} else {
		fill(hc->dtype, recv, l.recv_elems, coll->send_value, rank, n, l.count);
	}
	double sec, t0 = MPI_Wtime();
	rc = tr->upload(ctx, err);
	if (rc == 0)
		rc = tr->call(ctx, coll, hc->dtype, l.count, &sec, err);
	if (rc == 0)
		rc = tr->download(ctx, err);
	double slowest = MPI_Wtime() - t0;   /* wall time of the calls, for grace_of */
	if ((rc = agree_call(rc, comm, grace_of(slowest), res, err)) < 0 || res->transport_failed)
		goto out;
	PERFDB_TRY(check_result(hc, &l, recv, rank, n, comm, res, err));

	/* 3. warm-up, stopped early once a quarter of the budget is spent */
	memset(recv, 0, recv_bytes ? recv_bytes : 1);
	if (send)
		memset(send, 0, send_bytes);
	if ((rc = tr->upload(ctx, err)) < 0)
		goto out;
	double start = MPI_Wtime(), spent = 0;
	size_t nw = 0;
	int bad_call = 0;   /* the last failed call's error (err holds its message) */
	while ((long)nw < cfg->warmup) {
		MPI_TRY(err, MPI_Barrier(comm));
		sec = 0;
		double c0 = MPI_Wtime();
		int r = tr->call(ctx, coll, hc->dtype, l.count, &sec, err);
		double took = MPI_Wtime() - c0;
		if (took > slowest)
			slowest = took;
		if (r < 0) {
			/* no collective of the harness's after a failed call: the
			 * others may be inside the call's (agree_call) */
			bad_call = r;
			break;
		}
		double v[2] = { sec, MPI_Wtime() - start };
		MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm));
		t[nw++] = v[0];
		spent = v[1];
		if (nw >= 2 && spent >= 0.25 * cfg->budget)
			break;
	}
	res->warmup = nw;

	if (bad_call) {
		if ((rc = agree_call(bad_call, comm, grace_of(slowest), res, err)) < 0 || res->transport_failed)
			goto out;
	}

	/* 4. how many timed iterations the budget allows */
	long iters = iters_for(cfg, t, nw, spent);

	/*
	 * The timed passes (harness.h step 4): a pass is `iters` rounds; a
	 * round counts when no rank's scheduler accounts say it was contended.
	 * A pass that leaves fewer than min_iters clean rounds is followed by
	 * another, up to HARNESS_PASSES; every rank takes the same decision on
	 * the flags they share.
	 */
	unsigned char *flags = calloc((size_t)iters + 1, 1);
	double *keep = malloc(((size_t)iters * HARNESS_PASSES + 1) * sizeof(double));
	int judged = !cfg->no_sched, jok = flags && keep;
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &jok, 1, MPI_INT, MPI_MIN, comm));
	if (!jok) {
		free(flags);
		free(keep);
		res->alloc_failed = true;
		goto out;
	}
	long need = iters < cfg->min_iters ? iters : cfg->min_iters;
	size_t nkeep = 0;
	for (int pass = 0; pass < HARNESS_PASSES; pass++) {
		judged = timed_pass(tr, ctx, coll, hc, comm, l.count, iters, judged, t, flags, &bad_call, err);
		if ((rc = agree_call(bad_call, comm, grace_of(slowest), res, err)) < 0 || res->transport_failed)
			break;
		/* 5. each round's time is the slowest rank's; it counts when no rank was contended */
		if (iters > 0) {
			MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, t, (int)iters, MPI_DOUBLE, MPI_MAX, comm));
			MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, flags, (int)iters, MPI_UNSIGNED_CHAR, MPI_MAX, comm));
		}
		MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &judged, 1, MPI_INT, MPI_MAX, comm));
		for (long i = 0; i < iters; i++) {
			if (flags[i])
				res->rounds_bad++;
			else
				keep[nkeep++] = t[i] * 1e6;
		}
		res->rounds += (size_t)iters;
		res->judged = judged;
		if (!judged || (long)nkeep >= need)
			break;
	}
	free(flags);
	if (rc < 0 || res->transport_failed) {
		free(keep);
		goto out;
	}
	res->unclean = judged && (long)nkeep < need;
	res->samples = keep;
	res->nsamples = nkeep;
out:
	free(t);
	free(send);
	free(recv);
	return rc < 0 ? rc : 0;
}

/* ---- the world around a case ----------------------------------------- */

/* Wait for a request, sleeping between tests once a short spin is over, so
 * a rank that is not measuring leaves its CPU to the ranks that are. */
int perfdb_harness_idle_wait(MPI_Request *req, struct perfdb_err *err)
{
	const struct timespec nap = { 0, 100000 };  /* 100 µs */
	for (int spin = 0;; spin++) {
		int done = 0;
		MPI_TRY(err, MPI_Test(req, &done, MPI_STATUS_IGNORE));
		if (done)
			return 0;
		if (spin >= 50)
			nanosleep(&nap, NULL);
	}
}

static double rusage_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Busy time of the CPUs in set, seconds; -1 if /proc/stat is unreadable. */
static double proc_busy(const cpu_set_t *set, double tick)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[512];
	double busy = 0;
	int any = 0;
	while (fgets(line, sizeof(line), f)) {
		int cpu;
		unsigned long long v[8] = { 0 };
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8)
			continue;
		if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, set))
			continue;
		/* user nice system idle iowait irq softirq steal */
		busy += (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick;
		any = 1;
	}
	fclose(f);
	return any ? busy : -1;
}

int perfdb_harness_env_init(struct perfdb_harness_env *e, MPI_Comm world,
			    struct perfdb_err *err)
{
	memset(e, 0, sizeof(*e));
	e->world = world;
	e->node = MPI_COMM_NULL;
	MPI_TRY(err, MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &e->node));
	MPI_TRY(err, MPI_Comm_rank(e->node, &e->node_rank));
	MPI_TRY(err, MPI_Comm_size(e->node, &e->node_size));
	CPU_ZERO(&e->cpus);
	if (sched_getaffinity(0, sizeof(e->cpus), &e->cpus) != 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &e->cpus);
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &e->cpus, (int)sizeof(e->cpus), MPI_BYTE, MPI_BOR,
				   e->node));
	e->ncpus = CPU_COUNT(&e->cpus);
	long hz = sysconf(_SC_CLK_TCK);
	e->tick = hz > 0 ? 1.0 / (double)hz : 0.01;
	e->proc_ok = e->node_rank == 0 && proc_busy(&e->cpus, e->tick) >= 0;
	return 0;
}

void perfdb_harness_env_release(struct perfdb_harness_env *e)
{
	if (e->node != MPI_COMM_NULL)
		MPI_Comm_free(&e->node);
}

/* MemAvailable from /proc/meminfo in bytes, or -1. */
static double mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	char line[256];
	double v = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			v = (double)kb * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

int perfdb_harness_case_begin(struct perfdb_harness_env *e, int *stop,
			      unsigned long long need, bool *mem_ok, struct perfdb_err *err)
{
	MPI_Request req;
	MPI_TRY(err, MPI_Iallreduce(MPI_IN_PLACE, stop, 1, MPI_INT, MPI_MAX, e->world, &req));
	PERFDB_TRY(perfdb_harness_idle_wait(&req, err));
	if (*stop)
		return 0;
	double host_need = (double)need;
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &host_need, 1, MPI_DOUBLE, MPI_SUM, e->node));
	double avail = mem_available();
	int ok = avail < 0 || host_need <= 0.9 * avail;
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, e->world));
	*mem_ok = ok;
	e->t0 = MPI_Wtime();
	e->ours0 = rusage_seconds();
	e->busy0 = e->proc_ok ? proc_busy(&e->cpus, e->tick) : -1;
	return 0;
}

int perfdb_harness_case_end(struct perfdb_harness_env *e, double *other_cpu,
			    struct perfdb_err *err)
{
	MPI_Request req;
	MPI_TRY(err, MPI_Ibarrier(e->world, &req));
	PERFDB_TRY(perfdb_harness_idle_wait(&req, err));
	double wall = MPI_Wtime() - e->t0;
	double ours = rusage_seconds() - e->ours0;
	double busy = e->proc_ok && e->busy0 >= 0 ? proc_busy(&e->cpus, e->tick) : -1;
	MPI_TRY(err, MPI_Reduce(e->node_rank == 0 ? MPI_IN_PLACE : &ours, &ours, 1, MPI_DOUBLE,
				MPI_SUM, 0, e->node));
	double frac = -1;
	if (e->node_rank == 0 && busy >= 0 && wall > 0) {
		double other = (busy - e->busy0) - ours;
		/* /proc/stat counts ticks: each busy CPU may be off by one */
		double floor = e->tick * (double)(e->node_size + 1);
		frac = other > floor ? other / wall : 0;
	}
	MPI_TRY(err, MPI_Allreduce(MPI_IN_PLACE, &frac, 1, MPI_DOUBLE, MPI_MAX, e->world));
	*other_cpu = frac;
	return 0;
}

/* ---- the environment record ------------------------------------------ */

static void cpu_model(char *buf, size_t cap)
{
	snprintf(buf, cap, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0) {
			char *p = strchr(line, ':');
			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = '\0';
				snprintf(buf, cap, "%s", p);
			}
			break;
		}
	fclose(f);
}

/* Append a, b and c to the string in buf (truncating at cap). */
static void append(char *buf, size_t cap, const char *a, const char *b, const char *c)
{
	size_t w = strlen(buf);
	if (w < cap)
		snprintf(buf + w, cap - w, "%s%s%s", a, b, c);
}

static void cpu_list(const cpu_set_t *set, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		int j = i;
		while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set))
			j++;
		char part[32];
		if (j > i)
			snprintf(part, sizeof(part), "%d-%d", i, j);
		else
			snprintf(part, sizeof(part), "%d", i);
		append(buf, cap, buf[0] ? "," : "", part, "");
		i = j;
	}
}

/*
 * How Open MPI's shared-memory transport copies a large message between two
 * ranks of one host, read back after MPI_Init through the MPI tool
 * interface (the variable holds what the component settled on: "none" when
 * CMA was configured but ptrace is not allowed).  On the 2-core VM of
 * docs/measuring.md, CMA (process_vm_readv) made a 16 MiB reduce_scatter
 * 2.5x slower than copying through the shared segment ("none"), and its
 * time varied by up to 60 % from one process to the next, so two databases
 * measured with different mechanisms differ for that reason alone.  Open
 * MPI 4 calls the transport vader, later versions sm (whose variable is
 * read where vader's is absent); other MPIs have neither, and the record
 * says so.
 *
 * It is read after the last case, not before the first: MPI_T_init_thread
 * registers every component of every framework, as ompi_info does (in Open
 * MPI 4.1 that loads libpsm2, whose calibration sleeps 0.2 s, and a hundred
 * other modules), and with those in rank 0 the plain loop of bench/comm_ref
 * ran reduce_scatter 2-3 % slower at 64 KiB and 1-2 % faster at 256 KiB
 * (two runs of 120 and 240 alternating launch pairs, docs/measuring.md
 * "Rank 0's MPI_T, found"): what the process has loaded is part of what
 * it measures.
 */
static void shm_single_copy(char *buf, size_t cap)
{
	static const char *const names[] = { "btl_vader_single_copy_mechanism", "btl_sm_single_copy_mechanism" };
	int provided = 0;
	snprintf(buf, cap, "unknown (no single-copy variable in this MPI)");
	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
		snprintf(buf, cap, "unknown (MPI_T_init_thread failed)");
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int idx = -1;
		if (MPI_T_cvar_get_index(names[i], &idx) != MPI_SUCCESS)
			continue;
		char nm[128], iname[64];
		int nlen = (int)sizeof(nm), verb = 0, bind = 0, scope = 0, count = 0, val = 0;
		MPI_Datatype dt;
		MPI_T_enum en = MPI_T_ENUM_NULL;
		MPI_T_cvar_handle h;
		if (MPI_T_cvar_get_info(idx, nm, &nlen, &verb, &dt, &en, NULL, NULL, &bind, &scope) != MPI_SUCCESS ||
		    dt != MPI_INT || MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
			continue;
		int rc = MPI_T_cvar_read(h, &val);
		MPI_T_cvar_handle_free(&h);
		if (rc != MPI_SUCCESS)
			continue;
		snprintf(buf, cap, "%d (%s)", val, names[i]);
		int items = 0, elen = (int)sizeof(iname);
		if (en != MPI_T_ENUM_NULL && MPI_T_enum_get_info(en, &items, iname, &elen) == MPI_SUCCESS)
			for (int k = 0; k < items; k++) {
				int v = 0, il = (int)sizeof(iname);
				if (MPI_T_enum_get_item(en, k, &v, iname, &il) == MPI_SUCCESS && v == val) {
					snprintf(buf, cap, "%s (%s)", iname, names[i]);
					break;
				}
			}
		break;
	}
	MPI_T_finalize();
}

void perfdb_harness_context_finish(struct perfdb_comm_context *ctx)
{
	if (!ctx->shm_copy_pending)
		return;
	shm_single_copy(ctx->shm_copy, sizeof(ctx->shm_copy));
	ctx->shm_copy_pending = false;
}

int perfdb_harness_context(struct perfdb_harness_env *e, bool malloc_tune,
			   struct perfdb_comm_context *ctx, struct perfdb_err *err)
{
	int rank, size;
	MPI_TRY(err, MPI_Comm_rank(e->world, &rank));
	MPI_TRY(err, MPI_Comm_size(e->world, &size));
	memset(ctx, 0, sizeof(*ctx));

	/* host names of every rank, counted in order of first appearance */
	char me[MPI_MAX_PROCESSOR_NAME];
	int len = 0;
	memset(me, 0, sizeof(me));
	MPI_TRY(err, MPI_Get_processor_name(me, &len));
	char *all = rank == 0 ? calloc((size_t)size, MPI_MAX_PROCESSOR_NAME) : NULL;
	int ok = rank != 0 || all;
	MPI_TRY(err, MPI_Bcast(&ok, 1, MPI_INT, 0, e->world));
	if (!ok)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	MPI_TRY(err, MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
				MPI_CHAR, 0, e->world));
	if (rank != 0)
		return 0;

	ctx->world_size = size;
	bool shared = false;   /* two ranks on one host: a shared-memory transport between them */
	for (int i = 0; i < size; i++) {
		const char *h = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
		int seen = 0, count = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(all + (size_t)j * MPI_MAX_PROCESSOR_NAME, h) == 0;
		if (seen)
			continue;
		for (int j = i; j < size; j++)
			count += strcmp(all + (size_t)j * MPI_MAX_PROCESSOR_NAME, h) == 0;
		shared |= count > 1;
		char c[16];
		snprintf(c, sizeof(c), "%d", count);
		size_t w = strlen(ctx->hosts);
		snprintf(ctx->hosts + w, sizeof(ctx->hosts) - w, "%s%s:%s", w ? " " : "", h, c);
		ctx->nhosts++;
	}
	free(all);

	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ctx->time_utc, sizeof(ctx->time_utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(ctx->perfdb_version, sizeof(ctx->perfdb_version), "%s (git %s)", PERFDB_VERSION,
		 PERFDB_GIT_HASH);
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int ll = 0, v = 0, sv = 0;
	MPI_Get_library_version(lib, &ll);
	lib[strcspn(lib, "\n,")] = '\0';
	snprintf(ctx->mpi_library, sizeof(ctx->mpi_library), "%s", lib);
	MPI_Get_version(&v, &sv);
	snprintf(ctx->mpi_standard, sizeof(ctx->mpi_standard), "%d.%d", v, sv);
	snprintf(ctx->glibc, sizeof(ctx->glibc), "%s", gnu_get_libc_version());
	/* read after the last case (shm_single_copy says why); where no two
	 * ranks share a host no message goes through shared memory, and it is
	 * not read at all */
	ctx->shm_copy_pending = shared;
	snprintf(ctx->shm_copy, sizeof(ctx->shm_copy), "%s",
		 shared ? "not read: it is read after the last case"
			: "not used (one rank per host)");
	cpu_model(ctx->cpu_model, sizeof(ctx->cpu_model));
	cpu_list(&e->cpus, ctx->affinity, sizeof(ctx->affinity));
	double la[1];
	ctx->loadavg1 = getloadavg(la, 1) == 1 ? la[0] : -1;
	ctx->contention_known = e->proc_ok;

	/* the allocator: Open MPI's per-call scratch buffers make glibc's
	 * mmap/trim thresholds visible in the timings (docs/comm.md) */
	if (malloc_tune)
		snprintf(ctx->malloc_settings, sizeof(ctx->malloc_settings),
			 "glibc %s, --malloc-tune: M_MMAP_MAX=0 M_TRIM_THRESHOLD=2147483647 "
			 "M_TOP_PAD=67108864", ctx->glibc);
	else
		snprintf(ctx->malloc_settings, sizeof(ctx->malloc_settings),
			 "glibc %s defaults (dynamic mmap threshold from 128 KiB, trim threshold "
			 "128 KiB)", ctx->glibc);
	static const char *const vars[] = {
		"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
		"MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_", "MALLOC_ARENA_MAX", "LD_PRELOAD",
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *val = getenv(vars[i]);
		if (val) {
			append(ctx->malloc_settings, sizeof(ctx->malloc_settings), "; ", vars[i], "=");
			append(ctx->malloc_settings, sizeof(ctx->malloc_settings), val, "", "");
		}
	}
	/* MCA parameters that change what is measured (the launcher's own
	 * bookkeeping — orte_*, ess*, pmix, session paths — is left out) */
	static const char *const internal[] = {
		"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
		"OMPI_MCA_shmem_RUNTIME_QUERY_hint",
	};
	for (char **p = environ; *p; p++) {
		if (strncmp(*p, "OMPI_MCA_", 9) != 0)
			continue;
		bool skip = false;
		for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++)
			skip |= strncmp(*p, internal[i], strlen(internal[i])) == 0;
		if (!skip)
			append(ctx->mca_env, sizeof(ctx->mca_env), ctx->mca_env[0] ? " " : "", *p, "");
	}
	return 0;
}
