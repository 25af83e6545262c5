// The CUDA backend's attention kernel and the memory-bound operators added
// after the first set (MaskedFill, AddRmsNormBias, Slice/PadV3 block copies,
// ArgMaxV2); extern "C" names for CUPTI, as in kernels.cu.
#include "cuda_device.cuh"

// ---- attention (FusedInferAttentionScore, TND): one warp per (token, head) ----
//
// Online softmax over the token's visible keys; each lane holds D/32 dims
// of q and of the output accumulator (D a multiple of 32, at most 256).
extern "C" __global__ void cuk_attention_kernel(struct cuk_attn a)
{
	int warp = (int)((blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (warp >= a.t * a.n)
		return;
	int t = warp / a.n, h = warp - t * a.n, kvh = h / (a.n / a.kvn);
	int b = a.seq_of_token[t];
	int qi = t - a.q_start[b], lq = a.q_len[b], lk = a.kv_len[b];
	int jend = lk;
	if (a.causal == 3)
		jend = min(lk, qi + lk - lq + 1);   // right-down aligned
	else if (a.causal == 2)
		jend = min(lk, qi + 1);             // left-up aligned
	int nd = a.d / 32;
	float q[8], acc[8];
#pragma unroll
	for (int i = 0; i < 8; i++) {
		q[i] = i < nd ? ld(a.q, a.dt, ((int64_t)t * a.n + h) * a.d + lane + 32 * i) * a.scale : 0.0f;
		acc[i] = 0.0f;
	}
	float m = -INFINITY, l = 0.0f;
	for (int j = 0; j < jend; j++) {
		int64_t row;
		if (a.paged) {
			int blk = a.block_table[(int64_t)b * a.max_blocks + j / a.block_size];
			row = ((int64_t)blk * a.kvn + kvh) * a.block_size + j % a.block_size;
		} else {
			row = ((int64_t)(a.kv_start[b] + j)) * a.kvn + kvh;
		}
		float s = 0.0f;
#pragma unroll
		for (int i = 0; i < 8; i++)
			if (i < nd)
				s += q[i] * ld(a.k, a.dt, row * a.d + lane + 32 * i);
		s = warp_sum(s);
		float mn = fmaxf(m, s), corr = __expf(m - mn), p = __expf(s - mn);
		l = l * corr + p;
#pragma unroll
		for (int i = 0; i < 8; i++)
			if (i < nd)
				acc[i] = acc[i] * corr + p * ld(a.v, a.dt, row * a.d + lane + 32 * i);
		m = mn;
	}
	float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
	for (int i = 0; i < 8; i++)
		if (i < nd)
			st(a.out, a.dt, ((int64_t)t * a.n + h) * a.d + lane + 32 * i, acc[i] * inv);
}

extern "C" cudaError_t cuk_attention(const struct cuk_attn *a, cudaStream_t s)
{
	int64_t warps = (int64_t)a->t * a->n;
	if (warps <= 0)
		return cudaSuccess;
	cuk_attention_kernel<<<(unsigned)((warps + 3) / 4), 128, 0, s>>>(*a);
	return cudaGetLastError();
}

// ---- more memory-bound operators (MaskedFill, AddRmsNormBias, Slice/PadV3, ArgMaxV2) ----

extern "C" __global__ void cuk_masked_fill_kernel(const void *x, int dt, const uint8_t *mask, int64_t nm, float v,
						  void *out, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		st(out, dt, i, mask[i % nm] ? v : ld(x, dt, i));
}

extern "C" cudaError_t cuk_masked_fill(const void *x, int dt, const uint8_t *mask, int64_t nm, float v, void *out,
				       int64_t n, cudaStream_t s)
{
	if (n <= 0 || nm <= 0)
		return cudaSuccess;
	cuk_masked_fill_kernel<<<blocks_for(n, 256), 256, 0, s>>>(x, dt, mask, nm, v, out, n);
	return cudaGetLastError();
}

extern "C" __global__ void cuk_add_rmsnorm_kernel(struct cuk_arnb a)
{
	int64_t base = (int64_t)blockIdx.x * a.h;
	float ss = 0.0f;
	for (int64_t j = threadIdx.x; j < a.h; j += blockDim.x) {
		float v = ld(a.x1, a.d1, base + j) + ld(a.x2, a.d2, base + j);
		ss += v * v;
	}
	ss = block_reduce<false>(ss);
	float r = rsqrtf(ss / (float)a.h + a.eps);
	for (int64_t j = threadIdx.x; j < a.h; j += blockDim.x) {
		float v = ld(a.x1, a.d1, base + j) + ld(a.x2, a.d2, base + j);
		float y = v * r * ld(a.gamma, a.dg, j) + (a.bias ? ld(a.bias, a.db, j) : 0.0f);
		st(a.y, a.dy, base + j, y);
		if (a.xsum)
			st(a.xsum, a.dxs, base + j, v);
	}
	if (a.rstd && threadIdx.x == 0)
		a.rstd[blockIdx.x] = r;
}

extern "C" cudaError_t cuk_add_rmsnorm(const struct cuk_arnb *a, int64_t rows, cudaStream_t s)
{
	if (rows <= 0)
		return cudaSuccess;
	cuk_add_rmsnorm_kernel<<<(unsigned)rows, row_threads(a->h), 0, s>>>(*a);
	return cudaGetLastError();
}

// Copy the block blk of src (dims sd) to the same place of dst (dims dd), elements of es bytes.
extern "C" __global__ void cuk_block_copy_kernel(const char *src, char *dst, struct cuk_dims sd, struct cuk_dims dd,
						 struct cuk_dims blk, int64_t n, int es)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t rem = i, so = 0, dof = 0, ss = 1, ds = 1;
		for (int d = blk.n - 1; d >= 0; d--) {
			int64_t c = rem % blk.v[d];
			rem /= blk.v[d];
			so += c * ss;
			dof += c * ds;
			ss *= sd.v[d];
			ds *= dd.v[d];
		}
		for (int b = 0; b < es; b++)
			dst[dof * es + b] = src[so * es + b];
	}
}

extern "C" __global__ void cuk_copy_vec16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, int64_t n16)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n16; i += (int64_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

extern "C" __global__ void cuk_copy_bytes(const char *src, char *dst, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

extern "C" cudaError_t cuk_copy(const void *src, void *dst, size_t bytes, cudaStream_t s)
{
	if (!bytes)
		return cudaSuccess;
	int64_t n16 = ((uintptr_t)src | (uintptr_t)dst) % 16 == 0 ? (int64_t)(bytes / 16) : 0, tail = (int64_t)bytes - 16 * n16;
	if (n16)
		cuk_copy_vec16<<<blocks_for(n16, 256), 256, 0, s>>>(static_cast<const uint4 *>(src),
								   static_cast<uint4 *>(dst), n16);
	if (tail)
		cuk_copy_bytes<<<blocks_for(tail, 256), 256, 0, s>>>(static_cast<const char *>(src) + 16 * n16,
								   static_cast<char *>(dst) + 16 * n16, tail);
	return cudaGetLastError();
}

extern "C" cudaError_t cuk_block_copy(const void *src, void *dst, const struct cuk_dims *sd, const struct cuk_dims *dd,
				      const struct cuk_dims *blk, int es, cudaStream_t s)
{
	int64_t n = 1;
	for (int d = 0; d < blk->n; d++)
		n *= blk->v[d];
	if (n <= 0)
		return cudaSuccess;
	cuk_block_copy_kernel<<<blocks_for(n, 256), 256, 0, s>>>(static_cast<const char *>(src), static_cast<char *>(dst),
								 *sd, *dd, *blk, n, es);
	return cudaGetLastError();
}

// One block per output element: the first maximum over d elements inner apart.
extern "C" __global__ void cuk_argmax_kernel(const void *x, int dt, void *out, int out64, int64_t d, int64_t inner)
{
	__shared__ float bv[256];
	__shared__ int64_t bi[256];
	int64_t o = blockIdx.x / inner, in = blockIdx.x - o * inner, base = o * d * inner + in;
	float best = -INFINITY;
	int64_t besti = -1;
	for (int64_t k = threadIdx.x; k < d; k += blockDim.x) {
		float v = ld(x, dt, base + k * inner);
		if (besti < 0 || v > best) {
			best = v;
			besti = k;
		}
	}
	bv[threadIdx.x] = best;
	bi[threadIdx.x] = besti;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1) {
		if ((int)threadIdx.x < w) {
			float v2 = bv[threadIdx.x + w];
			int64_t i2 = bi[threadIdx.x + w];
			if (i2 >= 0 && (bi[threadIdx.x] < 0 || v2 > bv[threadIdx.x] ||
					(v2 == bv[threadIdx.x] && i2 < bi[threadIdx.x]))) {
				bv[threadIdx.x] = v2;
				bi[threadIdx.x] = i2;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		if (out64)
			static_cast<int64_t *>(out)[blockIdx.x] = bi[0];
		else
			static_cast<int32_t *>(out)[blockIdx.x] = (int32_t)bi[0];
	}
}

extern "C" cudaError_t cuk_argmax(const void *x, int dt, void *out, int out64, int64_t outer, int64_t d,
				  int64_t inner, cudaStream_t s)
{
	if (outer * inner <= 0 || d <= 0)
		return cudaSuccess;
	cuk_argmax_kernel<<<(unsigned)(outer * inner), 256, 0, s>>>(x, dt, out, out64, d, inner);
	return cudaGetLastError();
}
