/*
 * The parse stage (docs/spec/parse.md and its Decisions): profiler output in,
 * per-kernel database tables out.
 *
 * Every input reader (kernel_details / op_summary CSV, PyTorch Chrome
 * trace) turns its records into struct perfdb_kernel_row and hands them to
 * a row sink, one at a time; the aggregator behind the sink keeps one group
 * per key (Type, Input Shapes, Input Data Types, Input Formats, Output
 * Shapes) — Decision 4 — so memory grows with distinct keys, not rows.
 */
#ifndef PERFDB_PARSE_H
#define PERFDB_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/op_mapping.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/strbuf.h"


/* Device time one kernel name took within a row (per-op trace rows). */
struct perfdb_kernel_share {
	struct perfdb_span name;
	double us;
};

/* One kernel launch as read from any input.  Spans point into the reader's
 * buffers and are valid only during the sink call; an absent column is an
 * empty span. */
struct perfdb_kernel_row {
	struct perfdb_span type;           /* Type (op_summary: OP Type) */
	struct perfdb_span name;           /* Name (op_summary: Op Name) */
	struct perfdb_span op_state;
	struct perfdb_span accel_core;     /* Accelerator Core (op_summary: Task Type) */
	struct perfdb_span in_shapes, in_dtypes, in_formats;
	struct perfdb_span out_shapes, out_dtypes, out_formats;
	struct perfdb_span duration;       /* Duration(us) (op_summary: Task Duration(us)) */
	struct perfdb_span counters[PERFDB_NCOUNTERS];
	const char *file;                  /* input file, for messages */
	size_t line;                       /* 1-based line (0 if not a text line) */
	/* Chrome traces only (zeroed elsewhere): the device the row ran on
	 * (deviceProperties name; empty when unknown) and, for one call of an
	 * op, the time of each kernel name it launched (the Kernels column). */
	struct perfdb_span device;
	const struct perfdb_kernel_share *shares;
	size_t nshares;
	/* When the op ran, for perfdb predict's op sequence (zero elsewhere):
	 * Chrome trace CPU rows set timed, the (pid, tid) pair as a number,
	 * and start and end in ns; kernel_details / op_summary rows carry
	 * their Start Time(us) and Wait Time(us) cells (empty when absent). */
	int timed;
	uint32_t thread;
	int64_t ts_ns, end_ns;
	struct perfdb_span start, wait;
	/* Chrome traces: the op or kernel name as the trace spelled it, which
	 * names the table's file (trace_names.c); empty for profiler CSVs */
	struct perfdb_span trace_name;
	/* Chrome trace CPU rows: "Input Strides" (newer Kineto) in the shape
	 * cells' form, only when an input is not laid out contiguously
	 * (docs/chrome_trace.md "Input strides"); empty elsewhere */
	struct perfdb_span in_strides;
};

/* Receives rows; returns 0 or a negative code with err filled. */
struct perfdb_row_sink {
	int (*row)(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err);
	void *ctx;
	/*
	 * Optional, for readers whose rows repeat a few combinations of cells
	 * (the SQLite reader: a million tasks, a few hundred combinations).
	 * The reader keeps one memo per combination, zero before its first
	 * row, and passes it with every row of that combination, whose cells
	 * other than duration, start and wait are then the same bytes; the
	 * sink may keep in it what it worked out from those cells (its group)
	 * and skip that work on the next row.  The result must be what row()
	 * would have given.
	 */
	int (*row_memo)(void *ctx, const struct perfdb_kernel_row *row, uint32_t *memo,
			struct perfdb_err *err);
};


/* ---- inputs (docs/spec/parse.md §1, Decision 6) ---------------------------- */

enum perfdb_input_kind {
	PERFDB_INPUT_KERNEL_DETAILS,  /* torch_npu / MindSpore kernel_details*.csv */
	PERFDB_INPUT_OP_SUMMARY,      /* msprof op_summary_*.csv */
	PERFDB_INPUT_CHROME_TRACE,    /* PyTorch profiler Chrome trace (JSON) */
	PERFDB_INPUT_ASCEND_DB,       /* msprof / torch_npu SQLite export (*.db) */
};

struct perfdb_input {
	char *path;
	enum perfdb_input_kind kind;
};

struct perfdb_inputs {
	struct perfdb_input *v;
	size_t n, cap;
	char **operator_details;      /* operator_details.csv files, sorted */
	size_t nops, capops;
	size_t ignored_op_summary;    /* op_summary files skipped because kernel_details exist */
	size_t ignored_db;            /* SQLite profiles skipped because CSV exports exist */
};

void perfdb_inputs_init(struct perfdb_inputs *in);
void perfdb_inputs_release(struct perfdb_inputs *in);

/*
 * Find the profiler files of path: a file is used as is (its kind read from
 * its header or, for JSON, its content); a directory is searched
 * recursively (sorted component by component) for CSVs whose header is a
 * kernel_details or op_summary table, `*.pt.trace.json` files, and
 * `operator_details.csv`.  When kernel_details files exist, op_summary files
 * are ignored (torch_npu writes both for the same launches).
 * Errors: the reference's messages for a missing path and for a directory
 * without profiler files; a file whose kind cannot be recognised.
 */
int perfdb_parse_find_inputs(const char *path, struct perfdb_inputs *out,
			     struct perfdb_err *err);

/* Classify one file by its content; -PERFDB_EPARSE if unrecognised. */
int perfdb_parse_classify(const char *path, enum perfdb_input_kind *kind,
			  struct perfdb_err *err);

/* ---- reading kernel CSVs -------------------------------------------- */

struct perfdb_csv_input_stats {
	unsigned long long bytes;
	size_t rows;
	size_t missing_optional;  /* optional columns absent from the header */
	size_t missing_counters;  /* of which profiler counters */
	char missing_names[512];  /* the others' names, ", "-joined */
	/* Ascend SQLite profiles: collective calls into the comm tables, and
	 * those that could not be sized (the first one's reason) */
	size_t comm_calls, comm_skipped;
	char comm_skip[160];
};

/*
 * Stream a kernel_details or op_summary CSV into sink.  Required columns
 * (Decision 3): Type, Input Shapes, Output Shapes, Duration(us) (op_summary:
 * OP Type, Input Shapes, Output Shapes, Task Duration(us)); a missing one is
 * `<file> is missing required columns: <sorted names>`.  Other columns are
 * optional.  progress (may be NULL) is called with the bytes read so far.
 */
int perfdb_parse_read_csv(const char *path, enum perfdb_input_kind kind,
			  const struct perfdb_row_sink *sink,
			  struct perfdb_csv_input_stats *st,
			  void (*progress)(void *ctx, unsigned long long bytes), void *pctx,
			  struct perfdb_err *err);

/*
 * Stream an Ascend SQLite profile (msprof --type=db, torch_npu export_type
 * db) into sink as kernel_details rows, in device time order
 * (ascend_db.c; docs/parse.md "Ascend SQLite profiles").  Opened read-only
 * and immutable; a file that is not SQLite, truncated, beside a -wal or
 * -journal file, without the tables and columns, with a text column that is
 * no STRING_IDS id or one that names none, is a one-line error naming it.
 * comm (NULL: not read) gets COMMUNICATION_OP's collectives (docs/parse.md
 * "Comm tables from profiles").
 */
struct perfdb_comm_agg;
int perfdb_parse_read_db(const char *path, const struct perfdb_row_sink *sink,
			 struct perfdb_comm_agg *comm, struct perfdb_csv_input_stats *st,
			 struct perfdb_err *err);

/* The same from memory (tests, fuzzing); name is used in messages. */
int perfdb_parse_read_csv_mem(const char *name, const void *data, size_t len,
			      enum perfdb_input_kind kind, const struct perfdb_row_sink *sink,
			      struct perfdb_csv_input_stats *st, struct perfdb_err *err);

/* ---- aggregation (docs/spec/parse.md §3, Decisions 2-5, 7) --------------- */

struct perfdb_agg;

struct perfdb_agg_share {
	const char *name;
	double us;
};

/* One aggregated key.  Strings are owned by the aggregator. */
struct perfdb_agg_group {
	const char *type;          /* normalised Type */
	const char *in_shapes, *in_dtypes, *in_formats, *out_shapes;
	const char *op_state, *accel_core, *out_dtypes, *out_formats; /* first non-empty */
	const char *trace_name;    /* first non-empty: a trace names the table (Trace Name) */
	const char *in_strides;    /* first non-empty: Input Strides (CPU trace rows) */
	size_t n;                  /* valid duration samples */
	size_t n_invalid;          /* rows whose duration was empty/junk/negative/non-finite */
	double mean, median, std, min, max;
	double sum, comp;          /* Neumaier sum of durations */
	double m2;                 /* Welford: sum of squared deviations */
	/* kernel names and their summed time over the rows' shares (per-op
	 * trace rows); "" or, after finish, the Kernels cell
	 * (docs/chrome_trace.md "Per-op tables") */
	const char *kernels;
	struct perfdb_agg_share *shares;
	size_t nshares, capshares;
	double wmean;              /* Welford running mean */
	size_t cn[PERFDB_NCOUNTERS];
	double csum[PERFDB_NCOUNTERS];
	double ccomp[PERFDB_NCOUNTERS];
};

struct perfdb_agg_totals {
	size_t rows;               /* rows offered */
	size_t dropped_na;         /* N/A shapes (docs/spec/parse.md §2) */
	size_t empty_type;         /* rows with an empty Type: never written */
	size_t invalid_durations;  /* not samples (Decision 2) */
	size_t invalid_counters;   /* counter cells present but not numbers */
};

int perfdb_agg_new(struct perfdb_agg **out, size_t sample_limit, struct perfdb_err *err);
void perfdb_agg_free(struct perfdb_agg *a);

/* The sink that feeds an aggregator. */
struct perfdb_row_sink perfdb_agg_sink(struct perfdb_agg *a);

/* Merge from into into (from keeps its content), in from's group order. */
int perfdb_agg_merge(struct perfdb_agg *into, const struct perfdb_agg *from,
		     struct perfdb_err *err);

/* Compute means, medians and std of every group.  Call once at the end. */
int perfdb_agg_finish(struct perfdb_agg *a, struct perfdb_err *err);

size_t perfdb_agg_ngroups(const struct perfdb_agg *a);
const struct perfdb_agg_group *perfdb_agg_group(const struct perfdb_agg *a, size_t i);
const struct perfdb_agg_totals *perfdb_agg_totals(const struct perfdb_agg *a);

/* Type renames of the reference (docs/spec/parse.md §2). */
const char *perfdb_parse_normalize_type(const char *type, size_t len, size_t *out_len);

/*
 * `<>:"/\|?*` and 0x00-0x1F become '_' (docs/spec/parse.md §4), and so does a
 * leading '.' (no hidden tables; docs/parse.md), an empty name UNKNOWN_TYPE; a name longer than PERFDB_PARSE_NAME_MAX bytes keeps its
 * first bytes and ends with `~` and 16 hex digits of a hash of the whole
 * name, so every name fits a file system.  out is reset first.
 */
#define PERFDB_PARSE_NAME_MAX 200
int perfdb_parse_sanitize_name(const char *type, struct perfdb_strbuf *out);

/*
 * The table name of a PyTorch op (docs/chrome_trace.md "Table names"),
 * one-to-one and free of the bytes above: `::` -> `.`; `.`, `%`, a `:`
 * not in a `::`, `<>"/\|?*`, bytes below 0x20 and 0x7F -> `%XX` (upper-case
 * hex); a leading `::` is `%3A%3A`.  `aten::mm` -> `aten.mm`,
 * `aten::add.Tensor` -> `aten.add%2ETensor`.  out is reset first.
 */
int perfdb_parse_op_table_name(const char *op, size_t len, struct perfdb_strbuf *out);

/* ---- tables a trace names (trace_names.c; docs/chrome_trace.md "Table names") ---- */

/* The column that keeps the op or kernel name as the trace spelled it. */
#define PERFDB_PARSE_COL_TRACE_NAME "Trace Name"
/* Longest readable part of such a file name, in bytes. */
#define PERFDB_TRACE_NAME_MAX 120

/*
 * The readable, shell-safe form of a trace's op or kernel name: template
 * arguments, parameter list and a `void ` return type dropped, `::` -> `.`,
 * bytes outside [A-Za-z0-9._+-] -> `_` (a run as one), no leading `.` or
 * `-` and no trailing `.`, "UNKNOWN_OP" when nothing is left; longer than
 * PERFDB_TRACE_NAME_MAX: cut, with `~` and 8 hex digits of a hash of name.
 */
int perfdb_trace_readable_name(const char *name, size_t len, struct perfdb_strbuf *out);

/* The file names a run has taken, with the trace name each holds. */
struct perfdb_trace_claims {
	struct { char *stem, *name; } *v;
	size_t n;
};
void perfdb_trace_claims_release(struct perfdb_trace_claims *c);

/*
 * The file stem under dir that the trace name writes to: legacy (the name
 * an older perfdb gave it) when that table exists, else the readable name
 * when that file is free, claimed by this name, or holds it in its Trace
 * Name column (or predates the column), else the readable name with the
 * hash.  The choice is added to claims.
 */
int perfdb_trace_table_stem(const char *dir, const char *name, const char *legacy,
			    struct perfdb_trace_claims *claims, struct perfdb_strbuf *out);

/* The table under dir that holds the trace name (read-only): 1 with its
 * stem in out, 0 when there is none, <0 on error. */
int perfdb_trace_table_find(const char *dir, const char *name, struct perfdb_strbuf *out);

/* Name of the per-op tables' kernel column. */
#define PERFDB_PARSE_COL_KERNELS "Kernels"

/* True if a shape cell, trimmed and stripped of outer quotes, is N/A (any case). */
int perfdb_parse_is_na(struct perfdb_span cell);

/* ---- the whole stage ------------------------------------------------- */

/* The reference's 36 output columns (docs/spec/parse.md §4), in order. */
#define PERFDB_PARSE_NBASE 36
extern const char *const perfdb_parse_columns[PERFDB_PARSE_NBASE];

struct perfdb_parse_table {
	char *path;              /* the table file */
	char *type;              /* kernel type (the first, if names collided) */
	size_t groups;           /* keys of this profile in the table */
	size_t added, updated;   /* rows appended / rows whose cells changed */
	int created;             /* the file did not exist */
	int written;             /* the file was (re)written */
};

/* One Chrome trace read (its distributedInfo and what linked). */
struct perfdb_parse_trace {
	char *path;
	int has_dist;
	long long rank, world_size;   /* -1 when absent */
	char backend[32];
	char device[128];             /* deviceProperties name of its first activity */
	int gzip;
	size_t activities, linked;    /* device activities; of those, linked to an op */
	size_t gpu_rows, cpu_rows;
	size_t comm_calls;            /* collective calls sized for the comm tables */
	size_t comm_skipped;          /* collective calls of a comm table that could not be */
};

/* One database the run wrote to: a device of the traces (or the default). */
struct perfdb_parse_db {
	char *device;            /* deviceProperties name; "" = not a trace's GPU */
	int gpu;                 /* rows of a GPU trace (device may be "" if unnamed) */
	char *outdir;            /* where its tables went */
};

struct perfdb_parse_result {
	size_t inputs;           /* profiler files read */
	size_t traces;           /* of which PyTorch Chrome traces */
	int trace_gpu;           /* a trace contributed GPU kernel rows */
	char gpu_name[128];      /* deviceProperties name of the first such trace */
	unsigned long long bytes;
	struct perfdb_agg_totals totals;
	size_t groups;
	struct perfdb_parse_table *tables;
	size_t ntables;
	size_t warnings;
	struct perfdb_parse_trace *tr;   /* the traces, in input order */
	size_t ntr;
	struct perfdb_parse_db *dbs;     /* in first-appearance order */
	size_t ndbs;
	enum perfdb_opmap_outcome op_mapping;  /* of the last database written */
	size_t comm_raw;         /* hcom_* tables left alone: they hold kernel rows */
};

void perfdb_parse_result_release(struct perfdb_parse_result *r);

struct perfdb_parse_opts {
	const char *profiling_path;
	const char *outdir;      /* database directory (created after reading) */
	/*
	 * When outdir is NULL: called once all input is read, to name the
	 * database directory from what was read (the device a trace ran on).
	 */
	int (*resolve_outdir)(void *ctx, const struct perfdb_parse_result *res,
			      const struct perfdb_parse_db *db, struct perfdb_strbuf *out,
			      struct perfdb_err *err);
	int per_kernel;          /* Chrome traces: per-kernel tables, not per-op */
	unsigned jobs;           /* worker threads for several input files (0 = CPUs) */
	/*
	 * A database a PyTorch trace was parsed into gets its op_mapping.yaml
	 * this way (NULL: never); Ascend profiles alone never write one.  Its
	 * warning goes to warn below and is counted (its own warn is not used).
	 */
	const struct perfdb_opmap_opts *op_mapping;
	size_t sample_limit;     /* per aggregator, 0 = default */
	double lock_timeout;     /* < 0: default / $PERFDB_LOCK_TIMEOUT */
	/* with resolve_outdir: the devices known, so that a new one is recorded as met */
	const struct perfdb_device_registry *reg;
	/* optional callbacks */
	void (*warn)(void *ctx, const char *msg);
	void (*progress)(void *ctx, unsigned long long done, unsigned long long total);
	void *ctx;
};

/*
 * Run the stage: find inputs, aggregate them (several files in parallel),
 * attach FIA metadata, then merge every kernel type into <outdir>/<Type>.csv
 * under the database lock (Decision 1: existing rows keep every column the
 * profile does not produce; rows absent from the profile are kept).  Nothing
 * is written unless every input read cleanly and every existing table
 * loaded cleanly.
 */
int perfdb_parse_run(const struct perfdb_parse_opts *o, struct perfdb_parse_result *res,
		     struct perfdb_err *err);

/* ---- PyTorch traces' database (trace_home.c) ---------------------------- */

struct perfdb_device_registry;

/*
 * The device directory name of a trace's tables: its GPU's name (upper
 * case, other characters one '_'), UNKNOWN_GPU for a GPU trace without
 * deviceProperties or whose name has no letter or digit (perfdb parse
 * warns of that), else this host's CPU as the registry names it.
 */
int perfdb_parse_trace_device(const struct perfdb_parse_db *db,
			      struct perfdb_device_registry *reg, char *dev, size_t cap,
			      struct perfdb_err *err);

/*
 * The same with --device (given, NULL when absent) honoured or refused
 * (docs/chrome_trace.md "Which device"): a trace that names its GPU keeps
 * that name, and a different --device is refused with both names; an
 * unnamed GPU trace takes a gpu-kind --device, a CPU trace a cpu-kind
 * one; a device of another kind is refused.
 */
int perfdb_parse_trace_device_given(const struct perfdb_parse_db *db, const char *given,
				    struct perfdb_device_registry *reg, char *dev, size_t cap,
				    struct perfdb_err *err);

/*
 * Record a trace's device as met (docs/devices.md "Devices perfdb met")
 * once its tables are written to db->outdir (<root>/<device>/torch/
 * torch<T>): unless the registry defines it, <root>/<device>/
 * perfdb-device.json names it, its kind and the trace's own device name.
 */
int perfdb_parse_trace_note_device(const struct perfdb_parse_db *db,
				   const struct perfdb_device_registry *reg, struct perfdb_err *err);

/* Whether a trace's device name has a letter or digit to name a directory with. */
bool perfdb_parse_trace_device_named(const char *name);

/* The inputs under path: 0 no PyTorch trace among them, 1 only traces, 2 both kinds. */
int perfdb_parse_trace_kind(const char *path);

/* The run as JSON (parse_json.c; keys in docs/parse.md), a newline after it. */
int perfdb_parse_result_json(const struct perfdb_parse_result *res, const char *outdir,
			     const char *path, struct perfdb_strbuf *out);

#endif
