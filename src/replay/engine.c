/*
 * The replay engine: rows -> tensors -> timed runs -> measurements.  See
 * engine.h for the method and docs/spec/replay.md §4 and Decisions 2, 3, 6 for
 * the rules followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <mpi.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "perfdb/signature.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"
#include "replay/engine.h"
#include "replay/journal.h"
#include "replay/probe.h"

#define LLC_BYTES ((size_t)32 << 20)       /* flush when the working set fits this */
#define HUGE_BYTES ((size_t)2 << 20)       /* a transparent huge page */
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
	c->def = perfdb_opdef_get(op);
	c->threads = 1;
	PERFDB_TRY(build_side(op, "input", in_shapes, in_dtypes, in_formats, c->in, &c->nin, err));
	PERFDB_TRY(build_side(op, "output", out_shapes, out_dtypes, out_formats, c->out, &c->nout, err));
	return 0;
}

size_t perfdb_engine_case_bytes(const struct perfdb_op_case *c)
{
	size_t total = 0;
	for (size_t i = 0; i < c->nin; i++)
		total += c->in[i].present ? c->in[i].bytes : 0;
	for (size_t i = 0; i < c->nout; i++)
		total += c->out[i].present && !c->out[i].alias_in ? c->out[i].bytes : 0;
	return total;
}

/*
 * The most tensor memory one row may take: 60 % of the machine's physical
 * memory (a row needing more is failed, not attempted: the machine would
 * swap or the OOM killer end the run).
 */
static size_t row_max_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
	if (pages <= 0 || psz <= 0)
		return (size_t)8 << 30;
	return (size_t)((double)pages * (double)psz * 0.6);
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
		/*
		 * Buffers of 2 MiB and more are 2 MiB-aligned transparent huge
		 * pages where the kernel offers them (THP "madvise", as on these
		 * machines), as an inference engine maps its weights and KV cache:
		 * with 4 KiB pages a paged KV cache read in block-table order, or a
		 * transpose's strided writes, cost a TLB miss per page and ran at
		 * half the bandwidth of the same bytes read in order.
		 */
		size_t align = need >= HUGE_BYTES ? HUGE_BYTES : 4096;
		size_t cap = (need + align - 1) & ~(align - 1);
		void *p;
		if (posix_memalign(&p, align < 64 ? 64 : align, cap) != 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "cannot allocate %zu bytes for %s", cap,
					      "a tensor");
#ifdef MADV_HUGEPAGE
		if (align == HUGE_BYTES)
			(void)madvise(p, cap, MADV_HUGEPAGE);   /* advice only: THP off leaves 4 KiB pages */
#endif
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
	for (size_t i = 0; i < c->nout; i++) {
		struct perfdb_tensor *o = &c->out[i];
		if (!o->present)
			continue;
		size_t a = (size_t)(o->alias_in > 0 ? o->alias_in - 1 : 0);
		if (o->alias_in > 0 && a < c->nin && c->in[a].present && c->in[a].bytes >= o->bytes)
			o->data = c->in[a].data;   /* in place: the input's buffer */
		else
			PERFDB_TRY(get_buf(pool, PERFDB_OP_MAX_TENSORS + i, o, err));
	}
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
		free(r->rows[i].table);
		free(r->rows[i].reason);
	}
	free(r->rows);
	perfdb_measures_release(&r->measures);
	memset(r, 0, sizeof(*r));
}

static struct perfdb_engine_row *add_row(struct perfdb_engine_result *r, const char *op, const char *table,
					 size_t line)
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
	row->table = strdup(table ? table : op);
	if (!row->op || !row->table) {
		free(row->op);
		free(row->table);
		return NULL;
	}
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

/*
 * Collective rows: every rank must take the same path, so a step that failed
 * on one rank fails on all (the reason of the failing rank is this rank's
 * own when it failed, else a pointer to the rank that did).
 */
static int agree(const struct perfdb_engine_opts *o, int rc, struct perfdb_err *err)
{
	int bad = rc < 0 ? o->rank + 1 : 0, first = 0;
	MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MAX, *(MPI_Comm *)o->comm);
	if (rc < 0)
		return rc;
	if (first)
		return perfdb_err_set(err, PERFDB_EINVAL, "failed on rank %d", first - 1);
	return 0;
}

/*
 * Warm up, then sample until the adaptive stop (Decision 2).  pr: the
 * bandwidth probe read before the warm-up (which re-warms what the probe
 * evicted) and after the timed loop; the row keeps the lower of the two.
 */
static int time_case(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		     struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr,
		     struct perfdb_engine_row *row, struct perfdb_err *err)
{
	size_t ws = 0;
	for (size_t i = 0; i < c->nin; i++)
		ws += c->in[i].bytes;
	for (size_t i = 0; i < c->nout; i++)
		ws += c->out[i].bytes;
	int flush = o->flush && c->def->memory_bound && flushbuf && ws < LLC_BYTES && !o->backend->time_run;
	/*
	 * Collective: every rank runs each call together.  Ranks enter each
	 * sample after a barrier and the sample is the slowest rank's time
	 * (nccl-tests); every stop decision is taken on values all ranks share.
	 */
	MPI_Comm *comm = c->def->collective ? o->comm : NULL;
	double probe0 = pr ? perfdb_probe_gbs(pr) : 0;
	double start = now_s(CLOCK_MONOTONIC);
	/* warm-up: at least 2 calls, up to 5 % of the budget */
	for (int w = 0;; w++) {
		int rc = impl->run(c, err);
		double el = now_s(CLOCK_MONOTONIC) - start;
		int more = w < 1 || (el < 0.05 * o->budget_s && w < 20 && el <= o->timeout_s);
		if (comm) {
			/* a failure on any rank fails all; the first rank done warming up ends warm-up */
			int v[2] = { rc < 0, !more }, g[2];
			MPI_Allreduce(v, g, 2, MPI_INT, MPI_MAX, *comm);
			if (g[0])
				return rc < 0 ? rc : perfdb_err_set(err, PERFDB_EINVAL, "failed on another rank");
			more = !g[1];
		} else if (rc < 0) {
			return rc;
		}
		if (!more)
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
		if (comm)
			MPI_Barrier(*comm);
		double t0 = now_s(CLOCK_MONOTONIC), us = 0;
		if (o->backend->time_run)   /* device time, measured by the backend (flushing its own caches) */
			rc = o->backend->time_run(impl, c, o->flush && c->def->memory_bound, &us, err);
		else
			rc = impl->run(c, err);
		double t1 = now_s(CLOCK_MONOTONIC);
		if (!o->backend->time_run)
			us = (t1 - t0) * 1e6;
		double since_start = t1 - start, el = t1 - t_start;
		if (comm) {
			/* the slowest rank's sample and clocks; a failure anywhere fails all */
			double v[4] = { us, since_start, el, rc < 0 }, g[4];
			MPI_Allreduce(v, g, 4, MPI_DOUBLE, MPI_MAX, *comm);
			if (g[3] > 0 && rc == 0)
				rc = perfdb_err_set(err, PERFDB_EINVAL, "failed on another rank");
			us = g[0];
			since_start = g[1];
			el = g[2];
		}
		if (rc < 0)
			break;
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
		if (since_start > o->timeout_s) {
			if (n < o->repeat)
				rc = perfdb_err_set(err, PERFDB_EINVAL, "timed out after %.1f s with %zu of %zu samples",
						    since_start, n, o->repeat);
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
		double probe1 = pr ? perfdb_probe_gbs(pr) : 0;
		row->probe_gbs = probe0 < probe1 ? probe0 : probe1;
	}
	free(x);
	return rc;
}

/*
 * time_case, again while the row's probe says it was measured under
 * contention (probe.h: against the rows measured before it), at most
 * o->contention_retries more times and only while another measurement
 * as long as the last keeps the row within its timeout (so the subprocess
 * watchdog's timeout x rows still holds); the row keeps the measurement
 * taken with the most bandwidth, whose reading joins the reference.
 */
static int time_case_uncontended(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
				 struct perfdb_op_case *c, uint64_t *flushbuf, size_t flushn,
				 struct perfdb_probe *pr, struct perfdb_engine_row *row, struct perfdb_err *err)
{
	double t0 = now_s(CLOCK_MONOTONIC);
	PERFDB_TRY(time_case(o, impl, c, flushbuf, flushn, pr, row, err));
	double ref = pr ? perfdb_probe_reference(pr) : 0, last = now_s(CLOCK_MONOTONIC) - t0;
	for (int k = 0; pr && k < o->contention_retries && perfdb_probe_contended(row->probe_gbs, ref) &&
			now_s(CLOCK_MONOTONIC) - t0 + last <= o->timeout_s;
	     k++) {
		double t1 = now_s(CLOCK_MONOTONIC);
		struct perfdb_engine_row again = *row;
		struct perfdb_err rerr;
		perfdb_err_clear(&rerr);
		if (time_case(o, impl, c, flushbuf, flushn, pr, &again, &rerr) < 0)
			break;   /* a retry that fails (say, times out) keeps the measurement already taken */
		last = now_s(CLOCK_MONOTONIC) - t1;
		again.retries = row->retries + 1;
		if (again.probe_gbs > row->probe_gbs)
			*row = again;
		else
			row->retries = again.retries;
	}
	if (pr && perfdb_probe_note(pr, row->probe_gbs) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
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

struct cell_ctx {
	const struct perfdb_table *t;
	size_t r;
};

static const char *row_cell(const void *ctx, const char *column)
{
	const struct cell_ctx *cc = ctx;
	long c = perfdb_table_col(cc->t, column);
	return c < 0 ? NULL : perfdb_table_get(cc->t, cc->r, c);
}

static void case_context(const struct perfdb_engine_opts *o, const struct cell_ctx *cc,
			 struct perfdb_op_case *c)
{
	c->threads = o->threads;
	c->cell = row_cell;
	c->cell_ctx = cc;
	c->ep_size = o->ep_size;
	c->comm = o->comm;
	c->rank = o->comm ? o->rank : 0;
	c->nranks = o->comm ? o->nranks : 1;
}

/* Whether the op's skip hook keeps the row without replay (why filled). */
static int row_skipped(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		       const struct perfdb_table *t, size_t r, char *why, size_t whylen)
{
	const struct perfdb_opdef *def = perfdb_opdef_get(impl->name);
	if (!def->skip)
		return 0;
	struct perfdb_op_case c;
	struct cell_ctx cc = { t, r };
	memset(&c, 0, sizeof(c));
	c.op = impl->name;
	c.def = def;
	case_context(o, &cc, &c);
	return def->skip(&c, why, whylen) > 0;
}

static int replay_row(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		      const struct perfdb_table *t, size_t r, struct perfdb_engine_pool *pool,
		      uint64_t *flushbuf, size_t flushn, struct perfdb_probe *pr, struct perfdb_engine_row *row,
		      struct perfdb_err *err)
{
	struct perfdb_op_case c;
	struct cell_ctx cc = { t, r };
#define CELL(name) perfdb_table_get(t, r, perfdb_table_col(t, name))
	PERFDB_TRY(perfdb_engine_build_case(impl->name, CELL("Input Shapes"), CELL("Input Data Types"),
					    CELL("Input Formats"), CELL("Output Shapes"),
					    CELL("Output Data Types"), CELL("Output Formats"), &c, err));
#undef CELL
	case_context(o, &cc, &c);
	c.line = row->line;
	const struct perfdb_opdef *def = c.def;
	if (def->inplace)
		for (size_t i = 0; i < c.nout; i++) {
			int a = def->inplace(&c, i);
			c.out[i].alias_in = a >= 0 && (size_t)a < c.nin && c.in[a].bytes >= c.out[i].bytes ? a + 1 : 0;
		}
	size_t need = perfdb_engine_case_bytes(&c), limit = o->row_max_bytes ? o->row_max_bytes : row_max_bytes();
	if (need > limit)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the row needs %.1f GiB of tensors (limit %.1f GiB, "
				      "60 %% of this machine's memory)", impl->name, (double)need / (1 << 30),
				      (double)limit / (1 << 30));
	/* the operator's own rules first, then the backend's limits */
	int rc = perfdb_case_check(def, impl, &c, err);
	if (def->collective && o->comm)
		rc = agree(o, rc, err);
	if (rc < 0)
		return rc;
	rc = perfdb_engine_alloc_case(pool, &c, o->seed ^ ((uint64_t)row->line << 20), err);
	if (def->collective && o->comm)
		rc = agree(o, rc, err);
	if (rc < 0)
		return rc;
	rc = impl->prepare ? impl->prepare(&c, err) : 0;
	if (def->collective && o->comm)
		rc = agree(o, rc, err);
	if (rc == 0)   /* collective rows: every rank must take the same path, so no per-rank retries */
		rc = time_case_uncontended(o, impl, &c, flushbuf, flushn, def->collective && o->comm ? NULL : pr,
					   row, err);
	if (impl->release)
		impl->release(&c);
	return rc;
}

/* ---- the journal (Decision 7) ----------------------------------------- */

static int row_key(const char *op, const char *table, const struct perfdb_table *t, size_t r,
		   struct perfdb_strbuf *sig, struct perfdb_strbuf *key)
{
#define CELL(name) perfdb_table_get(t, r, perfdb_table_col(t, name))
	struct perfdb_sig_row sr = { CELL("Input Shapes"), CELL("Input Data Types"), CELL("Input Formats"),
				     CELL("Output Shapes"), CELL("Output Data Types"),
				     perfdb_table_col(t, PERFDB_COL_EP_SIZE) >= 0 ? CELL(PERFDB_COL_EP_SIZE) : NULL };
#undef CELL
	if (perfdb_sig_compute(op, &sr, sig) < 0)
		return -PERFDB_ENOMEM;
	perfdb_strbuf_reset(key);
	perfdb_strbuf_addf(key, "%s\t%s", table, sig->buf ? sig->buf : "");
	return key->buf ? 0 : -PERFDB_ENOMEM;
}

/* What a table pass does with a row that is to be measured. */
enum pass {
	PASS_MEASURE,                      /* measure (or resume) and journal */
	PASS_CHILD,                        /* the same, in a child: no progress, no results kept */
	PASS_COLLECT,                      /* the parent after a child: rows from the journal */
};

struct run_ctx {
	const struct perfdb_engine_opts *o;
	struct perfdb_engine_result *res;
	struct journal *jr;
	int jfd;
	struct perfdb_engine_pool *pool;
	uint64_t *flushbuf;
	struct perfdb_probe *probe;        /* NULL: rows are not probed */
	size_t flushn, done, total, measured;
	size_t ordinal;                    /* rows seen over every table: the shard of a row */
	const char *jpath;                 /* this rank's journal */
};

/* One table's rows; crash: why rows missing from the journal failed (PASS_COLLECT). */
static int run_table(struct run_ctx *x, const char *op, const struct perfdb_table *t, enum pass pass,
		     const char *crash, struct perfdb_err *err)
{
	const struct perfdb_engine_opts *o = x->o;
	struct perfdb_engine_result *res = x->res;
	const struct perfdb_backend_i *be = o->backend;
	int sup = be->supports_op(op);   /* asked first (docs/style.md rule 3) */
	const struct perfdb_op_impl *impl = sup ? be->find_op(op) : NULL;
	long cmb = perfdb_table_col(t, PERFDB_COL_MB_DUR), cprof = perfdb_table_col(t, PERFDB_COL_PROF_AVG);
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT, key = PERFDB_STRBUF_INIT;
	char table[4200], why[256];
	snprintf(table, sizeof(table), "%s", t->name ? t->name : op);
	int coll = impl && perfdb_opdef_get(op)->collective && o->comm;
	int rc = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		size_t ord = x->ordinal++;
		int sig_stop = pass != PASS_COLLECT && o->stop && *o->stop;
		if (coll) {
			/* every rank takes every row, or all stop together */
			int v[2] = { res->stopped || sig_stop, sig_stop }, g[2];
			MPI_Allreduce(v, g, 2, MPI_INT, MPI_MAX, *(MPI_Comm *)o->comm);
			if (g[0]) {
				res->stopped = 1;
				res->interrupted |= g[1];
				break;
			}
		} else {
			if (res->stopped)
				break;
			if (o->comm && ord % (size_t)o->nranks != (size_t)o->rank)
				continue;   /* another rank's row */
			if (sig_stop) {
				res->stopped = res->interrupted = 1;
				break;
			}
		}
		struct perfdb_engine_row *row = add_row(res, op, table, r + 2);
		if (row)
			row->rank = o->comm ? o->rank : 0;
		if (!row) {
			rc = -PERFDB_ENOMEM;
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
		} else if (row_skipped(o, impl, t, r, why, sizeof(why))) {
			rc = set_reason(row, PERFDB_ENGINE_SKIPPED, why);
			res->nskipped++;
		} else {
			const struct jentry *je = NULL;
			if (x->jr) {
				if ((rc = row_key(op, table, t, r, &sig, &key)) < 0)
					break;
				if (pass == PASS_COLLECT || o->resume)
					je = journal_find(x->jr, key.buf, pass != PASS_COLLECT);
			}
			if (je) {
				row->samples = je->samples;
				row->mean = je->mean;
				row->median = je->median;
				row->min = je->min;
				row->std = je->std;
				row->cpu_ratio = je->cpu;
				row->probe_gbs = je->probe;
				row->retries = je->retries;
				/* resumed rows count in the reference like measured ones */
				if (x->probe && perfdb_probe_note(x->probe, je->probe) < 0) {
					rc = -PERFDB_ENOMEM;
					break;
				}
				if (je->ok) {
					res->nok++;
					res->nresumed += pass != PASS_COLLECT;
					row->resumed = pass != PASS_COLLECT;
					rc = add_measure(&res->measures, op, t, r, row);
				} else {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, je->reason ? je->reason : "failed");
					res->nfailed++;
					res->stopped = o->fail_fast;
				}
			} else if (pass == PASS_COLLECT && o->stop && *o->stop) {
				/* interrupted: the child stopped before this row, as the in-process run would */
				free(row->op);
				free(row->table);
				res->nrows--;
				res->stopped = res->interrupted = 1;
				break;
			} else if (pass == PASS_COLLECT) {
				rc = set_reason(row, PERFDB_ENGINE_FAILED, crash ? crash : "not measured by the operator process");
				res->nfailed++;
				res->stopped = o->fail_fast;
			} else {
				struct perfdb_err e;
				perfdb_err_clear(&e);
				if (replay_row(o, impl, t, r, x->pool, x->flushbuf, x->flushn, x->probe, row, &e) < 0) {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, e.msg);
					res->nfailed++;
					res->stopped = o->fail_fast;
				} else {
					res->nok++;
					if (pass == PASS_MEASURE)
						rc = add_measure(&res->measures, op, t, r, row);
				}
				if (rc == 0 && x->jfd >= 0 && (rc = journal_append(x->jfd, op, table, sig.buf, row)) < 0) {
					perfdb_err_errno(err, errno, "cannot append to the journal '%s'", x->jpath);
					break;
				}
				if (o->exit_after && ++x->measured >= o->exit_after)
					_exit(75);   /* test hook: die like a killed run */
			}
		}
		if (rc < 0)
			break;
		if (pass != PASS_CHILD && o->progress)
			o->progress(o->ud, ++x->done, x->total, res->nfailed);
	}
	perfdb_strbuf_release(&sig);
	perfdb_strbuf_release(&key);
	if (rc == -PERFDB_ENOMEM)
		perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}

/* Subprocess mode: the table in a child under a watchdog, then its rows from the journal. */
static int run_table_child(struct run_ctx *x, const char *op, const struct perfdb_table *t,
			   struct perfdb_err *err)
{
	const struct perfdb_engine_opts *o = x->o;
	size_t ord0 = x->ordinal;
	double limit = o->op_timeout_s > 0 ? o->op_timeout_s : o->timeout_s * (double)t->nrows + 30.0;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return perfdb_err_errno(err, errno, "cannot fork the process for %s", op);
	if (pid == 0) {
		/* the operator dies with its watchdog: a killed perfdb leaves no
		 * child measuring on, unwatched (and a parent gone before the
		 * prctl took effect is caught by getppid) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		if (o->crash_op && strcmp(o->crash_op, op) == 0) {
			struct rlimit nocore = { 0, 0 };
			setrlimit(RLIMIT_CORE, &nocore);
			signal(SIGSEGV, SIG_DFL);
			raise(SIGSEGV);   /* test hook: the operator crashes */
		}
		struct perfdb_engine_result cres;
		memset(&cres, 0, sizeof(cres));
		struct run_ctx cx = *x;
		cx.res = &cres;
		struct perfdb_err e;
		perfdb_err_clear(&e);
		int rc = run_table(&cx, op, t, PASS_CHILD, NULL, &e);
		_exit(rc < 0 ? 1 : 0);
	}
	double t0 = now_s(CLOCK_MONOTONIC);
	int st = 0, killed = 0, forwarded = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return perfdb_err_errno(err, errno, "cannot wait for the process of %s", op);
		if (!forwarded && o->stop && *o->stop) {
			kill(pid, SIGTERM);   /* the child ends after its current row */
			forwarded = 1;
		}
		if (!killed && now_s(CLOCK_MONOTONIC) - t0 > limit) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	char why[200] = "";
	if (killed)
		snprintf(why, sizeof(why), "operator process killed by the watchdog after %g s", limit);
	else if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "operator process crashed: signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		snprintf(why, sizeof(why), "operator process exited with %d", WEXITSTATUS(st));
	journal_release(x->jr);
	int rc = journal_load(x->jpath, x->jr);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	x->ordinal = ord0;   /* the same rows again, now from the journal */
	return run_table(x, op, t, PASS_COLLECT, why[0] ? why : NULL, err);
}

/* ---- scale-out (MPI) --------------------------------------------------- */

static int table_collective(const struct perfdb_engine_opts *o, const char *op)
{
	const struct perfdb_backend_i *be = o->backend;
	return be->supports_op(op) && be->find_op(op) && perfdb_opdef_get(op)->collective;
}

/* The rows this rank replays: collective tables whole, the rest round-robin. */
static size_t rank_share(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
			 const char *const *names, size_t ntab)
{
	size_t ord = 0, n = 0;
	for (size_t ti = 0; ti < ntab; ti++) {
		int coll = table_collective(o, names[ti]);
		for (size_t r = 0; r < tabs[ti].nrows; r++, ord++)
			n += coll || ord % (size_t)o->nranks == (size_t)o->rank;
	}
	return n;
}

/*
 * Call fn(ctx, path, rank) for every `<journal>.rank<R>` file (rank -1 when
 * the suffix is not a number); stops at the first fn < 0 and returns it.
 */
static int each_rank_journal(const char *journal, int (*fn)(void *ctx, const char *path, long rank), void *ctx)
{
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s.rank*", journal);
	glob_t g;
	int rc = 0;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
			const char *num = g.gl_pathv[i] + strlen(journal) + 5;
			char *end;
			long r = strtol(num, &end, 10);
			rc = fn(ctx, g.gl_pathv[i], *end == '\0' && end != num && r >= 0 ? r : -1);
		}
		globfree(&g);
	}
	return rc;
}

static int load_one(void *ctx, const char *path, long rank)
{
	(void)rank;
	return journal_load(path, ctx);
}

/* Resume: the journal and every rank's journal of an earlier MPI run. */
static int journal_load_all(const char *journal, struct journal *j)
{
	PERFDB_TRY(journal_load(journal, j));
	return each_rank_journal(journal, load_one, j);
}

/* Removes a rank journal unless it is one of the first `keep` ranks; every file is tried. */
struct remove_ctx {
	long keep;
	int rc;
};

static int remove_one(void *ctx, const char *path, long rank)
{
	struct remove_ctx *x = ctx;
	if ((rank < 0 || rank >= x->keep) && unlink(path) < 0 && errno != ENOENT)
		x->rc = -PERFDB_EIO;
	return 0;
}

/*
 * A fresh (not resumed) run: journals of earlier runs must not be found by a
 * later --resume.  One process removes every rank file; under MPI rank 0
 * removes the plain journal and rank files beyond this run's ranks (each
 * rank truncates its own file when it opens it).
 */
static int journal_reset(const struct perfdb_engine_opts *o)
{
	if (o->comm && o->rank != 0)
		return 0;
	if (o->comm && unlink(o->journal) < 0 && errno != ENOENT)
		return -PERFDB_EIO;
	struct remove_ctx x = { o->comm ? o->nranks : 0, 0 };
	each_rank_journal(o->journal, remove_one, &x);
	return x.rc;
}

void perfdb_engine_journal_remove(const char *journal)
{
	unlink(journal);
	struct remove_ctx x = { 0, 0 };
	each_rank_journal(journal, remove_one, &x);
}

/* One result row as a record: fields split by 0x1f, records ended by 0x1e. */
static void pack_row(struct perfdb_strbuf *b, const struct perfdb_engine_row *w)
{
	perfdb_strbuf_addf(b, "%s\x1f%zu\x1f%d\x1f%d\x1f%d\x1f%zu\x1f%.17g\x1f%.17g\x1f%.17g\x1f%.17g\x1f%.17g\x1f"
			   "%.17g\x1f%d\x1f",
			   w->op, w->line, (int)w->status, w->resumed, w->rank, w->samples, w->mean, w->median, w->min,
			   w->std, w->cpu_ratio, w->probe_gbs, w->retries);
	for (const char *q = w->reason ? w->reason : ""; *q; q++)
		perfdb_strbuf_addch(b, *q == '\x1f' || *q == '\x1e' ? ' ' : *q);
	perfdb_strbuf_addch(b, '\x1e');
}

struct packed {
	size_t table, line;
	const char *rec;
};

static int packed_cmp(const void *a, const void *b)
{
	const struct packed *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Every rank's rows to rank 0, which rebuilds the run's result in table and
 * line order (collective rows once, from rank 0 itself).  A failure on any
 * rank fails the run on every rank.
 */
static int gather_rows(const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
		       const char *const *names, size_t ntab, struct perfdb_engine_result *res, int rc,
		       struct perfdb_err *err)
{
	MPI_Comm comm = *(MPI_Comm *)o->comm;
	int flags[3] = { rc < 0 ? o->rank + 1 : 0, res->stopped, res->interrupted }, g[3];
	MPI_Allreduce(flags, g, 3, MPI_INT, MPI_MAX, comm);
	if (g[0]) {
		if (rc < 0)
			return rc;
		return perfdb_err_set(err, PERFDB_EIO, "rank %d of the run failed (see its message)", g[0] - 1);
	}
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < res->nrows; i++) {
		const struct perfdb_engine_row *w = &res->rows[i];
		if (o->rank != 0 && table_collective(o, w->op))
			continue;   /* rank 0 has the same row */
		pack_row(&b, w);
	}
	int mylen = (int)b.len, *lens = NULL, *offs = NULL;
	char *all = NULL;
	if (o->rank == 0) {
		lens = calloc((size_t)o->nranks, sizeof(int));
		offs = calloc((size_t)o->nranks, sizeof(int));
	}
	MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
	size_t tot = 0;
	if (o->rank == 0 && lens && offs) {
		for (int r = 0; r < o->nranks; r++) {
			offs[r] = (int)tot;
			tot += (size_t)lens[r];
		}
		all = malloc(tot + 1);
	}
	MPI_Gatherv(b.buf ? b.buf : "", mylen, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, comm);
	perfdb_strbuf_release(&b);
	free(lens);
	free(offs);
	if (o->rank != 0) {
		perfdb_engine_result_release(res);
		res->stopped = g[1];
		res->interrupted = g[2];
		return 0;
	}
	if (!all)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	all[tot] = '\0';
	/* split into records, order them, rebuild the result */
	size_t nrec = 0;
	for (size_t i = 0; i < tot; i++)
		nrec += all[i] == '\x1e';
	struct packed *pk = calloc(nrec ? nrec : 1, sizeof(*pk));
	if (!pk) {
		free(all);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (char *p = all; k < nrec; k++) {
		char *end = strchr(p, '\x1e');
		*end = '\0';
		pk[k].rec = p;
		char *f = strchr(p, '\x1f');
		*f = '\0';
		pk[k].table = ntab;
		for (size_t ti = 0; ti < ntab; ti++)
			if (strcmp(names[ti], p) == 0)
				pk[k].table = ti;
		pk[k].line = (size_t)strtoull(f + 1, NULL, 10);
		p = end + 1;
	}
	qsort(pk, nrec, sizeof(*pk), packed_cmp);
	perfdb_engine_result_release(res);
	res->stopped = g[1];
	res->interrupted = g[2];
	rc = 0;
	for (k = 0; k < nrec && rc == 0; k++) {
		if (pk[k].table >= ntab)
			continue;
		const char *op = names[pk[k].table];
		struct perfdb_engine_row *w = add_row(res, op, tabs[pk[k].table].name, pk[k].line);
		if (!w) {
			rc = -PERFDB_ENOMEM;
			break;
		}
		const char *f = pk[k].rec + strlen(pk[k].rec) + 1;
		char *e;
		strtoull(f, &e, 10);                               /* line, known */
		w->status = (enum perfdb_engine_status)strtol(e + 1, &e, 10);
		w->resumed = (int)strtol(e + 1, &e, 10);
		res->nresumed += (size_t)w->resumed;
		w->rank = (int)strtol(e + 1, &e, 10);
		w->samples = (size_t)strtoull(e + 1, &e, 10);
		w->mean = strtod(e + 1, &e);
		w->median = strtod(e + 1, &e);
		w->min = strtod(e + 1, &e);
		w->std = strtod(e + 1, &e);
		w->cpu_ratio = strtod(e + 1, &e);
		w->probe_gbs = strtod(e + 1, &e);
		w->retries = (int)strtol(e + 1, &e, 10);
		if (w->status != PERFDB_ENGINE_OK && !(w->reason = strdup(e + 1)))
			rc = -PERFDB_ENOMEM;
		if (w->status == PERFDB_ENGINE_OK) {
			res->nok++;
			if (rc == 0)
				rc = add_measure(&res->measures, op, &tabs[pk[k].table], pk[k].line - 2, w);
		} else if (w->status == PERFDB_ENGINE_FAILED) {
			res->nfailed++;
		} else {
			res->nskipped++;
		}
	}
	free(pk);
	free(all);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
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
		/* the table writeback will update: with --ops found anywhere below the database (rglob) */
		struct perfdb_strbuf p = PERFDB_STRBUF_INIT;
		int found = perfdb_replay_table_path(o->dbdir, op, o->ops != NULL, &p);
		if (found <= 0) {
			perfdb_strbuf_release(&p);
			if (found < 0) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				goto out;
			}
			continue;
		}
		perfdb_table_init(&tabs[ntab]);
		if ((rc = perfdb_table_load(&tabs[ntab], p.buf, err)) < 0) {
			perfdb_table_release(&tabs[ntab]);
			perfdb_strbuf_release(&p);
			goto out;
		}
		if (perfdb_table_col(&tabs[ntab], "Input Shapes") < 0) {
			perfdb_table_release(&tabs[ntab]);
			rc = perfdb_err_set(err, PERFDB_ESCHEMA, "%s: no 'Input Shapes' column", p.buf);
			perfdb_strbuf_release(&p);
			goto out;
		}
		perfdb_strbuf_release(&p);
		names[ntab] = op;
		total += tabs[ntab].nrows;
		ntab++;
	}
	if (be->init && (rc = be->init(o->threads, err)) < 0)
		goto out;
	if (o->comm)
		total = rank_share(o, tabs, names, ntab);
	size_t flushn = 2 * LLC_BYTES / sizeof(uint64_t);
	uint64_t *flushbuf = o->flush ? calloc(flushn, sizeof(uint64_t)) : NULL;
	struct perfdb_engine_pool pool = { 0 };
	struct journal jr = { 0 };
	char jpath[4200] = "";
	struct perfdb_probe probe = { 0 };
	struct run_ctx x = { .o = o, .res = res, .jr = NULL, .jfd = -1, .pool = &pool,
			     .flushbuf = flushbuf, .flushn = flushn, .total = total, .jpath = jpath };
	/* device-timed backends measure the device, not this host's memory: no probe */
	if (!o->no_probe && !be->time_run) {
		if ((rc = perfdb_probe_init(&probe, o->probe_script_n ? 0 : PERFDB_PROBE_BYTES, err)) < 0)
			goto run_out;
		probe.script = o->probe_script;
		probe.nscript = o->probe_script_n;
		x.probe = &probe;
	}
	if (o->journal) {
		if (o->comm)
			snprintf(jpath, sizeof(jpath), "%s.rank%d", o->journal, o->rank);
		else
			snprintf(jpath, sizeof(jpath), "%s", o->journal);
		if (o->resume)
			rc = journal_load_all(o->journal, &jr);
		else
			rc = journal_reset(o);
		if (rc < 0) {
			perfdb_err_errno(err, errno, "cannot prepare the journal '%s'", o->journal);
			goto run_out;
		}
		x.jr = &jr;
		x.jfd = open(jpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (o->resume ? 0 : O_TRUNC), 0644);
		if (x.jfd < 0) {
			rc = perfdb_err_errno(err, errno, "cannot open the journal '%s'", jpath);
			goto run_out;
		}
	}
	int frc = 0;
	struct perfdb_err ferr;
	perfdb_err_clear(&ferr);
	for (size_t ti = 0; ti < ntab; ti++) {
		/* under MPI a stopped rank still walks the tables: collective rows need every rank */
		if (res->stopped && !o->comm)
			break;
		int coll = o->comm && table_collective(o, names[ti]);
		if (o->subprocess && x.jfd >= 0 && !coll)
			rc = run_table_child(&x, names[ti], &tabs[ti], err);
		else
			rc = run_table(&x, names[ti], &tabs[ti], PASS_MEASURE, NULL, err);
		if (rc < 0) {
			if (!o->comm)
				break;
			if (!frc) {
				frc = rc;
				ferr = *err;
			}
			res->stopped = 1;
			rc = 0;
		}
		if (o->subprocess && o->stop && *o->stop)
			res->stopped = res->interrupted = 1;
	}
	if (frc) {
		rc = frc;
		*err = ferr;
	}
	if (o->comm) {
		if (x.jfd >= 0) {
			close(x.jfd);
			x.jfd = -1;
		}
		rc = gather_rows(o, tabs, names, ntab, res, rc, err);
	}
run_out:
	perfdb_probe_release(&probe);
	if (x.jfd >= 0)
		close(x.jfd);
	journal_release(&jr);
	perfdb_engine_pool_release(&pool);
	free(flushbuf);
out:
	for (size_t i = 0; i < ntab; i++)
		perfdb_table_release(&tabs[i]);
	free(tabs);
	free(names);
	return rc;
}
