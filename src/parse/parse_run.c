/*
 * The parse stage end to end (src/parse/parse.h perfdb_parse_run).
 *
 * Several input files are aggregated in parallel, one file per worker
 * thread into its own aggregator, and merged into the global aggregator
 * strictly in input order, so the result (row order, first non-empty
 * values, FIA pairing) is the same as reading the files one after another.
 * A worker never runs more than 2 x jobs files ahead of the merge, which
 * bounds memory.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_internal.h"
#include "parse/chrome_trace.h"
#include "parse/fia.h"
#include "parse/comm_agg.h"

/* The aggregator of one database: a trace GPU's, or the default one (CSV
 * inputs, CPU-only traces). */
struct dbagg {
	char *device;
	int gpu;
	struct perfdb_agg *agg;
	struct perfdb_comm_agg *comm;   /* its collectives (comm tables) */
};

struct dblist {
	struct dbagg *v;
	size_t n, cap;
	size_t sample_limit;
};

struct work {
	struct dblist dbs;          /* v[0]: the default database */
	struct perfdb_fia_file *fia;
	struct perfdb_err err;
	int rc;
	int done;
	unsigned long long bytes;
	struct perfdb_csv_input_stats st;
	struct perfdb_chrome_trace_info info;
};

struct run {
	const struct perfdb_parse_opts *o;
	const struct perfdb_inputs *in;
	struct work *w;
	size_t next;            /* next input to start */
	size_t merged;          /* inputs merged so far */
	unsigned jobs;
	int stop;
	unsigned long long total_bytes, done_bytes;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void dblist_release(struct dblist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].device);
		perfdb_agg_free(l->v[i].agg);
		perfdb_comm_agg_free(l->v[i].comm);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* The database of (device, gpu), created if new. */
static int dblist_db(struct dblist *l, const char *dev, size_t len, int gpu,
		     struct dbagg **out, struct perfdb_err *err)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].gpu == gpu && strlen(l->v[i].device) == len &&
		    memcmp(l->v[i].device, dev, len) == 0) {
			*out = &l->v[i];
			return 0;
		}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct dbagg *nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		l->v = nv;
		l->cap = cap;
	}
	struct dbagg *d = &l->v[l->n];
	d->gpu = gpu;
	d->device = malloc(len + 1);
	if (!d->device)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	memcpy(d->device, dev, len);
	d->device[len] = '\0';
	d->comm = NULL;
	int rc = perfdb_agg_new(&d->agg, l->sample_limit, err);
	if (rc == 0 && (rc = perfdb_comm_agg_new(&d->comm, err)) < 0)
		perfdb_agg_free(d->agg);
	if (rc < 0) {
		free(d->device);
		return rc;
	}
	l->n++;
	*out = d;
	return 0;
}

static int dblist_get(struct dblist *l, const char *dev, size_t len, int gpu,
		      struct perfdb_agg **out, struct perfdb_err *err)
{
	struct dbagg *d;
	PERFDB_TRY(dblist_db(l, dev, len, gpu, &d, err));
	*out = d->agg;
	return 0;
}

/* Feeds the aggregator and notes FIA kernel rows. */
struct tee {
	struct perfdb_row_sink agg;
	struct perfdb_fia_file *fia;
};

/* FIA rows are noted one by one, memo or not: their order numbers them. */
static int tee_fia(struct tee *t, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	if (row->type.len == sizeof(PERFDB_FIA_TYPE) - 1 &&
	    memcmp(row->type.p, PERFDB_FIA_TYPE, row->type.len) == 0)
		return perfdb_fia_file_row(t->fia, row->in_shapes, row->out_shapes, err);
	return 0;
}

static int tee_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct tee *t = ctx;
	PERFDB_TRY(tee_fia(t, row, err));
	return t->agg.row(t->agg.ctx, row, err);
}

static int tee_row_memo(void *ctx, const struct perfdb_kernel_row *row, uint32_t *memo,
			struct perfdb_err *err)
{
	struct tee *t = ctx;
	PERFDB_TRY(tee_fia(t, row, err));
	return t->agg.row_memo(t->agg.ctx, row, memo, err);
}

struct prog {
	struct run *r;
	unsigned long long last;
};

static void on_progress(void *ctx, unsigned long long bytes)
{
	struct prog *p = ctx;
	struct run *r = p->r;
	pthread_mutex_lock(&r->mu);
	r->done_bytes += bytes - p->last;
	p->last = bytes;
	if (r->o->progress)
		r->o->progress(r->o->ctx, r->done_bytes, r->total_bytes);
	pthread_mutex_unlock(&r->mu);
}

/* A trace's GPU rows, each to the database of its device. */
static int route_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct dblist *l = ctx;
	struct perfdb_agg *a;
	PERFDB_TRY(dblist_get(l, row->device.p, row->device.len, 1, &a, err));
	struct perfdb_row_sink s = perfdb_agg_sink(a);
	return s.row(s.ctx, row, err);
}

/* A trace's collective calls, each to the database of its device. */
static int route_comm(void *ctx, const struct perfdb_comm_obs *o, const char *device,
		      struct perfdb_err *err)
{
	struct dbagg *d;
	PERFDB_TRY(dblist_db(ctx, device, strlen(device), 1, &d, err));
	return perfdb_comm_agg_add(d->comm, o, err);
}

/* Chrome traces: the GPU rows when the trace has device activity, else
 * its CPU op rows (a CPU-only trace, docs/chrome_trace.md). */
static int read_trace(const struct run *r, const char *path, struct work *w,
		      struct perfdb_err *err)
{
	struct perfdb_agg *cpu = NULL;
	int rc = perfdb_agg_new(&cpu, 0, err);
	if (rc == 0) {
		struct perfdb_row_sink cpu_sink = perfdb_agg_sink(cpu);
		struct perfdb_row_sink gpu_sink = { .row = route_row, .ctx = &w->dbs };
		struct perfdb_chrome_trace_opts to = { .per_kernel = r->o->per_kernel, .comm = route_comm,
							.comm_ctx = &w->dbs };
		struct perfdb_chrome_trace_info *info = &w->info;
		rc = perfdb_chrome_trace_read(path, &to, &cpu_sink, &gpu_sink, info, err);
		if (rc == 0 && info->activities == 0 && info->cpu_rows == 0)
			rc = perfdb_err_set(err, PERFDB_EPARSE,
				"%s: nothing to build tables from: no device activity (kernel, gpu_memcpy, "
				"gpu_memset) and no cpu_op with \"Input Dims\"%s", path,
				info->legacy_events ? " (a legacy torch export: record with "
				"torch.profiler, record_shapes=True)" : info->cpu_ops ?
				" (recorded without record_shapes=True)" : "");
		else if (rc == 0 && info->activities == 0)
			rc = perfdb_agg_merge(w->dbs.v[0].agg, cpu, err);
	}
	perfdb_agg_free(cpu);
	return rc;
}

static void process(struct run *r, size_t i)
{
	struct work *w = &r->w[i];
	const struct perfdb_input *inp = &r->in->v[i];
	perfdb_err_clear(&w->err);
	struct perfdb_agg *def = NULL;
	w->dbs.sample_limit = r->o->sample_limit;
	w->rc = dblist_get(&w->dbs, "", 0, 0, &def, &w->err);
	if (w->rc == 0)
		w->rc = perfdb_fia_file_new(&w->fia, &w->err);
	if (w->rc < 0)
		return;
	struct tee t = { perfdb_agg_sink(def), w->fia };
	struct perfdb_row_sink sink = { .row = tee_row, .ctx = &t, .row_memo = tee_row_memo };
	struct prog p = { r, 0 };
	if (inp->kind == PERFDB_INPUT_CHROME_TRACE) {
		w->rc = read_trace(r, inp->path, w, &w->err);
		struct stat st;
		if (stat(inp->path, &st) == 0)
			on_progress(&p, (unsigned long long)st.st_size);
	} else if (inp->kind == PERFDB_INPUT_ASCEND_DB) {
		w->rc = perfdb_parse_read_db(inp->path, &sink, w->dbs.v[0].comm, &w->st, &w->err);
		if (w->rc == 0)
			on_progress(&p, w->st.bytes);
	} else {
		w->rc = perfdb_parse_read_csv(inp->path, inp->kind, &sink, &w->st, on_progress,
					      &p, &w->err);
		if (w->rc == 0)
			on_progress(&p, w->st.bytes);
	}
}

static void *worker(void *arg)
{
	struct run *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stop && r->next < r->in->n && r->next >= r->merged + 2 * r->jobs)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop || r->next >= r->in->n)
			break;
		size_t i = r->next++;
		pthread_mutex_unlock(&r->mu);
		process(r, i);
		pthread_mutex_lock(&r->mu);
		r->w[i].done = 1;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* One warning of the run: counted, and said through o->warn. */
static void warnf(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warnf(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		  const char *fmt, ...)
{
	char m[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	res->warnings++;
	if (o->warn)
		o->warn(o->ctx, m);
}

static void warn_input(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		       const char *path, const struct perfdb_csv_input_stats *st,
		       const struct perfdb_agg_totals *before, const struct perfdb_agg_totals *after)
{
	if (!o->warn)
		return;
	if (st->missing_optional) {
		char counters[64] = "";
		if (st->missing_counters)
			snprintf(counters, sizeof(counters), "%s%zu of the %d counter columns",
				 st->missing_names[0] ? ", " : "", st->missing_counters, PERFDB_NCOUNTERS);
		warnf(o, res, "%s: optional columns missing, left empty: %s%s", path,
		      st->missing_names, counters);
	}
	size_t inv = after->invalid_durations - before->invalid_durations;
	if (inv)
		warnf(o, res, "%s: %zu row(s) with an empty or invalid Duration(us) not counted as samples",
		      path, inv);
	size_t na = after->dropped_na - before->dropped_na;
	if (na)
		warnf(o, res, "%s: %zu row(s) with N/A shapes dropped", path, na);
	size_t ic = after->invalid_counters - before->invalid_counters;
	if (ic)
		warnf(o, res, "%s: %zu counter cell(s) that are not numbers ignored", path, ic);
	if (st->comm_skipped)
		warnf(o, res, "%s: %zu collective call(s) left out of the comm tables: %s", path,
		      st->comm_skipped, st->comm_skip);
}

/* What a trace's tables will lack, said once each (issues 47, 48, 49). */
static void warn_trace(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		       const char *path, const struct perfdb_chrome_trace_info *info)
{
	/* a device trace recorded without shapes still makes tables, one row
	 * per op: say once what the database lacks (issue 47) */
	if (info->activities && info->cpu_ops && !info->cpu_rows)
		warnf(o, res, "%s: none of its %zu ops has input shapes (recorded without "
		      "torch.profiler's record_shapes=True): each op's device time goes to one "
		      "row with empty shape cells, which no shape lookup will find", path, info->cpu_ops);
	/* an op whose TensorList was recorded as []: said once per op type (issue 48) */
	for (size_t k = 0; k < info->unshaped_list_ops && k < PERFDB_CHROME_TRACE_LIST_OPS; k++)
		warnf(o, res, "%s: %s: a TensorList input was recorded without shapes "
		      "(as []): its rows lack that input's shapes%s", path, info->unshaped_list_op[k],
		      k + 1 == PERFDB_CHROME_TRACE_LIST_OPS && info->unshaped_list_ops > k + 1 ?
		      " (and more op types alike)" : "");
	if (info->comm_skipped)
		warnf(o, res, "%s: %zu collective call(s) left out of the comm tables: %s", path,
		      info->comm_skipped, info->comm_skip);
	if (info->unnamed)
		warnf(o, res, "%s: %zu op event(s) with an empty name dropped (no table can hold them)",
		      path, info->unnamed);
}

struct warn_count {
	const struct perfdb_parse_opts *o;
	struct perfdb_parse_result *res;
};

static void count_warn(void *ctx, const char *msg)
{
	struct warn_count *wc = ctx;
	wc->res->warnings++;
	if (wc->o->warn)
		wc->o->warn(wc->o->ctx, msg);
}

/* Record what a trace held (its distributedInfo above all). */
static int note_trace(struct perfdb_parse_result *res, const char *path,
		      const struct perfdb_chrome_trace_info *info, struct perfdb_err *err)
{
	struct perfdb_parse_trace *nt = realloc(res->tr, (res->ntr + 1) * sizeof(*nt));
	if (!nt)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	res->tr = nt;
	struct perfdb_parse_trace *t = &nt[res->ntr];
	memset(t, 0, sizeof(*t));
	t->path = strdup(path);
	if (!t->path)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	res->ntr++;
	t->has_dist = info->has_dist;
	t->rank = info->has_dist ? info->rank : -1;
	t->world_size = info->has_dist ? info->world_size : -1;
	snprintf(t->backend, sizeof(t->backend), "%s", info->backend);
	snprintf(t->device, sizeof(t->device), "%s", info->gpu_name);
	t->gzip = info->gzip;
	t->activities = info->activities;
	t->linked = info->activities_linked;
	t->gpu_rows = info->gpu_rows;
	t->cpu_rows = info->cpu_rows;
	t->comm_calls = info->comm_calls;
	t->comm_skipped = info->comm_skipped;
	return 0;
}

/*
 * Write each database: the default one (CSV inputs, CPU-only traces) and
 * one per GPU of the traces (with --database-path they were pooled into
 * one before).  All input was read before: a bad input leaves every
 * database as it was.
 */
static int write_dbs(const struct perfdb_parse_opts *o, const struct dblist *all,
		     const struct perfdb_fia *fia, struct perfdb_parse_result *res,
		     struct perfdb_err *err)
{
	size_t used = 0, first = 0;
	for (size_t d = all->n; d-- > 0;)
		if (perfdb_agg_ngroups(all->v[d].agg) || perfdb_comm_agg_ngroups(all->v[d].comm)) {
			used++;
			first = d;
		}
	int rc = 0;
	/* the mapping's warning is one of the run's: counted, said through o->warn */
	struct warn_count wc = { o, res };
	struct perfdb_opmap_opts om;
	if (o->op_mapping) {
		om = *o->op_mapping;
		om.warn = count_warn;
		om.ctx = &wc;
	}
	for (size_t d = 0; d < all->n && rc == 0; d++) {
		const struct dbagg *a = &all->v[d];
		if (used ? !perfdb_agg_ngroups(a->agg) && !perfdb_comm_agg_ngroups(a->comm) : d != first)
			continue;
		struct perfdb_parse_db *nd = realloc(res->dbs, (res->ndbs + 1) * sizeof(*nd));
		if (!nd)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		res->dbs = nd;
		struct perfdb_parse_db *db = &nd[res->ndbs];
		memset(db, 0, sizeof(*db));
		db->device = strdup(a->device);
		if (!db->device)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		db->gpu = a->gpu;
		res->ndbs++;
		if (a->gpu && !res->trace_gpu) {
			res->trace_gpu = 1;
			snprintf(res->gpu_name, sizeof(res->gpu_name), "%s", a->device);
		}
		if (!o->outdir && a->gpu && a->device[0] && !perfdb_parse_trace_device_named(a->device))
			warnf(o, res, "the trace's device name '%.64s' has no letter or digit to "
			      "name a directory with: its tables go under UNKNOWN_GPU", a->device);
		struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
		if (!o->outdir)
			rc = o->resolve_outdir ? o->resolve_outdir(o->ctx, res, db, &dir, err)
					       : perfdb_err_set(err, PERFDB_EINVAL, "no database directory");
		if (rc == 0) {
			db->outdir = strdup(o->outdir ? o->outdir : dir.buf);
			if (!db->outdir)
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
		if (rc == 0)
			rc = perfdb_parse_write_tables(db->outdir, a->agg, a->comm, fia, o->lock_timeout,
						       res->traces && o->op_mapping ? &om : NULL, res, err);
		/* a trace's database in the layout: its device is one perfdb met */
		if (rc == 0 && !o->outdir && res->traces)
			rc = perfdb_parse_trace_note_device(db, o->reg, err);
		if (rc == 0 && res->comm_raw) {
			warnf(o, res, "%s: %zu hcom_*.csv table(s) hold kernel rows (no message_bytes "
			      "column): the profile's collectives were not merged into them", db->outdir,
			      res->comm_raw);
			res->comm_raw = 0;
		}
		perfdb_strbuf_release(&dir);
	}
	return rc;
}

/* Input i, read: merged into the run's databases in input order, its trace
 * noted and its warnings said. */
static int merge_input(struct run *r, size_t i, struct dblist *all, struct perfdb_fia *fia,
		       struct perfdb_parse_result *res, struct perfdb_err *err)
{
	const struct perfdb_parse_opts *o = r->o;
	struct work *w = &r->w[i];
	const struct perfdb_input *inp = &r->in->v[i];
	struct perfdb_agg *def = all->v[0].agg;
	int rc = 0;
	struct perfdb_agg_totals before = *perfdb_agg_totals(def);
	for (size_t d = 0; d < w->dbs.n && rc == 0; d++) {
		struct dbagg *into;
		const struct dbagg *from = &w->dbs.v[d];
		rc = dblist_db(all, from->device, strlen(from->device), from->gpu, &into, err);
		if (rc == 0)
			rc = perfdb_agg_merge(into->agg, from->agg, err);
		if (rc == 0)
			rc = perfdb_comm_agg_merge(into->comm, from->comm, err);
	}
	if (rc == 0 && inp->kind == PERFDB_INPUT_CHROME_TRACE)
		rc = note_trace(res, inp->path, &w->info, err);
	if (rc == 0 && inp->kind == PERFDB_INPUT_CHROME_TRACE)
		warn_trace(o, res, inp->path, &w->info);
	if (rc == 0)
		rc = perfdb_fia_add_file(fia, inp->path, w->fia, err);
	res->inputs++;
	res->bytes += w->st.bytes;
	if (inp->kind == PERFDB_INPUT_CHROME_TRACE)
		res->traces++;
	warn_input(o, res, inp->path, &w->st, &before, perfdb_agg_totals(def));
	dblist_release(&w->dbs);
	perfdb_fia_file_free(w->fia);
	w->fia = NULL;
	return rc;
}

int perfdb_parse_run(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		     struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	struct perfdb_inputs in;
	perfdb_inputs_init(&in);
	struct dblist all = { NULL, 0, 0, o->sample_limit };
	struct perfdb_agg *def = NULL;
	struct perfdb_fia *fia = NULL;
	struct run r;
	memset(&r, 0, sizeof(r));
	pthread_t th[16];
	unsigned nth = 0;
	int rc = perfdb_parse_find_inputs(o->profiling_path, &in, err);
	if (rc == 0)
		rc = dblist_get(&all, "", 0, 0, &def, err);
	if (rc == 0)
		rc = perfdb_fia_new(&fia, err);
	if (rc < 0)
		goto out;
	if (in.ignored_db && o->warn) {
		char m[256];
		snprintf(m, sizeof(m), "%zu Ascend SQLite profile(s) (*.db) ignored: the directory's CSV "
			 "exports describe the same profile", in.ignored_db);
		o->warn(o->ctx, m);
	}
	if (in.ignored_op_summary && o->warn) {
		char msg[300];
		snprintf(msg, sizeof(msg),
			 "%zu op_summary file(s) ignored: kernel_details files describe the same launches",
			 in.ignored_op_summary);
		o->warn(o->ctx, msg);
	}

	r.o = o;
	r.in = &in;
	r.w = calloc(in.n, sizeof(*r.w));
	if (!r.w) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < in.n; i++) {
		struct stat st;
		if (stat(in.v[i].path, &st) == 0)
			r.total_bytes += (unsigned long long)st.st_size;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	r.jobs = o->jobs ? o->jobs : (unsigned)(ncpu > 0 ? ncpu : 1);
	if (r.jobs > 16)
		r.jobs = 16;
	if (r.jobs > in.n)
		r.jobs = (unsigned)in.n;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	if (r.jobs > 1)
		for (nth = 0; nth < r.jobs; nth++)
			if (pthread_create(&th[nth], NULL, worker, &r) != 0)
				break;

	for (size_t i = 0; i < in.n && rc == 0; i++) {
		struct work *w = &r.w[i];
		if (nth == 0) {
			process(&r, i);
		} else {
			pthread_mutex_lock(&r.mu);
			while (!w->done)
				pthread_cond_wait(&r.cv, &r.mu);
			pthread_mutex_unlock(&r.mu);
		}
		if (w->rc < 0) {
			*err = w->err;
			rc = w->rc;
			break;
		}
		rc = merge_input(&r, i, &all, fia, res, err);
		pthread_mutex_lock(&r.mu);
		r.merged = i + 1;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
	}
	pthread_mutex_lock(&r.mu);
	r.stop = 1;
	pthread_cond_broadcast(&r.cv);
	pthread_mutex_unlock(&r.mu);
	for (unsigned t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	for (size_t i = 0; r.w && i < in.n; i++) {
		dblist_release(&r.w[i].dbs);
		perfdb_fia_file_free(r.w[i].fia);
	}
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	if (rc < 0)
		goto out;

	struct warn_count wc = { o, res };
	/* one directory asked for: every device's rows pooled there, so that a
	 * key of two devices is one row, as a key of two ranks is */
	if (o->outdir && all.n > 1) {
		for (size_t d = 1; d < all.n && rc == 0; d++) {
			rc = perfdb_agg_merge(all.v[0].agg, all.v[d].agg, err);
			if (rc == 0)
				rc = perfdb_comm_agg_merge(all.v[0].comm, all.v[d].comm, err);
		}
		for (size_t d = 1; d < all.n; d++) {
			if (all.v[d].gpu && !all.v[0].gpu) {
				/* the summary still tells a GPU trace's database */
				all.v[0].gpu = 1;
				free(all.v[0].device);
				all.v[0].device = all.v[d].device;
				all.v[d].device = NULL;
			}
			free(all.v[d].device);
			perfdb_agg_free(all.v[d].agg);
			perfdb_comm_agg_free(all.v[d].comm);
		}
		all.n = 1;
	}
	for (size_t d = 0; d < all.n && rc == 0; d++)
		rc = perfdb_agg_finish(all.v[d].agg, err);
	if (rc == 0)
		rc = perfdb_fia_resolve(fia, in.operator_details, in.nops, count_warn, &wc, err);
	for (size_t d = 0; d < all.n; d++) {
		const struct perfdb_agg_totals *t = perfdb_agg_totals(all.v[d].agg);
		res->totals.rows += t->rows;
		res->totals.dropped_na += t->dropped_na;
		res->totals.empty_type += t->empty_type;
		res->totals.invalid_durations += t->invalid_durations;
		res->totals.invalid_counters += t->invalid_counters;
		res->groups += perfdb_agg_ngroups(all.v[d].agg);
	}
	if (rc == 0)
		rc = write_dbs(o, &all, fia, res, err);
out:
	free(r.w);
	perfdb_fia_free(fia);
	dblist_release(&all);
	perfdb_inputs_release(&in);
	return rc;
}
