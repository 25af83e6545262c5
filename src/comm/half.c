/*
 * bf16 and fp16 storage for the reductions of perfdb comm (docs/spec/comm.md §1
 * dtypes).  MPI has no 16-bit float types, so the harness sends them as
 * MPI_UINT16_T and sums them with a user-defined MPI_Op built on
 * perfdb_bf16_sum / perfdb_fp16_sum: each pair is widened to float, added,
 * and rounded once back to 16 bits (nearest, ties to even) — what a
 * device's bf16/fp16 add does.
 *
 * The conversions are core's (include/perfdb/half.h).
 */
#include <string.h>

#include "perfdb/comm.h"

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
