/*
 * GPU benchmark of the CUDA backend (tests/device/run.sh runs it on a
 * machine with an NVIDIA GPU), each figure next to its reference measured
 * in the same run:
 *   - bf16 GEMM TFLOP/s through the perfdb op (MatMulV2: the backend's
 *     cuBLASLt plan, CUDA-graph replays timed by events) next to cuBLASLt
 *     called directly (plain column-major TN GEMM, heuristic algorithm,
 *     events around a loop of calls), at 8192^3 and on Qwen3-32B's layers;
 *   - memory-bound ops in GB/s (bytes read + written once) through the
 *     perfdb op, with the L2 flushed before each sample as in a database
 *     run, next to a device-to-device cudaMemcpy of 1 GiB.
 * Usage: microbench_cuda [--quick]  (--quick: 8192^3 and two ops only).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "backend/backend.h"
#include "perfdb/stats.h"
#include "replay/engine.h"

#define SAMPLES 15

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define LK(call)                                                                                   \
	do {                                                                                       \
		cublasStatus_t s_ = (call);                                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			fprintf(stderr, "%s: %s\n", #call, cublasLtGetStatusString(s_));           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* Median device time (us) of one call of op on the row, through the backend as the engine does. */
static double perfdb_us(const char *op, const char *in, const char *dt, const char *out, const char *odt,
			int flush)
{
	const struct perfdb_backend_i *be = &perfdb_backend_cuda;
	const struct perfdb_op_impl *impl = be->find_op(op);
	struct perfdb_engine_pool pool = { 0 };
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	double x[SAMPLES];
	int rc = perfdb_engine_build_case(op, in, dt, "", out, odt, "", &c, &err);
	if (rc == 0)
		rc = perfdb_engine_alloc_case(&pool, &c, 7, &err);
	if (rc == 0)
		rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err);
	if (rc == 0)
		rc = impl->prepare(&c, &err);
	for (int w = 0; rc == 0 && w < 3; w++)
		rc = impl->run(&c, &err);
	for (int s = 0; rc == 0 && s < SAMPLES; s++)
		rc = be->time_run(impl, &c, flush && perfdb_opdef_get(impl->name)->memory_bound, &x[s], &err);
	if (c.priv)
		impl->release(&c);
	perfdb_engine_pool_release(&pool);
	if (rc < 0) {
		fprintf(stderr, "%s %s: %s\n", op, in, err.msg);
		return NAN;
	}
	struct perfdb_stats st;
	perfdb_stats_compute(x, SAMPLES, &st);
	return st.median;
}

/* cuBLASLt directly: row-major C (M,N) = A (M,K) · W (N,K)^T, bf16 in/out, fp32 compute. */
static double cublaslt_us(cublasLtHandle_t lt, void *ws, size_t wsb, int64_t m, int64_t n, int64_t k)
{
	void *a, *w, *c;
	CK(cudaMalloc(&a, (size_t)(m * k) * 2));
	CK(cudaMalloc(&w, (size_t)(n * k) * 2));
	CK(cudaMalloc(&c, (size_t)(m * n) * 2));
	CK(cudaMemset(a, 0x3c, (size_t)(m * k) * 2));
	CK(cudaMemset(w, 0x3c, (size_t)(n * k) * 2));
	/* column-major: C^T (N,M) = W (N,K) · A^T (K,M), i.e. op(A)=T on W stored (K,N) col-major */
	cublasLtMatmulDesc_t d;
	cublasLtMatrixLayout_t la, lb, lc;
	LK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
	LK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
	LK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn)));
	LK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, (uint64_t)k, (uint64_t)n, k));
	LK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, (uint64_t)k, (uint64_t)m, k));
	LK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, (uint64_t)n, (uint64_t)m, n));
	cublasLtMatmulPreference_t p;
	LK(cublasLtMatmulPreferenceCreate(&p));
	LK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb)));
	cublasLtMatmulHeuristicResult_t h;
	int nres = 0;
	LK(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 1, &h, &nres));
	float one = 1, zero = 0;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	double x[SAMPLES];
	for (int i = 0; i < SAMPLES + 3; i++) {
		int reps = 5;
		CK(cudaEventRecord(e0, s));
		for (int r = 0; r < reps; r++)
			LK(cublasLtMatmul(lt, d, &one, w, la, a, lb, &zero, c, lc, c, lc, &h.algo, ws, h.workspaceSize, s));
		CK(cudaEventRecord(e1, s));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 3)
			x[i - 3] = ms * 1e3 / reps;
	}
	cublasLtMatmulPreferenceDestroy(p);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(lc);
	cublasLtMatmulDescDestroy(d);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaStreamDestroy(s);
	cudaFree(a);
	cudaFree(w);
	cudaFree(c);
	struct perfdb_stats st;
	perfdb_stats_compute(x, SAMPLES, &st);
	return st.median;
}

/* Device-to-device copy of bytes: GB/s counting the read and the write. */
static double d2d_gbps(size_t bytes)
{
	void *a, *b;
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMemset(a, 1, bytes));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	double x[SAMPLES];
	for (int i = 0; i < SAMPLES + 2; i++) {
		CK(cudaEventRecord(e0, 0));
		CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
		CK(cudaEventRecord(e1, 0));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 2)
			x[i - 2] = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaFree(a);
	cudaFree(b);
	struct perfdb_stats st;
	perfdb_stats_compute(x, SAMPLES, &st);
	return st.median;
}

struct gemm_shape {
	const char *what;
	int64_t m, n, k;
};

struct mem_case {
	const char *op, *in, *dt, *out, *odt;
	double bytes;   /* read + written once */
};

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	void *ctx = NULL;
	if (perfdb_backend_cuda.open(1, perfdb_pick_gpu(perfdb_backend_cuda.device_count(&err)), &ctx, &err) < 0) {
		fprintf(stderr, "microbench_cuda: %s\n", err.msg);
		return 2;
	}
	struct perfdb_strbuf d = PERFDB_STRBUF_INIT;
	perfdb_backend_cuda.describe(ctx, &d);
	printf("== environment\n%s", d.buf);
	perfdb_strbuf_release(&d);
	cublasLtHandle_t lt;
	LK(cublasLtCreate(&lt));
	size_t wsb = (size_t)64 << 20;
	void *ws;
	CK(cudaMalloc(&ws, wsb));

	/* Qwen3-32B (hidden 5120, 64 q / 8 kv heads of 128, intermediate 25600), TP 1, weights (N,K) */
	const struct gemm_shape gs[] = {
		{ "square 8192^3", 8192, 8192, 8192 },
		{ "qwen3-32b qkv_proj M=4096", 4096, 10240, 5120 },
		{ "qwen3-32b o_proj M=4096", 4096, 5120, 8192 },
		{ "qwen3-32b gate_up M=4096", 4096, 51200, 5120 },
		{ "qwen3-32b down_proj M=4096", 4096, 5120, 25600 },
		{ "qwen3-32b qkv_proj M=128", 128, 10240, 5120 },
		{ "qwen3-32b down_proj M=128", 128, 5120, 25600 },
	};
	printf("\n== bf16 GEMM (TFLOP/s, median of %d samples)\n", SAMPLES);
	printf("%-30s %8s %8s %8s  %10s %10s %6s\n", "shape", "M", "N", "K", "perfdb", "cublasLt", "ratio");
	for (size_t i = 0; i < (quick ? 1 : sizeof(gs) / sizeof(gs[0])); i++) {
		const struct gemm_shape *g = &gs[i];
		char in[96], out[64];
		snprintf(in, sizeof(in), "%lld,%lld;%lld,%lld", (long long)g->m, (long long)g->k, (long long)g->n,
			 (long long)g->k);
		snprintf(out, sizeof(out), "%lld,%lld", (long long)g->m, (long long)g->n);
		double flop = 2.0 * (double)g->m * (double)g->n * (double)g->k;
		double up = perfdb_us("MatMulV2", in, "DT_BF16;DT_BF16", out, "DT_BF16", 0);
		double ul = cublaslt_us(lt, ws, wsb, g->m, g->n, g->k);
		printf("%-30s %8lld %8lld %8lld  %10.1f %10.1f %6.2f\n", g->what, (long long)g->m, (long long)g->n,
		       (long long)g->k, flop / up / 1e6, flop / ul / 1e6, ul / up);
	}

	const struct mem_case mc[] = {
		{ "TensorMove", "4096,65536", "DT_BF16", "4096,65536", "DT_BF16", 2.0 * 4096 * 65536 * 2 },
		{ "Add", "4096,5120;4096,5120", "DT_BF16;DT_BF16", "4096,5120", "DT_BF16", 3.0 * 4096 * 5120 * 2 },
		{ "RmsNorm", "4096,5120;5120", "DT_BF16;DT_BF16", "4096,5120", "DT_BF16", 2.0 * 4096 * 5120 * 2 },
		{ "SwiGlu", "4096,51200", "DT_BF16", "4096,25600", "DT_BF16", 1.5 * 4096 * 51200 * 2 },
		{ "SoftmaxV2", "2048,4096", "DT_FLOAT", "2048,4096", "DT_FLOAT", 2.0 * 2048 * 4096 * 4 },
		{ "GatherV2", "32000,5120;4096", "DT_BF16;INT64", "4096,5120", "DT_BF16", 2.0 * 4096 * 5120 * 2 },
		{ "Transpose", "4096,64,128", "DT_BF16", "64,4096,128", "DT_BF16", 2.0 * 4096 * 64 * 128 * 2 },
	};
	double ref = d2d_gbps((size_t)1 << 30);
	printf("\n== memory-bound ops (GB/s = bytes read + written / median device time; L2 flushed)\n");
	printf("%-12s %-22s %10s %10s %12s %6s\n", "op", "input", "us", "GB/s", "D2D memcpy", "ratio");
	for (size_t i = 0; i < (quick ? 2 : sizeof(mc) / sizeof(mc[0])); i++) {
		const struct mem_case *m = &mc[i];
		double us = perfdb_us(m->op, m->in, m->dt, m->out, m->odt, 1);
		double gbps = m->bytes / (us * 1e-6) / 1e9;
		printf("%-12s %-22s %10.1f %10.1f %12.1f %6.2f\n", m->op, m->in, us, gbps, ref, gbps / ref);
	}
	cudaFree(ws);
	cublasLtDestroy(lt);
	return 0;
}
