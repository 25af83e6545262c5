/*
 * perfdb comm's driver (docs/spec/comm.md §1-§3 and Decisions 1-4): MPI start,
 * the plan, one communicator per group size carved with MPI_Comm_split,
 * the case loop around the harness, and rank 0's writing of rows and
 * reports.
 *
 * Every rank walks the same plan.  Groups are [0..n-1] (the reference
 * anchors every group at rank 0), so world rank 0 is the leader of every
 * group and the only writer: after each case it appends the row to
 * <prefix>.csv under the directory's lock (crash-safe: a killed run keeps
 * every finished row).  Ranks outside a group wait for the case's end by
 * polling with sleeps, leaving the CPUs to the measured group.  A
 * contended case (other processes used the CPUs, harness.h) is measured
 * again up to `repeats` times; the least contended attempt is kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "perfdb/env_check.h"
#include "perfdb/fsio.h"
#include "perfdb/lock.h"

void perfdb_comm_opts_defaults(struct perfdb_comm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->grid = (struct perfdb_comm_grid){ .dim = { 48, 8, 2 }, .ndim = 3 };
	o->dtype = PERFDB_COMM_BF16;
	o->warmup = 20;
	o->iters = 100;
	o->min_iters = 10;
	o->time_budget = 2.0;
	o->repeats = 2;
	o->contention = 0.25;
	o->mono_tolerance = 0.10;
}

/* ---- output ---------------------------------------------------------- */

/* Where the rows of op go: *path (owned) and the directory to lock. */
static int out_path(const struct perfdb_comm_opts *o, enum perfdb_comm_op op, char **path,
		    char **dir)
{
	*path = *dir = NULL;
	if (o->output_csv) {
		*path = strdup(o->output_csv);
		const char *slash = strrchr(o->output_csv, '/');
		*dir = slash ? strndup(o->output_csv, (size_t)(slash - o->output_csv)) : strdup(".");
		if (*dir && !**dir) {
			free(*dir);
			*dir = strdup("/");
		}
	} else if (o->database_path) {
		size_t n = strlen(o->database_path) + strlen(perfdb_comm_op_file(op)) + 2;
		*path = malloc(n);
		if (*path)
			snprintf(*path, n, "%s/%s", o->database_path, perfdb_comm_op_file(op));
		*dir = strdup(o->database_path);
	} else {
		return 0;
	}
	return *path && *dir ? 0 : -PERFDB_ENOMEM;
}

/* Before measuring anything: the output directory exists (created), can be
 * locked, and every table that will be appended to is a collective table. */
static int preflight(const struct perfdb_comm_opts *o, struct perfdb_err *err)
{
	for (size_t i = 0; i < o->nops; i++) {
		char *path, *dir;
		if (out_path(o, o->ops[i], &path, &dir) < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		if (!path)
			return 0;
		int rc = perfdb_mkdir_p(dir, err);
		if (rc == 0) {
			struct perfdb_lock lk = PERFDB_LOCK_INIT;
			rc = perfdb_lock_acquire(&lk, dir, -1, err);
			perfdb_lock_release(&lk);
		}
		if (rc == 0)
			rc = perfdb_comm_table_check(path, err);
		free(path);
		free(dir);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int write_row(const struct perfdb_comm_opts *o, const struct perfdb_comm_case *c,
		     struct perfdb_err *err)
{
	char *path, *dir;
	if (out_path(o, c->op, &path, &dir) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (!path)
		return 0;
	char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX];
	perfdb_comm_row_cells(c, o->transport->i->name, cells);
	int rc = perfdb_comm_table_append(path, dir, cells, err);
	free(path);
	free(dir);
	return rc < 0 ? rc : 1;
}

/* <database>/reports/comm_<time>_<pid>.json (docs/database.md layout). */
static int write_report(const struct perfdb_comm_opts *o, struct perfdb_comm_report *r,
			struct perfdb_err *err)
{
	if (!o->database_path || o->output_csv)
		return 0;
	if (!r->report_path[0]) {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(r->report_path, sizeof(r->report_path), "%s/reports/comm_%s_%ld.json",
			 o->database_path, stamp, (long)getpid());
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/reports", o->database_path);
	PERFDB_TRY(perfdb_mkdir_p(dir, err));
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_comm_report_json(r, o, &sb);
	if (rc < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	else
		rc = perfdb_file_write_atomic(r->report_path, sb.buf, sb.len, err);
	perfdb_strbuf_release(&sb);
	return rc;
}

static int add_case(struct perfdb_comm_report *r, const struct perfdb_comm_case *c,
		    struct perfdb_err *err)
{
	if (r->ncases == r->capcases) {
		size_t cap = r->capcases ? r->capcases * 2 : 64;
		struct perfdb_comm_case *nv = realloc(r->cases, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		r->cases = nv;
		r->capcases = cap;
	}
	r->cases[r->ncases++] = *c;
	return 0;
}

static int add_skip(struct perfdb_comm_report *r, const struct perfdb_comm_case *c,
		    long long bytes, const char *reason, struct perfdb_err *err)
{
	if (r->nskips == r->capskips) {
		size_t cap = r->capskips ? r->capskips * 2 : 16;
		struct perfdb_comm_skip *nv = realloc(r->skips, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		r->skips = nv;
		r->capskips = cap;
	}
	struct perfdb_comm_skip *s = &r->skips[r->nskips++];
	s->op = c->op;
	s->num_devices = c->num_devices;
	s->tier = c->tier;
	s->message_bytes = bytes;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	return 0;
}

static void warnf(const struct perfdb_comm_events *ev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct perfdb_comm_events *ev, const char *fmt, ...)
{
	if (!ev || !ev->warn)
		return;
	char msg[PERFDB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev->warn(ev->ctx, msg);
}

static void plan_warn(void *ctx, const char *msg)
{
	const struct perfdb_comm_events *ev = ctx;
	if (ev && ev->warn)
		ev->warn(ev->ctx, msg);
}

/* ---- the run --------------------------------------------------------- */

struct groups {
	long n[64];
	MPI_Comm comm[64];
	size_t len;
};

static MPI_Comm group_of(const struct groups *g, long n)
{
	for (size_t i = 0; i < g->len; i++)
		if (g->n[i] == n)
			return g->comm[i];
	return MPI_COMM_NULL;
}

static void groups_free(struct groups *g)
{
	for (size_t i = 0; i < g->len; i++)
		if (g->comm[i] != MPI_COMM_NULL)
			MPI_Comm_free(&g->comm[i]);
	g->len = 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What the case loop of one run shares. */
struct run {
	const struct perfdb_comm_opts *o;
	const struct perfdb_comm_events *ev;   /* NULL on ranks other than 0 */
	struct perfdb_comm_report *out;
	struct perfdb_harness_env env;
	struct perfdb_harness_cfg cfg;
	struct groups groups;
	int rank, size;
	bool lead;
	int stop;                              /* rank 0 stops the run after this case */
	size_t index, ncases;
	double t_start;
};

/* One communicator per group size that fits the world; larger ones are skipped with a warning. */
static int open_groups(struct run *r, const struct perfdb_comm_plan *plan, struct perfdb_err *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		long n = plan->v[i].num_devices;
		int known = 0;
		for (size_t k = 0; k < r->groups.len; k++)
			known |= r->groups.n[k] == n;
		if (known || r->groups.len == 64)
			continue;
		if (n > r->size) {
			r->groups.n[r->groups.len] = n;
			r->groups.comm[r->groups.len++] = MPI_COMM_NULL;
			warnf(r->ev, "skipping num_devices=%ld: the group is larger than the world "
				     "(%d rank%s); launch with mpirun -np %ld or more", n, r->size,
			      r->size == 1 ? "" : "s", n);
			continue;
		}
		MPI_Comm c = MPI_COMM_NULL;
		int rc = MPI_Comm_split(MPI_COMM_WORLD, r->rank < n ? 0 : MPI_UNDEFINED, r->rank, &c);
		if (rc != MPI_SUCCESS)
			return perfdb_mpi_error(err, rc, "MPI_Comm_split");
		r->groups.n[r->groups.len] = n;
		r->groups.comm[r->groups.len++] = c;
	}
	return 0;
}

/*
 * Rank 0 watches its host (perfdb/preflight.h) while the other ranks wait
 * asleep, so that their waiting is not the busy CPU it sees; with
 * --require-quiet a busy host stops every rank.  0, 1: stop (err set), -1.
 */
static int agree_machine(struct run *r, int *rc, struct perfdb_err *err)
{
	int busy = 0;
	/* PERFDB_PREFLIGHT=0: none, unless --require-quiet needs it */
	if (r->lead && (!perfdb_env_off("PERFDB_PREFLIGHT") || r->o->require_quiet)) {
		*rc = perfdb_preflight_run(!perfdb_env_off("PERFDB_PROBE"), &r->out->pf, err);
		r->out->preflight_ran = *rc == 0;
		busy = *rc < 0 ? 2 : r->o->require_quiet && !r->out->pf.quiet;
	}
	MPI_Request req;
	int mrc = MPI_Ibcast(&busy, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
	if (mrc != MPI_SUCCESS || perfdb_harness_idle_wait(&req, err) < 0) {
		*rc = mrc != MPI_SUCCESS ? perfdb_mpi_error(err, mrc, "MPI_Bcast") : -PERFDB_EIO;
		return -1;
	}
	if (!busy)
		return 0;
	if (r->lead && busy == 1)
		*rc = perfdb_err_set(err, PERFDB_EINVAL, "the machine is busy: %s (--require-quiet)", r->out->pf.why);
	else if (!r->lead)
		*rc = perfdb_err_set(err, PERFDB_EINVAL, "rank 0 %s", busy == 1 ? "found its host busy (--require-quiet)"
									: "could not read its host's /proc/stat");
	return 1;
}

/* The output is checked once, by its only writer, before any measurement; 1: stop quietly. */
static int agree_preflight(struct run *r, int *rc, struct perfdb_err *err)
{
	int pre = r->lead ? preflight(r->o, err) : 0;
	MPI_Request req;
	int mrc = MPI_Ibcast(&pre, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	if (mrc != MPI_SUCCESS) {
		*rc = perfdb_mpi_error(err, mrc, "MPI_Bcast");
		return -1;
	}
	if (pre < 0) {
		if (!r->lead)
			perfdb_err_set(err, -pre, "rank 0 could not prepare the output");
		*rc = pre;
		return 1;
	}
	return 0;
}

/*
 * One size: measured again while other processes use the CPUs (up to
 * --repeats), the attempt with the least foreign CPU kept in *best.
 * Returns 0 or a fatal error; r->stop may be set.
 */
static int measure_size(struct run *r, const struct perfdb_harness_case *hc, bool member,
			unsigned long long need, struct perfdb_comm_case *c,
			struct perfdb_harness_result *best, double *best_other, bool *mem_ok,
			bool *failed, struct perfdb_err *err)
{
	bool have = false;
	*mem_ok = true;
	*failed = false;
	for (long attempt = 0; attempt <= r->o->repeats; attempt++) {
		PERFDB_TRY(perfdb_harness_case_begin(&r->env, &r->stop, need, mem_ok, err));
		if (r->stop || !*mem_ok)
			break;
		struct perfdb_harness_result res = { .bad_rank = -1 };
		if (member)
			PERFDB_TRY(perfdb_harness_measure(&r->cfg, hc, &res, err));
		double other;
		int rc = perfdb_harness_case_end(&r->env, &other, err);
		if (rc < 0) {
			free(res.samples);
			return rc;
		}
		c->attempts++;
		*failed |= res.transport_failed;
		/* a size with enough clean rounds beats one without; then the least foreign CPU */
		bool better = !have || (best->unclean && !res.unclean) ||
			      (best->unclean == res.unclean && other >= 0 && other < *best_other);
		if (better) {
			free(best->samples);
			*best = res;
			*best_other = other;
			have = true;
		} else {
			free(res.samples);
		}
		/* other and the judgement are the same on every rank: so is this decision */
		if (other < r->o->contention && !res.unclean)
			break;
	}
	return 0;
}

/* Rank 0: what a measured size becomes (a row, a skip, a failed check); takes best's samples. */
static void record_size(struct run *r, const struct perfdb_coll *coll, struct perfdb_comm_case *c,
			struct perfdb_harness_result *best, double best_other, bool mem_ok,
			unsigned long long need, struct perfdb_err *err)
{
	const struct perfdb_comm_opts *o = r->o;
	struct perfdb_comm_report *out = r->out;
	c->other_cpu = best_other;
	c->contended = best_other >= o->contention;
	c->rounds = best->rounds;
	c->rounds_bad = best->rounds_bad;
	c->judged = best->judged;
	c->unclean = best->unclean;
	if (!mem_ok || best->alloc_failed) {
		char why[160];
		snprintf(why, sizeof(why), "%s: cannot allocate %llu bytes per rank",
			 mem_ok ? "out of memory" : "not enough memory on a host", need);
		warnf(r->ev, "skipping %s num_devices=%ld bytes=%lld: %s", coll->name,
		      c->num_devices, c->message_bytes, why);
		if (add_skip(out, c, c->message_bytes, why, err) < 0)
			r->stop = 1;
		free(best->samples);
		return;
	}
	c->warmup = best->warmup;
	c->check = best->check;
	c->bad_elems = best->bad;
	c->bad_rank = best->bad_rank;
	perfdb_stats_compute(best->samples, best->nsamples, &c->st);
	free(best->samples);
	if (c->check < 0) {
		out->check_failed++;
		warnf(r->ev, "check failed: %s num_devices=%ld bytes=%lld %s: %llu wrong "
			     "element(s), first on rank %d; row not written", coll->name,
		      c->num_devices, c->message_bytes, perfdb_comm_dtype(c->dtype)->label,
		      c->bad_elems, c->bad_rank);
	} else if (c->unclean) {
		/* a contaminated sample is never written: --repeats more attempts did not get enough clean rounds */
		warnf(r->ev, "unclean: %s num_devices=%ld bytes=%lld %s: %zu of %zu rounds had a rank waiting "
			     "for a CPU or losing time to steal, %zu clean of the %ld needed; row not written",
		      coll->name, c->num_devices, c->message_bytes, perfdb_comm_dtype(c->dtype)->label,
		      c->rounds_bad, c->rounds, c->st.n, o->min_iters < o->iters ? o->min_iters : o->iters);
	} else if (c->st.n > 0) {
		int w = write_row(o, c, err);
		if (w < 0)
			r->stop = 1;
		c->written = w > 0;
		out->written += c->written || w == 0;
	}
	out->unclean += c->unclean;
	out->contended += c->contended;
	if (add_case(out, c, err) < 0)
		r->stop = 1;
	if (r->ev && r->ev->case_done)
		r->ev->case_done(r->ev->ctx, &out->cases[out->ncases - 1]);
}

/* Every size of one batch (op, group size, tier); 0 or a fatal error. */
static int run_batch(struct run *r, const struct perfdb_comm_batch *bt,
		     const struct perfdb_comm_case *proto, struct perfdb_err *err)
{
	const struct perfdb_comm_opts *o = r->o;
	MPI_Comm comm = group_of(&r->groups, bt->num_devices);
	const bool member = comm != MPI_COMM_NULL;
	const struct perfdb_coll *coll = perfdb_coll_get(bt->op);
	size_t esz = perfdb_comm_dtype(o->dtype)->size;
	for (size_t k = 0; k < o->nbytes; k++) {
		struct perfdb_comm_case c = *proto;
		c.message_bytes = o->bytes[k];
		size_t elems = (size_t)c.message_bytes / esz;
		c.bus_bytes = perfdb_comm_bus_bytes(bt->op, elems, bt->num_devices, esz);
		if (r->ev && r->ev->case_start)
			r->ev->case_start(r->ev->ctx, &c, r->index, r->ncases);
		r->index++;
		struct perfdb_comm_layout l;
		coll->layout(elems, bt->num_devices, &l);
		unsigned long long need = member ? (l.send_elems + l.recv_elems) * esz : 0;
		const struct perfdb_harness_case hc = {
			.coll = coll, .dtype = o->dtype, .message_bytes = c.message_bytes,
			.comm = comm, .transport = o->transport,
		};
		struct perfdb_harness_result best = { .bad_rank = -1 };
		double best_other = -1;
		bool mem_ok, failed;
		int rc = measure_size(r, &hc, member, need, &c, &best, &best_other, &mem_ok, &failed,
				      err);
		if (rc < 0) {
			free(best.samples);
			return rc;
		}
		if (r->stop)
			break;
		if (!r->lead || failed) {
			/* failed: every member saw the transport fail and err names
			 * the call: the run stops at the next case, as on every rank */
			free(best.samples);
			r->stop |= r->lead && failed;
			continue;
		}
		record_size(r, coll, &c, &best, best_other, mem_ok, need, err);
	}
	return 0;
}

/* Rank 0 after a batch: its non-monotonic sizes, and the report so far. */
static void finish_batch(struct run *r, const struct perfdb_coll *coll, size_t first,
			 struct perfdb_err *err)
{
	struct perfdb_comm_report *out = r->out;
	size_t nb = out->ncases - first;
	out->nonmonotonic += perfdb_comm_flag_nonmonotonic(out->cases + first, nb,
							   r->o->mono_tolerance);
	for (size_t k = first; k < out->ncases; k++) {
		const struct perfdb_comm_case *c = &out->cases[k];
		if (c->nonmonotonic)
			warnf(r->ev, "non-monotonic: %s num_devices=%ld tier=%ld: %lld bytes "
				     "took %.2f us, more than %.2f us for %lld bytes",
			      coll->name, c->num_devices, c->tier, c->message_bytes,
			      c->st.median, c->mono_us, c->mono_bytes);
	}
	out->seconds = now() - r->t_start;
	if (write_report(r->o, out, err) < 0)
		r->stop = 1;
}

/* The plan's batches in order; 0 or a fatal error (r->stop: rank 0 stopped). */
static int run_plan(struct run *r, const struct perfdb_comm_plan *plan, struct perfdb_err *err)
{
	const struct perfdb_comm_opts *o = r->o;
	for (size_t b = 0; b < plan->n && !r->stop; b++) {
		const struct perfdb_comm_batch *bt = &plan->v[b];
		struct perfdb_comm_case proto = {
			.op = bt->op, .num_devices = bt->num_devices, .tier = bt->tier,
			.dtype = o->dtype, .bad_rank = -1, .other_cpu = -1,
			.overhead_us = perfdb_comm_overhead_lookup(o->overhead, bt->op, bt->num_devices),
		};
		if (bt->num_devices > r->size) {
			if (r->lead) {
				char why[128];
				snprintf(why, sizeof(why), "num_devices=%ld is larger than the world (%d)",
					 bt->num_devices, r->size);
				if (add_skip(r->out, &proto, -1, why, err) < 0)
					r->stop = 1;
			}
			continue;
		}
		if (r->ev && r->ev->batch)
			r->ev->batch(r->ev->ctx, bt, b, plan->n);
		size_t first = r->out->ncases;
		PERFDB_TRY(run_batch(r, bt, &proto, err));
		if (r->lead && !r->stop)
			finish_batch(r, perfdb_coll_get(bt->op), first, err);
	}
	return 0;
}

/* Every rank learns how rank 0 ended; the final report.  0, or a fatal MPI error. */
static int agree_end(struct run *r, int *rc, struct perfdb_err *err)
{
	/* the record's one part that is read after the measurements */
	if (r->lead)
		perfdb_harness_context_finish(&r->out->ctx);
	MPI_Request req;
	int mrc = MPI_Iallreduce(MPI_IN_PLACE, &r->stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	if (mrc != MPI_SUCCESS)
		return perfdb_mpi_error(err, mrc, "MPI_Allreduce");
	r->out->seconds = now() - r->t_start;
	if (r->lead && !r->stop && write_report(r->o, r->out, err) < 0)
		r->stop = 1;
	*rc = 0;
	if (r->stop) {
		*rc = r->lead ? -(err->code ? err->code : PERFDB_EIO) : -PERFDB_EIO;
		if (!r->lead)
			perfdb_err_set(err, PERFDB_EIO, "rank 0 stopped the run");
	}
	return 0;
}

int perfdb_comm_run(const struct perfdb_comm_opts *o, const struct perfdb_comm_events *ev,
		    struct perfdb_comm_report *out, bool *fatal, struct perfdb_err *err)
{
	struct run r = { .o = o, .out = out, .t_start = now() };
	*fatal = true;   /* until the collectives below have all succeeded */
	MPI_TRY(err, MPI_Comm_rank(MPI_COMM_WORLD, &r.rank));
	MPI_TRY(err, MPI_Comm_size(MPI_COMM_WORLD, &r.size));
	r.lead = r.rank == 0;
	r.ev = r.lead ? ev : NULL;
	PERFDB_TRY(perfdb_harness_env_init(&r.env, MPI_COMM_WORLD, err));
	struct perfdb_comm_plan plan;
	perfdb_comm_plan_init(&plan);
	int rc = perfdb_harness_context(&r.env, o->malloc_tune, &out->ctx, err);
	if (rc < 0)
		goto done;
	out->transport = o->transport->i;
	out->output = o->output_csv ? o->output_csv : o->database_path ? o->database_path
								       : "(no output)";
	/* the plan: identical on every rank; rank 0 reports the skips */
	rc = perfdb_comm_plan_build(&plan, o->ops, o->nops, o->num_devices, o->nnum_devices,
				    o->tiers, o->ntiers, &o->grid, r.lead ? plan_warn : NULL,
				    (void *)r.ev, err);
	if (rc < 0)
		goto done;
	int pre = agree_preflight(&r, &rc, err);
	if (pre == 0)
		pre = agree_machine(&r, &rc, err);
	if (pre != 0) {
		*fatal = pre < 0;
		goto done;
	}
	if ((rc = open_groups(&r, &plan, err)) < 0)
		goto done;
	for (size_t i = 0; i < plan.n; i++)
		if (plan.v[i].num_devices <= r.size)
			r.ncases += o->nbytes;
	if (r.ev && r.ev->begin)
		r.ev->begin(r.ev->ctx, out, r.ncases);
	/* PERFDB_SCHED=0: no judging of rounds (docs/comm.md "Contention") */
	r.cfg = (struct perfdb_harness_cfg){ .warmup = o->warmup, .iters = o->iters,
					     .min_iters = o->min_iters, .budget = o->time_budget,
					     .no_sched = perfdb_env_off("PERFDB_SCHED") };
	/* an MPI or memory failure on this rank is fatal: the others cannot know */
	if ((rc = run_plan(&r, &plan, err)) < 0)
		goto done;
	int end = agree_end(&r, &rc, err);
	if (end < 0) {
		rc = end;
		goto done;
	}
	*fatal = false;
done:
	groups_free(&r.groups);
	perfdb_comm_plan_release(&plan);
	perfdb_harness_env_release(&r.env);
	return rc < 0 ? rc : 0;
}
