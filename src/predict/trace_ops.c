/*
 * A trace's op calls, in order, for perfdb predict (docs/predict.md "The op
 * sequence").
 *
 * The parse stage's readers deliver the rows (src/parse/parse.h): a Chrome
 * trace's CPU rows carry their thread and start/end, a device trace's rows
 * the device time each op call launched, a kernel_details / op_summary
 * table's rows their Start Time and Wait Time cells.  Each call keeps only
 * numbers and the id of its interned key, so memory grows with calls by a
 * fixed record and with distinct keys by their text.
 *
 * CPU calls nest (aten::linear contains aten::addmm): each call's parent
 * is the innermost call of its thread that contains it, found by sorting
 * the calls of a thread by (start, longest first) and keeping a stack of
 * open calls.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/chrome_trace.h"
#include "parse/parse.h"
#include "perfdb/stats.h"
#include "predict/predict_internal.h"

void pred_trace_release(struct pred_trace *t)
{
	free(t->file);
	free(t->v);
	perfdb_strtab_release(&t->keys);
	for (size_t i = 0; i < t->ntrace_names; i++)
		free(t->trace_names[i]);
	free(t->trace_names);
	memset(t, 0, sizeof(*t));
}

void pred_key_fields(const struct pred_trace *t, uint32_t key, const char *f[PK_N],
		     size_t len[PK_N])
{
	size_t n;
	const char *p = perfdb_strtab_get(&t->keys, key, &n);
	const char *end = p + n;
	for (int i = 0; i < PK_N; i++) {
		const char *q = memchr(p, '\x1f', (size_t)(end - p));
		if (!q)
			q = end;
		f[i] = p;
		len[i] = (size_t)(q - p);
		p = q < end ? q + 1 : end;
	}
}

struct reader {
	struct pred_trace *t;
	struct perfdb_strbuf key, name;
	int csv;                /* rows carry Start/Wait cells, not ns times */
};

static int nomem(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

static int add_span(struct perfdb_strbuf *b, struct perfdb_span s)
{
	return perfdb_strbuf_add(b, s.p ? s.p : "", s.len);
}

static int on_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct reader *r = ctx;
	struct pred_trace *t = r->t;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct pred_call *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return nomem(err);
		t->v = v;
		t->cap = cap;
	}
	/* the table's file stem, as the parse stage names it */
	size_t tl;
	const char *ty = perfdb_parse_normalize_type(row->type.p, row->type.len, &tl);
	perfdb_strbuf_reset(&r->name);
	if (perfdb_strbuf_add(&r->name, ty, tl) < 0)
		return nomem(err);
	struct perfdb_strbuf *k = &r->key;
	if (perfdb_parse_sanitize_name(r->name.buf, k) < 0)
		return nomem(err);
	const struct perfdb_span cells[PK_N - 1] = {
		row->in_shapes, row->in_dtypes, row->in_formats, row->out_shapes, row->out_dtypes,
	};
	for (int i = 0; i < PK_N - 1; i++)
		if (perfdb_strbuf_addch(k, '\x1f') < 0 || add_span(k, cells[i]) < 0)
			return nomem(err);
	int64_t id = perfdb_strtab_intern(&t->keys, k->buf, k->len);
	if (id < 0)
		return nomem(err);
	/* the op's name as the trace spelled it finds its table's readable file */
	if (row->trace_name.len && (size_t)id >= t->ntrace_names) {
		char **v = realloc(t->trace_names, ((size_t)id + 1) * sizeof(*v));
		if (!v)
			return nomem(err);
		for (size_t i = t->ntrace_names; i <= (size_t)id; i++)
			v[i] = NULL;
		t->trace_names = v;
		t->ntrace_names = (size_t)id + 1;
	}
	if (row->trace_name.len && !t->trace_names[id] &&
	    !(t->trace_names[id] = strndup(row->trace_name.p, row->trace_name.len)))
		return nomem(err);
	struct pred_call *c = &t->v[t->n];
	memset(c, 0, sizeof(*c));
	c->key = (uint32_t)id;
	c->parent = c->first_child = c->next_sibling = PRED_NONE;
	c->line = row->line;
	c->no_shapes = perfdb_parse_is_na(row->in_shapes);
	if (perfdb_stats_parse_double(row->duration.p, row->duration.len, &c->us) < 0 ||
	    !(c->us >= 0))
		return perfdb_err_at(err, PERFDB_EPARSE, t->file, row->line, 0,
				     "duration '%.*s' is not a non-negative number",
				     (int)row->duration.len, row->duration.p ? row->duration.p : "");
	if (row->timed) {
		c->thread = row->thread;
		c->ts = row->ts_ns;
		c->end = row->end_ns;
	} else if (r->csv) {
		double s = 0, w = 0;
		if (row->start.len && perfdb_stats_parse_double(row->start.p, row->start.len, &s) == 0)
			c->ts = (int64_t)(s * 1000.0);
		if (row->wait.len && perfdb_stats_parse_double(row->wait.p, row->wait.len, &w) == 0 &&
		    w > 0)
			c->wait_us = w;
		c->end = c->ts + (int64_t)(c->us * 1000.0);
	}
	t->n++;
	return 0;
}

/* GPU rows arrive after the CPU rows: they replace them (a device trace's
 * op sequence is what the ops launched). */
struct gpu_reader {
	struct reader *r;
	struct pred_trace gpu;
};

static int on_gpu_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct gpu_reader *g = ctx;
	struct pred_trace *cpu = g->r->t;
	g->gpu.file = cpu->file;
	/* intern into the same key table: swap the call arrays around the row */
	struct pred_call *v = cpu->v;
	size_t n = cpu->n, cap = cpu->cap;
	cpu->v = g->gpu.v;
	cpu->n = g->gpu.n;
	cpu->cap = g->gpu.cap;
	int rc = on_row(g->r, row, err);
	g->gpu.v = cpu->v;
	g->gpu.n = cpu->n;
	g->gpu.cap = cpu->cap;
	cpu->v = v;
	cpu->n = n;
	cpu->cap = cap;
	return rc;
}

static int read_chrome(struct reader *r, const char *path, struct perfdb_err *err)
{
	struct pred_trace *t = r->t;
	struct gpu_reader g = { .r = r };
	struct perfdb_row_sink cpu = { .row = on_row, .ctx = r }, gpu = { .row = on_gpu_row, .ctx = &g };
	struct perfdb_chrome_trace_info info;
	int rc = perfdb_chrome_trace_read(path, NULL, &cpu, &gpu, &info, err);
	/* without shapes every call of an op is one row: nothing to look up by */
	if (rc == 0 && info.cpu_rows == 0)
		rc = perfdb_err_set(err, PERFDB_EPARSE,
				    "%s: the trace has no input shapes to look up (%zu op%s without "
				    "\"Input Dims\"): record it with torch.profiler.profile("
				    "record_shapes=True)%s", path, info.cpu_ops, info.cpu_ops == 1 ? "" : "s",
				    info.legacy_events ? "; this is torch's legacy export, not Kineto's" : "");
	if (rc == 0 && info.activities) {
		free(t->v);
		t->v = g.gpu.v;
		t->n = g.gpu.n;
		t->cap = g.gpu.cap;
		g.gpu.v = NULL;
		t->kind = PERFDB_PREDICT_TORCH_GPU;
	} else {
		t->kind = PERFDB_PREDICT_TORCH_CPU;
	}
	free(g.gpu.v);
	t->no_shape_ops = info.cpu_ops_no_shapes;
	return rc;
}

struct order {
	uint32_t thread;
	int64_t ts, end;
	size_t i;
};

static int by_thread_start(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;   /* the container first */
	return x->i < y->i ? -1 : 1;
}

/* Parents and children of CPU calls; the step thread. */
static int nest(struct pred_trace *t, struct perfdb_err *err)
{
	if (t->n == 0)
		return 0;
	struct order *ord = malloc(t->n * sizeof(*ord));
	size_t *stack = malloc(t->n * sizeof(*stack));
	if (!ord || !stack) {
		free(ord);
		free(stack);
		return nomem(err);
	}
	for (size_t i = 0; i < t->n; i++)
		ord[i] = (struct order){ t->v[i].thread, t->v[i].ts, t->v[i].end, i };
	qsort(ord, t->n, sizeof(*ord), by_thread_start);
	size_t depth = 0;
	double thread_us = 0, best_us = -1;
	for (size_t k = 0; k < t->n; k++) {
		struct pred_call *c = &t->v[ord[k].i];
		if (k && ord[k - 1].thread != ord[k].thread) {
			depth = 0;
			thread_us = 0;
		}
		/* sorted by start: an open call contains c when c ends within it or
		 * starts before it ends.  Calls of one thread nest, so the second is
		 * rounding: a trace that writes whole us (torch's own writer, older
		 * Kineto) puts a child's end up to 1 us past its parent's, and that
		 * child read as a top-level call ran and counted twice */
		while (depth && t->v[stack[depth - 1]].end < c->end && t->v[stack[depth - 1]].end <= c->ts)
			depth--;
		c->parent = depth ? stack[depth - 1] : PRED_NONE;
		c->depth = depth;
		stack[depth++] = ord[k].i;
		if (c->parent == PRED_NONE) {
			thread_us += c->us;
			if (thread_us > best_us) {
				best_us = thread_us;
				t->step_thread = c->thread;
			}
		}
	}
	/* children lists in start order: walk the order backwards, pushing front */
	for (size_t k = t->n; k-- > 0;) {
		struct pred_call *c = &t->v[ord[k].i];
		if (c->parent != PRED_NONE) {
			c->next_sibling = t->v[c->parent].first_child;
			t->v[c->parent].first_child = ord[k].i;
		}
	}
	free(ord);
	free(stack);
	return 0;
}

int pred_trace_read(const char *path, struct pred_trace *t, struct perfdb_err *err)
{
	memset(t, 0, sizeof(*t));
	perfdb_strtab_init(&t->keys);
	struct perfdb_inputs in;
	perfdb_inputs_init(&in);
	struct stat sb;
	int rc = stat(path, &sb) < 0 ?
		perfdb_err_set(err, PERFDB_ENOENT, "trace not found: '%s' (--trace)", path) :
		perfdb_parse_find_inputs(path, &in, err);
	if (rc == 0 && in.n != 1)
		rc = perfdb_err_set(err, PERFDB_EINVAL,
				    "%s holds %zu traces: name one of them with --trace", path, in.n);
	if (rc == 0 && !(t->file = strdup(in.v[0].path)))
		rc = nomem(err);
	struct reader r = { .t = t, .key = PERFDB_STRBUF_INIT, .name = PERFDB_STRBUF_INIT };
	if (rc == 0 && in.v[0].kind == PERFDB_INPUT_CHROME_TRACE) {
		rc = read_chrome(&r, t->file, err);
		if (rc == 0 && t->kind == PERFDB_PREDICT_TORCH_CPU)
			rc = nest(t, err);
	} else if (rc == 0) {
		struct perfdb_csv_input_stats st;
		struct perfdb_row_sink sink = { .row = on_row, .ctx = &r };
		r.csv = 1;
		t->kind = in.v[0].kind == PERFDB_INPUT_OP_SUMMARY ? PERFDB_PREDICT_OP_SUMMARY :
			  PERFDB_PREDICT_KERNEL_DETAILS;
		rc = in.v[0].kind == PERFDB_INPUT_ASCEND_DB ? perfdb_parse_read_db(t->file, &sink, NULL, &st, err) :
		     perfdb_parse_read_csv(t->file, in.v[0].kind, &sink, &st, NULL, NULL, err);
		if (rc == 0 && t->n == 0)
			rc = perfdb_err_set(err, PERFDB_EPARSE, "%s: no kernel rows", t->file);
	}
	perfdb_strbuf_release(&r.key);
	perfdb_strbuf_release(&r.name);
	perfdb_inputs_release(&in);
	if (rc < 0)
		pred_trace_release(t);
	return rc;
}
