/*
 * Answers from a performance database, with the consumer's rules
 * (docs/predict.md "Lookup"; TensorCast's ProfilingDataSource wrapped in
 * InterpolatingDataSource).
 *
 * 1. Exact: the first row of the op's table whose signature (signature.h:
 *    shapes, dtypes, formats, output shapes and dtypes, normalised) is the
 *    call's.  Its latency is the first finite positive cell of "Average
 *    Duration(us)" (the replayed figure), "Profiling Average Duration(us)",
 *    "Duration(us)", the consumer's order; with measured_only only the first.
 * 2. Interpolated: the token axis is dim 0 of input 0.  Rows whose dtypes,
 *    formats and shape ranks are the call's, and whose every dim equals the
 *    call's except where the call's dim is the token count T and the row's
 *    is its own token count R, are points (R, latency).  The nearest point
 *    below T and the nearest above give a straight line; T outside the
 *    points is a miss: the consumer never extrapolates.
 *
 * Tables are loaded when a call first names them and kept; a table's
 * interpolation points are parsed when it first misses.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/signature.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"
#include "parse/parse.h"
#include "predict/predict_internal.h"

const char *const perfdb_predict_columns[PERFDB_PREDICT_NCOLUMNS] = {
	"Average Duration(us)", "Profiling Average Duration(us)", "Duration(us)",
};

/* Shapes of one row, flattened: dims of every slot in order, and each
 * slot's rank, for the token-axis comparison. */
struct shapes {
	int64_t *dims;
	size_t ndims;
	uint8_t *ranks;
	size_t nslots;
	int ok;          /* every slot parsed */
};

struct point {
	struct shapes in, out;
	char *dkey;      /* the signature without shapes: dtypes and formats */
	double us;
	int column;
	size_t row;      /* the table row it is */
};

struct dbtable {
	char *name;
	char *file;          /* the file it was read from, for the answers' detail */
	int present;
	struct perfdb_table t;
	struct perfdb_sig_index ix;
	long col[PERFDB_PREDICT_NCOLUMNS];
	struct point *pts;   /* NULL until the first interpolation */
	size_t npts;
	double *weight;      /* per row: the step's calls it answers (pred_db_credit), NULL: none */
};

struct pred_db {
	char *dir;
	int measured_only;
	struct dbtable *v;
	size_t n, cap;
	struct perfdb_strbuf sig, path;
	struct perfdb_strbuf qkey;   /* the query's dtype key (sig is load_points' scratch) */
};

static int nomem(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

static void shapes_release(struct shapes *s)
{
	free(s->dims);
	free(s->ranks);
}

/* Parse a shapes cell; s->ok = 0 when a slot is not a plain shape. */
static int shapes_parse(const char *cell, size_t len, struct shapes *s)
{
	memset(s, 0, sizeof(*s));
	struct perfdb_slots sl;
	perfdb_slots_init(&sl);
	if (perfdb_shape_split_slots((struct perfdb_span){ cell, len }, &sl) < 0)
		return -PERFDB_ENOMEM;
	s->ok = 1;
	s->dims = malloc((sl.n * PERFDB_SHAPE_MAX_DIMS + 1) * sizeof(*s->dims));
	s->ranks = malloc(sl.n + 1);
	if (!s->dims || !s->ranks) {
		perfdb_slots_release(&sl);
		shapes_release(s);
		return -PERFDB_ENOMEM;
	}
	for (size_t i = 0; i < sl.n; i++) {
		size_t nd = 0;
		struct perfdb_err e;
		if (perfdb_shape_parse_dims(sl.v[i], s->dims + s->ndims, PERFDB_SHAPE_MAX_DIMS,
					    &nd, &e) < 0) {
			s->ok = 0;
			nd = 0;
		}
		s->ranks[i] = (uint8_t)nd;
		s->ndims += nd;
	}
	s->nslots = sl.n;
	perfdb_slots_release(&sl);
	return 0;
}

/* One cell's slots, each canonical (dtypes: perfdb_dtype_canonical) or
 * trimmed (formats), ';'-joined onto out. */
static int add_slots(const char *cell, int dtypes, struct perfdb_strbuf *out)
{
	struct perfdb_slots sl;
	perfdb_slots_init(&sl);
	int rc = perfdb_shape_split_slots((struct perfdb_span){ cell, strlen(cell) }, &sl);
	for (size_t i = 0; rc == 0 && i < sl.n; i++) {
		if (i && perfdb_strbuf_addch(out, ';') < 0)
			rc = -PERFDB_ENOMEM;
		else if (perfdb_shape_slot_is_null(sl.v[i]))
			continue;
		else if (dtypes)
			rc = perfdb_dtype_canonical(sl.v[i], out);
		else
			rc = perfdb_strbuf_add(out, sl.v[i].p, sl.v[i].len);
	}
	perfdb_slots_release(&sl);
	return rc < 0 ? rc : 0;
}

/* What must be equal for two rows to lie on one token axis besides the
 * shapes: the dtypes (spellings normalised), formats and output dtypes. */
static int dtype_key(const char *ind, const char *inf, const char *outd,
		     struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	if (add_slots(ind, 1, out) < 0 || perfdb_strbuf_addch(out, '|') < 0 ||
	    add_slots(inf, 0, out) < 0 || perfdb_strbuf_addch(out, '|') < 0 ||
	    add_slots(outd, 1, out) < 0)
		return -PERFDB_ENOMEM;
	return 0;
}

int pred_db_has_tables(const char *dir, struct perfdb_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return perfdb_err_set(err, PERFDB_ENOENT, "database directory not found: '%s' (check "
				      "--database-path, or the device and version flags with 'perfdb "
				      "path')", dir);
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		found = l > 4 && strcmp(e->d_name + l - 4, ".csv") == 0;
	}
	closedir(d);
	return found;
}

int pred_db_open(struct pred_db **out, const char *dir, int measured_only,
		 struct perfdb_err *err)
{
	struct pred_db *db = calloc(1, sizeof(*db));
	if (!db || !(db->dir = strdup(dir))) {
		free(db);
		return nomem(err);
	}
	db->measured_only = measured_only;
	perfdb_strbuf_init(&db->sig);
	perfdb_strbuf_init(&db->path);
	perfdb_strbuf_init(&db->qkey);
	*out = db;
	return 0;
}

void pred_db_close(struct pred_db *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->n; i++) {
		struct dbtable *t = &db->v[i];
		free(t->name);
		free(t->file);
		perfdb_table_release(&t->t);
		perfdb_sig_index_release(&t->ix);
		for (size_t k = 0; k < t->npts; k++) {
			shapes_release(&t->pts[k].in);
			shapes_release(&t->pts[k].out);
			free(t->pts[k].dkey);
		}
		free(t->pts);
		free(t->weight);
	}
	free(db->v);
	free(db->dir);
	perfdb_strbuf_release(&db->sig);
	perfdb_strbuf_release(&db->path);
	perfdb_strbuf_release(&db->qkey);
	free(db);
}

void pred_db_counts(const struct pred_db *db, size_t *found, size_t *absent)
{
	*found = *absent = 0;
	for (size_t i = 0; i < db->n; i++)
		(db->v[i].present ? found : absent)[0]++;
}

static struct dbtable *find_table(struct pred_db *db, const char *name, size_t len)
{
	for (size_t i = 0; i < db->n; i++)
		if (strlen(db->v[i].name) == len && memcmp(db->v[i].name, name, len) == 0)
			return &db->v[i];
	return NULL;
}

/* The table named name, loaded on first use; present = 0 when the file is absent. */
static int get_table(struct pred_db *db, const char *name, size_t len, const char *trace_name,
		     struct dbtable **out, struct perfdb_err *err)
{
	if ((*out = find_table(db, name, len)))
		return 0;
	if (db->n == db->cap) {
		size_t cap = db->cap ? db->cap * 2 : 32;
		struct dbtable *v = realloc(db->v, cap * sizeof(*v));
		if (!v)
			return nomem(err);
		db->v = v;
		db->cap = cap;
	}
	struct dbtable *t = &db->v[db->n];
	memset(t, 0, sizeof(*t));
	perfdb_table_init(&t->t);
	perfdb_sig_index_init(&t->ix);
	if (!(t->name = strndup(name, len)))
		return nomem(err);
	db->n++;
	*out = t;
	perfdb_strbuf_reset(&db->path);
	if (perfdb_strbuf_addf(&db->path, "%s/%s.csv", db->dir, t->name) < 0)
		return nomem(err);
	FILE *f = fopen(db->path.buf, "rb");
	if (!f) {
		/* a trace's op: its table has a readable name (parse/trace_names.c) */
		struct perfdb_strbuf stem = PERFDB_STRBUF_INIT;
		int found = trace_name ? perfdb_trace_table_find(db->dir, trace_name, &stem) : 0;
		if (found > 0) {
			perfdb_strbuf_reset(&db->path);
			found = perfdb_strbuf_addf(&db->path, "%s/%s.csv", db->dir, stem.buf) < 0 ?
				-PERFDB_ENOMEM : found;
		}
		perfdb_strbuf_release(&stem);
		if (found < 0)
			return nomem(err);
		if (found == 0)
			return 0;     /* absent: every call of it misses */
	} else {
		fclose(f);
	}
	PERFDB_TRY(perfdb_table_load(&t->t, db->path.buf, err));
	PERFDB_TRY(perfdb_table_index(&t->t, t->name, &t->ix, err));
	const char *base = strrchr(db->path.buf, '/');
	if (!(t->file = strdup(base ? base + 1 : db->path.buf)))
		return nomem(err);
	for (int c = 0; c < PERFDB_PREDICT_NCOLUMNS; c++)
		t->col[c] = perfdb_table_col(&t->t, perfdb_predict_columns[c]);
	t->present = 1;
	return 0;
}

/* The consumer's latency of a row: the first finite positive column. */
static int row_latency(const struct pred_db *db, const struct dbtable *t, size_t row,
		       double *us)
{
	int ncols = db->measured_only ? 1 : PERFDB_PREDICT_NCOLUMNS;
	for (int c = 0; c < ncols; c++) {
		if (t->col[c] < 0)
			continue;
		const char *cell = perfdb_table_get(&t->t, row, t->col[c]);
		double v;
		if (perfdb_stats_parse_double(cell, strlen(cell), &v) == 0 && isfinite(v) && v > 0) {
			*us = v;
			return c;
		}
	}
	return -1;
}

static int load_points(struct pred_db *db, struct dbtable *t, struct perfdb_err *err)
{
	t->pts = calloc(t->t.nrows + 1, sizeof(*t->pts));
	if (!t->pts)
		return nomem(err);
	long ci[5];
	static const char *const names[5] = { "Input Shapes", "Input Data Types",
		"Input Formats", "Output Shapes", "Output Data Types" };
	for (int i = 0; i < 5; i++)
		ci[i] = perfdb_table_col(&t->t, names[i]);
	for (size_t r = 0; r < t->t.nrows; r++) {
		double us;
		int c = row_latency(db, t, r, &us);
		if (c < 0)
			continue;
		struct point *p = &t->pts[t->npts];
		const char *ins = perfdb_table_get(&t->t, r, ci[0]);
		const char *outs = perfdb_table_get(&t->t, r, ci[3]);
		if (shapes_parse(ins, strlen(ins), &p->in) < 0 ||
		    shapes_parse(outs, strlen(outs), &p->out) < 0 ||
		    dtype_key(perfdb_table_get(&t->t, r, ci[1]), perfdb_table_get(&t->t, r, ci[2]),
			      perfdb_table_get(&t->t, r, ci[4]), &db->sig) < 0 ||
		    !(p->dkey = strdup(db->sig.buf))) {
			shapes_release(&p->in);
			shapes_release(&p->out);
			return nomem(err);
		}
		p->us = us;
		p->column = c;
		p->row = r;
		t->npts++;
		if (!p->in.ok || !p->in.nslots || !p->in.ranks[0]) {
			shapes_release(&p->in);
			shapes_release(&p->out);
			free(p->dkey);
			t->npts--;
		}
	}
	return 0;
}

/* Does row shape r lie on query q's token axis (T = q's token count)? */
static int on_axis(const struct shapes *q, const struct shapes *r, int64_t T, int64_t R)
{
	if (!r->ok || q->nslots != r->nslots || q->ndims != r->ndims)
		return 0;
	for (size_t i = 0; i < q->nslots; i++)
		if (q->ranks[i] != r->ranks[i])
			return 0;
	for (size_t j = 0; j < q->ndims; j++)
		if (q->dims[j] != r->dims[j] && !(q->dims[j] == T && r->dims[j] == R))
			return 0;
	return 1;
}

static int interpolate(struct pred_db *db, struct dbtable *t, const char *const f[PK_N],
		       const size_t len[PK_N], struct pred_answer *a, struct perfdb_err *err)
{
	struct shapes qin, qout;
	int rc = 0;
	if (shapes_parse(f[PK_INS], len[PK_INS], &qin) < 0)
		return nomem(err);
	if (shapes_parse(f[PK_OUTS], len[PK_OUTS], &qout) < 0) {
		shapes_release(&qin);
		return nomem(err);
	}
	char *ind = strndup(f[PK_IND], len[PK_IND]), *inf = strndup(f[PK_INF], len[PK_INF]);
	char *outd = strndup(f[PK_OUTD], len[PK_OUTD]);
	if (!ind || !inf || !outd || dtype_key(ind, inf, outd, &db->qkey) < 0) {
		rc = nomem(err);
		goto out;
	}
	if (!qin.ok || !qin.nslots || !qin.ranks[0]) {
		snprintf(a->detail, sizeof(a->detail), "no row of these shapes; input 0 has no "
			 "token axis to interpolate along");
		goto out;
	}
	if (!t->pts && (rc = load_points(db, t, err)) < 0)
		goto out;
	int64_t T = qin.dims[0];
	const struct point *lo = NULL, *hi = NULL;
	size_t family = 0;
	for (size_t k = 0; k < t->npts; k++) {
		const struct point *p = &t->pts[k];
		int64_t R = p->in.dims[0];
		if (strcmp(p->dkey, db->qkey.buf) != 0 || !on_axis(&qin, &p->in, T, R))
			continue;
		if ((qout.nslots || p->out.nslots) && !on_axis(&qout, &p->out, T, R))
			continue;
		if (R == T)
			continue;   /* these shapes: the exact lookup had its say */
		family++;
		if (R < T && (!lo || R > lo->in.dims[0]))
			lo = p;
		if (R > T && (!hi || R < hi->in.dims[0]))
			hi = p;
	}
	if (!lo || !hi) {
		if (!lo && !hi)
			snprintf(a->detail, sizeof(a->detail),
				 "no row of these shapes, and none that differs only in the "
				 "token axis (input 0 dim 0 = %lld)", (long long)T);
		else
			snprintf(a->detail, sizeof(a->detail),
				 "no row of these shapes; %lld tokens is outside the %zu rows "
				 "along the token axis (%s %lld): no extrapolation",
				 (long long)T, family, lo ? "largest" : "smallest",
				 (long long)(lo ? lo->in.dims[0] : hi->in.dims[0]));
		goto out;
	}
	double x0 = (double)lo->in.dims[0], x1 = (double)hi->in.dims[0], w = ((double)T - x0) / (x1 - x0);
	a->us = lo->us + w * (hi->us - lo->us);
	a->how = PERFDB_PREDICT_INTERPOLATED;
	a->nsrc = 2;
	a->src[0] = (struct pred_src){ (size_t)(t - db->v), lo->row, 1 - w };
	a->src[1] = (struct pred_src){ (size_t)(t - db->v), hi->row, w };
	a->column = lo->column > hi->column ? lo->column : hi->column;
	snprintf(a->detail, sizeof(a->detail), "%lld tokens between %lld (%.3f us) and %lld (%.3f us)",
		 (long long)T, (long long)lo->in.dims[0], lo->us, (long long)hi->in.dims[0],
		 hi->us);
out:
	free(ind);
	free(inf);
	free(outd);
	shapes_release(&qin);
	shapes_release(&qout);
	return rc;
}

/* The row of table t with the call key's signature, or NULL (*out). */
static int find_row(struct pred_db *db, struct dbtable *t, const char *const f[PK_N], const size_t len[PK_N],
		    const struct perfdb_sig_index_entry **out, struct perfdb_err *err)
{
	char *cells[PK_N];
	for (int i = 1; i < PK_N; i++)
		if (!(cells[i] = strndup(f[i], len[i]))) {
			while (--i > 0)
				free(cells[i]);
			return nomem(err);
		}
	struct perfdb_sig_row sr = { cells[PK_INS], cells[PK_IND], cells[PK_INF], cells[PK_OUTS],
				     cells[PK_OUTD], NULL };
	int rc = perfdb_sig_compute(t->name, &sr, &db->sig);
	for (int i = 1; i < PK_N; i++)
		free(cells[i]);
	if (rc < 0)
		return nomem(err);
	*out = perfdb_sig_index_find(&t->ix, db->sig.buf);
	return 0;
}

int pred_db_lookup(struct pred_db *db, const char *const f[PK_N], const size_t len[PK_N],
		   const char *trace_name, struct pred_answer *a, struct perfdb_err *err)
{
	a->how = PERFDB_PREDICT_MISSING;
	a->us = 0;
	a->column = -1;
	a->detail[0] = '\0';
	a->nsrc = 0;
	struct dbtable *t;
	PERFDB_TRY(get_table(db, f[PK_TABLE], len[PK_TABLE], trace_name, &t, err));
	if (!t->present) {
		snprintf(a->detail, sizeof(a->detail), "no table %s.csv", t->name);
		return 0;
	}
	const struct perfdb_sig_index_entry *e;
	PERFDB_TRY(find_row(db, t, f, len, &e, err));
	if (e) {
		a->column = row_latency(db, t, e->row, &a->us);
		if (a->column >= 0) {
			a->how = PERFDB_PREDICT_HIT;
			a->nsrc = 1;
			a->src[0] = (struct pred_src){ (size_t)(t - db->v), e->row, 1 };
			snprintf(a->detail, sizeof(a->detail), "%s line %zu", t->file,
				 t->t.rows[e->row].line);
			return 0;
		}
	}
	PERFDB_TRY(interpolate(db, t, f, len, a, err));
	if (a->how == PERFDB_PREDICT_MISSING && e) {
		/* the row exists: say why it did not answer, not that it is absent */
		snprintf(a->detail, sizeof(a->detail), "%s line %zu has no %s", t->file,
			 t->t.rows[e->row].line,
			 db->measured_only ? "Average Duration(us) (not replayed)" :
			 "finite positive duration");
	}
	return 0;
}

int pred_db_row(struct pred_db *db, const char *const f[PK_N], const size_t len[PK_N],
		const char *trace_name, const char **file, size_t *line, struct perfdb_err *err)
{
	struct dbtable *t;
	PERFDB_TRY(get_table(db, f[PK_TABLE], len[PK_TABLE], trace_name, &t, err));
	if (!t->present)
		return 0;
	const struct perfdb_sig_index_entry *e;
	PERFDB_TRY(find_row(db, t, f, len, &e, err));
	if (!e)
		return 0;
	*file = t->file;
	*line = t->t.rows[e->row].line;
	return 1;
}

int pred_db_credit(struct pred_db *db, const struct pred_answer *a, double times)
{
	for (size_t k = 0; k < a->nsrc; k++) {
		struct dbtable *t = &db->v[a->src[k].table];
		if (!t->weight && !(t->weight = calloc(t->t.nrows + 1, sizeof(*t->weight))))
			return -PERFDB_ENOMEM;
		t->weight[a->src[k].row] += times * a->src[k].w;
	}
	return 0;
}

/* A cell as a finite number, or -1. */
static double cell_number(const struct dbtable *t, size_t row, const char *col)
{
	long c = perfdb_table_col(&t->t, col);
	if (c < 0)
		return -1;
	const char *cell = perfdb_table_get(&t->t, row, c);
	double v;
	return perfdb_stats_parse_double(cell, strlen(cell), &v) == 0 && isfinite(v) && v >= 0 ? v : -1;
}

void pred_db_noise(const struct pred_db *db, double *se_us, double *with_us, double *without_us)
{
	double var = 0;
	*with_us = *without_us = 0;
	for (size_t i = 0; i < db->n; i++) {
		const struct dbtable *t = &db->v[i];
		for (size_t r = 0; t->weight && r < t->t.nrows; r++) {
			double w = t->weight[r], us;
			if (w == 0)
				continue;
			int c = row_latency(db, t, r, &us);
			double sd = cell_number(t, r, PERFDB_COL_MB_STD), n = cell_number(t, r, PERFDB_COL_MB_SAMPLES);
			/* Std and Samples describe the replayed column only: a profiler's
			 * figure beside them is another measurement */
			if (c == 0 && sd >= 0 && n >= 2) {
				double se = w * sd / sqrt(n);
				var += se * se;
				*with_us += w * us;
			} else {
				*without_us += w * us;
			}
		}
	}
	*se_us = sqrt(var);
}
