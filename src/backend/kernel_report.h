/*
 * Per-kernel device records of a native device backend (the CUDA backend's
 * CUPTI activity records; docs/cuda.md), the analogue of msprof's op
 * summary: which kernels one operator call launched and how long each ran
 * on the device.
 *
 * Kept apart from CUPTI so that it builds and is tested everywhere: the
 * backend turns CUPTI's records into struct perfdb_kernel_rec, and the same
 * records can be read from a text dump (one `start_ns<TAB>end_ns<TAB>name`
 * line each, the format PERFDB_CUPTI_DUMP writes on a GPU machine).
 */
#ifndef PERFDB_KERNELS_H
#define PERFDB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* One kernel execution. */
struct perfdb_kernel_rec {
	char *name;          /* as CUPTI reports it (mangled or not) */
	uint64_t start, end; /* device timestamps, ns */
};

struct perfdb_kernel_recs {
	struct perfdb_kernel_rec *v;
	size_t n, cap;
};

/* One report row: one kernel of one table row. */
struct perfdb_kernel_row {
	char *op;
	size_t line;
	char *used;          /* what the backend ran the row with: "cublasLt", "own" */
	char *name;
	const char *family;  /* perfdb_kernel_family(name) */
	size_t records;      /* executions seen */
	double calls;        /* executions per operator call */
	double median_us, mean_us, min_us;
};

struct perfdb_kernel_report {
	struct perfdb_kernel_row *v;
	size_t n, cap;
};

/* Append one record (name copied).  0 or -PERFDB_ENOMEM. */
int perfdb_kernel_recs_add(struct perfdb_kernel_recs *r, const char *name, uint64_t start, uint64_t end);
void perfdb_kernel_recs_release(struct perfdb_kernel_recs *r);

/* Parse a text dump (see above; blank and '#' lines skipped).  Errors name the line. */
int perfdb_kernel_recs_parse(const char *text, struct perfdb_kernel_recs *out, struct perfdb_err *err);

/* Append r as one dump line each. */
void perfdb_kernel_recs_dump(const struct perfdb_kernel_recs *r, struct perfdb_strbuf *out);

/*
 * A short family for a kernel name: "gemm" (cuBLAS/cuBLASLt/CUTLASS
 * xmma/gemm kernels), "gemm_splitk_reduce", "attention" (flash/fmha),
 * "nccl", "memcpy", "perfdb_<op>" for the backend's own kernels
 * (cuk_<op>_kernel, cuk_<op>_vec8<T>), "timing" for its flush/spin
 * helpers, else "other".
 */
const char *perfdb_kernel_family(const char *name);

/*
 * Add one table row's records: grouped by kernel name in order of first
 * appearance, the backend's timing helpers left out, durations in us;
 * calls = executions / op_calls (op_calls > 0).
 */
int perfdb_kernel_report_add(struct perfdb_kernel_report *rep, const char *op, size_t line, const char *used,
			     const struct perfdb_kernel_recs *recs, double op_calls, struct perfdb_err *err);
void perfdb_kernel_report_release(struct perfdb_kernel_report *rep);

/*
 * The report as CSV: Operator,Line,Kernel Used,Kernel Name,Kernel Family,
 * Calls,Device Duration(us),Mean(us),Min(us) (durations: median, mean and
 * min over the kernel's executions).
 */
void perfdb_kernel_report_csv(const struct perfdb_kernel_report *rep, struct perfdb_strbuf *out);

#endif
