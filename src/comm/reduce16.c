/*
 * Which 16-bit reduction kernel runs at which ISA level (reduce16.h).  A
 * level without a kernel of its own uses the best one below it: fp16 has
 * nothing AVX512_BF16 could add, and a sum or max's float work is one
 * instruction either way; the levels differ in how they widen and round.
 */
#include "reduce16.h"

#define NLEVELS (PERFDB_ISA_AVX512_BF16 + 1)

static perfdb_half_fn *const kernels[2][PERFDB_HALF_NOPS][NLEVELS] = {
#ifdef PERFDB_R16_X86
	[0] = {
		[PERFDB_HALF_SUM] = { perfdb_bf16_sum, perfdb_r16_bf16_sum_avx2,
				      perfdb_r16_bf16_sum_avx512, perfdb_r16_bf16_sum_avx512bf16 },
		[PERFDB_HALF_MAX] = { perfdb_bf16_max, perfdb_r16_bf16_max_avx2,
				      perfdb_r16_bf16_max_avx512, perfdb_r16_bf16_max_avx512bf16 },
	},
	[1] = {
		[PERFDB_HALF_SUM] = { perfdb_fp16_sum, perfdb_r16_fp16_sum_avx2,
				      perfdb_r16_fp16_sum_avx512, perfdb_r16_fp16_sum_avx512 },
		[PERFDB_HALF_MAX] = { perfdb_fp16_max, perfdb_r16_fp16_max_avx2,
				      perfdb_r16_fp16_max_avx512, perfdb_r16_fp16_max_avx512 },
	},
#else
	[0] = { [PERFDB_HALF_SUM] = { perfdb_bf16_sum }, [PERFDB_HALF_MAX] = { perfdb_bf16_max } },
	[1] = { [PERFDB_HALF_SUM] = { perfdb_fp16_sum }, [PERFDB_HALF_MAX] = { perfdb_fp16_max } },
#endif
};

perfdb_half_fn *perfdb_half_kernel(enum perfdb_comm_dtype d, enum perfdb_half_op op,
				   enum perfdb_cpu_isa isa)
{
	if ((d != PERFDB_COMM_BF16 && d != PERFDB_COMM_FP16) || (unsigned)op >= PERFDB_HALF_NOPS)
		return NULL;
	int level = (unsigned)isa < NLEVELS ? (int)isa : NLEVELS - 1;
	perfdb_half_fn *const *row = kernels[d == PERFDB_COMM_FP16][op];
	while (level > 0 && !row[level])
		level--;
	return row[level];
}
