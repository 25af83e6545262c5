/*
 * The parse stage (spec/parse.md and its Decisions): profiler output in,
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

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/shape.h"

/* The 25 profiler counters, in output order (spec/parse.md §1). */
#define PERFDB_NCOUNTERS 25
extern const char *const perfdb_counter_names[PERFDB_NCOUNTERS];

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
};

/* Receives rows; returns 0 or a negative code with err filled. */
struct perfdb_row_sink {
	int (*row)(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err);
	void *ctx;
};

#endif
