/*
 * Writeback of measurements into database tables (docs/spec/replay.md §2, with
 * Decisions 2-6).
 *
 * Files: with --ops, every `<op>.csv` below the database (keyed by stem,
 * the last found wins); otherwise the top-level tables of replay operators;
 * when none exists, `<db>/<OP Type>.csv` is created per measured operator.
 * For each table: the header is migrated (get_cols), the rows are indexed
 * by signature (first row wins, duplicates reported), then the table's own
 * measurements merge (update, or append in `all` mode) and the matmul
 * aliases' measurements only match; rows are pruned on request.  A table is
 * written only when its rows changed, atomically, under the database lock;
 * every table is prepared before the first write.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "replay/replay.h"
#include "perfdb/schema.h"
#include "perfdb/signature.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };
static const char *const stat_cols[4] = {
	PERFDB_COL_MB_MIN, PERFDB_COL_MB_MEDIAN, PERFDB_COL_MB_STD, PERFDB_COL_MB_SAMPLES,
};

int perfdb_wb_valid(const char *cell)
{
	return perfdb_schema_duration(cell, false, NULL);
}

static double fval(const char *cell)
{
	double v;
	return perfdb_stats_parse_double(cell, strlen(cell), &v) == 0 && isfinite(v) ? v : 0;
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void perfdb_wb_result_release(struct perfdb_wb_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		struct perfdb_wb_file *f = &r->files[i];
		free(f->path);
		free(f->stem);
		strv_free(f->missing, f->nmissing);
		strv_free(f->deleted, f->ndeleted);
		for (size_t d = 0; d < f->ndups; d++)
			free(f->dups[d].sig);
		free(f->dups);
	}
	for (size_t i = 0; i < r->ngaps; i++) {
		free(r->gaps[i].op);
		free(r->gaps[i].csv_name);
		free(r->gaps[i].shape);
	}
	strv_free(r->warnings, r->nwarnings);
	free(r->files);
	free(r->gaps);
	memset(r, 0, sizeof(*r));
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

/* ---- which tables -------------------------------------------------------- */

struct target {
	char *stem, *path;
};

static int add_target(struct target **t, size_t *n, const char *stem, const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*t)[i].stem, stem) == 0) {   /* keyed by stem: the last wins */
			char *p = strdup(path);
			if (!p)
				return -PERFDB_ENOMEM;
			free((*t)[i].path);
			(*t)[i].path = p;
			return 0;
		}
	struct target *nt = realloc(*t, (*n + 1) * sizeof(**t));
	if (!nt)
		return -PERFDB_ENOMEM;
	*t = nt;
	nt[*n].stem = strdup(stem);
	nt[*n].path = strdup(path);
	if (!nt[*n].stem || !nt[*n].path)
		return -PERFDB_ENOMEM;
	(*n)++;
	return 0;
}

struct named {
	const char *file, *stem;
	struct target **t;
	size_t *n;
};

/* rglob("<op>.csv"), sorted */
static int visit_named(void *ctx, const char *path, const char *name, int is_dir)
{
	struct named *x = ctx;
	if (is_dir)
		return 1;
	if (strcmp(name, x->file) == 0 && add_target(x->t, x->n, x->stem, path) < 0)
		return -PERFDB_ENOMEM;
	return 0;
}

int perfdb_replay_table_path(const char *dbdir, const char *op, int search_subdirs,
			     struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	if (search_subdirs && perfdb_is_dir(dbdir)) {
		struct target *t = NULL;
		size_t n = 0;
		char file[512];
		snprintf(file, sizeof(file), "%s.csv", op);
		struct named x = { file, op, &t, &n };
		struct perfdb_err ignore;
		int rc = perfdb_dir_walk(dbdir, PERFDB_WALK_NO_LINKS, visit_named, &x, &ignore);
		if (rc == 0 && n > 0)
			perfdb_strbuf_addstr(out, t[0].path);
		for (size_t i = 0; i < n; i++) {
			free(t[i].stem);
			free(t[i].path);
		}
		free(t);
		if (rc < 0)
			return rc;
		if (n > 0)
			return out->buf ? 1 : -PERFDB_ENOMEM;
	}
	perfdb_strbuf_addf(out, "%s/%s.csv", dbdir, op);
	if (!out->buf)
		return -PERFDB_ENOMEM;
	return access(out->buf, F_OK) == 0 && !perfdb_is_dir(out->buf);
}

static int cmp_target(const void *a, const void *b)
{
	return strcmp(((const struct target *)a)->stem, ((const struct target *)b)->stem);
}

static int find_targets(const struct perfdb_wb_opts *o, const struct perfdb_measures *m,
			struct target **t, size_t *n)
{
	int rc = 0;
	if (o->ops) {
		for (size_t i = 0; i < o->nops && rc == 0; i++) {
			char file[512];
			snprintf(file, sizeof(file), "%s.csv", o->ops[i]);
			struct named x = { file, o->ops[i], t, n };
			struct perfdb_err ignore;
			/* a database that does not exist yet simply holds no table */
			if (perfdb_is_dir(o->dbdir))
				rc = perfdb_dir_walk(o->dbdir, PERFDB_WALK_NO_LINKS, visit_named, &x, &ignore);
		}
	} else {
		struct dirent **names;
		int k = scandir(o->dbdir, &names, NULL, alphasort);
		for (int i = 0; i < k; i++) {
			const char *nm = names[i]->d_name;
			size_t len = strlen(nm);
			if (rc == 0 && len > 4 && strcmp(nm + len - 4, ".csv") == 0) {
				char stem[512];
				snprintf(stem, sizeof(stem), "%.*s", (int)(len - 4), nm);
				char p[4096];
				snprintf(p, sizeof(p), "%s/%s", o->dbdir, nm);
				/* not a link to a table elsewhere; a FIFO or device is
				 * kept, for the load to refuse it by name */
				struct stat ls;
				if ((perfdb_replay_op_known(stem) || (o->aten && perfdb_replay_aten_target(stem))) && lstat(p, &ls) == 0 &&
				    !S_ISDIR(ls.st_mode) && !S_ISLNK(ls.st_mode))
					rc = add_target(t, n, stem, p);
			}
			free(names[i]);
		}
		if (k >= 0)
			free(names);
	}
	if (rc == 0 && *n == 0) {
		/* nothing found: one new table per measured operator */
		for (size_t i = 0; i < m->n && rc == 0; i++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s.csv", o->dbdir, m->v[i].op);
			rc = add_target(t, n, m->v[i].op, p);
		}
	}
	if (*n > 1)
		qsort(*t, *n, sizeof(**t), cmp_target);
	return rc;
}

/* ---- header migration (get_cols) ---------------------------------------- */

static int ensure_col(struct perfdb_table *t, const char *name, size_t at, struct perfdb_err *err)
{
	if (perfdb_table_col(t, name) >= 0)
		return 0;
	long r = perfdb_table_insert_col(t, name, at, err);
	return r < 0 ? (int)r : 0;
}

static int new_header(struct perfdb_table *t, int with_ep, struct perfdb_err *err)
{
	const char *cols[8 + 1 + 4 + 3 + 2 * PERFDB_NCOUNTERS + 1];
	char names[2 * PERFDB_NCOUNTERS][64];
	size_t n = 0;
	for (int i = 0; i < 8; i++)
		cols[n++] = base_cols[i];
	cols[n++] = PERFDB_COL_MB_DUR;
	for (int i = 0; i < 4; i++)
		cols[n++] = stat_cols[i];
	cols[n++] = PERFDB_COL_PROF_AVG;
	cols[n++] = PERFDB_COL_PROF_MEDIAN;
	cols[n++] = PERFDB_COL_PROF_STD;
	for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
		snprintf(names[2 * c], sizeof(names[0]), PERFDB_COL_MB_COUNTER_PREFIX "%s",
			 perfdb_counter_names[c]);
		snprintf(names[2 * c + 1], sizeof(names[0]), PERFDB_COL_PROF_COUNTER_PREFIX "%s",
			 perfdb_counter_names[c]);
		cols[n++] = names[2 * c];
		cols[n++] = names[2 * c + 1];
	}
	if (with_ep)
		cols[n++] = PERFDB_COL_EP_SIZE;
	return perfdb_table_set_header(t, cols, n, err);
}

static int migrate(struct perfdb_table *t, struct perfdb_err *err)
{
	long c;
	if ((c = perfdb_table_col(t, PERFDB_COL_MB_TASK_DUR)) >= 0)
		perfdb_table_drop_col(t, (size_t)c);
	if ((c = perfdb_table_col(t, PERFDB_COL_MB_KERNEL_DUR)) >= 0)
		perfdb_table_drop_col(t, (size_t)c);
	c = perfdb_table_col(t, PERFDB_COL_MB_LEGACY);
	if (c >= 0 && perfdb_table_col(t, PERFDB_COL_MB_DUR) < 0)
		PERFDB_TRY(perfdb_table_rename_col(t, (size_t)c, PERFDB_COL_MB_DUR, err));
	if (perfdb_table_col(t, PERFDB_COL_MB_DUR) < 0) {
		/* BASE_COLS + Average Duration(us) + the rest */
		for (int i = 0; i < 8; i++) {
			long have = perfdb_table_col(t, base_cols[i]);
			if (have < 0)
				PERFDB_TRY(ensure_col(t, base_cols[i], (size_t)i, err));
			else if (have != i) {
				/* move it into place: drop and reinsert keeping cells */
				size_t nrows = t->nrows;
				char **vals = malloc((nrows ? nrows : 1) * sizeof(*vals));
				if (!vals)
					return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				for (size_t r = 0; r < nrows; r++)
					vals[r] = t->rows[r].cells[have];
				perfdb_table_drop_col(t, (size_t)have);
				long at = perfdb_table_insert_col(t, base_cols[i], (size_t)i, err);
				if (at < 0) {
					free(vals);
					return (int)at;
				}
				for (size_t r = 0; r < nrows; r++)
					t->rows[r].cells[at] = vals[r];
				free(vals);
			}
		}
		PERFDB_TRY(ensure_col(t, PERFDB_COL_MB_DUR, 8, err));
	}
	/* Decision 2: the steady-state statistics sit right after the mean */
	size_t at = (size_t)perfdb_table_col(t, PERFDB_COL_MB_DUR) + 1;
	for (int i = 0; i < 4; i++, at++) {
		long have = perfdb_table_col(t, stat_cols[i]);
		if (have < 0)
			PERFDB_TRY(ensure_col(t, stat_cols[i], at, err));
		else
			at = (size_t)have;
	}
	/* MicroBench X before each existing Profiling Average X */
	for (int k = 0; k < PERFDB_NCOUNTERS; k++) {
		char prof[96], mb[96];
		snprintf(prof, sizeof(prof), PERFDB_COL_PROF_COUNTER_PREFIX "%s", perfdb_counter_names[k]);
		snprintf(mb, sizeof(mb), PERFDB_COL_MB_COUNTER_PREFIX "%s", perfdb_counter_names[k]);
		long p = perfdb_table_col(t, prof);
		if (p >= 0 && perfdb_table_col(t, mb) < 0)
			PERFDB_TRY(ensure_col(t, mb, (size_t)p, err));
	}
	return 0;
}

/* ---- one table ------------------------------------------------------- */

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
		if (m->cn[c])
			perfdb_stats_format6(m->cmean[c], b, sizeof(b));
		PERFDB_TRY(set_cell(t, r, col, b, err));
	}
	return 0;
}

static int add_gap(struct perfdb_wb_result *res, const char *stem, const char *csv_name,
		   const struct perfdb_table *t, size_t r)
{
	double mb = fval(perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_MB_DUR)));
	double prof = fval(perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_PROF_AVG)));
	if (!(mb > 0 && prof > 0))
		return 0;
	struct perfdb_wb_gap *ng = realloc(res->gaps, (res->ngaps + 1) * sizeof(*ng));
	if (!ng)
		return -PERFDB_ENOMEM;
	res->gaps = ng;
	struct perfdb_strbuf shape = PERFDB_STRBUF_INIT;
	report_form_row(t, r, &shape);
	struct perfdb_wb_gap *g = &ng[res->ngaps];
	g->op = strdup(stem);
	g->csv_name = strdup(csv_name);
	g->shape = perfdb_strbuf_detach(&shape, NULL);
	g->mb = mb;
	g->prof = prof;
	g->diff = fabs(mb - prof);
	g->ratio = mb / prof;
	if (!g->op || !g->csv_name || !g->shape)
		return -PERFDB_ENOMEM;
	res->ngaps++;
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

static int cmp_dup(const void *a, const void *b)
{
	const struct perfdb_wb_dup *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->sig, y->sig);
}

/* The table as it is (or a new header), migrated, a legacy DFC table given the run's EP size. */
static int open_table(const struct target *tg, const struct perfdb_measures *m,
		      struct perfdb_table *t, struct perfdb_wb_result *res, int *is_new,
		      struct perfdb_err *err)
{
	const char *stem = tg->stem;
	/* lstat, not open: a FIFO named like the table must not block us */
	struct stat st;
	*is_new = lstat(tg->path, &st) != 0;
	if (*is_new) {
		int with_ep = 0;
		for (size_t i = 0; i < m->n; i++)
			if (strcmp(m->v[i].op, stem) == 0 && m->v[i].ep_size)
				with_ep = 1;
		PERFDB_TRY(new_header(t, with_ep, err));
		free(t->name);
		t->name = strdup(tg->path);
	} else {
		PERFDB_TRY(perfdb_table_load(t, tg->path, err));
		PERFDB_TRY(migrate(t, err));
	}
	/* Legacy DFC table without EP Size: adopt the run's single EP size */
	if (strcmp(stem, PERFDB_DFC_OP) != 0 || perfdb_table_col(t, PERFDB_COL_EP_SIZE) >= 0)
		return 0;
	const char *ep = NULL;
	int distinct = 0;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].op, stem) == 0 && m->v[i].ep_size &&
		    (!ep || strcmp(ep, m->v[i].ep_size) != 0)) {
			ep = m->v[i].ep_size;
			distinct++;
		}
	if (distinct != 1)
		return 0;
	long c = perfdb_table_insert_col(t, PERFDB_COL_EP_SIZE, t->ncols, err);
	if (c < 0)
		return (int)c;
	for (size_t r = 0; r < t->nrows; r++)
		PERFDB_TRY(perfdb_table_set(t, r, (size_t)c, ep, strlen(ep), err));
	return warn(res, "[WARN] %s has no EP Size column: filled every row with %s from this run",
		    tg->path, ep);
}

/* Every cell of every row, unit-separated: the rows compared before and after the merge. */
static void rows_image(const struct perfdb_table *t, struct perfdb_strbuf *out)
{
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			perfdb_strbuf_addstr(out, t->rows[r].cells[c]);
			perfdb_strbuf_addch(out, '\x1f');
		}
}

/* The rows by signature, and the signatures held by several rows (as (report form, count)). */
static int index_rows(const struct perfdb_table *t, const char *stem, struct perfdb_sig_index *ix,
		      struct perfdb_wb_file *fr, struct perfdb_strbuf *sig, struct perfdb_strbuf *form,
		      struct perfdb_err *err)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (perfdb_table_row_sig(t, r, stem, sig) < 0 || perfdb_sig_index_add(ix, sig->buf, r) < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < ix->cap; i++) {
		if (!ix->slots[i].sig || ix->slots[i].count < 2)
			continue;
		struct perfdb_wb_dup *nd = realloc(fr->dups, (fr->ndups + 1) * sizeof(*nd));
		if (!nd)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		fr->dups = nd;
		report_form_row(t, ix->slots[i].row, form);
		nd[fr->ndups].sig = strdup(form->buf);
		nd[fr->ndups++].count = ix->slots[i].count;
	}
	if (fr->ndups > 1)
		qsort(fr->dups, fr->ndups, sizeof(*fr->dups), cmp_dup);
	return 0;
}

/* A measurement without a row: counted missing, and appended unless missing-only. */
static int add_missing(const struct perfdb_wb_opts *o, const struct target *tg, const char *csv_name,
		       const struct perfdb_measure *x, struct perfdb_table *t,
		       struct perfdb_sig_index *ix, const struct perfdb_strbuf *sig,
		       const struct perfdb_strbuf *form, struct perfdb_wb_file *fr,
		       struct perfdb_wb_result *res, struct perfdb_err *err)
{
	int rc = strv_push(&fr->missing, &fr->nmissing, form->buf);
	if (rc < 0 || o->missing_only)
		return rc;
	long nr = perfdb_table_append_row(t, err);
	if (nr < 0)
		return (int)nr;
	rc = put_values(t, (size_t)nr, x, 1, err);
	if (rc == 0 && perfdb_sig_index_add(ix, sig->buf, (size_t)nr) < 0)
		rc = -PERFDB_ENOMEM;
	fr->added++;
	if (rc == 0)
		rc = add_gap(res, tg->stem, csv_name, t, (size_t)nr);
	return rc;
}

/* The table's own rows merge; the matmul aliases' rows only match. */
static int merge_measures(const struct perfdb_wb_opts *o, const struct target *tg,
			  const struct perfdb_measures *m, struct perfdb_table *t,
			  struct perfdb_sig_index *ix, struct perfdb_strbuf *sig,
			  struct perfdb_strbuf *form, struct perfdb_wb_file *fr,
			  struct perfdb_wb_result *res, struct perfdb_err *err)
{
	const char *stem = tg->stem;
	const char *csv_name = strrchr(tg->path, '/') ? strrchr(tg->path, '/') + 1 : tg->path;
	int family = perfdb_sig_is_matmul_family(stem), rc = 0;
	for (size_t i = 0; i < m->n && rc == 0; i++) {
		const struct perfdb_measure *x = &m->v[i];
		int own = strcmp(x->op, stem) == 0;
		int alias = !own && family && perfdb_sig_is_matmul_family(x->op);
		if (!own && !alias)
			continue;
		int match_only = alias || family;
		sig_of_measure(x, sig);
		const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(ix, sig->buf);
		if (!e) {
			report_form_measure(x, form);
			if (match_only)
				rc = warn(res, "[WARN] match-only profiling row did not match %s: %s",
					  csv_name, sig->buf);
			else
				rc = add_missing(o, tg, csv_name, x, t, ix, sig, form, fr, res, err);
			continue;
		}
		size_t r = e->row;
		if (o->missing_only && row_valid(t, r)) {
			if (!match_only)
				fr->unchanged++;
			rc = add_gap(res, stem, csv_name, t, r);
			continue;
		}
		char *old = strdup(perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_MB_DUR)));
		rc = old ? put_values(t, r, x, 0, err) : -PERFDB_ENOMEM;
		if (rc == 0 && strcmp(old, perfdb_table_get(t, r, perfdb_table_col(t, PERFDB_COL_MB_DUR))))
			fr->updated++;
		free(old);
		if (rc == 0)
			rc = add_gap(res, stem, csv_name, t, r);
	}
	if (rc == -PERFDB_ENOMEM)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}

/*
 * Prune rows without any valid duration (appended ones too); with a
 * snapshot, an old row (index < loaded) only if the run saw it, not a
 * concurrent add.
 */
static int prune_rows(const struct perfdb_wb_opts *o, const struct target *tg, int is_new,
		      size_t loaded, struct perfdb_table *t, struct perfdb_strbuf *sig,
		      struct perfdb_strbuf *form, struct perfdb_wb_file *fr, struct perfdb_err *err)
{
	bool *keep = malloc((t->nrows ? t->nrows : 1) * sizeof(*keep));
	if (!keep)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	const struct perfdb_sig_index *six = o->seen && !is_new ? perfdb_wb_seen_find(o->seen, tg->path) : NULL;
	int rc = 0;
	for (size_t r = 0; rc == 0 && r < t->nrows; r++) {
		keep[r] = row_valid(t, r);
		if (!keep[r] && o->seen && !is_new && r < loaded) {
			if (perfdb_table_row_sig(t, r, tg->stem, sig) < 0) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			keep[r] = !six || !perfdb_sig_index_find(six, sig->buf);
		}
		if (!keep[r]) {
			report_form_row(t, r, form);
			if (strv_push(&fr->deleted, &fr->ndeleted, form->buf) < 0)
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
	}
	if (rc == 0)
		perfdb_table_filter_rows(t, keep);
	free(keep);
	return rc;
}

static int merge_table(const struct perfdb_wb_opts *o, const struct target *tg,
		       const struct perfdb_measures *m, struct perfdb_table *t,
		       struct perfdb_wb_file *fr, struct perfdb_wb_result *res, int *is_new,
		       struct perfdb_err *err)
{
	PERFDB_TRY(open_table(tg, m, t, res, is_new, err));
	/* snapshot of the rows before merging, to decide whether to write */
	struct perfdb_strbuf before = PERFDB_STRBUF_INIT, after = PERFDB_STRBUF_INIT;
	rows_image(t, &before);
	struct perfdb_sig_index ix;
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT, form = PERFDB_STRBUF_INIT;
	perfdb_sig_index_init(&ix);
	size_t loaded = t->nrows;   /* rows past this one are appended by this run */
	int rc = index_rows(t, tg->stem, &ix, fr, &sig, &form, err);
	if (rc == 0)
		rc = merge_measures(o, tg, m, t, &ix, &sig, &form, fr, res, err);
	if (rc == 0 && o->prune)
		rc = prune_rows(o, tg, *is_new, loaded, t, &sig, &form, fr, err);
	/* written when new or its rows changed; a header-only migration is not saved */
	if (rc == 0 && !*is_new) {
		rows_image(t, &after);
		/* rows compared on the migrated header, as the reference does */
		t->dirty = before.len != after.len || memcmp(before.buf, after.buf, before.len) != 0;
	}
	perfdb_strbuf_release(&before);
	perfdb_strbuf_release(&after);
	perfdb_strbuf_release(&sig);
	perfdb_strbuf_release(&form);
	perfdb_sig_index_release(&ix);
	return rc;
}

int perfdb_writeback(const struct perfdb_wb_opts *o, const struct perfdb_measures *m,
		     struct perfdb_wb_result *res, struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	struct target *tg = NULL;
	size_t ntg = 0;
	struct perfdb_table *tables = NULL;
	int *is_new = NULL;
	struct perfdb_lock lock = PERFDB_LOCK_INIT;
	int rc = perfdb_mkdir_p(o->dbdir, err);
	if (rc == 0)
		rc = perfdb_lock_acquire(&lock, o->dbdir, o->lock_timeout, err);
	if (rc == 0 && find_targets(o, m, &tg, &ntg) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0) {
		tables = calloc(ntg ? ntg : 1, sizeof(*tables));
		is_new = calloc(ntg ? ntg : 1, sizeof(*is_new));
		res->files = calloc(ntg ? ntg : 1, sizeof(*res->files));
		if (!tables || !is_new || !res->files)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* phase 1: every table merged in memory */
	for (size_t i = 0; i < ntg && rc == 0; i++) {
		perfdb_table_init(&tables[i]);
		struct perfdb_wb_file *fr = &res->files[res->nfiles++];
		fr->path = strdup(tg[i].path);
		fr->stem = strdup(tg[i].stem);
		if (!fr->path || !fr->stem)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			rc = merge_table(o, &tg[i], m, &tables[i], fr, res, &is_new[i], err);
	}
	/* phase 2: atomic replacement of what changed */
	for (size_t i = 0; i < ntg && rc == 0; i++) {
		if (!is_new[i] && !tables[i].dirty)
			continue;
		char *dir = strdup(tg[i].path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash)
			*slash = '\0';
		rc = dir ? perfdb_mkdir_p(dir, err) : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		free(dir);
		if (rc == 0)
			rc = perfdb_table_save(&tables[i], tg[i].path, &lock, err);
		if (rc == 0)
			res->files[i].written = 1;
	}
	/* the simulator's routing for the tables now there (docs/database.md "op_mapping.yaml") */
	if (rc == 0 && o->op_mapping)
		rc = perfdb_opmap_update(o->dbdir, o->op_mapping, NULL, err);
	perfdb_lock_release(&lock);
	for (size_t i = 0; i < ntg; i++) {
		if (tables)
			perfdb_table_release(&tables[i]);
		free(tg[i].stem);
		free(tg[i].path);
	}
	free(tables);
	free(is_new);
	free(tg);
	return rc;
}
