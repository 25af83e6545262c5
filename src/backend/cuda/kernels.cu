// The CUDA backend's own kernels (cuda_kernels.h): memory-bound operators,
// the int8 GEMM's dequantisation and the timing helpers.  Element-wise
// kernels move 16 bytes per thread when the tensors allow it; row kernels
// (RmsNorm, SoftmaxV2) take one block per row.  Kernel names are extern "C"
// so that CUPTI records show them unmangled (src/backend/kernel_report.c maps
// them to families).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_kernels.h"
#include "fdiv.h"

namespace {

template <typename T> __device__ __forceinline__ float tof(T v);
template <> __device__ __forceinline__ float tof<__nv_bfloat16>(__nv_bfloat16 v)
{
	return __bfloat162float(v);
}
template <> __device__ __forceinline__ float tof<__half>(__half v)
{
	return __half2float(v);
}
template <typename T> __device__ __forceinline__ T fromf(float v);
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half fromf<__half>(float v)
{
	return __float2half_rn(v);
}

// Index i of an int32 (idx64 = 0) or int64 index tensor.
__device__ __forceinline__ int64_t row_at(const void *idx, int idx64, int64_t i)
{
	return idx64 ? static_cast<const int64_t *>(idx)[i] : static_cast<const int32_t *>(idx)[i];
}

// One row of row_bytes from src to dst by the block's threads, in units of 16, 4 or 1 bytes.
__device__ __forceinline__ void copy_row(const char *src, char *dst, int64_t row_bytes, int unit)
{
	int64_t nu = row_bytes / unit;
	for (int64_t j = threadIdx.x; j < nu; j += blockDim.x) {
		if (unit == 16)
			reinterpret_cast<uint4 *>(dst)[j] = reinterpret_cast<const uint4 *>(src)[j];
		else if (unit == 4)
			reinterpret_cast<uint32_t *>(dst)[j] = reinterpret_cast<const uint32_t *>(src)[j];
		else
			dst[j] = src[j];
	}
}

}  // namespace

// 16-bit tensors of one dtype, rows a multiple of 8 elements: 16-byte accesses.
template <typename T>
__global__ void cuk_rmsnorm_vec8(const T *x, const T *gamma, T *y, float *rstd_out, int64_t h, float eps)
{
	int64_t row = blockIdx.x, n8 = h / 8;
	const uint4 *xr = reinterpret_cast<const uint4 *>(x + row * h);
	const uint4 *g = reinterpret_cast<const uint4 *>(gamma);
	uint4 *yr = reinterpret_cast<uint4 *>(y + row * h);
	float ss = 0.0f;
	for (int64_t j = threadIdx.x; j < n8; j += blockDim.x) {
		uint4 v = xr[j];
		const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
		for (int i = 0; i < 8; i++) {
			float f = tof(e[i]);
			ss += f * f;
		}
	}
	ss = block_reduce<false>(ss);
	float r = rsqrtf(ss / (float)h + eps);
	for (int64_t j = threadIdx.x; j < n8; j += blockDim.x) {
		uint4 v = xr[j], gv = g[j], o;
		const T *e = reinterpret_cast<const T *>(&v), *ge = reinterpret_cast<const T *>(&gv);
		T *oe = reinterpret_cast<T *>(&o);
#pragma unroll
		for (int i = 0; i < 8; i++)
			oe[i] = fromf<T>(tof(e[i]) * r * tof(ge[i]));
		yr[j] = o;
	}
	if (rstd_out && threadIdx.x == 0)
		rstd_out[row] = r;
}

template <typename T> __global__ void cuk_swiglu_vec8(const T *x, T *out, int64_t rows, int64_t h)
{
	int64_t h8 = h / 8, n = rows * h8;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t r = i / h8, j = i - r * h8;
		uint4 av = reinterpret_cast<const uint4 *>(x + r * 2 * h)[j];
		uint4 bv = reinterpret_cast<const uint4 *>(x + r * 2 * h + h)[j], o;
		const T *a = reinterpret_cast<const T *>(&av), *b = reinterpret_cast<const T *>(&bv);
		T *oe = reinterpret_cast<T *>(&o);
#pragma unroll
		for (int k = 0; k < 8; k++) {
			float g = tof(a[k]);
			oe[k] = fromf<T>(g / (1.0f + __expf(-g)) * tof(b[k]));
		}
		reinterpret_cast<uint4 *>(out)[i] = o;
	}
}

// 16 bytes as E = 16 / sizeof(T) floats, and back (rounded to nearest even).
__device__ __forceinline__ void unpack16(uint4 v, float *f, float)
{
	f[0] = __uint_as_float(v.x), f[1] = __uint_as_float(v.y), f[2] = __uint_as_float(v.z), f[3] = __uint_as_float(v.w);
}
__device__ __forceinline__ void unpack16(uint4 v, float *f, __nv_bfloat16)
{
	const __nv_bfloat162 *p = reinterpret_cast<const __nv_bfloat162 *>(&v);
	for (int k = 0; k < 4; k++) {
		float2 u = __bfloat1622float2(p[k]);
		f[2 * k] = u.x, f[2 * k + 1] = u.y;
	}
}
__device__ __forceinline__ void unpack16(uint4 v, float *f, __half)
{
	const __half2 *p = reinterpret_cast<const __half2 *>(&v);
	for (int k = 0; k < 4; k++) {
		float2 u = __half22float2(p[k]);
		f[2 * k] = u.x, f[2 * k + 1] = u.y;
	}
}
__device__ __forceinline__ uint4 pack16(const float *f, float)
{
	return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
}
__device__ __forceinline__ uint4 pack16(const float *f, __nv_bfloat16)
{
	uint4 v;
	__nv_bfloat162 *p = reinterpret_cast<__nv_bfloat162 *>(&v);
	for (int k = 0; k < 4; k++)
		p[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
	return v;
}
__device__ __forceinline__ uint4 pack16(const float *f, __half)
{
	uint4 v;
	__half2 *p = reinterpret_cast<__half2 *>(&v);
	for (int k = 0; k < 4; k++)
		p[k] = __floats2half2_rn(f[2 * k], f[2 * k + 1]);
	return v;
}

// 16 bytes of T added to 16 bytes of T, in fp32, rounded to nearest even
// (as st()), straight-line conversions of pairs.
template <typename T> __device__ __forceinline__ uint4 add16(uint4 a, uint4 b)
{
	constexpr int E = 16 / sizeof(T);
	float fa[E], fb[E];
	unpack16(a, fa, T());
	unpack16(b, fb, T());
#pragma unroll
	for (int e = 0; e < E; e++)
		fa[e] += fb[e];
	return pack16(fa, T());
}

// Same dtype everywhere, 16 bytes per access.  y is as long as x, or
// broadcast (BCAST: ny16 < n16).  The dtype and the broadcast are template
// parameters: a 64-bit modulo and a dtype switch per element had made this
// kernel compute-bound, at 28 % of a D2D copy's bandwidth on an H200
// (docs/cuda.md "Verification status").
template <typename T, bool BCAST>
__global__ void cuk_add_vec16(const uint4 *__restrict__ x, const uint4 *__restrict__ y, int64_t ny16,
			      uint4 *__restrict__ out, int64_t n16)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n16; i += (int64_t)gridDim.x * blockDim.x)
		out[i] = add16<T>(x[i], y[BCAST ? i % ny16 : i]);
}

template <typename T>
void add_vec16(const void *x, const void *y, int64_t ny16, void *out, int64_t n16, cudaStream_t s)
{
	const uint4 *xv = static_cast<const uint4 *>(x), *yv = static_cast<const uint4 *>(y);
	uint4 *ov = static_cast<uint4 *>(out);
	if (ny16 == n16)
		cuk_add_vec16<T, false><<<blocks_for(n16, 256), 256, 0, s>>>(xv, yv, ny16, ov, n16);
	else
		cuk_add_vec16<T, true><<<blocks_for(n16, 256), 256, 0, s>>>(xv, yv, ny16, ov, n16);
}

// x / f.d and x % f.d for x < 2^31 (fdiv.h).
__device__ __forceinline__ uint32_t fdivmod(struct cuk_fdiv f, uint32_t x, uint32_t *rem)
{
	uint32_t q = cuk_fdiv_quot(f, x, __umulhi(x, f.mul));
	*rem = x - q * f.d;
	return q;
}

// cuk_transpose_kernel's index arithmetic by multiply and shift (fdiv.h),
// for fewer than 2^31 units: four 64-bit divisions per 16-byte unit had
// held a transpose to 58 % of a D2D copy on an H200.
template <typename U>
__global__ void cuk_transpose_fdiv(const U *__restrict__ in, U *__restrict__ out, uint32_t n, struct cuk_fdiv fu,
				   struct cuk_fdiv fp, struct cuk_fdiv fb, struct cuk_fdiv fq)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		uint32_t u, ip, ib, iq;
		uint32_t t = fdivmod(fu, i, &u);
		t = fdivmod(fp, t, &ip);
		t = fdivmod(fb, t, &ib);
		uint32_t ia = fdivmod(fq, t, &iq);
		uint64_t src = ((((uint64_t)ia * fp.d + ip) * fb.d + ib) * fq.d + iq) * fu.d + u;
		out[i] = in[src];
	}
}

// Softmax rows of nvec 16-byte vectors held in registers, VPT a thread:
// the row is read once and written once.  The three passes over global
// memory of cuk_softmax_kernel (max, sum, store) ran fp32 2048x4096 at 38 %
// of a D2D copy on an H200.
template <typename T, int VPT>
__global__ void cuk_softmax_vec16(const uint4 *__restrict__ x, uint4 *__restrict__ out, int64_t nvec)
{
	constexpr int E = 16 / sizeof(T);
	const uint4 *xr = x + blockIdx.x * nvec;
	uint4 *yr = out + blockIdx.x * nvec;
	float v[VPT][E];
	float m = -INFINITY;
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int64_t j = threadIdx.x + (int64_t)k * blockDim.x;
		if (j < nvec) {
			unpack16(xr[j], v[k], T());
#pragma unroll
			for (int e = 0; e < E; e++)
				m = fmaxf(m, v[k][e]);
		}
	}
	m = block_reduce<true>(m);
	float sum = 0.0f;
#pragma unroll
	for (int k = 0; k < VPT; k++)
		if (threadIdx.x + (int64_t)k * blockDim.x < nvec)
#pragma unroll
			for (int e = 0; e < E; e++) {
				v[k][e] = __expf(v[k][e] - m);
				sum += v[k][e];
			}
	float inv = 1.0f / block_reduce<false>(sum);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int64_t j = threadIdx.x + (int64_t)k * blockDim.x;
		if (j < nvec) {
#pragma unroll
			for (int e = 0; e < E; e++)
				v[k][e] *= inv;
			yr[j] = pack16(v[k], T());
		}
	}
}

// RmsNorm rows of 16-bit T held in registers as loaded (at most VPT
// 16-byte vectors a thread, converted in each pass): x is read once, where
// cuk_rmsnorm_vec8 reads it twice.  Holding the row as floats instead
// (twice the registers) ran 4096x5120 bf16 at 51 % of a D2D copy on an
// H200, against 69 % for the two reads.
template <typename T, int VPT>
__global__ void cuk_rmsnorm_regs(const uint4 *__restrict__ x, const uint4 *__restrict__ gamma, uint4 *__restrict__ y,
				 float *rstd_out, int64_t n8, float eps)
{
	const uint4 *xr = x + blockIdx.x * n8;
	uint4 *yr = y + blockIdx.x * n8;
	uint4 v[VPT];
	float ss = 0.0f;
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int64_t j = threadIdx.x + (int64_t)k * blockDim.x;
		if (j < n8)
			v[k] = xr[j];
	}
#pragma unroll
	for (int k = 0; k < VPT; k++)
		if (threadIdx.x + (int64_t)k * blockDim.x < n8) {
			float f[8];
			unpack16(v[k], f, T());
#pragma unroll
			for (int e = 0; e < 8; e++)
				ss += f[e] * f[e];
		}
	ss = block_reduce<false>(ss);
	float r = rsqrtf(ss / (float)(n8 * 8) + eps);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int64_t j = threadIdx.x + (int64_t)k * blockDim.x;
		if (j < n8) {
			float f[8], g[8];
			unpack16(v[k], f, T());
			unpack16(gamma[j], g, T());
#pragma unroll
			for (int e = 0; e < 8; e++)
				f[e] = f[e] * r * g[e];
			yr[j] = pack16(f, T());
		}
	}
	if (rstd_out && threadIdx.x == 0)
		rstd_out[blockIdx.x] = r;
}

extern "C" {

__global__ void cuk_convert_kernel(const void *src, int ds, void *dst, int dd, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		st(dst, dd, i, ld(src, ds, i));
}

__global__ void cuk_add_kernel(const void *x, int dx, const void *y, int dy, int64_t ny, void *out, int dout,
			       int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		st(out, dout, i, ld(x, dx, i) + (y ? ld(y, dy, i % ny) : 1.0f));
}

__global__ void cuk_rmsnorm_kernel(const void *x, int dx, const void *gamma, int dg, void *y, int dy,
				   float *rstd_out, int64_t h, float eps)
{
	int64_t row = blockIdx.x;
	const char *xr = static_cast<const char *>(x);
	int64_t base = row * h;
	float ss = 0.0f;
	for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
		float v = ld(xr, dx, base + j);
		ss += v * v;
	}
	ss = block_reduce<false>(ss);
	float r = rsqrtf(ss / (float)h + eps);
	for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
		st(y, dy, base + j, ld(xr, dx, base + j) * r * ld(gamma, dg, j));
	if (rstd_out && threadIdx.x == 0)
		rstd_out[row] = r;
}

__global__ void cuk_swiglu_kernel(const void *x, int dx, void *out, int dout, int64_t rows, int64_t h)
{
	int64_t n = rows * h;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t r = i / h, j = i - r * h;
		float a = ld(x, dx, r * 2 * h + j), b = ld(x, dx, r * 2 * h + h + j);
		st(out, dout, i, a / (1.0f + __expf(-a)) * b);
	}
}

__global__ void cuk_softmax_kernel(const void *x, int dx, void *out, int dout, int64_t h)
{
	int64_t base = (int64_t)blockIdx.x * h;
	float m = -INFINITY;
	for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
		m = fmaxf(m, ld(x, dx, base + j));
	m = block_reduce<true>(m);
	float s = 0.0f;
	for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
		s += __expf(ld(x, dx, base + j) - m);
	s = block_reduce<false>(s);
	float inv = 1.0f / s;
	for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
		st(out, dout, base + j, __expf(ld(x, dx, base + j) - m) * inv);
}

// One block per index row; 16-byte units when the row allows it.
__global__ void cuk_gather_kernel(const char *table, const void *idx, int idx64, char *out, int64_t row_bytes,
				  int unit)
{
	int64_t i = blockIdx.x;
	copy_row(table + row_at(idx, idx64, i) * row_bytes, out + i * row_bytes, row_bytes, unit);
}

// out[idx[i], :] = upd[i, :], rows of row_bytes (ScatterNdUpdate: one block per update row).
__global__ void cuk_scatter_kernel(const char *upd, const void *idx, int idx64, char *out, int64_t row_bytes,
				   int unit)
{
	int64_t i = blockIdx.x;
	copy_row(upd + i * row_bytes, out + row_at(idx, idx64, i) * row_bytes, row_bytes, unit);
}

// Output-major walk: each thread writes one unit of the (a, q, b, p) output.
__global__ void cuk_transpose_kernel(const char *in, char *out, int64_t a, int64_t p, int64_t b, int64_t q,
				     int64_t cb, int unit)
{
	int64_t upc = cb / unit, n = a * q * b * p * upc;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t u = i % upc, t = i / upc;
		int64_t ip = t % p;
		t /= p;
		int64_t ib = t % b;
		t /= b;
		int64_t iq = t % q, ia = t / q;
		int64_t src = (((ia * p + ip) * b + ib) * q + iq) * upc + u;
		if (unit == 16)
			reinterpret_cast<uint4 *>(out)[i] = reinterpret_cast<const uint4 *>(in)[src];
		else if (unit == 4)
			reinterpret_cast<uint32_t *>(out)[i] = reinterpret_cast<const uint32_t *>(in)[src];
		else if (unit == 2)
			reinterpret_cast<uint16_t *>(out)[i] = reinterpret_cast<const uint16_t *>(in)[src];
		else
			out[i] = in[src];
	}
}

__global__ void cuk_dequant_kernel(const int32_t *acc, const float *scale, int64_t nscale, void *out, int dout,
				   int64_t m, int64_t n)
{
	int64_t tot = m * n;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < tot; i += (int64_t)gridDim.x * blockDim.x) {
		float s = scale ? scale[nscale > 1 ? i % n : 0] : 1.0f;
		st(out, dout, i, (float)acc[i] * s);
	}
}

// out[i, j] = acc[i, j] * col[j] * row[i] (either scale NULL: 1), the W8A8 grouped GEMM's dequantisation.
__global__ void cuk_dequant_rows_kernel(const int32_t *acc, const float *col, const float *row, void *out, int dout,
					int64_t m, int64_t n)
{
	int64_t tot = m * n;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < tot; i += (int64_t)gridDim.x * blockDim.x) {
		float s = (col ? col[i % n] : 1.0f) * (row ? row[i / n] : 1.0f);
		st(out, dout, i, (float)acc[i] * s);
	}
}

__global__ void cuk_flush_kernel(uint4 *buf, int64_t n16)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n16; i += (int64_t)gridDim.x * blockDim.x) {
		uint4 v = buf[i];
		v.x += 1u;
		buf[i] = v;
	}
}

__global__ void cuk_spin_kernel(uint64_t ns)
{
	uint64_t t0;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (;;) {
		uint64_t t;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 >= ns)
			break;
	}
}

cudaError_t cuk_add(const void *x, int dx, const void *y, int dy, int64_t ny, void *out, int dout, int64_t n,
		    cudaStream_t s)
{
	int es = dx == CUK_F32 ? 4 : 2, per = 16 / es;
	bool vec = y && dx == dy && dx == dout && n % per == 0 && ny % per == 0 && ny > 0 &&
		   ((uintptr_t)x | (uintptr_t)y | (uintptr_t)out) % 16 == 0;
	if (vec && dx == CUK_F32)
		add_vec16<float>(x, y, ny / per, out, n / per, s);
	else if (vec && dx == CUK_BF16)
		add_vec16<__nv_bfloat16>(x, y, ny / per, out, n / per, s);
	else if (vec)
		add_vec16<__half>(x, y, ny / per, out, n / per, s);
	else
		cuk_add_kernel<<<blocks_for(n, 256), 256, 0, s>>>(x, dx, y, dy, ny > 0 ? ny : 1, out, dout, n);
	return cudaGetLastError();
}

cudaError_t cuk_convert(const void *src, int ds, void *dst, int dd, int64_t n, cudaStream_t s)
{
	if (n <= 0)
		return cudaSuccess;
	cuk_convert_kernel<<<blocks_for(n, 256), 256, 0, s>>>(src, ds, dst, dd, n);
	return cudaGetLastError();
}

cudaError_t cuk_rmsnorm(const void *x, int dx, const void *gamma, int dg, void *y, int dy, float *rstd_out,
			int64_t rows, int64_t h, float eps, cudaStream_t s)
{
	if (rows <= 0)
		return cudaSuccess;
	if (dx == dg && dx == dy && dx != CUK_F32 && h % 8 == 0 && h / 8 <= 4 * 1024 &&
	    ((uintptr_t)x | (uintptr_t)gamma | (uintptr_t)y) % 16 == 0) {
		int th = (int)((h / 8 + 3) / 4 + 31) / 32 * 32;   // 4 vectors a thread at most
		const uint4 *xv = static_cast<const uint4 *>(x), *gv = static_cast<const uint4 *>(gamma);
		uint4 *yv = static_cast<uint4 *>(y);
		if (dx == CUK_BF16)
			cuk_rmsnorm_regs<__nv_bfloat16, 4><<<(unsigned)rows, th, 0, s>>>(xv, gv, yv, rstd_out, h / 8, eps);
		else
			cuk_rmsnorm_regs<__half, 4><<<(unsigned)rows, th, 0, s>>>(xv, gv, yv, rstd_out, h / 8, eps);
		return cudaGetLastError();
	}
	if (dx == dg && dx == dy && dx != CUK_F32 && h % 8 == 0) {
		int th = row_threads(h / 8);
		if (dx == CUK_BF16)
			cuk_rmsnorm_vec8<__nv_bfloat16><<<(unsigned)rows, th, 0, s>>>(
				static_cast<const __nv_bfloat16 *>(x), static_cast<const __nv_bfloat16 *>(gamma),
				static_cast<__nv_bfloat16 *>(y), rstd_out, h, eps);
		else
			cuk_rmsnorm_vec8<__half><<<(unsigned)rows, th, 0, s>>>(static_cast<const __half *>(x),
									     static_cast<const __half *>(gamma),
									     static_cast<__half *>(y), rstd_out, h, eps);
		return cudaGetLastError();
	}
	cuk_rmsnorm_kernel<<<(unsigned)rows, row_threads(h), 0, s>>>(x, dx, gamma, dg, y, dy, rstd_out, h, eps);
	return cudaGetLastError();
}

cudaError_t cuk_swiglu(const void *x, int dx, void *out, int dout, int64_t rows, int64_t h, cudaStream_t s)
{
	if (dx == dout && dx != CUK_F32 && h % 8 == 0) {
		if (dx == CUK_BF16)
			cuk_swiglu_vec8<__nv_bfloat16><<<blocks_for(rows * h / 8, 256), 256, 0, s>>>(
				static_cast<const __nv_bfloat16 *>(x), static_cast<__nv_bfloat16 *>(out), rows, h);
		else
			cuk_swiglu_vec8<__half><<<blocks_for(rows * h / 8, 256), 256, 0, s>>>(
				static_cast<const __half *>(x), static_cast<__half *>(out), rows, h);
		return cudaGetLastError();
	}
	cuk_swiglu_kernel<<<blocks_for(rows * h, 256), 256, 0, s>>>(x, dx, out, dout, rows, h);
	return cudaGetLastError();
}

cudaError_t cuk_softmax(const void *x, int dx, void *out, int dout, int64_t rows, int64_t h, cudaStream_t s)
{
	if (rows <= 0)
		return cudaSuccess;
	int es = dx == CUK_F32 ? 4 : 2;
	int64_t nvec = h * es / 16;
	if (dx == dout && (h * es) % 16 == 0 && nvec <= 4 * 1024 && ((uintptr_t)x | (uintptr_t)out) % 16 == 0) {
		int th = (int)((nvec + 3) / 4 + 31) / 32 * 32;   // 4 vectors a thread at most
		const uint4 *xv = static_cast<const uint4 *>(x);
		uint4 *ov = static_cast<uint4 *>(out);
		if (dx == CUK_F32)
			cuk_softmax_vec16<float, 4><<<(unsigned)rows, th, 0, s>>>(xv, ov, nvec);
		else if (dx == CUK_BF16)
			cuk_softmax_vec16<__nv_bfloat16, 4><<<(unsigned)rows, th, 0, s>>>(xv, ov, nvec);
		else
			cuk_softmax_vec16<__half, 4><<<(unsigned)rows, th, 0, s>>>(xv, ov, nvec);
		return cudaGetLastError();
	}
	cuk_softmax_kernel<<<(unsigned)rows, row_threads(h), 0, s>>>(x, dx, out, dout, h);
	return cudaGetLastError();
}

cudaError_t cuk_gather(const void *table, const void *idx, int idx64, void *out, int64_t nidx, int64_t row_bytes,
		       cudaStream_t s)
{
	if (nidx <= 0)
		return cudaSuccess;
	int unit = row_bytes % 16 == 0 && ((uintptr_t)table | (uintptr_t)out) % 16 == 0 ? 16
		   : row_bytes % 4 == 0 && ((uintptr_t)table | (uintptr_t)out) % 4 == 0 ? 4 : 1;
	int threads = row_threads(row_bytes / unit);
	cuk_gather_kernel<<<(unsigned)nidx, threads, 0, s>>>(static_cast<const char *>(table), idx, idx64,
							     static_cast<char *>(out), row_bytes, unit);
	return cudaGetLastError();
}

cudaError_t cuk_scatter(const void *upd, const void *idx, int idx64, void *out, int64_t nidx, int64_t row_bytes,
			cudaStream_t s)
{
	if (nidx <= 0)
		return cudaSuccess;
	int unit = row_bytes % 16 == 0 && ((uintptr_t)upd | (uintptr_t)out) % 16 == 0 ? 16
		   : row_bytes % 4 == 0 && ((uintptr_t)upd | (uintptr_t)out) % 4 == 0 ? 4 : 1;
	int threads = row_threads(row_bytes / unit);
	cuk_scatter_kernel<<<(unsigned)nidx, threads, 0, s>>>(static_cast<const char *>(upd), idx, idx64,
							      static_cast<char *>(out), row_bytes, unit);
	return cudaGetLastError();
}

cudaError_t cuk_transpose(const void *in, void *out, int64_t a, int64_t p, int64_t b, int64_t q, int64_t c_bytes,
			  cudaStream_t s)
{
	uintptr_t al = (uintptr_t)in | (uintptr_t)out;
	int unit = c_bytes % 16 == 0 && al % 16 == 0 ? 16 : c_bytes % 4 == 0 && al % 4 == 0 ? 4
		   : c_bytes % 2 == 0 && al % 2 == 0 ? 2 : 1;
	int64_t n = a * p * b * q * (c_bytes / unit);
	if (n <= 0)
		return cudaSuccess;
	if (n < ((int64_t)1 << 31)) {
		struct cuk_fdiv fu = cuk_fdiv_make((uint32_t)(c_bytes / unit)), fp = cuk_fdiv_make((uint32_t)p);
		struct cuk_fdiv fb = cuk_fdiv_make((uint32_t)b), fq = cuk_fdiv_make((uint32_t)q);
		int g = blocks_for(n, 256);
		uint32_t n32 = (uint32_t)n;
		if (unit == 16)
			cuk_transpose_fdiv<uint4><<<g, 256, 0, s>>>(static_cast<const uint4 *>(in), static_cast<uint4 *>(out),
								     n32, fu, fp, fb, fq);
		else if (unit == 4)
			cuk_transpose_fdiv<uint32_t><<<g, 256, 0, s>>>(static_cast<const uint32_t *>(in),
									static_cast<uint32_t *>(out), n32, fu, fp, fb, fq);
		else if (unit == 2)
			cuk_transpose_fdiv<uint16_t><<<g, 256, 0, s>>>(static_cast<const uint16_t *>(in),
									static_cast<uint16_t *>(out), n32, fu, fp, fb, fq);
		else
			cuk_transpose_fdiv<uint8_t><<<g, 256, 0, s>>>(static_cast<const uint8_t *>(in),
								       static_cast<uint8_t *>(out), n32, fu, fp, fb, fq);
		return cudaGetLastError();
	}
	cuk_transpose_kernel<<<blocks_for(n, 256), 256, 0, s>>>(static_cast<const char *>(in), static_cast<char *>(out),
								a, p, b, q, c_bytes, unit);
	return cudaGetLastError();
}

cudaError_t cuk_dequant(const int32_t *acc, const float *scale, int64_t nscale, void *out, int dout, int64_t m,
			int64_t n, cudaStream_t s)
{
	cuk_dequant_kernel<<<blocks_for(m * n, 256), 256, 0, s>>>(acc, scale, nscale, out, dout, m, n);
	return cudaGetLastError();
}

cudaError_t cuk_dequant_rows(const int32_t *acc, const float *col, const float *row, void *out, int dout, int64_t m,
			     int64_t n, cudaStream_t s)
{
	if (m * n <= 0)
		return cudaSuccess;
	cuk_dequant_rows_kernel<<<blocks_for(m * n, 256), 256, 0, s>>>(acc, col, row, out, dout, m, n);
	return cudaGetLastError();
}

cudaError_t cuk_flush(void *buf, size_t bytes, cudaStream_t s)
{
	int64_t n16 = (int64_t)(bytes / 16);
	cuk_flush_kernel<<<blocks_for(n16, 512), 512, 0, s>>>(static_cast<uint4 *>(buf), n16);
	return cudaGetLastError();
}

cudaError_t cuk_spin(uint64_t ns, cudaStream_t s)
{
	cuk_spin_kernel<<<1, 32, 0, s>>>(ns);
	return cudaGetLastError();
}

}  // extern "C"
