/*
 * One table's writeback (docs/spec/replay.md §2, Decisions 2-6), merged as
 * it streams so that memory follows the measurements, not the table
 * (docs/reliability.md "Writeback memory"): the header is migrated alone,
 * then each row is read, mapped onto it, merged with the measurements of
 * its signature, pruned or kept, and written to the spill; measurements
 * without a row are appended at the end.
 *
 * The result is the one the in-memory merge gave: the first row of a
 * signature takes its measurements, in their order; a later measurement
 * of a signature that had no row updates the row the first one appended;
 * gaps, missing rows and warnings are listed in measurement order, deleted
 * rows in row order; a table is rewritten only when a cell's value, or the
 * set of rows, changed (a header migration alone is not written).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/csv.h"
#include "perfdb/schema.h"
#include "perfdb/signature.h"
#include "perfdb/stats.h"
#include "replay/writeback_int.h"

#define NONE SIZE_MAX

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };
static const char *const stat_cols[4] = {
	PERFDB_COL_MB_MIN, PERFDB_COL_MB_MEDIAN, PERFDB_COL_MB_STD, PERFDB_COL_MB_SAMPLES,
};

static double fval(const char *cell)
{
	double v;
	return perfdb_stats_parse_double(cell, strlen(cell), &v) == 0 && isfinite(v) ? v : 0;
}

static int strv_push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -PERFDB_ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -PERFDB_ENOMEM;
	(*n)++;
	return 0;
}

static int warn(struct perfdb_wb_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int warn(struct perfdb_wb_result *res, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return strv_push(&res->warnings, &res->nwarnings, msg);
}

static int row_valid(const struct perfdb_table *t, size_t r)
{
	return perfdb_schema_usable_duration(
		perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_MB_DUR)),
		perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_PROF_AVG)), false, NULL);
}

static int sig_of_measure(const struct perfdb_measure *m, struct perfdb_strbuf *out)
{
	struct perfdb_sig_row sr = { m->base[2], m->base[3], m->base[4], m->base[5], m->base[6],
				     m->ep_size ? m->ep_size : "" };
	return perfdb_sig_compute(m->op, &sr, out);
}

static int report_form_measure(const struct perfdb_measure *m, struct perfdb_strbuf *out)
{
	struct perfdb_sig_row sr = { m->base[2], m->base[3], m->base[4], m->base[5], m->base[6], NULL };
	return perfdb_sig_report_form(&sr, out);
}

static int report_form_row(const struct perfdb_table *t, size_t r, struct perfdb_strbuf *out)
{
	struct perfdb_sig_row sr = {
		perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_IN_SHAPES)), NULL, NULL,
		perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_OUT_SHAPES)), NULL, NULL,
	};
	return perfdb_sig_report_form(&sr, out);
}

static int set_cell(struct perfdb_table *t, size_t r, const char *col, const char *v,
		    struct perfdb_err *err)
{
	long c = perfdb_table_col(t, col);
	if (c < 0)
		return 0;   /* values for columns outside the header are dropped */
	return perfdb_table_set(t, r, (size_t)c, v, strlen(v), err);
}

/* Write a measurement's values into row r. */
static int put_values(struct perfdb_table *t, size_t r, const struct perfdb_measure *m,
		      int fresh, struct perfdb_err *err)
{
	char b[64];
	if (fresh) {
		for (int i = 0; i < 8; i++)
			PERFDB_TRY(set_cell(t, r, base_cols[i], m->base[i], err));
		if (m->ep_size)
			PERFDB_TRY(set_cell(t, r, PERFDB_COL_EP_SIZE, m->ep_size, err));
	}
	b[0] = '\0';
	if (m->samples)
		perfdb_stats_format6(m->mean, b, sizeof(b));
	PERFDB_TRY(set_cell(t, r, PERFDB_COL_MB_DUR, b, err));
	double st[3] = { m->min, m->median, m->std };
	for (int i = 0; i < 3; i++) {
		b[0] = '\0';
		if (m->samples)
			perfdb_stats_format6(st[i], b, sizeof(b));
		PERFDB_TRY(set_cell(t, r, stat_cols[i], b, err));
	}
	snprintf(b, sizeof(b), "%zu", m->samples);
	PERFDB_TRY(set_cell(t, r, PERFDB_COL_MB_SAMPLES, b, err));
	for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
		char col[96];
		snprintf(col, sizeof(col), PERFDB_COL_MB_COUNTER_PREFIX "%s", perfdb_counter_names[c]);
		b[0] = '\0';
		if (m->cmean && !isnan(m->cmean[c]))
			perfdb_stats_format6(m->cmean[c], b, sizeof(b));
		PERFDB_TRY(set_cell(t, r, col, b, err));
	}
	return 0;
}

/* ---- the merge's state ---------------------------------------------------- */

/*
 * The measurements of this table by signature: each signature's first
 * measurement heads a chain (next) of the later ones, in order.
 */
struct merge {
	const struct perfdb_wb_opts *o;
	const struct perfdb_measures *m;
	const char *stem, *path, *csv_name;
	int family;                   /* a matmul table: its own rows only match */
	struct perfdb_sig_index mix;  /* measurement signature -> head (in .row) */
	size_t *head, *next, *tail;   /* per measurement; NONE: not this table's */
	size_t *approw;               /* per head: the row it appended, or NONE */
	unsigned char *matched;       /* per head: a row of the file took the chain */
	size_t *gapkey;               /* per gap this table added: its measurement */
	size_t ngapkey, firstgap;
	struct perfdb_table app;      /* appended rows */
	struct perfdb_strbuf sig, form, out;
	struct perfdb_wb_file *fr;
	struct perfdb_wb_result *res;
	struct perfdb_wb_spill *sp;
	const struct perfdb_sig_index *six;   /* with o->seen: the rows the run saw here, or NULL */
	int changed;
};

static int gap(struct merge *g, size_t i, const struct perfdb_table *t, size_t r)
{
	struct perfdb_wb_result *res = g->res;
	double mb = fval(perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_MB_DUR)));
	double prof = fval(perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_PROF_AVG)));
	if (!(mb > 0 && prof > 0))
		return 0;
	struct perfdb_wb_gap *ng = realloc(res->gaps, (res->ngaps + 1) * sizeof(*ng));
	size_t *nk = realloc(g->gapkey, (g->ngapkey + 1) * sizeof(*nk));
	if (ng)
		res->gaps = ng;
	if (nk)
		g->gapkey = nk;
	if (!ng || !nk)
		return -PERFDB_ENOMEM;
	struct perfdb_strbuf shape = PERFDB_STRBUF_INIT;
	report_form_row(t, r, &shape);
	struct perfdb_wb_gap *x = &ng[res->ngaps];
	x->op = strdup(g->stem);
	x->csv_name = strdup(g->csv_name);
	x->shape = perfdb_strbuf_detach(&shape, NULL);
	x->mb = mb;
	x->prof = prof;
	x->diff = fabs(mb - prof);
	x->ratio = mb / prof;
	if (!x->op || !x->csv_name || !x->shape) {
		free(x->op);
		free(x->csv_name);
		free(x->shape);
		return -PERFDB_ENOMEM;
	}
	res->ngaps++;
	nk[g->ngapkey++] = i;
	return 0;
}

static int match_only(const struct merge *g, size_t i)
{
	return g->family || strcmp(g->m->v[i].op, g->stem) != 0;
}

/* Measurement i into the row that matched it (the in-memory merge's matched branch). */
static int apply(struct merge *g, size_t i, struct perfdb_table *t, size_t r, struct perfdb_err *err)
{
	const struct perfdb_measure *x = &g->m->v[i];
	if (g->o->missing_only && row_valid(t, r)) {
		if (!match_only(g, i))
			g->fr->unchanged++;
		return gap(g, i, t, r);
	}
	long c = perfdb_table_col(t, PERFDB_COL_MB_DUR);
	char *old = strdup(perfdb_table_get(t, r, c));
	int rc = old ? put_values(t, r, x, 0, err) : -PERFDB_ENOMEM;
	if (rc == 0 && strcmp(old, perfdb_table_get(t, r, c)) != 0)
		g->fr->updated++;
	free(old);
	return rc == 0 ? gap(g, i, t, r) : rc;
}

/* The chains of this table's measurements (own, and matmul aliases that only match). */
static int index_measures(struct merge *g)
{
	const struct perfdb_measures *m = g->m;
	size_t n = m->n ? m->n : 1;
	g->head = malloc(n * sizeof(size_t));
	g->next = malloc(n * sizeof(size_t));
	g->tail = malloc(n * sizeof(size_t));
	g->approw = malloc(n * sizeof(size_t));
	g->matched = calloc(n, 1);
	if (!g->head || !g->next || !g->tail || !g->approw || !g->matched)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const char *op = m->v[i].op;
		int own = strcmp(op, g->stem) == 0;
		g->head[i] = g->next[i] = g->tail[i] = g->approw[i] = NONE;
		if (!own && !(g->family && perfdb_sig_is_matmul_family(op)))
			continue;
		if (sig_of_measure(&m->v[i], &g->sig) < 0 || perfdb_sig_index_add(&g->mix, g->sig.buf, i) < 0)
			return -PERFDB_ENOMEM;
		size_t h = perfdb_sig_index_find(&g->mix, g->sig.buf)->row;
		g->head[i] = h;
		if (h == i) {
			g->tail[i] = i;
		} else {
			g->next[g->tail[h]] = i;
			g->tail[h] = i;
		}
	}
	return 0;
}

static int flush(struct merge *g, off_t *at, int force, struct perfdb_err *err)
{
	if (!force && g->out.len < (1u << 20))
		return 0;
	const char *p = g->out.buf;
	size_t len = g->out.len;
	while (len) {
		ssize_t n = pwrite(g->sp->fd, p, len, *at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			/* the spill is the table's first copy: a full disk is the table's failure */
			return perfdb_err_errno(err, errno, "cannot write '%s'", g->path);
		p += n;
		len -= (size_t)n;
		*at += n;
	}
	perfdb_strbuf_reset(&g->out);
	return 0;
}

static int put_row(struct merge *g, const struct perfdb_table *t, size_t r, off_t *at,
		   struct perfdb_err *err)
{
	if (perfdb_csv_put_row(&g->out, (const char *const *)t->rows[r].cells, t->ncols) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return flush(g, at, 0, err);
}

/*
 * Prune: a row without a usable duration is deleted (and listed) when the
 * run may delete it: an appended row (oldsig NULL) always, a row of the
 * file only if the run saw it (o->seen), never a concurrent writer's.
 */
static int pruned(struct merge *g, const struct perfdb_table *t, size_t r, const char *oldsig,
		  int *drop)
{
	*drop = 0;
	if (!g->o->prune || row_valid(t, r))
		return 0;
	if (oldsig && g->o->seen) {
		*drop = g->six && perfdb_sig_index_find(g->six, oldsig);
	} else {
		*drop = 1;
	}
	if (!*drop)
		return 0;
	report_form_row(t, r, &g->form);
	return strv_push(&g->fr->deleted, &g->fr->ndeleted, g->form.buf);
}

static int put_row_header(struct merge *g, const struct perfdb_table *t, off_t *at,
			  struct perfdb_err *err)
{
	if (perfdb_csv_put_row(&g->out, (const char *const *)t->cols, t->ncols) < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return flush(g, at, 0, err);
}

/* ---- the file's rows ------------------------------------------------------ */

/*
 * The table file read one row at a time onto the migrated header: src holds
 * the file's row, row the same row on the migrated header (row 0).
 */
struct source {
	struct perfdb_csv_reader *rd;
	struct perfdb_table src, row;
	struct perfdb_table_mark src_mark, row_mark;
	long *from;                 /* per migrated column: the file's column, -1: new */
	const char *ep_fill;        /* EP Size adopted for every row, or NULL */
	size_t nread;
};

/* A legacy DispatchFFNCombine table without EP Size adopts the run's single EP size. */
static int adopt_ep(struct merge *g, struct perfdb_table *hdr, int quiet, const char **ep_fill,
		    struct perfdb_err *err)
{
	*ep_fill = NULL;
	if (strcmp(g->stem, PERFDB_DFC_OP) != 0 || perfdb_table_col(hdr, PERFDB_COL_EP_SIZE) >= 0)
		return 0;
	const char *ep = NULL;
	int distinct = 0;
	for (size_t i = 0; i < g->m->n; i++)
		if (strcmp(g->m->v[i].op, g->stem) == 0 && g->m->v[i].ep_size &&
		    (!ep || strcmp(ep, g->m->v[i].ep_size) != 0)) {
			ep = g->m->v[i].ep_size;
			distinct++;
		}
	if (distinct != 1)
		return 0;
	long c = perfdb_table_insert_col(hdr, PERFDB_COL_EP_SIZE, hdr->ncols, err);
	if (c < 0)
		return (int)c;
	*ep_fill = ep;
	return quiet ? 0 : warn(g->res, "[WARN] %s has no EP Size column: filled every row with %s from this run",
				g->path, ep);
}

static void source_close(struct source *s)
{
	if (s->rd)
		perfdb_csv_close(s->rd);
	perfdb_table_release(&s->src);
	perfdb_table_release(&s->row);
	free(s->from);
	memset(s, 0, sizeof(*s));
}

static int source_open(struct merge *g, struct source *s, int quiet, struct perfdb_err *err)
{
	memset(s, 0, sizeof(*s));
	perfdb_table_init(&s->src);
	perfdb_table_init(&s->row);
	s->src.name = strdup(g->path);
	s->row.name = strdup(g->path);
	if (!s->src.name || !s->row.name)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	PERFDB_TRY(perfdb_csv_open(&s->rd, g->path, PERFDB_CSV_UTF8, err));
	PERFDB_TRY(perfdb_table_read_header(&s->src, s->rd, err));
	PERFDB_TRY(perfdb_table_set_header(&s->row, (const char *const *)s->src.cols, s->src.ncols, err));
	PERFDB_TRY(perfdb_wb_migrate(&s->row, err));
	PERFDB_TRY(adopt_ep(g, &s->row, quiet, &s->ep_fill, err));
	s->from = malloc((s->row.ncols ? s->row.ncols : 1) * sizeof(*s->from));
	if (!s->from)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t j = 0; j < s->row.ncols; j++) {
		s->from[j] = perfdb_table_col(&s->src, s->row.cols[j]);
		if (s->from[j] < 0 && strcmp(s->row.cols[j], PERFDB_COL_MB_DUR) == 0)
			s->from[j] = perfdb_table_col(&s->src, PERFDB_COL_MB_LEGACY);   /* renamed */
	}
	perfdb_table_mark(&s->src, &s->src_mark);
	perfdb_table_mark(&s->row, &s->row_mark);
	return 0;
}

/* The next row into s->row (row 0, not dirty): 1, or 0 at the end. */
static int source_next(struct source *s, struct perfdb_err *err)
{
	perfdb_table_rewind(&s->src, &s->src_mark);
	perfdb_table_rewind(&s->row, &s->row_mark);
	int got = perfdb_table_read_row(&s->src, s->rd, err);
	if (got <= 0)
		return got;
	PERFDB_TRY(perfdb_table_append_row(&s->row, err) < 0 ? -PERFDB_ENOMEM : 0);
	for (size_t j = 0; j < s->row.ncols; j++) {
		const char *v = s->from[j] >= 0 ? perfdb_table_get(&s->src, 0, s->from[j]) :
				s->ep_fill && strcmp(s->row.cols[j], PERFDB_COL_EP_SIZE) == 0 ? s->ep_fill : "";
		PERFDB_TRY(perfdb_table_set(&s->row, 0, j, v, strlen(v), err));
	}
	s->row.rows[0].line = s->src.rows[0].line;
	s->row.dirty = false;
	s->nread++;
	return 1;
}

/* Duplicated signatures (count >= 2), as the report forms of their first rows: a second read. */
static int cmp_row(const void *a, const void *b)
{
	const struct perfdb_sig_index_entry *x = *(const struct perfdb_sig_index_entry *const *)a;
	const struct perfdb_sig_index_entry *y = *(const struct perfdb_sig_index_entry *const *)b;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int list_dups(struct merge *g, const struct perfdb_sig_index *rix, struct perfdb_err *err)
{
	size_t ndup = 0;
	for (size_t i = 0; i < rix->cap; i++)
		ndup += rix->slots[i].sig && rix->slots[i].count >= 2;
	if (!ndup)
		return 0;
	/* the first rows of duplicated signatures, in row order: one pass, stopped after the last */
	const struct perfdb_sig_index_entry **first = malloc(ndup * sizeof(*first));
	if (!first)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < rix->cap; i++)
		if (rix->slots[i].sig && rix->slots[i].count >= 2)
			first[k++] = &rix->slots[i];
	qsort(first, ndup, sizeof(*first), cmp_row);
	struct source s;
	int rc = source_open(g, &s, 1, err);
	for (size_t r = 0, d = 0; rc == 0 && d < ndup; r++) {
		int got = source_next(&s, err);
		if (got <= 0) {
			rc = got;
			break;
		}
		if (first[d]->row != r)
			continue;
		struct perfdb_wb_dup *nd = realloc(g->fr->dups, (g->fr->ndups + 1) * sizeof(*nd));
		if (!nd) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		g->fr->dups = nd;
		report_form_row(&s.row, 0, &g->form);
		nd[g->fr->ndups].sig = strdup(g->form.buf);
		nd[g->fr->ndups].count = first[d++]->count;
		if (!nd[g->fr->ndups].sig)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			g->fr->ndups++;
	}
	source_close(&s);
	free(first);
	return rc;
}

static int cmp_dup(const void *a, const void *b)
{
	const struct perfdb_wb_dup *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->sig, y->sig);
}

/* Every row of the file: merged, pruned or kept, written; the file's signatures in rix. */
static int stream_rows(struct merge *g, struct source *s, struct perfdb_sig_index *rix, off_t *at,
		       struct perfdb_err *err)
{
	struct perfdb_table *t = &s->row;
	char **before = malloc((t->ncols ? t->ncols : 1) * sizeof(*before));
	if (!before)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = put_row_header(g, t, at, err);
	for (size_t r = 0; rc == 0; r++) {
		int got = source_next(s, err);
		if (got <= 0) {
			rc = got;
			break;
		}
		if (perfdb_table_row_sig(t, 0, g->stem, &g->sig) < 0 ||
		    perfdb_sig_index_add(rix, g->sig.buf, r) < 0) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		memcpy(before, t->rows[0].cells, t->ncols * sizeof(*before));
		const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(rix, g->sig.buf);
		const struct perfdb_sig_index_entry *me = e->count == 1 ?
			perfdb_sig_index_find(&g->mix, g->sig.buf) : NULL;
		if (me) {
			/* the first row of a signature takes its measurements, in order */
			g->matched[me->row] = 1;
			for (size_t i = me->row; i != NONE && rc == 0; i = g->next[i])
				rc = apply(g, i, t, 0, err);
			if (rc == -PERFDB_ENOMEM)
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			if (rc < 0)
				break;
		}
		for (size_t c = 0; c < t->ncols && !g->changed; c++)
			g->changed = before[c] != t->rows[0].cells[c] && strcmp(before[c], t->rows[0].cells[c]) != 0;
		int drop;
		rc = pruned(g, t, 0, g->sig.buf, &drop);
		if (rc < 0) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		if (drop)
			g->changed = 1;
		else
			rc = put_row(g, t, 0, at, err);
	}
	free(before);
	return rc;
}

/*
 * The measurements no row of the file took, in order: a later one of a
 * signature updates the row its first one appended; a match-only one
 * without a row is a warning; an own one is missing, and appended unless
 * missing-only.
 */
static int unmatched(struct merge *g, struct perfdb_err *err)
{
	int rc = 0;
	for (size_t i = 0; i < g->m->n && rc == 0; i++) {
		size_t h = g->head[i];
		if (h == NONE || g->matched[h])
			continue;
		if (g->approw[h] != NONE) {
			rc = apply(g, i, &g->app, g->approw[h], err);
			continue;
		}
		const struct perfdb_measure *x = &g->m->v[i];
		report_form_measure(x, &g->form);
		if (match_only(g, i)) {
			sig_of_measure(x, &g->sig);
			rc = warn(g->res, "[WARN] match-only profiling row did not match %s: %s",
				  g->csv_name, g->sig.buf);
			continue;
		}
		rc = strv_push(&g->fr->missing, &g->fr->nmissing, g->form.buf);
		if (rc < 0 || g->o->missing_only)
			continue;
		long nr = perfdb_table_append_row(&g->app, err);
		if (nr < 0)
			return (int)nr;
		rc = put_values(&g->app, (size_t)nr, x, 1, err);
		g->approw[h] = (size_t)nr;
		g->fr->added++;
		if (rc == 0)
			rc = gap(g, i, &g->app, (size_t)nr);
	}
	if (rc == -PERFDB_ENOMEM)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}

/* This table's gaps back in measurement order (the file's rows added them in row order). */
static int order_gaps(struct merge *g)
{
	size_t n = g->ngapkey;
	if (n < 2)
		return 0;
	struct keyed { size_t key, seq; struct perfdb_wb_gap gap; } *v = malloc(n * sizeof(*v));
	if (!v)
		return -PERFDB_ENOMEM;
	for (size_t k = 0; k < n; k++)
		v[k] = (struct keyed){ g->gapkey[k], k, g->res->gaps[g->firstgap + k] };
	for (size_t k = 1; k < n; k++) {   /* insertion sort: stable, and nearly sorted already */
		struct keyed x = v[k];
		size_t j = k;
		while (j > 0 && v[j - 1].key > x.key) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	for (size_t k = 0; k < n; k++)
		g->res->gaps[g->firstgap + k] = v[k].gap;
	free(v);
	return 0;
}

static void merge_release(struct merge *g)
{
	perfdb_sig_index_release(&g->mix);
	free(g->head);
	free(g->next);
	free(g->tail);
	free(g->approw);
	free(g->matched);
	free(g->gapkey);
	perfdb_table_release(&g->app);
	perfdb_strbuf_release(&g->sig);
	perfdb_strbuf_release(&g->form);
	perfdb_strbuf_release(&g->out);
}

int perfdb_wb_merge(const struct perfdb_wb_opts *o, const char *stem, const char *path,
		    const struct perfdb_measures *m, struct perfdb_wb_spill *sp, off_t *off,
		    size_t *len, int *write, struct perfdb_wb_file *fr, struct perfdb_wb_result *res,
		    struct perfdb_err *err)
{
	struct merge g = { .o = o, .m = m, .stem = stem, .path = path, .fr = fr, .res = res, .sp = sp };
	g.csv_name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	g.family = perfdb_sig_is_matmul_family(stem);
	g.firstgap = res->ngaps;
	g.six = o->seen ? perfdb_wb_seen_find(o->seen, path) : NULL;   /* once: it resolves the path */
	g.sig = g.form = g.out = (struct perfdb_strbuf)PERFDB_STRBUF_INIT;
	perfdb_sig_index_init(&g.mix);
	perfdb_table_init(&g.app);
	*off = sp->end;
	*write = 0;
	off_t at = sp->end;
	int rc = index_measures(&g) < 0 ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;

	/* lstat, not open: a FIFO named like the table must not block us */
	struct stat st;
	int is_new = lstat(path, &st) != 0;
	struct perfdb_sig_index rix;
	perfdb_sig_index_init(&rix);
	struct source s;
	memset(&s, 0, sizeof(s));
	if (rc == 0 && is_new) {
		int with_ep = 0;
		for (size_t i = 0; i < m->n; i++)
			if (strcmp(m->v[i].op, stem) == 0 && m->v[i].ep_size)
				with_ep = 1;
		rc = perfdb_wb_new_header(&g.app, with_ep, err);
		if (rc == 0)
			rc = put_row_header(&g, &g.app, &at, err);
	} else if (rc == 0) {
		rc = source_open(&g, &s, 0, err);
		if (rc == 0)
			rc = perfdb_table_set_header(&g.app, (const char *const *)s.row.cols, s.row.ncols, err);
		if (rc == 0)
			rc = stream_rows(&g, &s, &rix, &at, err);
	}
	if (rc == 0)
		rc = unmatched(&g, err);
	for (size_t r = 0; r < g.app.nrows && rc == 0; r++) {
		int drop;
		rc = pruned(&g, &g.app, r, NULL, &drop) < 0 ?
			perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;
		if (rc == 0 && !drop) {
			g.changed = 1;
			rc = put_row(&g, &g.app, r, &at, err);
		}
	}
	if (rc == 0)
		rc = flush(&g, &at, 1, err);
	if (rc == 0 && order_gaps(&g) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0 && !is_new)
		rc = list_dups(&g, &rix, err);
	if (rc == 0 && fr->ndups > 1)
		qsort(fr->dups, fr->ndups, sizeof(*fr->dups), cmp_dup);
	if (rc == 0) {
		*len = (size_t)(at - *off);
		*write = is_new || g.changed;
		/* an unchanged table's bytes are not kept */
		sp->end = *write ? at : *off;
	}
	source_close(&s);
	perfdb_sig_index_release(&rix);
	merge_release(&g);
	return rc;
}
