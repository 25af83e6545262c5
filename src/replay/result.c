/*
 * The replay run's result (engine.h): a row per table row replayed,
 * skipped or failed, and per successful row the measure perfdb_writeback
 * takes, carrying the row's base columns (docs/spec/replay.md §2).
 */
#include <stdlib.h>
#include <string.h>

#include "replay/engine_internal.h"
#include "perfdb/schema.h"

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };

void perfdb_engine_result_release(struct perfdb_engine_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].op);
		free(r->rows[i].table);
		free(r->rows[i].reason);
	}
	free(r->rows);
	free(r->absent);
	perfdb_measures_release(&r->measures);
	memset(r, 0, sizeof(*r));
}

struct perfdb_engine_row *result_add_row(struct perfdb_engine_result *r, const char *op, const char *table,
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

int result_add_measure(struct perfdb_measures *m, const char *op, const struct perfdb_table *t, size_t r,
		       struct perfdb_engine_row *row)
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
	row->measure = m->n;
	return bad ? -PERFDB_ENOMEM : 0;
}

int perfdb_engine_result_refuse(struct perfdb_engine_result *r, size_t i, const char *reason)
{
	struct perfdb_engine_row *row = &r->rows[i];
	char *why = strdup(reason);
	if (!why)
		return -PERFDB_ENOMEM;
	free(row->reason);
	row->reason = why;
	row->status = PERFDB_ENGINE_CONTENDED;
	row->low_bandwidth = 1;
	r->nok--;
	r->ncontended++;
	if (row->measure) {
		/* writeback takes the measures, not the rows: this one goes, and the
		 * rows after it follow their measures down by one */
		size_t k = row->measure - 1;
		perfdb_measure_release(&r->measures.v[k]);
		memmove(&r->measures.v[k], &r->measures.v[k + 1], (r->measures.n - k - 1) * sizeof(r->measures.v[0]));
		r->measures.n--;
		row->measure = 0;
		for (size_t j = 0; j < r->nrows; j++)
			if (r->rows[j].measure > k + 1)
				r->rows[j].measure--;
	}
	return 0;
}
