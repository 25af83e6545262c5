/*
 * The replay engine: rows -> tensors -> timed runs -> measurements.  See
 * engine.h for the method and spec/replay.md §4 and Decisions 2, 3, 6 for
 * the rules followed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"
#include "replay/engine.h"

#define ROW_MAX_BYTES ((size_t)8 << 30)   /* a row needing more is failed, not attempted */
#define LLC_BYTES ((size_t)32 << 20)       /* flush when the working set fits this */
#define MAX_SAMPLES 100000

static const char *const base_cols[8] = {
	"OP State", "Accelerator Core", "Input Shapes", "Input Data Types",
	"Input Formats", "Output Shapes", "Output Data Types", "Output Formats",
};

static double now_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- building a case ------------------------------------------------- */

static struct perfdb_span span_of(const char *s)
{
	return (struct perfdb_span){ s ? s : "", s ? strlen(s) : 0 };
}

static int build_side(const char *op, const char *side, const char *shapes, const char *dtypes,
		      const char *formats, struct perfdb_tensor *t, size_t *n, struct perfdb_err *err)
{
	struct perfdb_slots ss, ds, fs;
	perfdb_slots_init(&ss);
	perfdb_slots_init(&ds);
	perfdb_slots_init(&fs);
	int rc = 0;
	if (perfdb_shape_split_slots(span_of(shapes), &ss) < 0 ||
	    perfdb_shape_split_slots(span_of(dtypes), &ds) < 0 ||
	    perfdb_shape_split_slots(span_of(formats), &fs) < 0) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	if (ss.n > PERFDB_OP_MAX_TENSORS) {
		rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: %zu %s slots, at most %d supported", op, ss.n,
				    side, PERFDB_OP_MAX_TENSORS);
		goto out;
	}
	*n = ss.n;
	for (size_t i = 0; i < ss.n; i++) {
		struct perfdb_tensor *x = &t[i];
		memset(x, 0, sizeof(*x));
		if (perfdb_shape_slot_is_null(ss.v[i]))
			continue;
		x->present = true;
		int64_t d[PERFDB_SHAPE_MAX_DIMS];
		size_t nd;
		if ((rc = perfdb_shape_parse_dims(ss.v[i], d, PERFDB_SHAPE_MAX_DIMS, &nd, err)) < 0)
			goto out;
		struct perfdb_span dt = i < ds.n ? perfdb_span_trim(ds.v[i]) : span_of("");
		if (dt.len == 0) {
			x->dtype = PERFDB_DTYPE_FLOAT;   /* missing dtype -> DT_FLOAT */
		} else {
			x->dtype = perfdb_dtype_parse(dt);
			if (x->dtype == PERFDB_DTYPE_UNKNOWN || x->dtype == PERFDB_DTYPE_UNDEFINED ||
			    perfdb_dtype_bits(x->dtype) < 8) {
				rc = perfdb_err_set(err, PERFDB_EINVAL, "Unsupported dtype: %.*s", (int)dt.len, dt.p);
				goto out;
			}
		}
		struct perfdb_span fm = i < fs.n ? perfdb_span_trim(fs.v[i]) : span_of("");
		x->format = fm.len ? perfdb_format_parse(fm) : PERFDB_FORMAT_ND;
		if (x->format == PERFDB_FORMAT_FRACTAL_NZ && nd == 4) {
			if (perfdb_shape_nz_to_nd(d, nd, x->dims, &x->ndims) < 0) {
				rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: FRACTAL_NZ shape overflows", op);
				goto out;
			}
		} else {
			memcpy(x->dims, d, nd * sizeof(d[0]));
			x->ndims = nd;
		}
		x->numel = perfdb_shape_numel(x->dims, x->ndims);
		if (x->numel < 0) {
			rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: %s %zu has too many elements", op, side, i);
			goto out;
		}
		x->bytes = perfdb_dtype_bytes(x->dtype, (size_t)x->numel);
	}
out:
	perfdb_slots_release(&ss);
	perfdb_slots_release(&ds);
	perfdb_slots_release(&fs);
	return rc;
}

int perfdb_engine_build_case(const char *op, const char *in_shapes, const char *in_dtypes,
			     const char *in_formats, const char *out_shapes, const char *out_dtypes,
			     const char *out_formats, struct perfdb_op_case *c, struct perfdb_err *err)
{
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->threads = 1;
	PERFDB_TRY(build_side(op, "input", in_shapes, in_dtypes, in_formats, c->in, &c->nin, err));
	PERFDB_TRY(build_side(op, "output", out_shapes, out_dtypes, out_formats, c->out, &c->nout, err));
	size_t total = 0;
	for (size_t i = 0; i < c->nin; i++)
		total += c->in[i].bytes;
	for (size_t i = 0; i < c->nout; i++)
		total += c->out[i].bytes;
	if (total > ROW_MAX_BYTES)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the row needs %.1f GiB of tensors (limit %zu GiB)",
				      op, (double)total / (1 << 30), ROW_MAX_BYTES >> 30);
	return 0;
}

/* ---- buffers --------------------------------------------------------- */

static uint64_t mix(uint64_t *s)
{
	/* splitmix64: a documented, seedable generator */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(struct perfdb_tensor *t, uint64_t seed)
{
	uint64_t s = seed;
	size_t n = (size_t)t->numel;
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT: {
		float *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (float)((double)(mix(&s) >> 40) * 0x1p-23 - 1.0);
		break;
	}
	case PERFDB_DTYPE_BF16:
	case PERFDB_DTYPE_FLOAT16: {
		/* random in [-1, 1): exponent 126 or below, random mantissa bits */
		uint16_t *p = t->data;
		int bf = t->dtype == PERFDB_DTYPE_BF16;
		for (size_t i = 0; i < n; i++) {
			uint64_t r = mix(&s);
			if (bf)   /* sign, exponent 120..126, 7 mantissa bits */
				p[i] = (uint16_t)(((r & 1) << 15) | ((120 + (r >> 1) % 7) << 7) | ((r >> 8) & 0x7f));
			else      /* sign, exponent 9..14, 10 mantissa bits */
				p[i] = (uint16_t)(((r & 1) << 15) | ((9 + (r >> 1) % 6) << 10) | ((r >> 8) & 0x3ff));
		}
		break;
	}
	case PERFDB_DTYPE_FLOAT64: {
		double *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (double)(mix(&s) >> 11) * 0x1p-52 - 1.0;
		break;
	}
	case PERFDB_DTYPE_BOOL: {
		uint8_t *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)(mix(&s) & 1);
		break;
	}
	default: {
		/* integers: randint(0, 8) in their own width (little-endian) */
		size_t es = perfdb_dtype_bytes(t->dtype, 1);
		uint8_t *p = t->data;
		memset(p, 0, t->bytes);
		for (size_t i = 0; i < n; i++)
			p[i * es] = (uint8_t)(mix(&s) & 7);
		break;
	}
	}
}

static int get_buf(struct perfdb_engine_pool *pool, size_t slot, struct perfdb_tensor *t,
		   struct perfdb_err *err)
{
	size_t need = t->bytes ? t->bytes : 1;
	if (pool->cap[slot] < need) {
		free(pool->buf[slot]);
		pool->buf[slot] = NULL;
		pool->cap[slot] = 0;
		size_t cap = (need + 4095) & ~(size_t)4095;
		void *p;
		if (posix_memalign(&p, 64, cap) != 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "cannot allocate %zu bytes for %s", cap,
					      "a tensor");
		memset(p, 0, cap);   /* pre-fault once: first touch costs ~1.5 us per page */
		pool->buf[slot] = p;
		pool->cap[slot] = cap;
	}
	t->data = pool->buf[slot];
	return 0;
}

int perfdb_engine_alloc_case(struct perfdb_engine_pool *pool, struct perfdb_op_case *c, uint64_t seed,
			     struct perfdb_err *err)
{
	for (size_t i = 0; i < c->nin; i++)
		if (c->in[i].present) {
			PERFDB_TRY(get_buf(pool, i, &c->in[i], err));
			fill(&c->in[i], seed * 1000003u + i);
		}
	for (size_t i = 0; i < c->nout; i++)
		if (c->out[i].present)
			PERFDB_TRY(get_buf(pool, PERFDB_OP_MAX_TENSORS + i, &c->out[i], err));
	return 0;
}

void perfdb_engine_pool_release(struct perfdb_engine_pool *pool)
{
	for (size_t i = 0; i < 2 * PERFDB_OP_MAX_TENSORS; i++)
		free(pool->buf[i]);
	memset(pool, 0, sizeof(*pool));
}

/* ---- results --------------------------------------------------------- */

void perfdb_engine_result_release(struct perfdb_engine_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].op);
		free(r->rows[i].reason);
	}
	free(r->rows);
	perfdb_measures_release(&r->measures);
	memset(r, 0, sizeof(*r));
}

static struct perfdb_engine_row *add_row(struct perfdb_engine_result *r, const char *op, size_t line)
{
	if (r->nrows == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		void *p = realloc(r->rows, cap * sizeof(*r->rows));
		if (!p)
			return NULL;
		r->rows = p;
		r->cap = cap;
	}
	struct perfdb_engine_row *row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->op = strdup(op);
	if (!row->op)
		return NULL;
	row->line = line;
	r->nrows++;
	return row;
}

static int add_measure(struct perfdb_measures *m, const char *op, const struct perfdb_table *t, size_t r,
		       const struct perfdb_engine_row *row)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		void *p = realloc(m->v, cap * sizeof(*m->v));
		if (!p)
			return -PERFDB_ENOMEM;
		m->v = p;
		m->cap = cap;
	}
	struct perfdb_measure *x = &m->v[m->n];
	memset(x, 0, sizeof(*x));
	x->op = strdup(op);
	int bad = !x->op;
	for (int b = 0; b < 8; b++) {
		const char *v = perfdb_table_get(t, r, perfdb_table_col(t, base_cols[b]));
		x->base[b] = strdup(v ? v : "");
		bad |= !x->base[b];
	}
	long ep = perfdb_table_col(t, PERFDB_COL_EP_SIZE);
	if (ep >= 0) {
		x->ep_size = strdup(perfdb_table_get(t, r, ep));
		bad |= !x->ep_size;
	}
	x->samples = row->samples;
	x->mean = row->mean;
	x->min = row->min;
	x->median = row->median;
	x->std = row->std;
	m->n++;
	return bad ? -PERFDB_ENOMEM : 0;
}

/* ---- timing ---------------------------------------------------------- */

/* Evict the case's data from the caches: stream through a buffer twice the LLC. */
static volatile uint64_t flush_sink;
static void cache_flush(uint64_t *buf, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i += 8) {
		buf[i] += 1;
		s += buf[i];
	}
	flush_sink += s;
}

static int time_case(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		     struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn,
		     struct perfdb_engine_row *row, struct perfdb_err *err)
{
	size_t ws = 0;
	for (size_t i = 0; i < c->nin; i++)
		ws += c->in[i].bytes;
	for (size_t i = 0; i < c->nout; i++)
		ws += c->out[i].bytes;
	int flush = o->flush && impl->memory_bound && flushbuf && ws < LLC_BYTES;
	double start = now_s(CLOCK_MONOTONIC);
	/* warm-up: at least 2 calls, up to 5 % of the budget */
	for (int w = 0; w < 2 || now_s(CLOCK_MONOTONIC) - start < 0.05 * o->budget_s; w++) {
		PERFDB_TRY(impl->run(c, err));
		if (w >= 20 || now_s(CLOCK_MONOTONIC) - start > o->timeout_s)
			break;
	}
	size_t cap = o->repeat > 64 ? o->repeat : 64, n = 0;
	double *x = malloc(cap * sizeof(double));
	if (!x)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	double t_start = now_s(CLOCK_MONOTONIC), cpu_start = now_s(CLOCK_PROCESS_CPUTIME_ID);
	double sum = 0, sumsq = 0;
	int rc = 0;
	for (;;) {
		if (flush)
			cache_flush(flushbuf, flushn);
		double t0 = now_s(CLOCK_MONOTONIC);
		if ((rc = impl->run(c, err)) < 0)
			break;
		double t1 = now_s(CLOCK_MONOTONIC), us = (t1 - t0) * 1e6;
		if (n == cap) {
			void *p = realloc(x, 2 * cap * sizeof(double));
			if (!p) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			x = p;
			cap *= 2;
		}
		x[n++] = us;
		sum += us;
		sumsq += us * us;
		double el = t1 - t_start;
		if (t1 - start > o->timeout_s) {
			if (n < o->repeat)
				rc = perfdb_err_set(err, PERFDB_EINVAL, "timed out after %.1f s with %zu of %zu samples",
						    t1 - start, n, o->repeat);
			break;
		}
		if (n >= o->repeat) {
			double mean = sum / (double)n, var = sumsq / (double)n - mean * mean;
			double rsd = mean > 0 && var > 0 ? sqrt(var) / mean : 0;
			if (rsd <= o->rsd || el >= o->budget_s || n >= MAX_SAMPLES)
				break;
		}
	}
	double wall = now_s(CLOCK_MONOTONIC) - t_start, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
	if (rc == 0) {
		struct perfdb_stats st;
		perfdb_stats_compute(x, n, &st);
		row->samples = st.n;
		row->mean = st.mean;
		row->median = st.median;
		row->min = st.min;
		row->std = st.std;
		row->cpu_ratio = wall > 0 ? cpu / wall : 0;
	}
	free(x);
	return rc;
}

/* ---- the run --------------------------------------------------------- */

static int selected(const struct perfdb_engine_opts *o, const char *op)
{
	if (!o->ops)
		return 1;
	for (size_t i = 0; i < o->nops; i++)
		if (strcmp(o->ops[i], op) == 0)
			return 1;
	return 0;
}

static int set_reason(struct perfdb_engine_row *row, enum perfdb_engine_status st, const char *msg)
{
	row->status = st;
	row->reason = strdup(msg);
	return row->reason ? 0 : -PERFDB_ENOMEM;
}

static int replay_row(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		      const struct perfdb_table *t, size_t r, struct perfdb_engine_pool *pool,
		      uint64_t *flushbuf, size_t flushn, struct perfdb_engine_row *row, struct perfdb_err *err)
{
	struct perfdb_op_case c;
#define CELL(name) perfdb_table_get(t, r, perfdb_table_col(t, name))
	PERFDB_TRY(perfdb_engine_build_case(impl->name, CELL("Input Shapes"), CELL("Input Data Types"),
					    CELL("Input Formats"), CELL("Output Shapes"),
					    CELL("Output Data Types"), CELL("Output Formats"), &c, err));
#undef CELL
	c.threads = o->threads;
	PERFDB_TRY(impl->check(&c, err));
	PERFDB_TRY(perfdb_engine_alloc_case(pool, &c, o->seed ^ ((uint64_t)row->line << 20), err));
	int rc = impl->prepare ? impl->prepare(&c, err) : 0;
	if (rc == 0)
		rc = time_case(o, impl, &c, flushbuf, flushn, row, err);
	if (impl->release)
		impl->release(&c);
	return rc;
}

int perfdb_engine_run(const struct perfdb_engine_opts *o, struct perfdb_engine_result *res,
		      struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	const struct perfdb_backend_i *be = o->backend;
	struct perfdb_table *tabs = calloc(perfdb_replay_nops, sizeof(*tabs));
	const char **names = calloc(perfdb_replay_nops, sizeof(*names));
	size_t ntab = 0, total = 0;
	int rc = 0;
	if (!tabs || !names) {
		free(tabs);
		free(names);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* load every selected table first: a table that does not load stops the run before any work */
	for (size_t i = 0; i < perfdb_replay_nops; i++) {
		const char *op = perfdb_replay_ops[i];
		if (!selected(o, op))
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s.csv", o->dbdir, op);
		if (access(p, F_OK) != 0)
			continue;
		perfdb_table_init(&tabs[ntab]);
		if ((rc = perfdb_table_load(&tabs[ntab], p, err)) < 0) {
			perfdb_table_release(&tabs[ntab]);
			goto out;
		}
		if (perfdb_table_col(&tabs[ntab], "Input Shapes") < 0) {
			perfdb_table_release(&tabs[ntab]);
			rc = perfdb_err_set(err, PERFDB_ESCHEMA, "%s: no 'Input Shapes' column", p);
			goto out;
		}
		names[ntab] = op;
		total += tabs[ntab].nrows;
		ntab++;
	}
	if (be->init && (rc = be->init(o->threads, err)) < 0)
		goto out;
	size_t flushn = 2 * LLC_BYTES / sizeof(uint64_t);
	uint64_t *flushbuf = o->flush ? calloc(flushn, sizeof(uint64_t)) : NULL;
	struct perfdb_engine_pool pool = { 0 };
	size_t done = 0;
	for (size_t ti = 0; ti < ntab && !res->stopped; ti++) {
		const char *op = names[ti];
		struct perfdb_table *t = &tabs[ti];
		int sup = be->supports_op(op);   /* asked first (STYLE.md rule 3) */
		const struct perfdb_op_impl *impl = sup ? be->find_op(op) : NULL;
		long cmb = perfdb_table_col(t, PERFDB_COL_MB_DUR), cprof = perfdb_table_col(t, PERFDB_COL_PROF_AVG);
		for (size_t r = 0; r < t->nrows && !res->stopped; r++) {
			if (o->stop && *o->stop) {
				res->stopped = res->interrupted = 1;
				break;
			}
			struct perfdb_engine_row *row = add_row(res, op, r + 2);
			if (!row) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			if (!impl) {
				char m[160];
				snprintf(m, sizeof(m), "not supported by the %s backend", be->name);
				rc = set_reason(row, PERFDB_ENGINE_SKIPPED, m);
				res->nskipped++;
			} else if (o->missing_only && (perfdb_wb_valid(perfdb_table_get(t, r, cmb)) ||
						       perfdb_wb_valid(perfdb_table_get(t, r, cprof)))) {
				rc = set_reason(row, PERFDB_ENGINE_SKIPPED, "has a valid duration");
				res->nskipped++;
			} else {
				struct perfdb_err e;
				perfdb_err_clear(&e);
				if (replay_row(o, impl, t, r, &pool, flushbuf, flushn, row, &e) < 0) {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, e.msg);
					res->nfailed++;
					res->stopped = o->fail_fast;
				} else {
					res->nok++;
					rc = add_measure(&res->measures, op, t, r, row);
				}
			}
			if (rc < 0) {
				perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			if (o->progress)
				o->progress(o->ud, ++done, total, res->nfailed);
		}
		if (rc < 0)
			break;
	}
	perfdb_engine_pool_release(&pool);
	free(flushbuf);
out:
	for (size_t i = 0; i < ntab; i++)
		perfdb_table_release(&tabs[i]);
	free(tabs);
	free(names);
	return rc;
}
