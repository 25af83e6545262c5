/*
 * bf16 and fp16 storage for the reductions of perfdb comm (docs/spec/comm.md §1
 * dtypes).  MPI has no 16-bit float types, so the MPI transport sends them
 * as MPI_UINT16_T and reduces them with user-defined MPI_Ops: each pair is
 * widened to float, combined, and rounded once back to 16 bits (nearest,
 * ties to even) — what a device's bf16/fp16 add does.
 *
 * These loops are the scalar reference (ISA level sse2) that the
 * vectorised paths (reduce16_avx2.c, reduce16_avx512.c) must match bit for
 * bit; the conversions are core's (include/perfdb/half.h).
 */
#include <math.h>

#include "comm/comm.h"

/* A NaN wins; otherwise the larger, inout's on a tie (comm.h). */
static inline float max_f(float x, float y)
{
	return isnan(x) || x > y ? x : y;
}

void perfdb_bf16_sum(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_bf16_from_float(perfdb_bf16_to_float(in[i]) +
						  perfdb_bf16_to_float(inout[i]));
}

void perfdb_fp16_sum(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_fp16_from_float(perfdb_fp16_to_float(in[i]) +
						  perfdb_fp16_to_float(inout[i]));
}

void perfdb_bf16_max(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_bf16_from_float(max_f(perfdb_bf16_to_float(in[i]),
							perfdb_bf16_to_float(inout[i])));
}

void perfdb_fp16_max(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_fp16_from_float(max_f(perfdb_fp16_to_float(in[i]),
							perfdb_fp16_to_float(inout[i])));
}
