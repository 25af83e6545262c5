// The CUDA backend's Sort (cuda_kernels.h, cuk_sort_rows): rows of the last
// dim sorted ascending with CUB's segmented radix sort, values and their
// positions as pairs.  Radix sort is stable, so equal values keep their
// order, as the CPU backend's sort does (docs/ops.md).  The keys are the
// tensor's own fp32, fp16 or bf16 (CUB orders floats by value, with -0
// before +0).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <cub/device/device_segmented_radix_sort.cuh>

#include "cuda_kernels.h"

namespace {

template <typename K, typename V> cudaError_t sort_pairs(cuk_sort *a, cudaStream_t s)
{
	int n = a->rows * a->h;
	return cub::DeviceSegmentedRadixSort::SortPairs(a->temp, a->temp_bytes, static_cast<const K *>(a->x),
							static_cast<K *>(a->vals), static_cast<const V *>(a->iota),
							static_cast<V *>(a->idx), n, a->rows, a->offsets, a->offsets + 1,
							0, (int)sizeof(K) * 8, s);
}

template <typename K> cudaError_t sort_keys(cuk_sort *a, cudaStream_t s)
{
	return a->idx64 ? sort_pairs<K, int64_t>(a, s) : sort_pairs<K, int32_t>(a, s);
}

}  // namespace

extern "C" cudaError_t cuk_sort_rows(struct cuk_sort *a, cudaStream_t s)
{
	if (a->rows <= 0 || a->h <= 0) {
		if (!a->temp)
			a->temp_bytes = 1;
		return cudaSuccess;
	}
	switch (a->dt) {
	case CUK_F16:
		return sort_keys<__half>(a, s);
	case CUK_BF16:
		return sort_keys<__nv_bfloat16>(a, s);
	default:
		return sort_keys<float>(a, s);
	}
}
