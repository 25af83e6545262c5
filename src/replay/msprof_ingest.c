/*
 * msprof output into measurements (docs/spec/replay.md §1 step 8, §1a,
 * Decisions 2 and 5).
 *
 * Layout read: <root>/…/PROF_<id>/mindstudio_profiler_output/op_summary_<ts>.csv.
 * Rows are grouped by (OP Type, signature with op = OP Type); the first row
 * of a group gives the descriptive cells, `Task Type` gives Accelerator
 * Core.  Where the reference wrote the minimum launch time, perfdb writes
 * the mean of the steady-state launches (the first launch of a group is
 * dropped as warm-up when there are more) with min, median, std and the
 * sample count beside it (Decision 2).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/csv.h"
#include "perfdb/fsio.h"
#include "replay/replay.h"
#include "perfdb/schema.h"
#include "perfdb/signature.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -1;
	*v = nv;
	return (nv[*n] = strdup(s)) ? (int)(++*n) * 0 : -1;
}

static int starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

struct found {
	char ***files;
	size_t *nfiles, *nprof;
	struct perfdb_err *err;
};

/* op_summary_*.csv of a PROF_* directory's mindstudio_profiler_output/ */
static int visit_summary(void *ctx, const char *path, const char *name, int is_dir)
{
	struct found *f = ctx;
	if (!is_dir && starts_with(name, "op_summary_") && ends_with(name, ".csv") &&
	    push(f->files, f->nfiles, path) < 0)
		return perfdb_err_set(f->err, PERFDB_ENOMEM, "out of memory");
	return 0;
}

static int summaries_of(const char *prof, struct found *f)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/mindstudio_profiler_output", prof);
	(*f->nprof)++;
	if (!perfdb_is_dir(dir))
		return 0;
	return perfdb_dir_walk(dir, 0, visit_summary, f, f->err);
}

/* every PROF_* directory below the root, and what is below those */
static int visit_prof(void *ctx, const char *path, const char *name, int is_dir)
{
	struct found *f = ctx;
	if (!is_dir)
		return 0;
	if (starts_with(name, "PROF_")) {
		int rc = summaries_of(path, f);
		if (rc < 0)
			return rc;
	}
	return 1;
}

int perfdb_msprof_find(const char *root, char ***files, size_t *nfiles, size_t *nprof,
		       struct perfdb_err *err)
{
	*files = NULL;
	*nfiles = *nprof = 0;
	if (!perfdb_is_dir(root))
		return perfdb_err_set(err, PERFDB_ENOENT, "PROF path does not exist: %s", root);
	/* the root itself may be a PROF_* directory */
	struct found f = { files, nfiles, nprof, err };
	const char *base = strrchr(root, '/');
	base = base ? base + 1 : root;
	if (starts_with(base, "PROF_"))
		PERFDB_TRY(summaries_of(root, &f));
	return perfdb_dir_walk(root, 0, visit_prof, &f, err);
}

/* ---- aggregation ------------------------------------------------------ */

/* counter sums, for a group where some row had a counter */
struct counters {
	size_t n[PERFDB_NCOUNTERS];
	double sum[PERFDB_NCOUNTERS];
};

struct group {
	struct perfdb_measure m;
	double *d;
	size_t nd, capd;
	struct counters *c;   /* NULL: no counter seen */
};

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };

static const char *cell(const struct perfdb_table *t, size_t r, const char *col)
{
	return perfdb_table_get(t, r, perfdb_table_col(t, col));
}

/* Cells are stripped, as the reference strips them. */
static char *strip_dup(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	return strndup(s, n);
}

static int add_file(const char *path, long ep, struct group **g, size_t *ng, size_t *capg,
		    struct perfdb_sig_index *ix, struct perfdb_err *err)
{
	/* one row at a time: an op_summary of any size is read in its groups' memory */
	struct perfdb_table t;
	perfdb_table_init(&t);
	struct perfdb_csv_reader *rd = NULL;
	struct perfdb_table_mark mark;
	t.name = strdup(path);
	int rc = t.name ? perfdb_csv_open(&rd, path, PERFDB_CSV_UTF8, err) :
			  perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0)
		rc = perfdb_table_read_header(&t, rd, err);
	perfdb_table_mark(&t, &mark);
	struct perfdb_strbuf sig = PERFDB_STRBUF_INIT, key = PERFDB_STRBUF_INIT;
	while (rc == 0) {
		perfdb_table_rewind(&t, &mark);
		int got = perfdb_table_read_row(&t, rd, err);
		if (got <= 0) {
			rc = got;
			break;
		}
		const size_t r = 0;   /* the row just read */
		char *op = strip_dup(cell(&t, r, PERFDB_COL_OPS_TYPE));
		if (!op) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		if (!op[0]) {
			free(op);
			continue;
		}
		struct perfdb_sig_row sr = {
			cell(&t, r, PERFDB_COL_IN_SHAPES), cell(&t, r, PERFDB_COL_IN_DTYPES),
			cell(&t, r, PERFDB_COL_IN_FORMATS), cell(&t, r, PERFDB_COL_OUT_SHAPES),
			cell(&t, r, PERFDB_COL_OUT_DTYPES), cell(&t, r, PERFDB_COL_EP_SIZE),
		};
		perfdb_sig_compute(op, &sr, &sig);
		perfdb_strbuf_reset(&key);
		perfdb_strbuf_addf(&key, "%s\x1f%s", op, sig.buf);
		const struct perfdb_sig_index_entry *e = perfdb_sig_index_find(ix, key.buf);
		struct group *gr;
		if (e) {
			gr = &(*g)[e->row];
			free(op);
		} else {
			if (*ng == *capg) {
				*capg = *capg ? *capg * 2 : 64;
				struct group *n2 = realloc(*g, *capg * sizeof(**g));
				if (!n2) {
					free(op);
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				*g = n2;
			}
			gr = &(*g)[*ng];
			memset(gr, 0, sizeof(*gr));
			gr->m.op = op;
			for (int b = 0; b < 8; b++)
				gr->m.base[b] = strip_dup(cell(&t, r, base_cols[b]));
			free(gr->m.base[1]);
			gr->m.base[1] = strip_dup(cell(&t, r, PERFDB_COL_OPS_TASK_TYPE));
			if (strcmp(op, PERFDB_DFC_OP) == 0 && ep > 0) {
				char b[32];
				snprintf(b, sizeof(b), "%ld", ep);
				gr->m.ep_size = strdup(b);
			}
			if (perfdb_sig_index_add(ix, key.buf, *ng) < 0) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				break;
			}
			(*ng)++;
		}
		const char *dur = cell(&t, r, PERFDB_COL_OPS_TASK_DUR);
		double d;
		if (perfdb_stats_parse_double(dur, strlen(dur), &d) == 0 && isfinite(d) && d >= 0) {
			if (gr->nd == gr->capd) {
				gr->capd = gr->capd ? gr->capd * 2 : 8;
				double *nd = realloc(gr->d, gr->capd * sizeof(*nd));
				if (!nd) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				gr->d = nd;
			}
			gr->d[gr->nd++] = d;
		}
		for (int c = 0; c < PERFDB_NCOUNTERS; c++) {
			const char *v = cell(&t, r, perfdb_counter_names[c]);
			double x;
			if (perfdb_stats_parse_double(v, strlen(v), &x) == 0 && isfinite(x)) {
				if (!gr->c && !(gr->c = calloc(1, sizeof(*gr->c)))) {
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
					break;
				}
				gr->c->n[c]++;
				gr->c->sum[c] += x;
			}
		}
	}
	perfdb_strbuf_release(&sig);
	perfdb_strbuf_release(&key);
	if (rd)
		perfdb_csv_close(rd);
	perfdb_table_release(&t);
	return rc;
}

int perfdb_msprof_aggregate(char *const *files, size_t nfiles, long ep,
			    struct perfdb_measures *out, struct perfdb_err *err)
{
	struct group *g = NULL;
	size_t ng = 0, capg = 0;
	struct perfdb_sig_index ix;
	perfdb_sig_index_init(&ix);
	int rc = 0;
	for (size_t i = 0; i < nfiles && rc == 0; i++)
		rc = add_file(files[i], ep, &g, &ng, &capg, &ix, err);
	perfdb_sig_index_release(&ix);
	memset(out, 0, sizeof(*out));
	if (rc == 0) {
		out->v = calloc(ng ? ng : 1, sizeof(*out->v));
		if (!out->v)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ng; i++) {
		struct group *gr = &g[i];
		if (rc == 0) {
			/* Decision 2: the first launch warms up when there are more */
			double *x = gr->d;
			size_t n = gr->nd;
			if (n > 1) {
				x++;
				n--;
			}
			if (n) {
				struct perfdb_stats st;
				perfdb_stats_compute(x, n, &st);
				gr->m.samples = n;
				gr->m.mean = st.mean;
				gr->m.min = st.min;
				gr->m.median = st.median;
				gr->m.std = st.std;
			}
			if (gr->c && !(gr->m.cmean = malloc(PERFDB_NCOUNTERS * sizeof(double))))
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			for (int c = 0; gr->m.cmean && c < PERFDB_NCOUNTERS; c++)
				gr->m.cmean[c] = gr->c->n[c] ? gr->c->sum[c] / (double)gr->c->n[c] : NAN;
			out->v[out->n++] = gr->m;
		} else {
			free(gr->m.op);
			for (int b = 0; b < 8; b++)
				free(gr->m.base[b]);
			free(gr->m.ep_size);
		}
		free(gr->d);
		free(gr->c);
	}
	free(g);
	return rc;
}
