/*
 * The MPI_Ops of the 16-bit reductions (reduce16.h).  An MPI user function
 * gets no context, so there is one per (dtype, op, level), each calling its
 * kernel directly: the level is chosen when the op is made, and a call
 * costs no lookup.
 *
 * How Open MPI 4.1 applies them (ompi/op/op.h ompi_op_reduce): a user op is
 * called once per reduction step on the whole segment the collective
 * algorithm works on (split only above INT_MAX elements), in place on the
 * algorithm's own buffer, never copied first.  The ops are created
 * commutative: the tuned component then picks the same algorithms as for
 * MPI_SUM (a non-commutative op restricts all_reduce and reduce_scatter to
 * slower, order-preserving ones).
 */
#include "reduce16.h"

#include "harness.h"

#define WRAP(name, kernel)                                                      \
	static void name(void *in, void *inout, int *len, MPI_Datatype *dt)     \
	{                                                                       \
		(void)dt;                                                       \
		kernel(in, inout, (size_t)*len);                                \
	}

WRAP(bf16_sum_sse2, perfdb_bf16_sum)
WRAP(bf16_max_sse2, perfdb_bf16_max)
WRAP(fp16_sum_sse2, perfdb_fp16_sum)
WRAP(fp16_max_sse2, perfdb_fp16_max)
#ifdef PERFDB_R16_X86
WRAP(bf16_sum_avx2, perfdb_r16_bf16_sum_avx2)
WRAP(bf16_max_avx2, perfdb_r16_bf16_max_avx2)
WRAP(fp16_sum_avx2, perfdb_r16_fp16_sum_avx2)
WRAP(fp16_max_avx2, perfdb_r16_fp16_max_avx2)
WRAP(bf16_sum_avx512, perfdb_r16_bf16_sum_avx512)
WRAP(bf16_max_avx512, perfdb_r16_bf16_max_avx512)
WRAP(fp16_sum_avx512, perfdb_r16_fp16_sum_avx512)
WRAP(fp16_max_avx512, perfdb_r16_fp16_max_avx512)
WRAP(bf16_sum_avx512bf16, perfdb_r16_bf16_sum_avx512bf16)
WRAP(bf16_max_avx512bf16, perfdb_r16_bf16_max_avx512bf16)
#endif

struct entry {
	perfdb_half_fn *kernel;
	MPI_User_function *fn;
};

static const struct entry entries[] = {
	{ perfdb_bf16_sum, bf16_sum_sse2 },
	{ perfdb_bf16_max, bf16_max_sse2 },
	{ perfdb_fp16_sum, fp16_sum_sse2 },
	{ perfdb_fp16_max, fp16_max_sse2 },
#ifdef PERFDB_R16_X86
	{ perfdb_r16_bf16_sum_avx2, bf16_sum_avx2 },
	{ perfdb_r16_bf16_max_avx2, bf16_max_avx2 },
	{ perfdb_r16_fp16_sum_avx2, fp16_sum_avx2 },
	{ perfdb_r16_fp16_max_avx2, fp16_max_avx2 },
	{ perfdb_r16_bf16_sum_avx512, bf16_sum_avx512 },
	{ perfdb_r16_bf16_max_avx512, bf16_max_avx512 },
	{ perfdb_r16_fp16_sum_avx512, fp16_sum_avx512 },
	{ perfdb_r16_fp16_max_avx512, fp16_max_avx512 },
	{ perfdb_r16_bf16_sum_avx512bf16, bf16_sum_avx512bf16 },
	{ perfdb_r16_bf16_max_avx512bf16, bf16_max_avx512bf16 },
#endif
};

int perfdb_r16_mpi_op(enum perfdb_comm_dtype d, enum perfdb_half_op op, enum perfdb_cpu_isa isa,
		      MPI_Op *out, struct perfdb_err *err)
{
	perfdb_half_fn *k = perfdb_half_kernel(d, op, isa);
	for (size_t i = 0; k && i < sizeof(entries) / sizeof(entries[0]); i++)
		if (entries[i].kernel == k) {
			MPI_TRY(err, MPI_Op_create(entries[i].fn, 1, out));
			return 0;
		}
	return perfdb_err_set(err, PERFDB_EINVAL, "no 16-bit reduction for dtype %d op %d", (int)d,
			      (int)op);
}
