/*
 * Streaming hash aggregation of kernel rows (docs/spec/parse.md §2-§3 with
 * Decisions 2, 4 and 7).
 *
 * Key: (Type, Input Shapes, Input Data Types, Input Formats, Output Shapes),
 * the cells verbatim after trimming.  Per key the aggregator keeps the
 * first non-empty OP State, Accelerator Core, Output Data Types and Output
 * Formats, a compensated sum, Welford's running variance, min and max of the
 * valid durations, per-counter sums, and the samples themselves in a sample
 * store (bounded memory, exact medians).  Memory therefore grows with the
 * number of keys, not rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse/parse.h"
#include "parse_internal.h"
#include "perfdb/samples.h"
#include "perfdb/stats.h"

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

struct slot {
	uint64_t hash;
	uint32_t group;     /* index + 1; 0 = empty */
};

struct perfdb_agg {
	struct perfdb_agg_group *g;
	char **keys;        /* full key per group (for lookups) */
	size_t *keylen;
	size_t n, cap;
	struct slot *tab;
	size_t tabcap;      /* power of two */
	struct arena_block *arena;
	struct perfdb_samples *samples;
	struct perfdb_agg_totals tot;
	char *scratch;
	size_t scratch_cap;
	struct perfdb_strbuf tname;   /* the sanitised type of the current row */
	int finished;
};

static char empty[1];

static void *arena_alloc(struct perfdb_agg *a, size_t n)
{
	struct arena_block *b = a->arena;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->arena;
		b->used = 0;
		b->cap = cap;
		a->arena = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static const char *arena_str(struct perfdb_agg *a, const char *s, size_t len)
{
	if (!len)
		return empty;
	char *p = arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

int perfdb_agg_new(struct perfdb_agg **out, size_t sample_limit, struct perfdb_err *err)
{
	struct perfdb_agg *a = calloc(1, sizeof(*a));
	if (!a)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	perfdb_strbuf_init(&a->tname);
	a->tabcap = 1024;
	a->tab = calloc(a->tabcap, sizeof(*a->tab));
	if (!a->tab) {
		free(a);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	int rc = perfdb_samples_new(&a->samples, sample_limit, NULL, err);
	if (rc < 0) {
		free(a->tab);
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void perfdb_agg_free(struct perfdb_agg *a)
{
	if (!a)
		return;
	struct arena_block *b = a->arena;
	while (b) {
		struct arena_block *n = b->next;
		free(b);
		b = n;
	}
	perfdb_samples_free(a->samples);
	for (size_t i = 0; i < a->n; i++)
		free(a->g[i].shares);
	free(a->g);
	free(a->keys);
	free(a->keylen);
	free(a->tab);
	free(a->scratch);
	perfdb_strbuf_release(&a->tname);
	free(a);
}

size_t perfdb_agg_ngroups(const struct perfdb_agg *a)
{
	return a->n;
}

const struct perfdb_agg_group *perfdb_agg_group(const struct perfdb_agg *a, size_t i)
{
	return &a->g[i];
}

const struct perfdb_agg_totals *perfdb_agg_totals(const struct perfdb_agg *a)
{
	return &a->tot;
}

/* 8 bytes at a time; keys are 20-500 bytes of shape text. */
static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0x243F6A8885A308D3ull ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0x9E3779B97F4A7C15ull;
	h ^= h >> 32;
	return h;
}

static int grow_table(struct perfdb_agg *a)
{
	size_t ncap = a->tabcap * 2;
	struct slot *nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < a->tabcap; i++) {
		if (!a->tab[i].group)
			continue;
		size_t j = a->tab[i].hash & (ncap - 1);
		while (nt[j].group)
			j = (j + 1) & (ncap - 1);
		nt[j] = a->tab[i];
	}
	free(a->tab);
	a->tab = nt;
	a->tabcap = ncap;
	return 0;
}

/*
 * Find or create the group of key (type, ins, ind, inf, outs).  The key
 * bytes are assembled in a scratch buffer: 5 fields joined by 0x1f, a byte
 * that cannot appear in a CSV cell we keep (it is a control character).
 */
static long find_group(struct perfdb_agg *a, const struct perfdb_span f[5],
		       struct perfdb_err *err)
{
	size_t len = 4;
	for (int i = 0; i < 5; i++)
		len += f[i].len;
	if (len + 1 > a->scratch_cap) {
		size_t cap = len + 256;
		char *ns = realloc(a->scratch, cap);
		if (!ns)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		a->scratch = ns;
		a->scratch_cap = cap;
	}
	char *w = a->scratch;
	size_t flen[5];
	for (int i = 0; i < 5; i++) {
		if (i)
			*w++ = '\x1f';
		/* formats in their key form (FORMAT_ND = ND); the group keeps the first spelling */
		flen[i] = i == 3 ? perfdb_format_key(f[i].p, f[i].len, w) : f[i].len;
		if (i != 3 && f[i].len)   /* an empty cell may be a NULL span */
			memcpy(w, f[i].p, f[i].len);
		w += flen[i];
	}
	len = (size_t)(w - a->scratch);
	uint64_t h = hash_bytes(a->scratch, len);
	size_t j = h & (a->tabcap - 1);
	while (a->tab[j].group) {
		uint32_t gi = a->tab[j].group - 1;
		if (a->tab[j].hash == h && a->keylen[gi] == len &&
		    memcmp(a->keys[gi], a->scratch, len) == 0)
			return gi;
		j = (j + 1) & (a->tabcap - 1);
	}
	/* new group */
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct perfdb_agg_group *ng = realloc(a->g, cap * sizeof(*ng));
		if (!ng)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		a->g = ng;
		char **nk = realloc(a->keys, cap * sizeof(*nk));
		if (!nk)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		a->keys = nk;
		size_t *nl = realloc(a->keylen, cap * sizeof(*nl));
		if (!nl)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		a->keylen = nl;
		a->cap = cap;
	}
	if (a->n >= UINT32_MAX - 1)
		return perfdb_err_set(err, PERFDB_ENOMEM, "too many distinct kernel keys");
	char *key = arena_alloc(a, len + 1);
	if (!key)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	memcpy(key, a->scratch, len);
	key[len] = '\0';
	struct perfdb_agg_group *g = &a->g[a->n];
	memset(g, 0, sizeof(*g));
	/* the fields are views into the stored key, split at the separators */
	const char **dst[5] = { &g->type, &g->in_shapes, &g->in_dtypes, &g->in_formats, &g->out_shapes };
	char *p = key;
	for (int i = 0; i < 5; i++) {
		const char *s = i == 3 ? arena_str(a, f[i].p, f[i].len) : arena_str(a, p, f[i].len);
		if (!s)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		*dst[i] = s;
		p += flen[i] + 1;
	}
	g->op_state = g->accel_core = g->out_dtypes = g->out_formats = g->kernels = g->trace_name = empty;
	g->in_strides = empty;
	g->min = INFINITY;
	g->max = -INFINITY;
	a->keys[a->n] = key;
	a->keylen[a->n] = len;
	a->tab[j].hash = h;
	a->tab[j].group = (uint32_t)a->n + 1;
	a->n++;
	if (a->n * 2 > a->tabcap && grow_table(a) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return (long)(a->n - 1);
}

static int set_first(struct perfdb_agg *a, const char **field, struct perfdb_span v)
{
	if ((*field)[0] || !v.len)
		return 0;
	const char *s = arena_str(a, v.p, v.len);
	if (!s)
		return -PERFDB_ENOMEM;
	*field = s;
	return 0;
}

const char *perfdb_parse_normalize_type(const char *type, size_t len, size_t *out_len)
{
	static const struct { const char *from, *to; } renames[] = {
		{ "split_qkv_rmsnorm_rope_kernel_0", "split_qkv_rmsnorm_rope_kernel" },
		{ "muls_add_kernel_1", "muls_add_kernel" },
	};
	for (size_t i = 0; i < sizeof(renames) / sizeof(renames[0]); i++) {
		if (strlen(renames[i].from) == len && memcmp(type, renames[i].from, len) == 0) {
			*out_len = strlen(renames[i].to);
			return renames[i].to;
		}
	}
	*out_len = len;
	return type;
}

int perfdb_parse_is_na(struct perfdb_span c)
{
	const char *p = c.p, *e = c.p + c.len;
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	while (p < e && *p == '"')
		p++;
	while (e > p && e[-1] == '"')
		e--;
	return e - p == 3 && strncasecmp(p, "N/A", 3) == 0;
}

/* Neumaier's compensated addition. */
static void nsum(double *sum, double *comp, double x)
{
	double t = *sum + x;
	if (fabs(*sum) >= fabs(x))
		*comp += (*sum - t) + x;
	else
		*comp += (x - t) + *sum;
	*sum = t;
}

static int is_na_word(struct perfdb_span v)
{
	return v.len == 3 && (v.p[0] | 0x20) == 'n' && v.p[1] == '/' && (v.p[2] | 0x20) == 'a';
}

/* Bytes a file name cannot hold (docs/spec/parse.md §4): `<>:"/\|?*` and 0x00-0x1F. */
static const unsigned char bad_name_byte[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['<'] = 1, ['>'] = 1, [':'] = 1,
	['"'] = 1, ['/'] = 1, ['\\'] = 1, ['|'] = 1, ['?'] = 1, ['*'] = 1,
};

/* Add us to the share of name in g (kernel names per op key are few: a
 * linear list). */
static int add_share(struct perfdb_agg *a, struct perfdb_agg_group *g, const char *name,
		     size_t len, double us)
{
	for (size_t i = 0; i < g->nshares; i++)
		if (strlen(g->shares[i].name) == len && memcmp(g->shares[i].name, name, len) == 0) {
			g->shares[i].us += us;
			return 0;
		}
	if (g->nshares == g->capshares) {
		size_t cap = g->capshares ? g->capshares * 2 : 4;
		struct perfdb_agg_share *ns = realloc(g->shares, cap * sizeof(*ns));
		if (!ns)
			return -PERFDB_ENOMEM;
		g->shares = ns;
		g->capshares = cap;
	}
	const char *s = len ? arena_str(a, name, len) : empty;
	if (!s)
		return -PERFDB_ENOMEM;
	g->shares[g->nshares++] = (struct perfdb_agg_share){ s, us };
	return 0;
}

static int cmp_share(const void *pa, const void *pb)
{
	const struct perfdb_agg_share *x = pa, *y = pb;
	if (x->us != y->us)
		return x->us > y->us ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The Kernels cell: `<share>:<name>` by falling time, `;`-joined, the
 * share of the key's kernel time with 4 decimals; a `;` in a name is `_`. */
static int format_kernels(struct perfdb_agg *a, struct perfdb_agg_group *g)
{
	if (!g->nshares)
		return 0;
	qsort(g->shares, g->nshares, sizeof(*g->shares), cmp_share);
	double tot = 0;
	for (size_t i = 0; i < g->nshares; i++)
		tot += g->shares[i].us;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < g->nshares && rc == 0; i++) {
		double f = tot > 0 ? g->shares[i].us / tot : 1.0 / (double)g->nshares;
		rc = perfdb_strbuf_addf(&sb, "%s%.4f:", i ? ";" : "", f);
		for (const char *p = g->shares[i].name; *p && rc == 0; p++)
			rc = perfdb_strbuf_addch(&sb, *p == ';' ? '_' : *p);
	}
	if (rc == 0) {
		const char *s = arena_str(a, sb.buf, sb.len);
		if (!s)
			rc = -PERFDB_ENOMEM;
		else
			g->kernels = s;
	}
	perfdb_strbuf_release(&sb);
	return rc;
}

/* What a row's cells other than its numbers decide: dropped, or its group
 * (the two drops lie below every -PERFDB_E* code). */
enum { KEY_NA = -1000, KEY_NO_TYPE = -1001 };

static long row_key(struct perfdb_agg *a, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	if (perfdb_parse_is_na(row->in_shapes) || perfdb_parse_is_na(row->out_shapes))
		return KEY_NA;
	struct perfdb_span f[5];
	size_t tl;
	const char *t = perfdb_parse_normalize_type(row->type.p, row->type.len, &tl);
	if (!tl)
		return KEY_NO_TYPE;
	/*
	 * Types are keyed by their table's file name: `A/B` and `A_B` both go to
	 * A_B.csv, which has no Type column, so their launches are one kernel
	 * there (the reference let the later file overwrite the earlier).
	 */
	/* whole: kernel names run past 4 KiB, and the file name hashes all of it */
	perfdb_strbuf_reset(&a->tname);
	if (perfdb_strbuf_grow(&a->tname, tl) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < tl; i++) {
		unsigned char c = (unsigned char)t[i];
		a->tname.buf[i] = bad_name_byte[c] ? '_' : (char)c;
	}
	a->tname.len = tl;
	a->tname.buf[tl] = '\0';
	f[0].p = a->tname.buf;
	f[0].len = tl;
	f[1] = row->in_shapes;
	f[2] = row->in_dtypes;
	f[3] = row->in_formats;
	f[4] = row->out_shapes;
	long gi = find_group(a, f, err);
	if (gi < 0)
		return gi;
	struct perfdb_agg_group *g = &a->g[gi];
	if (set_first(a, &g->op_state, row->op_state) < 0 ||
	    set_first(a, &g->accel_core, row->accel_core) < 0 ||
	    set_first(a, &g->out_dtypes, row->out_dtypes) < 0 ||
	    set_first(a, &g->out_formats, row->out_formats) < 0 ||
	    set_first(a, &g->trace_name, row->trace_name) < 0 ||
	    set_first(a, &g->in_strides, row->in_strides) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return gi;
}

/* A row's duration and counters, into group gi. */
static int row_numbers(struct perfdb_agg *a, long gi, const struct perfdb_kernel_row *row,
		       struct perfdb_err *err)
{
	struct perfdb_agg_group *g = &a->g[gi];
	double d;
	if (perfdb_stats_parse_double(row->duration.p, row->duration.len, &d) == 0 &&
	    isfinite(d) && d >= 0) {
		g->n++;
		nsum(&g->sum, &g->comp, d);
		double delta = d - g->wmean;
		g->wmean += delta / (double)g->n;
		g->m2 += delta * (d - g->wmean);
		if (d < g->min)
			g->min = d;
		if (d > g->max)
			g->max = d;
		PERFDB_TRY(perfdb_samples_add(a->samples, (uint32_t)gi, d, err));
		for (size_t k = 0; k < row->nshares; k++)
			if (add_share(a, g, row->shares[k].name.p, row->shares[k].name.len,
				      row->shares[k].us) < 0)
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	} else {
		g->n_invalid++;
		a->tot.invalid_durations++;
	}
	for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
		struct perfdb_span v = row->counters[c];
		if (!v.len || is_na_word(v))
			continue;
		double x;
		if (perfdb_stats_parse_double(v.p, v.len, &x) == 0 && isfinite(x)) {
			g->cn[c]++;
			nsum(&g->csum[c], &g->ccomp[c], x);
		} else {
			a->tot.invalid_counters++;
		}
	}
	return 0;
}

/* One group's count of the rows the key dropped. */
static int dropped(struct perfdb_agg *a, long why)
{
	if (why == KEY_NA)
		a->tot.dropped_na++;
	else
		a->tot.empty_type++;
	return 0;
}

static int agg_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct perfdb_agg *a = ctx;
	a->tot.rows++;
	long gi = row_key(a, row, err);
	if (gi == KEY_NA || gi == KEY_NO_TYPE)
		return dropped(a, gi);
	return gi < 0 ? (int)gi : row_numbers(a, gi, row, err);
}

/*
 * memo: 0 before the combination's first row, then its group + 3, or
 * 1 / 2 when its cells drop it.  set_first() has nothing more to do for
 * the same cells, so a known group goes straight to the numbers.
 */
static int agg_row_memo(void *ctx, const struct perfdb_kernel_row *row, uint32_t *memo,
			struct perfdb_err *err)
{
	struct perfdb_agg *a = ctx;
	a->tot.rows++;
	if (*memo == 1 || *memo == 2)
		return dropped(a, *memo == 1 ? KEY_NA : KEY_NO_TYPE);
	if (*memo)
		return row_numbers(a, (long)*memo - 3, row, err);
	long gi = row_key(a, row, err);
	if (gi == KEY_NA || gi == KEY_NO_TYPE) {
		*memo = gi == KEY_NA ? 1 : 2;
		return dropped(a, gi);
	}
	if (gi < 0)
		return (int)gi;
	if ((uint64_t)gi + 3 <= UINT32_MAX)
		*memo = (uint32_t)gi + 3;
	return row_numbers(a, gi, row, err);
}

struct perfdb_row_sink perfdb_agg_sink(struct perfdb_agg *a)
{
	struct perfdb_row_sink s = { .row = agg_row, .ctx = a, .row_memo = agg_row_memo };
	return s;
}

struct remap {
	struct perfdb_agg *into;
	const uint32_t *map;
};

static int add_mapped(void *ctx, uint32_t key, double v, struct perfdb_err *err)
{
	struct remap *m = ctx;
	return perfdb_samples_add(m->into->samples, m->map[key], v, err);
}

int perfdb_agg_merge(struct perfdb_agg *into, const struct perfdb_agg *from,
		     struct perfdb_err *err)
{
	uint32_t *map = malloc((from->n ? from->n : 1) * sizeof(*map));
	if (!map)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < from->n && rc == 0; i++) {
		const struct perfdb_agg_group *s = &from->g[i];
		struct perfdb_span f[5] = {
			{ s->type, strlen(s->type) }, { s->in_shapes, strlen(s->in_shapes) },
			{ s->in_dtypes, strlen(s->in_dtypes) }, { s->in_formats, strlen(s->in_formats) },
			{ s->out_shapes, strlen(s->out_shapes) },
		};
		long gi = find_group(into, f, err);
		if (gi < 0) {
			rc = (int)gi;
			break;
		}
		map[i] = (uint32_t)gi;
		struct perfdb_agg_group *d = &into->g[gi];
		struct perfdb_span v;
#define FIRST(field)                                                 \
		v.p = s->field;                                      \
		v.len = strlen(s->field);                            \
		if (set_first(into, &d->field, v) < 0)               \
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		FIRST(op_state)
		FIRST(accel_core)
		FIRST(out_dtypes)
		FIRST(out_formats)
		FIRST(trace_name)
		FIRST(in_strides)
#undef FIRST
		/* Chan et al.: combine two Welford states */
		if (s->n) {
			size_t n = d->n + s->n;
			double delta = s->wmean - d->wmean;
			d->m2 += s->m2 + delta * delta * (double)d->n * (double)s->n / (double)n;
			d->wmean += delta * (double)s->n / (double)n;
			d->n = n;
			nsum(&d->sum, &d->comp, s->sum);
			nsum(&d->sum, &d->comp, s->comp);
			if (s->min < d->min)
				d->min = s->min;
			if (s->max > d->max)
				d->max = s->max;
		}
		d->n_invalid += s->n_invalid;
		for (size_t k = 0; k < s->nshares && rc == 0; k++)
			if (add_share(into, d, s->shares[k].name, strlen(s->shares[k].name),
				      s->shares[k].us) < 0)
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
			d->cn[c] += s->cn[c];
			nsum(&d->csum[c], &d->ccomp[c], s->csum[c]);
			nsum(&d->csum[c], &d->ccomp[c], s->ccomp[c]);
		}
	}
	if (rc == 0) {
		struct remap m = { into, map };
		rc = perfdb_samples_foreach(from->samples, add_mapped, &m, err);
	}
	into->tot.rows += from->tot.rows;
	into->tot.dropped_na += from->tot.dropped_na;
	into->tot.empty_type += from->tot.empty_type;
	into->tot.invalid_durations += from->tot.invalid_durations;
	into->tot.invalid_counters += from->tot.invalid_counters;
	free(map);
	return rc;
}

int perfdb_agg_finish(struct perfdb_agg *a, struct perfdb_err *err)
{
	if (a->finished)
		return 0;
	a->finished = 1;
	double *med = malloc((a->n ? a->n : 1) * sizeof(*med));
	if (!med)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = perfdb_samples_medians(a->samples, (uint32_t)a->n, med, err);
	for (size_t i = 0; rc == 0 && i < a->n; i++) {
		struct perfdb_agg_group *g = &a->g[i];
		if (format_kernels(a, g) < 0)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		if (!g->n) {
			g->mean = g->median = g->std = g->min = g->max = NAN;
			continue;
		}
		g->mean = (g->sum + g->comp) / (double)g->n;
		g->median = med[i];
		g->std = g->n > 1 ? sqrt(g->m2 / (double)g->n) : 0.0;
	}
	free(med);
	return rc;
}
