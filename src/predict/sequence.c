/*
 * The op sequence of a traced step (perfdb/opseq.h; docs/replay.md "In the
 * trace's sequence"): the database rows its calls are, in the order the
 * step called them, for the torch replay to run in that order.
 *
 * A top-level call of the step thread that has a row of its own is that
 * row, as predict answers it first; one without (a composite the database
 * splits into its children) is its children's rows, in their order, and so
 * on down.  Ops that compute nothing are left out; a computing call with
 * neither a row nor children is counted as unplaced.
 */
#include <stdlib.h>
#include <string.h>

#include "predict/predict_internal.h"

struct walk {
	struct pred_trace *t;
	struct pred_db *db;
	struct perfdb_opseq *seq;
};

static int place(struct walk *w, size_t i, struct perfdb_err *err)
{
	const struct pred_call *c = &w->t->v[i];
	const char *f[PK_N];
	size_t len[PK_N];
	pred_key_fields(w->t, c->key, f, len);
	int zero = pred_zero_cost(f[PK_TABLE], len[PK_TABLE]);
	if (!zero) {
		const char *tn = c->key < w->t->ntrace_names ? w->t->trace_names[c->key] : NULL;
		const char *file = NULL;
		size_t line = 0;
		int found = pred_db_row(w->db, f, len, tn, &file, &line, err);
		if (found < 0)
			return found;
		if (found) {
			size_t fl = strlen(file);
			if (perfdb_opseq_add(w->seq, file, fl > 4 ? fl - 4 : fl, line) < 0)
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			return 0;
		}
	}
	if (c->first_child == PRED_NONE) {
		w->seq->unplaced += !zero;
		return 0;
	}
	for (size_t ch = c->first_child; ch != PRED_NONE; ch = w->t->v[ch].next_sibling)
		PERFDB_TRY(place(w, ch, err));
	return 0;
}

static int by_start(const void *x, const void *y, void *arg)
{
	const struct pred_call *v = arg;
	const struct pred_call *a = &v[*(const size_t *)x], *b = &v[*(const size_t *)y];
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : *(const size_t *)x > *(const size_t *)y;
}

int perfdb_predict_sequence(const struct perfdb_predict_opts *o, struct perfdb_opseq *seq,
			    struct perfdb_err *err)
{
	memset(seq, 0, sizeof(*seq));
	int has = pred_db_has_tables(o->database, err);
	if (has < 0)
		return has;
	if (!has)
		return perfdb_err_set(err, PERFDB_EINVAL, "database '%s' holds no tables (*.csv)", o->database);
	struct pred_trace t;
	PERFDB_TRY(pred_trace_read(o->trace, &t, err));
	int rc = 0;
	if (t.kind != PERFDB_PREDICT_TORCH_CPU)
		rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: a %s; the sequence is read from a PyTorch "
				    "CPU trace (its ops are what the torch backend runs)", t.file,
				    perfdb_predict_kind_text(t.kind));
	struct walk w = { .t = &t, .seq = seq };
	size_t *top = NULL, ntop = 0;
	if (rc == 0)
		rc = pred_db_open(&w.db, o->database, 0, err);
	if (rc == 0 && !(top = malloc((t.n + 1) * sizeof(*top))))
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < t.n; i++)
		if (t.v[i].parent == PRED_NONE && t.v[i].thread == t.step_thread)
			top[ntop++] = i;
	if (rc == 0)
		qsort_r(top, ntop, sizeof(*top), by_start, t.v);
	for (size_t k = 0; rc == 0 && k < ntop; k++)
		rc = place(&w, top[k], err);
	if (rc == 0 && seq->n == 0)
		rc = perfdb_err_set(err, PERFDB_EINVAL, "no call of %s is a row of database '%s' "
				    "(a trace of another model, or a database parsed from another trace?)",
				    t.file, o->database);
	free(top);
	pred_db_close(w.db);
	pred_trace_release(&t);
	if (rc < 0)
		perfdb_opseq_release(seq);
	return rc;
}
