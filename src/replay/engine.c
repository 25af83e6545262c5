/*
 * The replay engine: rows -> tensors -> timed runs -> measurements.  See
 * engine.h for the method and spec/replay.md §4 and Decisions 2, 3, 6 for
 * the rules followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "perfdb/signature.h"
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

/* ---- the journal (Decision 7) ----------------------------------------- */

struct jentry {
	char *key;                         /* table path '\t' signature */
	int ok;
	size_t samples;
	double mean, median, min, std, cpu;
	char *reason;
};

struct journal {
	struct jentry *v;
	size_t n, cap;
};

static void journal_release(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->v[i].key);
		free(j->v[i].reason);
	}
	free(j->v);
	memset(j, 0, sizeof(*j));
}

static void json_str(struct perfdb_strbuf *b, const char *s)
{
	perfdb_strbuf_addch(b, '"');
	for (const unsigned char *q = (const unsigned char *)(s ? s : ""); *q; q++) {
		if (*q == '"' || *q == '\\')
			perfdb_strbuf_addf(b, "\\%c", *q);
		else if (*q < 0x20)
			perfdb_strbuf_addf(b, "\\u%04x", *q);
		else
			perfdb_strbuf_addch(b, (char)*q);
	}
	perfdb_strbuf_addch(b, '"');
}

/* The value after "key": in a line written by journal_append, or NULL. */
static const char *jfield(const char *line, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (const char *p = strstr(line, pat); p; p = strstr(p + 1, pat))
		if (p > line && (p[-1] == '{' || p[-1] == ','))
			return p + strlen(pat);
	return NULL;
}

/* A JSON string at p (as json_str writes it), unescaped; NULL when malformed. */
static char *jstring(const char *p)
{
	if (!p || *p != '"')
		return NULL;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				unsigned v = 0;
				if (sscanf(p + 1, "%4x", &v) != 1) {
					perfdb_strbuf_release(&b);
					return NULL;
				}
				perfdb_strbuf_addch(&b, (char)v);
				p += 4;
				continue;
			}
			if (!*p)
				break;
		}
		perfdb_strbuf_addch(&b, *p);
	}
	if (*p != '"') {
		perfdb_strbuf_release(&b);
		return NULL;
	}
	if (!b.buf)
		return strdup("");
	return perfdb_strbuf_detach(&b, NULL);
}

/* Read the journal (a missing file is empty; a torn last line is ignored). */
static int journal_load(const char *path, struct journal *j)
{
	memset(j, 0, sizeof(*j));
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!strchr(line, '\n'))
			break;   /* torn: the process died while writing it */
		char *table = jstring(jfield(line, "table")), *sig = jstring(jfield(line, "signature"));
		char *st = jstring(jfield(line, "status"));
		const char *n = jfield(line, "samples");
		if (!table || !sig || !st || !n) {
			free(table);
			free(sig);
			free(st);
			continue;
		}
		if (j->n == j->cap) {
			size_t nc = j->cap ? 2 * j->cap : 64;
			void *p = realloc(j->v, nc * sizeof(*j->v));
			if (!p) {
				free(table);
				free(sig);
				free(st);
				rc = -PERFDB_ENOMEM;
				break;
			}
			j->v = p;
			j->cap = nc;
		}
		struct jentry *e = &j->v[j->n];
		memset(e, 0, sizeof(*e));
		struct perfdb_strbuf k = PERFDB_STRBUF_INIT;
		perfdb_strbuf_addf(&k, "%s\t%s", table, sig);
		e->key = perfdb_strbuf_detach(&k, NULL);
		e->ok = strcmp(st, "ok") == 0;
		e->samples = (size_t)strtoull(n, NULL, 10);
		const char *v;
		e->mean = (v = jfield(line, "mean")) ? strtod(v, NULL) : 0;
		e->median = (v = jfield(line, "median")) ? strtod(v, NULL) : 0;
		e->min = (v = jfield(line, "min")) ? strtod(v, NULL) : 0;
		e->std = (v = jfield(line, "std")) ? strtod(v, NULL) : 0;
		e->cpu = (v = jfield(line, "cpu_ratio")) ? strtod(v, NULL) : 0;
		e->reason = jstring(jfield(line, "reason"));
		free(table);
		free(sig);
		free(st);
		j->n++;
	}
	free(line);
	fclose(f);
	return rc;
}

/* The last entry for key (ok entries only when ok_only), or NULL. */
static const struct jentry *journal_find(const struct journal *j, const char *key, int ok_only)
{
	for (size_t i = j->n; i-- > 0;)
		if (strcmp(j->v[i].key, key) == 0 && (j->v[i].ok || !ok_only))
			return &j->v[i];
	return NULL;
}

static int journal_append(int fd, const char *op, const char *table, const char *sig,
			  const struct perfdb_engine_row *row)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addstr(&b, "{\"op\":");
	json_str(&b, op);
	perfdb_strbuf_addstr(&b, ",\"table\":");
	json_str(&b, table);
	perfdb_strbuf_addf(&b, ",\"line\":%zu,\"signature\":", row->line);
	json_str(&b, sig);
	perfdb_strbuf_addf(&b, ",\"status\":\"%s\",\"samples\":%zu,\"mean\":%.17g,\"median\":%.17g,"
			   "\"min\":%.17g,\"std\":%.17g,\"cpu_ratio\":%.17g,\"reason\":",
			   row->status == PERFDB_ENGINE_OK ? "ok" : "failed", row->samples, row->mean,
			   row->median, row->min, row->std, row->cpu_ratio);
	json_str(&b, row->reason);
	perfdb_strbuf_addstr(&b, "}\n");
	int rc = 0;
	if (!b.buf) {
		rc = -PERFDB_ENOMEM;
	} else {
		size_t off = 0;
		while (off < b.len) {
			ssize_t w = write(fd, b.buf + off, b.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -PERFDB_EIO;
				break;
			}
			off += (size_t)w;
		}
		if (rc == 0 && fsync(fd) < 0)
			rc = -PERFDB_EIO;
	}
	perfdb_strbuf_release(&b);
	return rc;
}

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
	size_t flushn, done, total, measured;
};

/* One table's rows; crash: why rows missing from the journal failed (PASS_COLLECT). */
static int run_table(struct run_ctx *x, const char *op, const struct perfdb_table *t, enum pass pass,
		     const char *crash, struct perfdb_err *err)
{
	const struct perfdb_engine_opts *o = x->o;
	struct perfdb_engine_result *res = x->res;
	const struct perfdb_backend_i *be = o->backend;
	int sup = be->supports_op(op);   /* asked first (STYLE.md rule 3) */
	const struct perfdb_op_impl *impl = sup ? be->find_op(op) : NULL;
	long cmb = perfdb_table_col(t, PERFDB_COL_MB_DUR), cprof = perfdb_table_col(t, PERFDB_COL_PROF_AVG);
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT, key = PERFDB_STRBUF_INIT;
	char table[4200];
	snprintf(table, sizeof(table), "%s/%s.csv", o->dbdir, op);
	int rc = 0;
	for (size_t r = 0; r < t->nrows && !res->stopped; r++) {
		if (pass != PASS_COLLECT && o->stop && *o->stop) {
			res->stopped = res->interrupted = 1;
			break;
		}
		struct perfdb_engine_row *row = add_row(res, op, r + 2);
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
				if (je->ok) {
					res->nok++;
					res->nresumed += pass != PASS_COLLECT;
					rc = add_measure(&res->measures, op, t, r, row);
				} else {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, je->reason ? je->reason : "failed");
					res->nfailed++;
					res->stopped = o->fail_fast;
				}
			} else if (pass == PASS_COLLECT && o->stop && *o->stop) {
				/* interrupted: the child stopped before this row, as the in-process run would */
				free(row->op);
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
				if (replay_row(o, impl, t, r, x->pool, x->flushbuf, x->flushn, row, &e) < 0) {
					rc = set_reason(row, PERFDB_ENGINE_FAILED, e.msg);
					res->nfailed++;
					res->stopped = o->fail_fast;
				} else {
					res->nok++;
					if (pass == PASS_MEASURE)
						rc = add_measure(&res->measures, op, t, r, row);
				}
				if (rc == 0 && x->jfd >= 0 && (rc = journal_append(x->jfd, op, table, sig.buf, row)) < 0) {
					perfdb_err_errno(err, errno, "cannot append to the journal '%s'", o->journal);
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
	double limit = o->op_timeout_s > 0 ? o->op_timeout_s : o->timeout_s * (double)t->nrows + 30.0;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return perfdb_err_errno(err, errno, "cannot fork the process for %s", op);
	if (pid == 0) {
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
	int rc = journal_load(o->journal, x->jr);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return run_table(x, op, t, PASS_COLLECT, why[0] ? why : NULL, err);
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
	struct journal jr = { 0 };
	struct run_ctx x = { .o = o, .res = res, .jr = NULL, .jfd = -1, .pool = &pool,
			     .flushbuf = flushbuf, .flushn = flushn, .total = total };
	if (o->journal) {
		if (o->resume && (rc = journal_load(o->journal, &jr)) < 0) {
			perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto run_out;
		}
		x.jr = &jr;
		x.jfd = open(o->journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (o->resume ? 0 : O_TRUNC), 0644);
		if (x.jfd < 0) {
			rc = perfdb_err_errno(err, errno, "cannot open the journal '%s'", o->journal);
			goto run_out;
		}
	}
	for (size_t ti = 0; ti < ntab && !res->stopped; ti++) {
		if (o->subprocess && x.jfd >= 0)
			rc = run_table_child(&x, names[ti], &tabs[ti], err);
		else
			rc = run_table(&x, names[ti], &tabs[ti], PASS_MEASURE, NULL, err);
		if (rc < 0)
			break;
		if (o->subprocess && o->stop && *o->stop)
			res->stopped = res->interrupted = 1;
	}
run_out:
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
