/*
 * The vectorised 16-bit reductions of perfdb comm (comm.h "16-bit
 * reductions"): one kernel per (dtype, op, ISA level), each built with its
 * own target attribute so the library itself stays baseline x86-64.
 * reduce16.c holds the table, reduce16_mpi.c the MPI_Ops made from it.
 */
#ifndef PERFDB_COMM_REDUCE16_H
#define PERFDB_COMM_REDUCE16_H

#include <mpi.h>

#include "comm/comm.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PERFDB_R16_X86 1
/* AVX2 + FMA + F16C (reduce16_avx2.c) */
perfdb_half_fn perfdb_r16_bf16_sum_avx2, perfdb_r16_bf16_max_avx2;
perfdb_half_fn perfdb_r16_fp16_sum_avx2, perfdb_r16_fp16_max_avx2;
/* AVX-512 F/BW/VL (reduce16_avx512.c); _bf16: vcvtneps2bf16 for the rounding */
perfdb_half_fn perfdb_r16_bf16_sum_avx512, perfdb_r16_bf16_max_avx512;
perfdb_half_fn perfdb_r16_fp16_sum_avx512, perfdb_r16_fp16_max_avx512;
perfdb_half_fn perfdb_r16_bf16_sum_avx512bf16, perfdb_r16_bf16_max_avx512bf16;
#endif

/*
 * A commutative MPI_Op applying perfdb_half_kernel(d, op, isa): the level is
 * fixed here, once, so no call decides it again.  0, or -PERFDB_EIO/EINVAL
 * with err set.
 */
int perfdb_r16_mpi_op(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa,
		      MPI_Op *out, struct perfdb_err *err);

#endif
