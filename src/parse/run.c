/*
 * The parse stage end to end (include/perfdb/parse.h perfdb_parse_run).
 *
 * Several input files are aggregated in parallel, one file per worker
 * thread into its own aggregator, and merged into the global aggregator
 * strictly in input order, so the result (row order, first non-empty
 * values, FIA pairing) is the same as reading the files one after another.
 * A worker never runs more than 2 x jobs files ahead of the merge, which
 * bounds memory.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_internal.h"
#include "perfdb/chrome_trace.h"
#include "perfdb/fia.h"

struct work {
	struct perfdb_agg *agg;
	struct perfdb_fia_file *fia;
	struct perfdb_err err;
	int rc;
	int done;
	unsigned long long bytes;
	struct perfdb_csv_input_stats st;
	int trace_gpu;
	char gpu_name[128];
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

/* Feeds the aggregator and notes FIA kernel rows. */
struct tee {
	struct perfdb_row_sink agg;
	struct perfdb_fia_file *fia;
};

static int tee_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct tee *t = ctx;
	if (row->type.len == sizeof(PERFDB_FIA_TYPE) - 1 &&
	    memcmp(row->type.p, PERFDB_FIA_TYPE, row->type.len) == 0)
		PERFDB_TRY(perfdb_fia_file_row(t->fia, row->in_shapes, row->out_shapes, err));
	return t->agg.row(t->agg.ctx, row, err);
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

/* Chrome traces: GPU kernel rows when the trace has any, else CPU op rows. */
static int read_trace(const char *path, struct tee *t, struct work *w, struct perfdb_err *err)
{
	struct perfdb_agg *cpu = NULL;
	struct perfdb_fia_file *nofia = NULL;
	int rc = perfdb_agg_new(&cpu, 0, err);
	if (rc == 0)
		rc = perfdb_fia_file_new(&nofia, err);
	if (rc == 0) {
		struct tee cpu_tee = { perfdb_agg_sink(cpu), nofia };
		struct perfdb_row_sink cpu_sink = { tee_row, &cpu_tee };
		struct perfdb_row_sink gpu_sink = { tee_row, t };
		struct perfdb_chrome_trace_info info;
		rc = perfdb_chrome_trace_read(path, &cpu_sink, &gpu_sink, &info, err);
		struct perfdb_agg *gpu = t->agg.ctx;
		if (rc == 0 && perfdb_agg_ngroups(gpu) == 0) {
			rc = perfdb_agg_merge(gpu, cpu, err);
		} else if (rc == 0) {
			w->trace_gpu = 1;
			snprintf(w->gpu_name, sizeof(w->gpu_name), "%s", info.gpu_name);
		}
	}
	perfdb_fia_file_free(nofia);
	perfdb_agg_free(cpu);
	return rc;
}

static void process(struct run *r, size_t i)
{
	struct work *w = &r->w[i];
	const struct perfdb_input *inp = &r->in->v[i];
	perfdb_err_clear(&w->err);
	w->rc = perfdb_agg_new(&w->agg, r->o->sample_limit, &w->err);
	if (w->rc == 0)
		w->rc = perfdb_fia_file_new(&w->fia, &w->err);
	if (w->rc < 0)
		return;
	struct tee t = { perfdb_agg_sink(w->agg), w->fia };
	struct perfdb_row_sink sink = { tee_row, &t };
	struct prog p = { r, 0 };
	if (inp->kind == PERFDB_INPUT_CHROME_TRACE) {
		w->rc = read_trace(inp->path, &t, w, &w->err);
		struct stat st;
		if (stat(inp->path, &st) == 0)
			on_progress(&p, (unsigned long long)st.st_size);
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

static void warn_input(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		       const char *path, const struct perfdb_csv_input_stats *st,
		       const struct perfdb_agg_totals *before, const struct perfdb_agg_totals *after)
{
	char msg[1200];
	if (!o->warn)
		return;
	if (st->missing_optional) {
		char counters[64] = "";
		if (st->missing_counters)
			snprintf(counters, sizeof(counters), "%s%zu of the %d counter columns",
				 st->missing_names[0] ? ", " : "", st->missing_counters, PERFDB_NCOUNTERS);
		snprintf(msg, sizeof(msg), "%s: optional columns missing, left empty: %s%s", path,
			 st->missing_names, counters);
		o->warn(o->ctx, msg);
		res->warnings++;
	}
	size_t inv = after->invalid_durations - before->invalid_durations;
	if (inv) {
		snprintf(msg, sizeof(msg),
			 "%s: %zu row(s) with an empty or invalid Duration(us) not counted as samples",
			 path, inv);
		o->warn(o->ctx, msg);
		res->warnings++;
	}
	size_t na = after->dropped_na - before->dropped_na;
	if (na) {
		snprintf(msg, sizeof(msg), "%s: %zu row(s) with N/A shapes dropped", path, na);
		o->warn(o->ctx, msg);
		res->warnings++;
	}
	size_t ic = after->invalid_counters - before->invalid_counters;
	if (ic) {
		snprintf(msg, sizeof(msg), "%s: %zu counter cell(s) that are not numbers ignored",
			 path, ic);
		o->warn(o->ctx, msg);
		res->warnings++;
	}
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

int perfdb_parse_run(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		     struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	struct perfdb_inputs in;
	perfdb_inputs_init(&in);
	struct perfdb_agg *all = NULL;
	struct perfdb_fia *fia = NULL;
	struct run r;
	memset(&r, 0, sizeof(r));
	pthread_t th[16];
	unsigned nth = 0;
	int rc = perfdb_parse_find_inputs(o->profiling_path, &in, err);
	if (rc == 0)
		rc = perfdb_agg_new(&all, o->sample_limit, err);
	if (rc == 0)
		rc = perfdb_fia_new(&fia, err);
	if (rc < 0)
		goto out;
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
		struct perfdb_agg_totals before = *perfdb_agg_totals(all);
		rc = perfdb_agg_merge(all, w->agg, err);
		if (rc == 0)
			rc = perfdb_fia_add_file(fia, in.v[i].path, w->fia, err);
		res->inputs++;
		res->bytes += w->st.bytes;
		if (in.v[i].kind == PERFDB_INPUT_CHROME_TRACE)
			res->traces++;
		if (w->trace_gpu && !res->trace_gpu) {
			res->trace_gpu = 1;
			snprintf(res->gpu_name, sizeof(res->gpu_name), "%s", w->gpu_name);
		}
		warn_input(o, res, in.v[i].path, &w->st, &before, perfdb_agg_totals(all));
		perfdb_agg_free(w->agg);
		perfdb_fia_file_free(w->fia);
		w->agg = NULL;
		w->fia = NULL;
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
	for (size_t i = 0; i < in.n; i++) {
		perfdb_agg_free(r.w[i].agg);
		perfdb_fia_file_free(r.w[i].fia);
	}
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	if (rc < 0)
		goto out;

	struct warn_count wc = { o, res };
	rc = perfdb_agg_finish(all, err);
	if (rc == 0)
		rc = perfdb_fia_resolve(fia, in.operator_details, in.nops, count_warn, &wc, err);
	res->totals = *perfdb_agg_totals(all);
	res->groups = perfdb_agg_ngroups(all);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	if (rc == 0 && !o->outdir)
		rc = o->resolve_outdir ? o->resolve_outdir(o->ctx, res, &dir, err)
				       : perfdb_err_set(err, PERFDB_EINVAL, "no database directory");
	if (rc == 0)
		rc = perfdb_parse_write_tables(o->outdir ? o->outdir : dir.buf, all, fia,
					       o->lock_timeout, res, err);
	perfdb_strbuf_release(&dir);
out:
	free(r.w);
	perfdb_fia_free(fia);
	perfdb_agg_free(all);
	perfdb_inputs_release(&in);
	return rc;
}
