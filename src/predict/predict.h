/*
 * The predict stage (docs/predict.md): the step time of a trace's op
 * sequence, predicted from a performance database.
 *
 * The trace (a PyTorch/Kineto Chrome trace, an Ascend kernel_details or an
 * msprof op_summary table) is read with the parse stage's readers into one
 * record per op call (trace_ops.c).  Each top-level call is looked up in the
 * database's table of its op with the consumer's rules (db_lookup.c): the
 * row of the same signature, else linear interpolation between the two
 * nearest rows that differ only in the token axis.  An op the database
 * cannot answer is predicted from its children when all of them are
 * answered; views and other zero-cost ops cost nothing (zero_cost.c).  The
 * prediction is the sum of the answers plus a host-overhead term taken from
 * the trace's own gaps between ops (predict_run.c).
 */
#ifndef PERFDB_PREDICT_H
#define PERFDB_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/opseq.h"
#include "perfdb/strbuf.h"

/* How one op call got its database time. */
enum perfdb_predict_how {
	PERFDB_PREDICT_HIT,          /* a row of the same signature */
	PERFDB_PREDICT_INTERPOLATED, /* between two rows along the token axis */
	PERFDB_PREDICT_CHILDREN,     /* the sum of its children's answers */
	PERFDB_PREDICT_ZERO_COST,    /* a view or other op that computes nothing */
	PERFDB_PREDICT_MISSING,      /* no answer: reason says why */
	PERFDB_PREDICT_NHOW
};

/* "hit", "interpolated", "children", "zero-cost", "missing". */
const char *perfdb_predict_how_name(enum perfdb_predict_how h);

enum perfdb_predict_trace_kind {
	PERFDB_PREDICT_TORCH_CPU,    /* Chrome trace without device activity */
	PERFDB_PREDICT_TORCH_GPU,    /* Chrome trace: the device time each op launched */
	PERFDB_PREDICT_KERNEL_DETAILS,
	PERFDB_PREDICT_OP_SUMMARY,
};

/* "PyTorch CPU trace", ... (for people) and "torch-cpu", ... (--json). */
const char *perfdb_predict_kind_text(enum perfdb_predict_trace_kind k);
const char *perfdb_predict_kind_key(enum perfdb_predict_trace_kind k);

/* The latency columns the consumer reads, in its order of preference. */
#define PERFDB_PREDICT_NCOLUMNS 3
extern const char *const perfdb_predict_columns[PERFDB_PREDICT_NCOLUMNS];

struct perfdb_predict_opts {
	const char *trace;       /* a trace file, or a directory holding one */
	const char *database;    /* the database directory */
	int measured_only;       /* only "Average Duration(us)" (a replayed figure) answers */
};

/* One row of the per-op table: the top-level calls of one (op, inputs). */
struct perfdb_predict_row {
	char *table;             /* the op's table name (aten.linear, MatMulV2) */
	char *in_shapes, *in_dtypes;
	size_t calls;
	double trace_us;         /* their time in the trace */
	double db_us;            /* their predicted time (0 when missing) */
	enum perfdb_predict_how how;
	int column;              /* perfdb_predict_columns index that answered, -1 none */
	char *detail;            /* a miss's reason, an interpolation's rows, the children used */
};

struct perfdb_predict_result {
	enum perfdb_predict_trace_kind kind;
	char *trace_file;        /* the trace read */
	size_t calls;            /* top-level op calls in the step */
	size_t nested;           /* calls nested in another (answered through their parent) */
	size_t other_thread_calls;
	double other_thread_us;  /* top-level time on threads other than the step's */
	double measured_us;      /* the trace's step (docs/predict.md "Totals") */
	double trace_ops_us;     /* the top-level calls' own time */
	double overhead_us;      /* measured - trace_ops (the gaps), 0 for device traces */
	double predicted_ops_us; /* the database's answers */
	double predicted_us;     /* predicted_ops + overhead */
	size_t how_calls[PERFDB_PREDICT_NHOW];
	double how_trace_us[PERFDB_PREDICT_NHOW];    /* trace time by how it was answered */
	double column_db_us[PERFDB_PREDICT_NCOLUMNS]; /* predicted time by the column that gave it */
	/* docs/predict.md "Noise": the standard error of predicted_ops_us from
	 * the answering rows' own Std and Samples, over the part of it those rows
	 * give (noise_with_us); noise_without_us: the part without them */
	double noise_se_us, noise_with_us, noise_without_us;
	size_t tables_used;      /* database tables the trace's ops found */
	size_t tables_missing;   /* the trace's tables the database lacks */
	struct perfdb_predict_row *rows; /* by trace time, largest first */
	size_t nrows;
};

void perfdb_predict_result_release(struct perfdb_predict_result *r);

/*
 * Predict.  Errors (result released, err filled): the trace unreadable or
 * without the input shapes lookups need; the database directory missing,
 * holding no tables, or holding none of the trace's tables (a database of
 * another kind); out of memory.
 */
int perfdb_predict_run(const struct perfdb_predict_opts *o, struct perfdb_predict_result *r,
		       struct perfdb_err *err);

/*
 * The op sequence of o->trace's step, a PyTorch CPU trace, as rows of the
 * database o->database (sequence.c; perfdb/opseq.h): for `perfdb
 * microbench --backend torch --sequence-trace`.  measured_only is not
 * read: a row is placed whatever its durations.  Errors: those of
 * perfdb_predict_run, a trace of another kind, no call placed.
 */
int perfdb_predict_sequence(const struct perfdb_predict_opts *o, struct perfdb_opseq *seq,
			    struct perfdb_err *err);

/*
 * The result for people (predict_text.c; docs/predict.md "Output"): the
 * summary and the per-op table, its first top rows (all when top < 0) with
 * long cells cut to 48 characters.  0 or -PERFDB_ENOMEM.
 */
int perfdb_predict_text(const struct perfdb_predict_result *r, const char *database, long top,
			struct perfdb_strbuf *out);

/* The result as one JSON document (docs/predict.md "JSON"), pretty-printed. */
int perfdb_predict_json(const struct perfdb_predict_result *r, const char *database,
			int measured_only, struct perfdb_strbuf *out, struct perfdb_err *err);

#endif
