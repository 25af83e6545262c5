/*
 * PyTorch profiler (Kineto) Chrome traces -> rows (docs/spec/parse.md
 * Decision 6; the rules and the per-op table columns are docs/chrome_trace.md).
 *
 * Input: what torch.profiler writes (export_chrome_trace, or
 * tensorboard_trace_handler, gzip or not: the gzip magic bytes decide), a
 * JSON object {"traceEvents": [...], "deviceProperties": [...], ...} or a
 * bare array of events.  The file is streamed (yajl) in bounded memory;
 * events may come in any order.  The events used:
 *   ph "X" cat "cpu_op"        name, ts, dur, args "External id",
 *                              "Input Dims", "Input type"
 *   ph "X" cat "cuda_runtime" / "cuda_driver" (and privateuse1_*): a launch,
 *                              args "correlation", "External id"
 *   ph "X" cat "kernel" / "gpu_memcpy" / "gpu_memset": a device activity,
 *                              name, ts, dur, args "correlation", "device"
 *   ph "s" / "f" cat "ac2g"    flow endpoints, id = the correlation
 * Timestamps are numbers or numeric strings, in microseconds with
 * fractions (kept to the nanosecond).
 *
 * Rows:
 *   CPU sink: one row per cpu_op with "Input Dims", in file order, during
 *     the read: Type = perfdb_parse_op_table_name(op) as for GPU rows
 *     (aten::mm -> aten.mm), Accelerator Core "CPU", Duration = its
 *     inclusive "dur" (a CPU-only trace's tables).
 *   GPU sink, after the whole file was read: per op call (the default) one
 *     row per (call, device): Type = perfdb_parse_op_table_name(op), the op's
 *     input cells, Duration = the summed "dur" of every activity the call
 *     launched, shares = the time of each kernel name; an activity whose
 *     chain reaches no op is a row of its own typed by its name with empty
 *     input cells.  With per_kernel, one row per "kernel" event instead:
 *     Type = the kernel name, the cells of its op.  row.device is the
 *     deviceProperties name of the activity's device ("" if not listed).
 * Input cells: one slot per "Input Dims" entry, `[[4,8],[8,16],[]]` ->
 * `"4,8;8,16;"`, torch dtype spellings -> the Ascend profiler's (float FLOAT,
 * c10::BFloat16 DT_BF16, long int INT64, ...), ND per tensor, a tensor list
 * flattened; a shape cell nothing fills (outputs) is `""`.
 *
 * Errors (-PERFDB_EPARSE unless said): invalid JSON or gzip, with the byte
 * offset; an event that is not an object, or a cpu_op / launch / activity
 * with a required field missing or of the wrong type (name, ts, dur,
 * "Input Dims", ids), as "<file>: event #<i> (ending at byte <n>): <what>".
 */
#ifndef PERFDB_CHROME_TRACE_H
#define PERFDB_CHROME_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "parse/parse.h"

struct perfdb_comm_obs;   /* parse/comm_agg.h */

#define PERFDB_CHROME_TRACE_GPU_NAME_MAX 128

struct perfdb_chrome_trace_opts {
	int per_kernel;          /* rows per kernel, not per op call */
	size_t mem_limit;        /* bytes for the linker's sorts (0 = 16 MiB) */
	const char *spill_dir;   /* NULL = $TMPDIR or /tmp */
	/* each call of a collective that has a comm table, per device it ran
	 * on (docs/chrome_trace.md "Collectives"); NULL: only counted */
	int (*comm)(void *ctx, const struct perfdb_comm_obs *o, const char *device,
		    struct perfdb_err *err);
	void *comm_ctx;
};

#define PERFDB_CHROME_TRACE_LIST_OPS 8

/* What a read found (filled up to the failure on an error). */
struct perfdb_chrome_trace_info {
	uint64_t bytes;           /* JSON bytes (after gunzip) */
	int gzip;
	size_t events;            /* objects in the event array */
	size_t cpu_ops;           /* ph "X" cat "cpu_op" */
	size_t cpu_rows;          /* of those, with "Input Dims" */
	size_t cpu_ops_no_shapes; /* without "Input Dims": recorded without record_shapes */
	size_t launches, flows;
	size_t kernels;           /* cat "kernel" events */
	size_t activities;        /* kernel + gpu_memcpy + gpu_memset */
	size_t activities_linked; /* of those, linked to a cpu_op */
	size_t kernels_unmatched; /* activities not linked to a cpu_op */
	size_t gpu_rows;          /* rows offered to the GPU sink */
	size_t legacy_events;     /* ph "X" without "cat": torch's legacy export */
	size_t bad_events;        /* unusable ac2g flows (no integer id) */
	size_t unnamed;           /* cpu_op and kernel events with an empty name: no table holds them */
	/* op types whose rows lack a TensorList input's shapes (recorded as []):
	 * how many, and the first PERFDB_CHROME_TRACE_LIST_OPS of them by name */
	size_t unshaped_list_ops;
	char unshaped_list_op[PERFDB_CHROME_TRACE_LIST_OPS][128];
	size_t comm_calls;        /* collective calls (per device) that make comm-table rows */
	size_t comm_skipped;      /* calls of a comm-table collective that could not be sized */
	char comm_skip[96];       /* why, for the first of them */
	int spilled;              /* the linker's sorts went to disk */
	/* deviceProperties name of the first activity's device (else of the
	 * first entry); "" when the trace has none */
	char gpu_name[PERFDB_CHROME_TRACE_GPU_NAME_MAX];
	size_t ndevices;          /* deviceProperties entries */
	int has_dist;             /* distributedInfo: rank, world_size (-1 absent), backend */
	long long rank, world_size;
	char backend[32];
	int has_base_time;
	long long base_time_ns;   /* baseTimeNanoseconds */
};

/*
 * Read the trace at path.  Either sink may be NULL (rows then only
 * counted); opts NULL = defaults; info may be NULL.  Row spans are valid
 * only during the sink call; row.file is path, row.line 0.  Returns 0 or a
 * negative code with err filled: -PERFDB_ENOENT / -PERFDB_EIO (reading),
 * -PERFDB_EPARSE (above), -PERFDB_ENOMEM, or a sink's error.
 */
int perfdb_chrome_trace_read(const char *path, const struct perfdb_chrome_trace_opts *opts,
			     const struct perfdb_row_sink *cpu_sink,
			     const struct perfdb_row_sink *gpu_sink,
			     struct perfdb_chrome_trace_info *info,
			     struct perfdb_err *err);

/* The same for a trace (JSON or gzip) held in memory; name stands for the
 * file in messages and in row.file. */
int perfdb_chrome_trace_read_mem(const char *name, const void *data, size_t len,
				 const struct perfdb_chrome_trace_opts *opts,
				 const struct perfdb_row_sink *cpu_sink,
				 const struct perfdb_row_sink *gpu_sink,
				 struct perfdb_chrome_trace_info *info,
				 struct perfdb_err *err);

#endif
