/*
 * The CUDA backend's own kernels (kernels.cu), callable from C.  Every
 * launcher enqueues on the given stream and returns the launch's error
 * (cudaGetLastError); none synchronises, so each can be captured into a
 * CUDA graph.  Float tensors are fp32, fp16 or bf16 (CUK_F32/F16/BF16);
 * kernels compute in fp32.
 */
#ifndef PERFDB_CUDA_KERNELS_H
#define PERFDB_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cuk_dt { CUK_F32 = 0, CUK_F16 = 1, CUK_BF16 = 2 };

/*
 * bytes from src to dst (device to device) by a kernel, 16 bytes per thread
 * where both are 16-byte aligned.  Not cudaMemcpyAsync: captured in a CUDA
 * graph that is a copy-engine node, 2.7 TB/s on an H200 against 4.1-4.2
 * for the same call on a stream and for this kernel in or out of a graph.
 */
cudaError_t cuk_copy(const void *src, void *dst, size_t bytes, cudaStream_t s);

/* out[i] = x[i] + (y ? y[i % ny] : 1) over n elements. */
cudaError_t cuk_add(const void *x, int dx, const void *y, int dy, int64_t ny, void *out, int dout, int64_t n,
		    cudaStream_t s);
/* dst[i] = src[i] converted between float dtypes. */
cudaError_t cuk_convert(const void *src, int ds, void *dst, int dd, int64_t n, cudaStream_t s);
/* Rows of h: rstd = 1/sqrt(mean(x^2) + eps); y = x * rstd * gamma; rstd_out (fp32, may be NULL). */
cudaError_t cuk_rmsnorm(const void *x, int dx, const void *gamma, int dg, void *y, int dy, float *rstd_out,
			int64_t rows, int64_t h, float eps, cudaStream_t s);
/* Rows of 2h -> h: silu(x[:h]) * x[h:]. */
cudaError_t cuk_swiglu(const void *x, int dx, void *out, int dout, int64_t rows, int64_t h, cudaStream_t s);
/* Row softmax over h. */
cudaError_t cuk_softmax(const void *x, int dx, void *out, int dout, int64_t rows, int64_t h, cudaStream_t s);
/* out[i, :] = table[idx[i], :], rows of row_bytes; idx int32 (idx64 = 0) or int64. */
cudaError_t cuk_gather(const void *table, const void *idx, int idx64, void *out, int64_t nidx, int64_t row_bytes,
		       cudaStream_t s);
/* out[idx[i], :] = upd[i, :], rows of row_bytes; idx int32 (idx64 = 0) or int64 (ScatterNdUpdate). */
cudaError_t cuk_scatter(const void *upd, const void *idx, int idx64, void *out, int64_t nidx, int64_t row_bytes,
			cudaStream_t s);
/*
 * Sort (sort.cu): each row of h elements ascending, stable (ties keep their
 * order), through CUB's segmented radix sort.  vals: the sorted values;
 * idx: their positions in the row (int32, or int64 when idx64).  offsets:
 * rows + 1 ints (r·h); iota: rows·h positions 0..h-1 per row, of idx's type.
 * temp NULL: *temp_bytes gets the scratch CUB needs, nothing is enqueued.
 */
struct cuk_sort {
	const void *x;
	void *vals, *idx;
	const int *offsets;
	const void *iota;
	int dt, idx64;
	int rows, h;
	void *temp;
	size_t temp_bytes;
};
cudaError_t cuk_sort_rows(struct cuk_sort *a, cudaStream_t s);

/* (a, p, b, q, c) -> (a, q, b, p, c) with c elements of es bytes as the unit. */
cudaError_t cuk_transpose(const void *in, void *out, int64_t a, int64_t p, int64_t b, int64_t q, int64_t c_bytes,
			  cudaStream_t s);
/* out[m, n] = acc[m, n] * scale[n or 0] (scale fp32, NULL = 1). */
cudaError_t cuk_dequant(const int32_t *acc, const float *scale, int64_t nscale, void *out, int dout, int64_t m,
			int64_t n, cudaStream_t s);
/* out[i, j] = acc[i, j] * col[j] * row[i] over (m, n); a NULL scale is 1 (W8A8 GroupedMatmul). */
cudaError_t cuk_dequant_rows(const int32_t *acc, const float *col, const float *row, void *out, int dout, int64_t m,
			     int64_t n, cudaStream_t s);
/*
 * Attention over a TND query (t tokens, n heads, d dims; d % 32 == 0, d <= 256)
 * with kvn key/value heads (grouped-query: head h reads kv head h / (n / kvn)).
 * Keys and values: paged (nblocks, kvn, block_size, d) through block_table
 * (batch, max_blocks), or contiguous TND (tokens, kvn, d) from kv_start[b].
 * Per token: its batch (seq_of_token), the batch's first token (q_start),
 * query and key lengths (q_len, kv_len).  causal: 0 none, 2 left-up, 3
 * right-down.  All index arrays are device int32.
 */
struct cuk_attn {
	const void *q, *k, *v;
	void *out;
	int dt, t, n, kvn, d;
	int paged, block_size, max_blocks;
	const int32_t *block_table, *seq_of_token, *q_start, *q_len, *kv_len, *kv_start;
	int causal;
	float scale;
};
cudaError_t cuk_attention(const struct cuk_attn *a, cudaStream_t s);
/* out[i] = mask[i % nm] ? v : x[i] (same float dtype for x and out). */
cudaError_t cuk_masked_fill(const void *x, int dt, const uint8_t *mask, int64_t nm, float v, void *out, int64_t n,
			    cudaStream_t s);

/* Rows of h: x = x1 + x2; y = x * rstd(x) * gamma + bias; rstd (fp32) and xsum optional (NULL). */
struct cuk_arnb {
	const void *x1, *x2, *gamma, *bias;
	void *y, *xsum;
	float *rstd;
	int d1, d2, dg, db, dy, dxs;
	int64_t h;
	float eps;
};
cudaError_t cuk_add_rmsnorm(const struct cuk_arnb *a, int64_t rows, cudaStream_t s);

/* Up to 8 dims, row-major. */
struct cuk_dims {
	int n;
	int64_t v[8];
};
/* The block blk of src (dims sd) copied to the same coordinates of dst (dims dd); es bytes per element. */
cudaError_t cuk_block_copy(const void *src, void *dst, const struct cuk_dims *sd, const struct cuk_dims *dd,
			   const struct cuk_dims *blk, int es, cudaStream_t s);

/* out[o, i] = the first k maximising x[o, k, i] (int32, or int64 when out64). */
cudaError_t cuk_argmax(const void *x, int dt, void *out, int out64, int64_t outer, int64_t d, int64_t inner,
		       cudaStream_t s);

/* Write every 4-byte word of buf (evicts the L2 cache when buf is twice its size). */
cudaError_t cuk_flush(void *buf, size_t bytes, cudaStream_t s);
/* One block spinning for about ns nanoseconds (keeps the stream busy while the host enqueues). */
cudaError_t cuk_spin(uint64_t ns, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
