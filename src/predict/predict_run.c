/*
 * perfdb predict: a trace's step time from a database (docs/predict.md).
 *
 * Each call is answered once, children before parents: a call's own
 * database row first (db_lookup.c); a zero-cost op, or a call its row
 * cannot answer, takes the sum of its children when every child is
 * answered.  The step is the top-level calls of the step thread (CPU
 * traces), or every call (device traces and kernel tables, whose calls do
 * not nest); the per-op table groups its calls by op, inputs and answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict_internal.h"

const char *perfdb_predict_how_name(enum perfdb_predict_how h)
{
	static const char *const n[PERFDB_PREDICT_NHOW] = {
		"hit", "interpolated", "children", "zero-cost", "missing",
	};
	return (unsigned)h < PERFDB_PREDICT_NHOW ? n[h] : "?";
}

const char *perfdb_predict_kind_text(enum perfdb_predict_trace_kind k)
{
	switch (k) {
	case PERFDB_PREDICT_TORCH_CPU: return "PyTorch CPU trace";
	case PERFDB_PREDICT_TORCH_GPU: return "PyTorch device trace";
	case PERFDB_PREDICT_KERNEL_DETAILS: return "kernel_details table";
	case PERFDB_PREDICT_OP_SUMMARY: return "op_summary table";
	}
	return "?";
}

const char *perfdb_predict_kind_key(enum perfdb_predict_trace_kind k)
{
	switch (k) {
	case PERFDB_PREDICT_TORCH_CPU: return "torch-cpu";
	case PERFDB_PREDICT_TORCH_GPU: return "torch-device";
	case PERFDB_PREDICT_KERNEL_DETAILS: return "kernel_details";
	case PERFDB_PREDICT_OP_SUMMARY: return "op_summary";
	}
	return "?";
}

void perfdb_predict_result_release(struct perfdb_predict_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].table);
		free(r->rows[i].in_shapes);
		free(r->rows[i].in_dtypes);
		free(r->rows[i].detail);
	}
	free(r->rows);
	free(r->trace_file);
	memset(r, 0, sizeof(*r));
}

static int nomem(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

/* A call's answer. */
struct ans {
	enum perfdb_predict_how how;
	double us;
	double col_us[PERFDB_PREDICT_NCOLUMNS];  /* us by the column that gave it */
	size_t children;
	const char *reason;   /* MISSING: its key's reason (keyans) */
};

/* A key's own lookup, done once. */
struct keyans {
	int done;
	struct pred_answer a;
};

struct run {
	struct pred_trace *t;
	struct pred_db *db;
	struct keyans *keys;
	struct ans *ans;
};

static int key_answer(struct run *r, uint32_t key, const struct pred_answer **out,
		      struct perfdb_err *err)
{
	struct keyans *k = &r->keys[key];
	if (!k->done) {
		const char *f[PK_N];
		size_t len[PK_N];
		pred_key_fields(r->t, key, f, len);
		if (pred_zero_cost(f[PK_TABLE], len[PK_TABLE])) {
			k->a.how = PERFDB_PREDICT_ZERO_COST;
			k->a.us = 0;
			k->a.column = -1;
			snprintf(k->a.detail, sizeof(k->a.detail), "computes nothing");
		} else {
			const char *tn = key < r->t->ntrace_names ? r->t->trace_names[key] : NULL;
			PERFDB_TRY(pred_db_lookup(r->db, f, len, tn, &k->a, err));
		}
		k->done = 1;
	}
	*out = &k->a;
	return 0;
}

/* Answer call i; its children are answered already. */
static int answer(struct run *r, size_t i, struct perfdb_err *err)
{
	const struct pred_call *c = &r->t->v[i];
	struct ans *a = &r->ans[i];
	memset(a, 0, sizeof(*a));
	const struct pred_answer *k;
	PERFDB_TRY(key_answer(r, c->key, &k, err));
	if (k->how == PERFDB_PREDICT_HIT || k->how == PERFDB_PREDICT_INTERPOLATED) {
		a->how = k->how;
		a->us = k->us;
		a->col_us[k->column] = k->us;
		return 0;
	}
	/* the children, when all of them are answered and one of them from the
	 * database: a call whose children are all views (aten::mm and its
	 * resolve_conj) did the work itself */
	int all = 1, timed = 0;
	double sum = 0, cols[PERFDB_PREDICT_NCOLUMNS] = { 0 };
	size_t n = 0;
	for (size_t ch = c->first_child; ch != PRED_NONE; ch = r->t->v[ch].next_sibling) {
		const struct ans *b = &r->ans[ch];
		n++;
		if (b->how == PERFDB_PREDICT_MISSING) {
			all = 0;
			break;
		}
		timed |= b->how != PERFDB_PREDICT_ZERO_COST;
		sum += b->us;
		for (int m = 0; m < PERFDB_PREDICT_NCOLUMNS; m++)
			cols[m] += b->col_us[m];
	}
	if (n && all && timed) {
		a->how = PERFDB_PREDICT_CHILDREN;
		a->us = sum;
		memcpy(a->col_us, cols, sizeof(cols));
		a->children = n;
		return 0;
	}
	a->how = k->how;   /* ZERO_COST without children, or MISSING */
	a->reason = k->detail;
	if (c->no_shapes && a->how == PERFDB_PREDICT_MISSING)
		a->reason = "the trace recorded no input shapes for it";
	return 0;
}

/* Call i is in the step: the database rows its answer is made of, through
 * its children where they answered it, count once more (pred_db_credit). */
static int credit(struct run *r, size_t i)
{
	const struct pred_call *c = &r->t->v[i];
	const struct ans *a = &r->ans[i];
	if (a->how == PERFDB_PREDICT_HIT || a->how == PERFDB_PREDICT_INTERPOLATED)
		return pred_db_credit(r->db, &r->keys[c->key].a, 1);
	if (a->how == PERFDB_PREDICT_CHILDREN)
		for (size_t ch = c->first_child; ch != PRED_NONE; ch = r->t->v[ch].next_sibling)
			PERFDB_TRY(credit(r, ch));
	return 0;
}

/* Grouping of top-level calls into per-op rows: (key, how) -> row + 1. */
struct groups {
	size_t *slot;
	size_t nkeys;
};

static int add_row(struct perfdb_predict_result *res, struct groups *g, const struct run *r,
		   size_t i, struct perfdb_err *err)
{
	const struct pred_call *c = &r->t->v[i];
	const struct ans *a = &r->ans[i];
	size_t *s = &g->slot[(size_t)c->key * PERFDB_PREDICT_NHOW + a->how];
	if (!*s) {
		struct perfdb_predict_row *nv =
			realloc(res->rows, (res->nrows + 1) * sizeof(*nv));
		if (!nv)
			return nomem(err);
		res->rows = nv;
		struct perfdb_predict_row *row = &nv[res->nrows];
		memset(row, 0, sizeof(*row));
		const char *f[PK_N];
		size_t len[PK_N];
		pred_key_fields(r->t, c->key, f, len);
		char buf[64] = "";
		const char *detail = a->reason ? a->reason : "";
		if (a->how == PERFDB_PREDICT_CHILDREN) {
			snprintf(buf, sizeof(buf), "%zu child call%s", a->children,
				 a->children == 1 ? "" : "s");
			detail = buf;
		} else if (a->how == PERFDB_PREDICT_HIT || a->how == PERFDB_PREDICT_INTERPOLATED) {
			detail = r->keys[c->key].a.detail;
		}
		row->table = strndup(f[PK_TABLE], len[PK_TABLE]);
		row->in_shapes = strndup(f[PK_INS], len[PK_INS]);
		row->in_dtypes = strndup(f[PK_IND], len[PK_IND]);
		row->detail = strdup(detail);
		row->how = a->how;
		row->column = -1;
		res->nrows++;
		if (!row->table || !row->in_shapes || !row->in_dtypes || !row->detail)
			return nomem(err);
		*s = res->nrows;
	}
	struct perfdb_predict_row *row = &res->rows[*s - 1];
	row->calls++;
	row->trace_us += c->us;
	row->db_us += a->us;
	/* the column that gave most of the row's time */
	int best = -1;
	for (int m = 0; m < PERFDB_PREDICT_NCOLUMNS; m++)
		if (a->col_us[m] > 0 && (best < 0 || a->col_us[m] > a->col_us[best]))
			best = m;
	if (best >= 0 && (row->column < 0 || best < row->column))
		row->column = best;
	return 0;
}

static int by_trace_time(const void *x, const void *y)
{
	const struct perfdb_predict_row *a = x, *b = y;
	if (a->trace_us != b->trace_us)
		return a->trace_us > b->trace_us ? -1 : 1;
	int c = strcmp(a->table, b->table);
	if (c)
		return c;
	c = strcmp(a->in_shapes, b->in_shapes);
	return c ? c : strcmp(a->in_dtypes, b->in_dtypes);
}

/* Children-first order: deepest calls first (a counting sort by depth). */
static int order_calls(const struct pred_trace *t, size_t **out, struct perfdb_err *err)
{
	size_t maxd = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].depth > maxd)
			maxd = t->v[i].depth;
	size_t *ord = malloc((t->n + 1) * sizeof(*ord)), *count = calloc(maxd + 2, sizeof(*count));
	if (!ord || !count) {
		free(ord);
		free(count);
		return nomem(err);
	}
	for (size_t i = 0; i < t->n; i++)
		count[maxd - t->v[i].depth + 1]++;
	for (size_t d = 1; d <= maxd + 1; d++)
		count[d] += count[d - 1];
	for (size_t i = 0; i < t->n; i++)
		ord[count[maxd - t->v[i].depth]++] = i;
	free(count);
	*out = ord;
	return 0;
}

int perfdb_predict_run(const struct perfdb_predict_opts *o, struct perfdb_predict_result *res,
		       struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	int has = pred_db_has_tables(o->database, err);
	if (has < 0)
		return has;
	if (!has)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "database '%s' holds no tables (*.csv)", o->database);
	struct pred_trace t;
	PERFDB_TRY(pred_trace_read(o->trace, &t, err));
	struct run r = { .t = &t };
	struct groups g = { 0 };
	size_t *ord = NULL;
	int rc = pred_db_open(&r.db, o->database, o->measured_only, err);
	if (rc == 0) {
		r.keys = calloc((size_t)t.keys.n + 1, sizeof(*r.keys));
		r.ans = calloc(t.n + 1, sizeof(*r.ans));
		g.slot = calloc((size_t)t.keys.n * PERFDB_PREDICT_NHOW + 1, sizeof(*g.slot));
		if (!r.keys || !r.ans || !g.slot)
			rc = nomem(err);
	}
	if (rc == 0)
		rc = order_calls(&t, &ord, err);
	for (size_t k = 0; rc == 0 && k < t.n; k++)
		rc = answer(&r, ord[k], err);
	res->kind = t.kind;
	int64_t first = INT64_MAX, last = INT64_MIN;
	double wait = 0;
	for (size_t i = 0; rc == 0 && i < t.n; i++) {
		const struct pred_call *c = &t.v[i];
		if (c->parent != PRED_NONE) {
			res->nested++;
			continue;
		}
		if (c->thread != t.step_thread) {
			res->other_thread_calls++;
			res->other_thread_us += c->us;
			continue;
		}
		res->calls++;
		res->trace_ops_us += c->us;
		res->predicted_ops_us += r.ans[i].us;
		res->how_calls[r.ans[i].how]++;
		res->how_trace_us[r.ans[i].how] += c->us;
		for (int m = 0; m < PERFDB_PREDICT_NCOLUMNS; m++)
			res->column_db_us[m] += r.ans[i].col_us[m];
		wait += c->wait_us;
		if (c->ts < first)
			first = c->ts;
		if (c->end > last)
			last = c->end;
		rc = add_row(res, &g, &r, i, err);
		if (rc == 0 && credit(&r, i) < 0)
			rc = nomem(err);
	}
	if (rc == 0) {
		pred_db_counts(r.db, &res->tables_used, &res->tables_missing);
		pred_db_noise(r.db, &res->noise_se_us, &res->noise_with_us, &res->noise_without_us);
		if (!res->tables_used)
			rc = perfdb_err_set(err, PERFDB_EINVAL,
					    "database '%s' holds none of the %zu op tables that %s names "
					    "(such as %s.csv): it is a database of another kind",
					    o->database, res->tables_missing, t.file,
					    res->nrows ? res->rows[0].table : "?");
	}
	if (rc == 0) {
		if (t.kind == PERFDB_PREDICT_TORCH_CPU) {
			res->measured_us = res->calls ? (double)(last - first) / 1000.0 : 0;
			res->overhead_us = res->measured_us - res->trace_ops_us;
			if (res->overhead_us < 0)
				res->overhead_us = 0;
		} else {
			res->overhead_us = wait;
			res->measured_us = res->trace_ops_us + wait;
		}
		res->predicted_us = res->predicted_ops_us + res->overhead_us;
		qsort(res->rows, res->nrows, sizeof(*res->rows), by_trace_time);
		res->trace_file = t.file;
		t.file = NULL;
	}
	free(ord);
	free(g.slot);
	free(r.keys);
	free(r.ans);
	pred_db_close(r.db);
	pred_trace_release(&t);
	if (rc < 0)
		perfdb_predict_result_release(res);
	return rc;
}
