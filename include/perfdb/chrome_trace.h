/*
 * PyTorch profiler Chrome traces -> kernel rows (docs/spec/parse.md Decision 6:
 * "the PyTorch profiler trace (ph:"X" kernel / cpu_op events with
 * Input Dims / Input type args) turned into per-kernel tables for CPU or
 * GPU devices").
 *
 * Input: what torch.profiler's export_chrome_trace() writes through Kineto,
 * a JSON object {"traceEvents": [...], "deviceProperties": [...], ...}, or
 * a bare array of events (Chrome's other trace form).  The whole document
 * is loaded (jansson); traces are tens of MB at most.  The events used:
 *
 *   {"ph":"X", "cat":"cpu_op", "name":"aten::mm", "ts":.., "dur":12.5,
 *    "args":{"External id":14, "Input Dims":[[8,64],[64,64]],
 *            "Input type":["c10::BFloat16","c10::BFloat16"], ...}}
 *   {"ph":"X", "cat":"cuda_runtime"|"cuda_driver", "name":"cudaLaunchKernel",
 *    "args":{"External id":14, "correlation":100, "cbid":211}}
 *   {"ph":"X", "cat":"kernel", "name":"<demangled kernel>", "dur":6.1,
 *    "args":{"External id":14, "correlation":100, "device":0, "stream":7, ...}}
 *   "deviceProperties": [{"id":0, "name":"NVIDIA H200", ...}]
 *
 * Kineto's chain: a CPU op's "External id" is pushed as the external
 * correlation of every CUDA runtime/driver call made inside it, so the
 * launch carries the innermost op's "External id" and its own CUPTI
 * "correlation", which the kernel repeats.  The kernel is joined
 * correlation -> launch -> External id -> cpu_op; when no launch with that
 * correlation exists, the kernel's own "External id" (which newer Kineto
 * writes too) is tried.  A kernel whose chain does not end at a cpu_op with
 * shapes (launched under a record_function range, or with no launch event
 * in the window, e.g. NCCL) still gives a row, with empty shape cells, and
 * is counted in kernels_unmatched.
 *
 * Rows (struct perfdb_kernel_row), one per event:
 *   CPU sink: every ph "X" cat "cpu_op" event that has "Input Dims".
 *     Type = Name = the op name ("aten::addmm"), Accelerator Core "CPU".
 *     All ops are kept, not only leaves: each op name is its own table, and
 *     "leaf" is not "the op that computes" (aten::mm and aten::addmm have
 *     aten::resolve_conj / aten::as_strided children in real traces, so a
 *     leaves-only rule would drop the GEMMs and keep the views).  Durations
 *     are inclusive ("dur"), as the profiler reports them.
 *   GPU sink: every ph "X" cat "kernel" event.  Type = Name = the raw kernel
 *     name (the table writer sanitises file names), Accelerator Core "GPU",
 *     the input cells of the joined cpu_op.  For a GPU trace the cpu_op
 *     durations measure dispatch, not the kernels: a caller that wants only
 *     device tables passes cpu_sink = NULL.
 *   Duration = "dur" in microseconds as a decimal string (11 -> "11",
 *   6.144 -> "6.144", shortest text that reads back); empty if absent.
 *   OP State, outputs and counters are empty: the trace records no outputs.
 *
 * Input cells, one slot per entry of "Input Dims" (database convention,
 * docs/spec/parse.md §2, docs/design.md "Shape cells keep the profiler's literal
 * quotes"):
 *   Input Shapes  [[4,8],[8,16],[]] -> `"4,8;8,16;"` (literal quotes); no
 *                 inputs -> empty cell.  A tensor-list input (torch >= 2.x
 *                 writes [[4,8],[4,8]] inside the slot) is flattened: one
 *                 slot per tensor, as Ascend profilers list aclnnCat inputs.
 *   Input Data Types  the "Input type" entry of the slot, via torch's C++
 *                 spellings: float DT_FLOAT, double DT_FLOAT64, c10::Half
 *                 DT_FLOAT16, c10::BFloat16 DT_BF16, signed char DT_INT8,
 *                 unsigned char DT_UINT8, short [int] DT_INT16, int
 *                 DT_INT32, long [int] / long long [int] DT_INT64, the
 *                 unsigned widths DT_UINT16/32/64, bool DT_BOOL,
 *                 c10::Float8_e4m3fn / c10::Float8_e5m2 DT_FLOAT8_*,
 *                 c10::complex<float> DT_COMPLEX64.  A slot with dims is a
 *                 tensor: other spellings go through perfdb_dtype_canonical
 *                 (torch.bfloat16 -> DT_BF16, unknown kept verbatim but
 *                 for ';' -> '_', so a flattened tensor list reads
 *                 "TensorList": torch does not record the element dtype).
 *                 A slot without dims is a 0-d
 *                 tensor when its type is one of the spellings above (the
 *                 wrapped scalar of `x + 1.0` is [] "double" -> DT_FLOAT64),
 *                 otherwise a non-tensor ("Scalar", "", "ScalarList", ...)
 *                 and its cell is empty.
 *   Input Formats ND for every tensor slot, empty for non-tensor slots.
 *   Example: [[8,1],[],[]] / ["float","double","Scalar"] ->
 *            `"8,1;;"`, `DT_FLOAT;DT_FLOAT64;`, `ND;ND;`.
 *
 * Skipped, never fatal: events that are not objects and cpu_ops whose
 * dims are not lists of integers or that have no name (counted in
 * bad_events), cpu_ops without "Input Dims" (record_shapes=False; counted
 * in cpu_ops_no_shapes), and, uncounted, everything else (metadata "M",
 * flows, user_annotation, memcpy/memset, python_function, ...).  "args"
 * null, missing or not an object reads as no args; a "dur" that is not a
 * number gives an empty Duration.
 */
#ifndef PERFDB_CHROME_TRACE_H
#define PERFDB_CHROME_TRACE_H

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/parse.h"

#define PERFDB_CHROME_TRACE_GPU_NAME_MAX 128

/* What a read found (also filled, up to the failing row, on a sink error). */
struct perfdb_chrome_trace_info {
	size_t events;            /* entries of the event array */
	size_t cpu_ops;           /* ph "X" cat "cpu_op" events */
	size_t cpu_rows;          /* of those, the CPU rows (had valid "Input Dims") */
	size_t cpu_ops_no_shapes; /* cpu_ops without "Input Dims": recorded without record_shapes */
	size_t kernels;           /* ph "X" cat "kernel" events = the GPU rows */
	size_t kernels_unmatched; /* kernels not joined to a cpu_op with shapes */
	size_t legacy_events;     /* ph "X" events without "cat": torch's legacy (non-Kineto)
				     export, which records no shapes */
	size_t bad_events;        /* events skipped as malformed */
	/* deviceProperties "name" of the first kernel's "device" (else of the
	 * first entry); "" when the trace has none, e.g. a CPU-only trace. */
	char gpu_name[PERFDB_CHROME_TRACE_GPU_NAME_MAX];
};

/*
 * Read the trace at path and offer its rows, CPU rows to cpu_sink and
 * kernel rows to gpu_sink, in event order (either sink may be NULL: those
 * rows are then only counted).  Row spans point into memory owned by this
 * call and are valid only during the sink call; row.file is path, row.line
 * is 0 (JSON values carry no line).  info may be NULL.
 *
 * Returns 0, or a negative code with err filled: -PERFDB_ENOENT / -PERFDB_EIO
 * (reading), -PERFDB_EPARSE ("<file>:<line>:<col>: invalid JSON: <what>";
 * "<file>: not a Chrome trace: ..." when the top level is neither an object
 * with a "traceEvents" array nor an array), -PERFDB_ENOMEM, or the first
 * negative return of a sink, passed through with the sink's message (rows
 * after it are not offered).
 */
int perfdb_chrome_trace_read(const char *path,
			     const struct perfdb_row_sink *cpu_sink,
			     const struct perfdb_row_sink *gpu_sink,
			     struct perfdb_chrome_trace_info *info,
			     struct perfdb_err *err);

/* The same for a trace held in memory (data need not be NUL-terminated);
 * name stands for the file in messages and in row.file. */
int perfdb_chrome_trace_read_mem(const char *name, const void *data, size_t len,
				 const struct perfdb_row_sink *cpu_sink,
				 const struct perfdb_row_sink *gpu_sink,
				 struct perfdb_chrome_trace_info *info,
				 struct perfdb_err *err);

#endif
