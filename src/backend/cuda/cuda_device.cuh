// Device helpers the CUDA backend's kernel files share (kernels.cu,
// kernels_attn.cu): element loads and stores by dtype code, warp and block
// reductions, launch sizes.  In an anonymous namespace: each file gets its
// own copy, inlined.
#ifndef PERFDB_CUDA_DEVICE_CUH
#define PERFDB_CUDA_DEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"

namespace {

__device__ __forceinline__ float ld(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case CUK_F16:
		return __half2float(static_cast<const __half *>(p)[i]);
	case CUK_BF16:
		return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
	default:
		return static_cast<const float *>(p)[i];
	}
}

__device__ __forceinline__ void st(void *p, int dt, int64_t i, float v)
{
	switch (dt) {
	case CUK_F16:
		static_cast<__half *>(p)[i] = __float2half_rn(v);
		break;
	case CUK_BF16:
		static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
		break;
	default:
		static_cast<float *>(p)[i] = v;
		break;
	}
}

int blocks_for(int64_t n, int threads)
{
	int64_t b = (n + threads - 1) / threads;
	if (b > 65535LL * 16)
		b = 65535LL * 16;   // grid-stride loops cover the rest
	return b < 1 ? 1 : (int)b;
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// Block-wide reduction (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
template <bool MAX> __device__ float block_reduce(float v)
{
	__shared__ float part[32];
	__shared__ float total;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	v = MAX ? warp_max(v) : warp_sum(v);
	if (lane == 0)
		part[w] = v;
	__syncthreads();
	if (w == 0) {
		float x = lane < nw ? part[lane] : (MAX ? -INFINITY : 0.0f);
		x = MAX ? warp_max(x) : warp_sum(x);
		if (lane == 0)
			total = x;
	}
	__syncthreads();
	float r = total;
	__syncthreads();   // part/total reused by the next call
	return r;
}

int row_threads(int64_t h)
{
	int t = 32;
	while (t < 1024 && t * 8 < h)
		t *= 2;
	return t;
}
}  // namespace

#endif
