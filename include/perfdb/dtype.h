/*
 * Data types and tensor formats as the Ascend profilers spell them.
 *
 * Profilers write `DT_BF16`, `DT_FLOAT16`, `FLOAT16`, `BFLOAT16`, `FLOAT`...;
 * perfdb treats them as one dtype (docs/spec/replay.md Decision 5).  The canonical
 * spelling is the `DT_*` form used by the database CSVs.  Unknown spellings
 * are kept verbatim by perfdb_dtype_canonical (opaque, e.g. Triton ids).
 */
#ifndef PERFDB_DTYPE_H
#define PERFDB_DTYPE_H

#include <stddef.h>

#include "perfdb/shape.h"
#include "perfdb/strbuf.h"

enum perfdb_dtype {
	PERFDB_DTYPE_UNKNOWN = 0, /* not a spelling we know */
	PERFDB_DTYPE_UNDEFINED,   /* DT_UNDEFINED: an absent tensor */
	PERFDB_DTYPE_FLOAT,       /* fp32 */
	PERFDB_DTYPE_FLOAT16,
	PERFDB_DTYPE_BF16,
	PERFDB_DTYPE_FLOAT64,
	PERFDB_DTYPE_INT4,
	PERFDB_DTYPE_INT8,
	PERFDB_DTYPE_UINT8,
	PERFDB_DTYPE_INT16,
	PERFDB_DTYPE_UINT16,
	PERFDB_DTYPE_INT32,
	PERFDB_DTYPE_UINT32,
	PERFDB_DTYPE_INT64,
	PERFDB_DTYPE_UINT64,
	PERFDB_DTYPE_BOOL,
	PERFDB_DTYPE_FLOAT8_E4M3FN,
	PERFDB_DTYPE_FLOAT8_E5M2,
	PERFDB_DTYPE_HIFLOAT8,
	PERFDB_DTYPE_COMPLEX64,
	PERFDB_DTYPE_COUNT_
};

/*
 * Parse a spelling, case-insensitively, with or without `DT_`, and the
 * torch forms (`torch.bfloat16`, `bf16`, `fp16`, `half`, `float32`, `fp32`,
 * `double`, ...).  Surrounding whitespace and quotes are ignored.
 */
enum perfdb_dtype perfdb_dtype_parse(struct perfdb_span s);

/* Canonical database spelling (`DT_BF16`, `DT_FLOAT16`, `DT_FLOAT`, ...). */
const char *perfdb_dtype_name(enum perfdb_dtype t);

/*
 * The spelling Ascend's profilers write in kernel_details (`FLOAT`,
 * `FLOAT16`, `DT_BF16`, `INT64`, `BOOL`, ...; docs/database.md "Dtype
 * spellings"), which TensorCast's consumer compares cells against
 * verbatim.  Tables perfdb creates from other profilers (PyTorch traces)
 * use it so the simulator can read them.
 */
const char *perfdb_dtype_profiler_name(enum perfdb_dtype t);

/* Size in bits (INT4 = 4, BOOL = 8); 0 for UNKNOWN/UNDEFINED. */
unsigned perfdb_dtype_bits(enum perfdb_dtype t);

/* Bytes for n elements, rounding sub-byte types up; 0 for unknown. */
size_t perfdb_dtype_bytes(enum perfdb_dtype t, size_t n);

/* Whether t is fp32, bf16 or fp16: the float dtypes replay fills and the kernels compute in fp32. */
int perfdb_dtype_is_float(enum perfdb_dtype t);

/*
 * Append the canonical spelling of one dtype token to out: known spellings
 * become `DT_*`, an empty token stays empty, unknown tokens are appended
 * trimmed but otherwise verbatim.  Returns 0 or -PERFDB_ENOMEM.
 */
int perfdb_dtype_canonical(struct perfdb_span token, struct perfdb_strbuf *out);

enum perfdb_format {
	PERFDB_FORMAT_UNKNOWN = 0,
	PERFDB_FORMAT_ND,
	PERFDB_FORMAT_NCHW,
	PERFDB_FORMAT_NHWC,
	PERFDB_FORMAT_NC1HWC0,
	PERFDB_FORMAT_FRACTAL_Z,
	PERFDB_FORMAT_FRACTAL_NZ,
	PERFDB_FORMAT_NULL,       /* `NULL`: an absent tensor */
};

/* Parse a format name (case-insensitive, `FORMAT_` prefix allowed). */
enum perfdb_format perfdb_format_parse(struct perfdb_span s);
const char *perfdb_format_name(enum perfdb_format f);

#endif
