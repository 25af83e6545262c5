/*
 * The predict stage's pieces (src/predict/, not public API): the op calls
 * of a trace (trace_ops.c), the database's answers (db_lookup.c) and the
 * ops that cost nothing (zero_cost.c).
 */
#ifndef PERFDB_PREDICT_INTERNAL_H
#define PERFDB_PREDICT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "parse/strtab.h"
#include "predict/predict.h"

#define PRED_NONE SIZE_MAX

/* The key of a call: its table and cells, interned (pred_trace.keys). */
enum { PK_TABLE, PK_INS, PK_IND, PK_INF, PK_OUTS, PK_OUTD, PK_N };

/* One op call of the trace. */
struct pred_call {
	uint32_t key;            /* pred_trace.keys id */
	uint32_t thread;
	int64_t ts, end;         /* ns; CSV traces: the start time and start + duration */
	double us;               /* its time in the trace */
	double wait_us;          /* CSV traces: the Wait Time before it */
	size_t parent, first_child, next_sibling; /* PRED_NONE: none */
	size_t depth;            /* calls containing it */
	size_t line;             /* CSV traces: the line; 0 for Chrome traces */
	int no_shapes;           /* the trace gave no input shapes (N/A) */
};

struct pred_trace {
	enum perfdb_predict_trace_kind kind;
	char *file;
	struct pred_call *v;
	size_t n, cap;
	struct perfdb_strtab keys;   /* "table\x1fins\x1find\x1finf\x1fouts\x1foutd" */
	char **trace_names;          /* per key: the op as a Chrome trace spelled it, or NULL */
	size_t ntrace_names;
	uint32_t step_thread;        /* the thread with the most top-level time */
	size_t no_shape_ops;         /* Chrome trace ops recorded without shapes */
};

void pred_trace_release(struct pred_trace *t);

/*
 * Read a trace (a file, or a directory holding exactly one) into calls and
 * link each Chrome CPU call to the innermost call that contains it on its
 * thread.  Errors: unreadable, not a trace, several traces, no shapes.
 */
int pred_trace_read(const char *path, struct pred_trace *t, struct perfdb_err *err);

/* The key's fields (pointers into the interned key, not terminated). */
void pred_key_fields(const struct pred_trace *t, uint32_t key, const char *f[PK_N],
		     size_t len[PK_N]);

/* A database opened for lookups: tables loaded as the trace names them. */
struct pred_db;

int pred_db_open(struct pred_db **out, const char *dir, int measured_only,
		 struct perfdb_err *err);
void pred_db_close(struct pred_db *db);
/* Tables loaded (found) and asked for but absent. */
void pred_db_counts(const struct pred_db *db, size_t *found, size_t *absent);
/* The directory holds at least one *.csv. */
int pred_db_has_tables(const char *dir, struct perfdb_err *err);

/* One lookup's answer. */
struct pred_answer {
	enum perfdb_predict_how how;  /* HIT, INTERPOLATED or MISSING */
	double us;
	int column;                   /* perfdb_predict_columns index, -1 */
	char detail[256];             /* a miss's reason, an interpolation's end points */
	/* the rows it is made of and their weights: us = sum of w x row's latency
	 * (a hit: one row, 1; an interpolation: its two end points) */
	size_t nsrc;
	struct pred_src { size_t table, row; double w; } src[2];
};

/* Look the call key up (exact signature, then the token axis). */
int pred_db_lookup(struct pred_db *db, const char *const f[PK_N], const size_t len[PK_N],
		   const char *trace_name, struct pred_answer *a, struct perfdb_err *err);

/*
 * The answer a stands for `times` calls of the step: its rows' weights
 * grow by times x w, for pred_db_noise.  Returns 0 or -PERFDB_ENOMEM.
 */
int pred_db_credit(struct pred_db *db, const struct pred_answer *a, double times);

/*
 * The noise of the credited answers (docs/predict.md "Noise"): the
 * standard error of their sum, sqrt(sum over rows of (weight x Std /
 * sqrt(Samples))^2), each row's mean measured apart from the others',
 * over the rows that answered by Average Duration(us) with
 * MicroBench Std Duration(us) and MicroBench Samples >= 2 (*with_us: the
 * predicted time they give); *without_us: the predicted time of the
 * other rows (a profiler's figure, or a row without samples).
 */
void pred_db_noise(const struct pred_db *db, double *se_us, double *with_us, double *without_us);

/*
 * The row whose signature is the call key's, whatever its durations: 1 with
 * its table's file name (aten.linear.csv) and CSV line, 0 when the database
 * has none.
 */
int pred_db_row(struct pred_db *db, const char *const f[PK_N], const size_t len[PK_N],
		const char *trace_name, const char **file, size_t *line, struct perfdb_err *err);

/*
 * True for ops that compute nothing (views, shape queries, aliases): they
 * cost 0, or their children's time when they have children (a reshape that
 * copies).  table is the op's table name (aten.view).
 */
int pred_zero_cost(const char *table, size_t len);

#endif
