/*
 * Division by a run-time constant without a divide instruction, for index
 * arithmetic in the CUDA kernels: q = umulhi(x, mul) >> shr for every
 * 31-bit dividend x (the method of Granlund and Montgomery, as CUTLASS's
 * FastDivmod).  A 64-bit `/` or `%` per element is a long instruction
 * sequence on a GPU, and it had made element-wise kernels compute-bound
 * (docs/cuda.md "Verification status").  Plain C, so the host builds the
 * constants and tests/unit/backend/test_cuda_fdiv.c checks them without a GPU.
 */
#ifndef PERFDB_CUDA_FDIV_H
#define PERFDB_CUDA_FDIV_H

#include <stdint.h>

#ifdef __CUDACC__
#define CUK_HD __host__ __device__
#else
#define CUK_HD
#endif

struct cuk_fdiv {
	uint32_t d, mul, shr;
};

/* The constants for d (1 <= d < 2^31). */
static inline struct cuk_fdiv cuk_fdiv_make(uint32_t d)
{
	struct cuk_fdiv f = { d, 0, 0 };
	if (d <= 1)
		return f;
	uint32_t l = 0;
	while (((uint64_t)1 << l) < d)
		l++;   /* ceil(log2 d) */
	uint64_t p = 31 + (uint64_t)l;
	f.mul = (uint32_t)((((uint64_t)1 << p) + d - 1) / d);
	f.shr = (uint32_t)(p - 32);
	return f;
}

/* x / f.d for x < 2^31, with hi = the high word of x * f.mul (__umulhi on the device). */
static inline CUK_HD uint32_t cuk_fdiv_quot(struct cuk_fdiv f, uint32_t x, uint32_t hi)
{
	return f.d <= 1 ? x : hi >> f.shr;
}

#endif
