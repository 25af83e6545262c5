/*
 * The profile update report (docs/spec/replay.md §3), byte-compatible with the
 * reference's print_report: the markdown text (also printed), the report
 * file <db>/reports/profile_update_report_<ts>.md, and the full hotspot
 * table duration_gap_hotspots_full_<ts>.csv.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/csv.h"
#include "perfdb/md_table.h"
#include "perfdb/fsio.h"
#include "replay/replay.h"
#include "perfdb/schema.h"

#define MAX_GAPS 20
#define MAX_EXAMPLES 3

/* A table of rows built with printf-style cells. */
struct grid {
	char ***rows;
	size_t n, ncols;
};

static int grid_add(struct grid *g, ...)
{
	char ***nr = realloc(g->rows, (g->n + 1) * sizeof(*nr));
	if (!nr)
		return -PERFDB_ENOMEM;
	g->rows = nr;
	char **row = calloc(g->ncols, sizeof(*row));
	if (!row)
		return -PERFDB_ENOMEM;
	va_list ap;
	va_start(ap, g);
	for (size_t c = 0; c < g->ncols; c++) {
		const char *v = va_arg(ap, const char *);
		row[c] = strdup(v ? v : "");
	}
	va_end(ap);
	g->rows[g->n++] = row;
	return 0;
}

static void grid_free(struct grid *g)
{
	for (size_t r = 0; r < g->n; r++) {
		for (size_t c = 0; c < g->ncols; c++)
			free(g->rows[r][c]);
		free(g->rows[r]);
	}
	free(g->rows);
	g->rows = NULL;
	g->n = 0;
}

static const char *file_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* sort helpers over file indices (qsort_r context: the result, the kind) */
struct sortctx {
	const struct perfdb_wb_result *res;
	int kind;   /* 0 missing, 1 deleted, 2 duplicates */
};

static size_t kind_count(const struct perfdb_wb_file *f, int kind)
{
	return kind == 0 ? f->nmissing : kind == 1 ? f->ndeleted : f->ndups;
}

static int cmp_update(const void *a, const void *b, void *vctx)
{
	const struct sortctx *sc = vctx;
	const struct perfdb_wb_file *x = &sc->res->files[*(const size_t *)a];
	const struct perfdb_wb_file *y = &sc->res->files[*(const size_t *)b];
	if (x->added != y->added)
		return x->added > y->added ? -1 : 1;
	if (x->updated != y->updated)
		return x->updated > y->updated ? -1 : 1;
	return strcmp(file_name(x->path), file_name(y->path));
}

static int cmp_kind(const void *a, const void *b, void *vctx)
{
	const struct sortctx *sc = vctx;
	const struct perfdb_wb_file *x = &sc->res->files[*(const size_t *)a];
	const struct perfdb_wb_file *y = &sc->res->files[*(const size_t *)b];
	size_t cx = kind_count(x, sc->kind), cy = kind_count(y, sc->kind);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(file_name(x->path), file_name(y->path));
}

static double sev(const struct perfdb_wb_gap *g)
{
	return g->ratio > 1 / g->ratio ? g->ratio : 1 / g->ratio;
}

static int cmp_gap(const void *a, const void *b)
{
	const struct perfdb_wb_gap *x = *(const struct perfdb_wb_gap *const *)a;
	const struct perfdb_wb_gap *y = *(const struct perfdb_wb_gap *const *)b;
	/* descending by (max(r, 1/r), |diff|, operator) */
	if (sev(x) != sev(y))
		return sev(x) > sev(y) ? -1 : 1;
	if (x->diff != y->diff)
		return x->diff > y->diff ? -1 : 1;
	return -strcmp(x->op, y->op);
}

static int join_examples(struct perfdb_strbuf *sb, char **v, size_t n)
{
	perfdb_strbuf_reset(sb);
	for (size_t i = 0; i < n && i < MAX_EXAMPLES; i++)
		PERFDB_TRY(perfdb_strbuf_addf(sb, "%s%s", i ? "; " : "", v[i]));
	return 0;
}

static int kind_table(struct perfdb_strbuf *md, const struct perfdb_wb_result *r, int kind,
		      const char *title)
{
	static const char *const hdr[3] = { "Operator", "Count", "Examples" };
	struct grid g = { NULL, 0, 3 };
	size_t *idx = malloc((r->nfiles ? r->nfiles : 1) * sizeof(*idx)), n = 0;
	struct perfdb_strbuf ex = PERFDB_STRBUF_INIT;
	int rc = idx ? 0 : -PERFDB_ENOMEM;
	struct sortctx sc = { r, kind };
	for (size_t i = 0; rc == 0 && i < r->nfiles; i++)
		if (kind_count(&r->files[i], kind))
			idx[n++] = i;
	if (n > 1)
		qsort_r(idx, n, sizeof(*idx), cmp_kind, &sc);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		const struct perfdb_wb_file *f = &r->files[idx[k]];
		char cnt[32];
		snprintf(cnt, sizeof(cnt), "%zu", kind_count(f, kind));
		if (kind == 0)
			join_examples(&ex, f->missing, f->nmissing);
		else if (kind == 1)
			join_examples(&ex, f->deleted, f->ndeleted);
		else {
			perfdb_strbuf_reset(&ex);
			for (size_t i = 0; i < f->ndups && i < MAX_EXAMPLES; i++)
				perfdb_strbuf_addf(&ex, "%s%s (x%zu)", i ? "; " : "", f->dups[i].sig,
						   f->dups[i].count);
		}
		rc = grid_add(&g, f->stem, cnt, ex.buf[0] ? ex.buf : "-");
	}
	if (rc == 0)
		rc = perfdb_strbuf_addf(md, "\n\n## %s\n", title);
	if (rc == 0)
		rc = perfdb_md_table(md, hdr, 3, g.rows, g.n);
	grid_free(&g);
	free(idx);
	perfdb_strbuf_release(&ex);
	return rc;
}

static int render(struct perfdb_strbuf *md, const struct perfdb_wb_result *r,
		  const struct perfdb_status *st, const struct perfdb_wb_gap **hot, size_t nhot)
{
	int rc = perfdb_strbuf_addstr(md, "# Profile Update Report");
	if (rc == 0 && st) {
		rc = perfdb_strbuf_addf(md, "\n\n## Operator Execution Status\n- Success: %zu\n- Failed: %zu\n"
					"- Skipped: %zu", st->nsuccess, st->nfailed, st->nskipped);
		for (size_t i = 0; rc == 0 && i < st->nfailed; i++)
			rc = perfdb_strbuf_addf(md, "\n  - FAILED: %s: %s", st->failed[i].op,
						st->failed[i].reason);
		/* perfdb's own line for native runs: Success and Skipped count tables, Failed rows */
		if (rc == 0 && st->has_rows)
			rc = perfdb_strbuf_addf(md, "\n- Rows: %zu measured, %zu failed, %zu contended (not written), "
						"%zu skipped (Success and Skipped count tables, Failed counts rows)",
						st->rows_measured, st->rows_failed, st->rows_contended, st->rows_skipped);
		/* the end-of-run pass (docs/replay.md "Contention"), only when it ran */
		if (rc == 0 && st->has_rows && st->rows_again)
			rc = perfdb_strbuf_addf(md, "\n- Measured again at the end of the run: %zu row%s, %zu written",
						st->rows_again, st->rows_again == 1 ? "" : "s", st->rows_again_written);
		/* perfdb's own line, only when a row was left unwritten (docs/replay.md "Contention") */
		if (rc == 0 && st->ncontended)
			rc = perfdb_strbuf_addf(md, "\n- Contended (not written): %zu", st->ncontended);
		for (size_t i = 0; rc == 0 && i < st->ncontended; i++)
			rc = perfdb_strbuf_addf(md, "\n  - CONTENDED: %s: %s", st->contended[i].op,
						st->contended[i].reason);
	}
	size_t upd = 0, add = 0, del = 0, unch = 0, dups = 0, miss = 0;
	for (size_t i = 0; i < r->nfiles; i++) {
		upd += r->files[i].updated;
		add += r->files[i].added;
		del += r->files[i].ndeleted;
		unch += r->files[i].unchanged;
		dups += r->files[i].ndups;
		miss += r->files[i].nmissing;
	}
	struct grid ov = { NULL, 0, 2 };
	char b[8][64];
	snprintf(b[0], 64, "%zu", r->nfiles);
	snprintf(b[1], 64, "%zu", upd);
	snprintf(b[2], 64, "%zu", add);
	snprintf(b[3], 64, "%zu", del);
	snprintf(b[4], 64, "%zu", unch);
	snprintf(b[5], 64, "%zu", dups);
	snprintf(b[6], 64, "%zu", miss);
	snprintf(b[7], 64, "%zu", nhot);
	static const char *const names[8] = {
		"CSV files touched", "Rows updated", "Rows added", "Rows deleted", "Rows unchanged",
		"Duplicate signatures", "Missing shapes", "Hotspots",
	};
	for (int i = 0; rc == 0 && i < 8; i++)
		rc = grid_add(&ov, names[i], b[i]);
	char thr[96];
	snprintf(thr, sizeof(thr), "microbench/profiling not in [%.2fx, %.2fx]",
		 PERFDB_SCHEMA_BAND_LO, PERFDB_SCHEMA_BAND_HI);
	if (rc == 0)
		rc = grid_add(&ov, "Gap threshold", thr);
	static const char *const ovh[2] = { "Metric", "Value" };
	if (rc == 0)
		rc = perfdb_strbuf_addstr(md, "\n\n## Overview\n");
	if (rc == 0)
		rc = perfdb_md_table(md, ovh, 2, ov.rows, ov.n);
	grid_free(&ov);

	/* Update Summary */
	struct grid us = { NULL, 0, 6 };
	size_t *idx = malloc((r->nfiles ? r->nfiles : 1) * sizeof(*idx));
	struct perfdb_strbuf ex = PERFDB_STRBUF_INIT;
	if (!idx)
		rc = -PERFDB_ENOMEM;
	for (size_t i = 0; rc == 0 && i < r->nfiles; i++)
		idx[i] = i;
	struct sortctx sc = { r, 0 };
	if (rc == 0 && r->nfiles > 1)
		qsort_r(idx, r->nfiles, sizeof(*idx), cmp_update, &sc);
	for (size_t k = 0; rc == 0 && k < r->nfiles; k++) {
		const struct perfdb_wb_file *f = &r->files[idx[k]];
		char u[32], a[32], d[32], n[32];
		snprintf(u, 32, "%zu", f->updated);
		snprintf(a, 32, "%zu", f->added);
		snprintf(d, 32, "%zu", f->ndeleted);
		snprintf(n, 32, "%zu", f->unchanged);
		join_examples(&ex, f->missing, f->nmissing);
		rc = grid_add(&us, f->stem, u, a, d, n, ex.buf[0] ? ex.buf : "-");
	}
	static const char *const ush[6] = { "Operator", "Updated", "Added", "Deleted", "Unchanged",
					    "Missing Samples" };
	if (rc == 0)
		rc = perfdb_strbuf_addstr(md, "\n\n## Update Summary\n");
	if (rc == 0)
		rc = perfdb_md_table(md, ush, 6, us.rows, us.n);
	grid_free(&us);
	free(idx);
	perfdb_strbuf_release(&ex);
	if (rc == 0)
		rc = kind_table(md, r, 0, "Missing Shapes");
	if (rc == 0)
		rc = kind_table(md, r, 1, "Deleted Empty Rows");
	if (rc == 0)
		rc = kind_table(md, r, 2, "Duplicate Signatures");

	struct grid gh = { NULL, 0, 6 };
	for (size_t i = 0; rc == 0 && i < nhot && i < MAX_GAPS; i++) {
		char mb[64], pf[64], df[64], ra[64];
		snprintf(mb, 64, "%.6f", hot[i]->mb);
		snprintf(pf, 64, "%.6f", hot[i]->prof);
		snprintf(df, 64, "%.6f", hot[i]->diff);
		snprintf(ra, 64, "%.2fx", hot[i]->ratio);
		rc = grid_add(&gh, hot[i]->op, mb, pf, df, ra, hot[i]->shape);
	}
	static const char *const ghh[6] = { "Operator", "MicroBench(us)", "Profiling(us)",
					    "Abs Diff(us)", "MB/Profile", "Shape" };
	if (rc == 0)
		rc = perfdb_strbuf_addstr(md, "\n\n## Duration Gap Hotspots\n");
	if (rc == 0)
		rc = perfdb_md_table(md, ghh, 6, gh.rows, gh.n);
	grid_free(&gh);

	if (rc == 0 && st && st->nfailed) {
		struct grid fl = { NULL, 0, 2 };
		for (size_t i = 0; rc == 0 && i < st->nfailed; i++)
			rc = grid_add(&fl, st->failed[i].op, st->failed[i].reason);
		static const char *const flh[2] = { "Operator", "Reason" };
		if (rc == 0)
			rc = perfdb_strbuf_addstr(md, "\n\n## Failures\n> [!WARNING]\n> Operators that failed.\n\n");
		if (rc == 0)
			rc = perfdb_md_table(md, flh, 2, fl.rows, fl.n);
		grid_free(&fl);
	}
	if (rc == 0)
		rc = perfdb_strbuf_addch(md, '\n');
	return rc;
}

void perfdb_report_timestamp(char *ts, size_t cap)
{
	const char *fixed = getenv("PERFDB_TIMESTAMP");
	if (fixed && *fixed) {
		snprintf(ts, cap, "%s", fixed);
		return;
	}
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(ts, cap, "%Y%m%d_%H%M%S", &tm);
}

int perfdb_report_dir_prepare(const char *dbdir, struct perfdb_err *err)
{
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&dir, "%s/reports", dbdir);
	int rc = perfdb_mkdir_p(dbdir, err);   /* a failure names the database first */
	if (rc == 0)
		rc = perfdb_mkdir_p(dir.buf, err);
	struct stat st;
	if (rc == 0 && (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)))
		rc = perfdb_err_set(err, PERFDB_EIO, "cannot write reports: '%s' is not a directory",
				    dir.buf);
	if (rc == 0 && access(dir.buf, W_OK | X_OK) < 0)
		rc = perfdb_err_errno(err, errno, "cannot write reports in '%s'", dir.buf);
	perfdb_strbuf_release(&dir);
	return rc;
}

int perfdb_report_write(const char *dbdir, const struct perfdb_wb_result *r,
			const struct perfdb_status *st, const char *run_ts, struct perfdb_strbuf *md,
			char **md_path, char **csv_path, struct perfdb_err *err)
{
	*md_path = *csv_path = NULL;
	const struct perfdb_wb_gap **hot = malloc((r->ngaps ? r->ngaps : 1) * sizeof(*hot));
	if (!hot)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t nhot = 0;
	for (size_t i = 0; i < r->ngaps; i++)
		if (!perfdb_schema_in_band(r->gaps[i].ratio))
			hot[nhot++] = &r->gaps[i];
	if (nhot > 1)
		qsort(hot, nhot, sizeof(*hot), cmp_gap);
	perfdb_strbuf_reset(md);
	int rc = render(md, r, st, hot, nhot);
	if (rc < 0) {
		free(hot);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}

	char ts[64];
	if (run_ts)
		snprintf(ts, sizeof(ts), "%s", run_ts);
	else
		perfdb_report_timestamp(ts, sizeof(ts));
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, path = PERFDB_STRBUF_INIT,
			     csv = PERFDB_STRBUF_INIT, file = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addf(&dir, "%s/reports", dbdir);
	rc = perfdb_mkdir_p(dir.buf, err);
	if (rc == 0) {
		static const char *const hdr[7] = { "Operator", "CSV Name", "MicroBench(us)",
						    "Profiling(us)", "Abs Diff(us)", "MB/Profile", "Shape" };
		perfdb_csv_put_row(&csv, hdr, 7);
		for (size_t i = 0; i < nhot; i++) {
			char v[4][64];
			snprintf(v[0], 64, "%.6f", hot[i]->mb);
			snprintf(v[1], 64, "%.6f", hot[i]->prof);
			snprintf(v[2], 64, "%.6f", hot[i]->diff);
			snprintf(v[3], 64, "%.6f", hot[i]->ratio);
			const char *row[7] = { hot[i]->op, hot[i]->csv_name, v[0], v[1], v[2], v[3],
					       hot[i]->shape };
			perfdb_csv_put_row(&csv, row, 7);
		}
		perfdb_strbuf_addf(&path, "%s/duration_gap_hotspots_full_%s.csv", dir.buf, ts);
		rc = perfdb_file_write_atomic(path.buf, csv.buf, csv.len, err);
	}
	if (rc == 0) {
		*csv_path = strdup(path.buf);
		perfdb_strbuf_add(&file, md->buf, md->len);
		perfdb_strbuf_addf(&file, "Full hotspot CSV: duration_gap_hotspots_full_%s.csv\n", ts);
		perfdb_strbuf_reset(&path);
		perfdb_strbuf_addf(&path, "%s/profile_update_report_%s.md", dir.buf, ts);
		rc = perfdb_file_write_atomic(path.buf, file.buf, file.len, err);
		if (rc == 0)
			*md_path = strdup(path.buf);
	}
	perfdb_strbuf_release(&dir);
	perfdb_strbuf_release(&path);
	perfdb_strbuf_release(&csv);
	perfdb_strbuf_release(&file);
	free(hot);
	return rc;
}
