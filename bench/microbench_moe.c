/*
 * bench/microbench.sh's MoE/int8 part: the CPU backend's grouped matmul and
 * int8 GEMM beside a plain oneDNN GEMM of the same FLOPs, in one run.
 *
 *   microbench_moe [SCALE [THREADS]]   SCALE 1 (default) = the shapes below,
 *                                      SCALE > 1 divides the token count;
 *                                      OMP_NUM_THREADS must equal THREADS
 *
 * GroupedMatmul with DeepSeek-V3's expert shapes: 256 experts over EP 32 =
 * 8 local experts, H = 7168, I = 2048, 4096 tokens spread evenly (512 rows
 * per expert), bf16 and int8 (w8a8 with per-channel and per-token scales,
 * bf16 output), through the perfdb op (src/backend/cpu/ops_moe.c via the
 * op interface); next to it one oneDNN matmul (4096 x 7168) . (7168 x 2048)
 * of the same total FLOPs, bf16 and s8 x s8 -> s32.  QuantBatchMatmulV3
 * (int8, per-channel and per-token scales, bf16 output) on the same
 * M x K x N next to the bf16 oneDNN GEMM.  GFLOP/s (GOP/s for int8) =
 * 2*M*N*K / median time of 5 calls after 2 warm-ups.
 */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_dnnl.h"
#include "bench_op.h"
#include "replay/engine.h"

#define REPS 5

static struct perfdb_engine_pool pool;

/* Median seconds of the perfdb op (bf16 output) on a row's cells; 0 on failure. */
static double perf_op(const char *op, const char *ins, const char *dts, const char *outs, int threads)
{
	return bench_time_op(&pool, op, ins, dts, outs, "DT_BF16", threads, REPS, NULL, NULL, NULL);
}


static void line(const char *what, const char *shape, double flop, double t, const char *unit)
{
	if (t > 0)
		printf("%-44s %-22s %10.3f ms %9.1f %s\n", what, shape, t * 1e3, flop / t * 1e-9, unit);
	else
		printf("%-44s %-22s %10s\n", what, shape, "failed");
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 1, threads = argc > 2 ? atoi(argv[2]) : 1;
	if (scale < 1 || threads < 1) {
		fprintf(stderr, "usage: microbench_moe [SCALE [THREADS]]\n");
		return 2;
	}
	struct perfdb_err err;
	if (perfdb_backend_cpu.open(threads, 0, &bench_ctx, &err) < 0)
		return 1;
	const int64_t e = 8, h = 7168, i = 2048, t = 4096 / scale;
	double flop = 2.0 * (double)t * (double)h * (double)i;
	char ins[128], outs[64], shape[64];
	snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)t, (long long)h, (long long)i);
	printf("# DeepSeek-V3 experts: E=%lld local (256/EP 32), H=%lld, I=%lld, T=%lld tokens evenly; threads %d\n",
	       (long long)e, (long long)h, (long long)i, (long long)t, threads);
	printf("%-44s %-22s %13s %9s\n", "kernel", "M x K x N (total)", "median", "rate");
	snprintf(ins, sizeof(ins), "%lld,%lld;%lld,%lld,%lld,16;;%lld,%lld;;;;%lld;%lld", (long long)t, (long long)h,
		 (long long)e, (long long)h, (long long)(i / 16), (long long)e, (long long)i, (long long)e, (long long)t);
	snprintf(outs, sizeof(outs), "%lld,%lld", (long long)t, (long long)i);
	line("GroupedMatmul bf16 (perfdb)", shape, flop,
	     perf_op("GroupedMatmul", ins, "DT_BF16;DT_BF16;;DT_FLOAT;;;;DT_INT64;DT_FLOAT", outs, threads), "GFLOP/s");
	line("oneDNN matmul bf16, one GEMM", shape, flop,
	     bench_dnnl_matmul(t, i, h, dnnl_bf16, dnnl_bf16, dnnl_ab, 2, REPS, NULL), "GFLOP/s");
	line("GroupedMatmul int8 w8a8 -> bf16 (perfdb)", shape, flop,
	     perf_op("GroupedMatmul", ins, "DT_INT8;DT_INT8;;DT_FLOAT;;;;DT_INT64;DT_FLOAT", outs, threads), "GOP/s");
	line("oneDNN matmul s8 x s8 -> s32, one GEMM", shape, flop,
	     bench_dnnl_matmul(t, i, h, dnnl_s8, dnnl_s32, dnnl_ab, 2, REPS, NULL), "GOP/s");
	snprintf(ins, sizeof(ins), "%lld,%lld;%lld,%lld;%lld;%lld", (long long)t, (long long)h, (long long)h,
		 (long long)i, (long long)i, (long long)t);
	line("QuantBatchMatmulV3 int8 -> bf16 (perfdb)", shape, flop,
	     perf_op("QuantBatchMatmulV3", ins, "DT_INT8;DT_INT8;DT_FLOAT;DT_FLOAT", outs, threads), "GOP/s");
	snprintf(ins, sizeof(ins), "%lld,%lld;%lld,%lld", (long long)t, (long long)h, (long long)i, (long long)h);
	line("MatMulV2 bf16 (perfdb)", shape, flop, perf_op("MatMulV2", ins, "DT_BF16;DT_BF16", outs, threads),
	     "GFLOP/s");
	perfdb_engine_pool_release(&pool);
	return 0;
}
