/*
 * Table checks (src/report/check.h): the rules of perfdb check on one
 * loaded table, each finding a problem with its line.  Rows sharing a
 * signature follow docs/spec/replay.md §1b; durations and the count of
 * rows with one follow include/perfdb/schema.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/check.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/stats.h"

void perfdb_check_result_release(struct perfdb_check_result *r)
{
	for (size_t i = 0; i < r->nproblems; i++)
		free(r->problems[i].msg);
	free(r->problems);
	memset(r, 0, sizeof(*r));
}

/* The problems found so far, in the order the rules found them. */
struct found {
	struct perfdb_check_result *res;
	size_t cap;
	int rc;              /* the first failure (out of memory), else 0 */
};

static void problem(struct found *f, size_t line, long col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(struct found *f, size_t line, long col, const char *fmt, ...)
{
	if (f->rc)
		return;
	struct perfdb_check_result *r = f->res;
	if (r->nproblems == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct perfdb_check_problem *v = realloc(r->problems, cap * sizeof(*v));
		if (!v) {
			f->rc = -PERFDB_ENOMEM;
			return;
		}
		r->problems = v;
		f->cap = cap;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char *m = strdup(msg);
	if (!m) {
		f->rc = -PERFDB_ENOMEM;
		return;
	}
	r->problems[r->nproblems++] = (struct perfdb_check_problem){ line, col, m };
}

static void need_cols(const struct perfdb_table *t, struct found *f,
		      const char *const need[2], const char *why)
{
	for (int i = 0; i < 2; i++)
		if (perfdb_table_col(t, need[i]) < 0)
			problem(f, 1, -1, "missing column '%s'%s", need[i], why);
}

/* A shape cell is a problem at its first slot that does not parse. */
static void check_shapes(const struct perfdb_table *t, struct found *f, const char *col)
{
	long c = perfdb_table_col(t, col);
	if (c < 0)
		return;
	struct perfdb_slots slots;
	perfdb_slots_init(&slots);
	for (size_t r = 0; r < t->nrows; r++) {
		const char *cell = perfdb_table_get(t, r, c);
		struct perfdb_span sp = { cell, strlen(cell) };
		if (perfdb_shape_split_slots(sp, &slots) < 0)
			break;
		for (size_t s = 0; s < slots.n; s++) {
			int64_t dims[PERFDB_SHAPE_MAX_DIMS];
			size_t nd;
			struct perfdb_err e;
			perfdb_err_clear(&e);
			if (perfdb_shape_parse_dims(slots.v[s], dims, PERFDB_SHAPE_MAX_DIMS, &nd, &e) < 0) {
				problem(f, t->rows[r].line, c, "'%s' slot %zu: %s", col, s, e.msg);
				break;
			}
		}
	}
	perfdb_slots_release(&slots);
}

/* Every duration-like column: a non-empty cell must be a finite number >= 0. */
static void check_durations(const struct perfdb_table *t, struct found *f)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (!strstr(t->cols[c], PERFDB_COL_DURATION))
			continue;
		for (size_t r = 0; r < t->nrows; r++) {
			const char *cell = t->rows[r].cells[c];
			double v;
			if (!cell[0])
				continue;
			if (perfdb_stats_parse_double(cell, strlen(cell), &v) < 0)
				problem(f, t->rows[r].line, (long)c, "'%s': not a number: '%s'",
					t->cols[c], cell);
			else if (!isfinite(v) || v < 0)
				problem(f, t->rows[r].line, (long)c, "'%s': invalid duration '%s'",
					t->cols[c], cell);
		}
	}
}

/* Rows the simulator can use: a finite usable duration, or (collective
 * tables) a finite Duration(us) > 0. */
static size_t count_with_duration(const struct perfdb_table *t)
{
	long cmb = perfdb_table_col(t, PERFDB_COL_MB_DUR);
	long cprof = perfdb_table_col(t, PERFDB_COL_PROF_AVG);
	long cdur = perfdb_table_col(t, PERFDB_COL_DURATION);
	size_t n = 0;
	for (size_t r = 0; r < t->nrows; r++)
		n += perfdb_schema_usable_duration(perfdb_table_get(t, r, cmb),
						   perfdb_table_get(t, r, cprof), true, NULL) ||
		     perfdb_schema_duration(perfdb_table_get(t, r, cdur), true, NULL);
	return n;
}

/*
 * A signature as a person reads it (issue 47: `||||` said nothing):
 * "inputs 2,3;4,3, dtypes DT_BF16;DT_BF16, formats ND;ND -> output 2,4,
 * dtype DT_BF16", an empty field written "none".
 */
static void readable_sig(const char *sig, char *out, size_t cap)
{
	static const char *const names[] = { "inputs ", ", dtypes ", ", formats ", " -> output ",
					     ", dtype ", ", EP Size " };
	size_t used = 0;
	const char *p = sig;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names) && p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		int n = snprintf(out + used, used < cap ? cap - used : 0, "%s%.*s", names[i],
				 len ? (int)len : 4, len ? p : "none");
		used += n > 0 ? (size_t)n : 0;
		p = bar ? bar + 1 : NULL;
	}
}

static size_t check_duplicates(const struct perfdb_table *t, struct found *f, const char *op)
{
	struct perfdb_sig_index ix;
	struct perfdb_err e;
	perfdb_sig_index_init(&ix);
	size_t dups = 0;
	if (perfdb_table_index(t, op, &ix, &e) == 0) {
		for (size_t r = 0; r < t->nrows; r++) {
			struct perfdb_strbuf sig = PERFDB_STRBUF_INIT;
			if (perfdb_table_row_sig(t, r, op, &sig) == 0) {
				const struct perfdb_sig_index_entry *en = perfdb_sig_index_find(&ix, sig.buf);
				if (en && en->row != r) {
					char rs[1024];
					readable_sig(sig.buf, rs, sizeof(rs));
					dups++;
					problem(f, t->rows[r].line, -1,
						"duplicate signature of line %zu (writeback only updates the first): %s",
						t->rows[en->row].line, rs);
				}
			}
			perfdb_strbuf_release(&sig);
		}
	}
	perfdb_sig_index_release(&ix);
	return dups;
}

struct keyed {
	struct perfdb_check_problem p;
	size_t seq;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->p.line != y->p.line)
		return x->p.line < y->p.line ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Order by line, keeping the order of the rules within a line (qsort is
 * not stable, so the finding order is the tie-break). */
static int sort_problems(struct perfdb_check_problem *p, size_t n)
{
	if (n < 2)
		return 0;
	struct keyed *k = malloc(n * sizeof(*k));
	if (!k)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct keyed){ p[i], i };
	qsort(k, n, sizeof(*k), cmp_keyed);
	for (size_t i = 0; i < n; i++)
		p[i] = k[i].p;
	free(k);
	return 0;
}

int perfdb_check_table(const struct perfdb_table *t, const char *op,
		       struct perfdb_check_result *res, struct perfdb_err *err)
{
	static const char *const comm_cols[2] = { PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES };
	static const char *const kernel_cols[2] = { PERFDB_COL_IN_SHAPES, PERFDB_COL_OUT_SHAPES };
	struct found f = { .res = res };
	res->rows = t->nrows;
	res->columns = t->ncols;
	if (strncmp(op, "hcom_", 5) == 0) {
		need_cols(t, &f, comm_cols, " (the simulator skips this table)");
	} else {
		need_cols(t, &f, kernel_cols, "");
		check_shapes(t, &f, PERFDB_COL_IN_SHAPES);
		check_shapes(t, &f, PERFDB_COL_OUT_SHAPES);
		res->duplicates = check_duplicates(t, &f, op);
	}
	check_durations(t, &f);
	res->with_duration = count_with_duration(t);
	if (!f.rc)
		f.rc = sort_problems(res->problems, res->nproblems);
	return f.rc ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;
}

int perfdb_check_file(const char *path, struct perfdb_check_result *res,
		      struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_table_load(&t, path, err);
	if (rc == 0) {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		char op[512];
		snprintf(op, sizeof(op), "%.*s", (int)(strlen(base) - 4), base);
		rc = perfdb_check_table(&t, op, res, err);
	}
	perfdb_table_release(&t);
	return rc;
}
