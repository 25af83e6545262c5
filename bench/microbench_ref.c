/*
 * bench/microbench.sh's program: the CPU backend's operators beside the
 * libraries called directly and the machine's memory bandwidth, in one run.
 *
 *   microbench_ref [SCALE [THREADS [gemm]]]   SCALE 1 (default) = the shapes;
 *                                      THREADS (default 1) for OpenBLAS, and
 *                                      OMP_NUM_THREADS must match for oneDNN;
 *                                      gemm: the GEMM section only
 *
 * GEMM: for M in {1, 128, 4096} and Qwen3-32B's (N,K) of qkv_proj
 * (10240, 5120) and down_proj (5120, 25600), bf16 and fp32, the median time
 * of the perfdb op (src/backend/cpu/ops_matmul.c through the op interface,
 * buffers from the engine) and of a plain oneDNN matmul (src ab, weights
 * reordered to format any, dst ab; fp32 M=1 also OpenBLAS sgemv) on the
 * same shapes, as GFLOP/s = 2*M*N*K / t, and the perfdb op as a share of
 * the machine's peak, taken as what oneDNN reaches on a 2048^3 GEMM of
 * the dtype (fastest of 3 calls).  Memory-bound ops: GB/s = bytes
 * read + written / median time, beside a STREAM triad (a = b + s*c, fp32,
 * 3 x 128 MiB, THREADS threads) whose passes alternate with the op's calls
 * (bench_util.h: the host's bandwidth moves by a third within minutes).
 * Medians of 5 timed calls after 2 warm-ups (GEMMs at M = 4096: 3 and 1).
 * Where oneDNN has no bf16 matmul (below AVX-512: ONEDNN_MAX_CPU_ISA=AVX2)
 * the bf16 reference is oneDNN's fp32 matmul on the same shape, what an
 * engine on such a CPU runs (the "ref" column says which), and the bf16
 * peak is the fp32 one.
 */
#include <cblas.h>
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_dnnl.h"
#include "bench_op.h"
#include "replay/engine.h"

static struct perfdb_engine_pool pool;
static int nthreads = 1;   /* the run's THREADS: the perfdb ops and the triad use as many */


static double time_sgemv(int n, int k, int reps)
{
	float *a = malloc((size_t)n * (size_t)k * 4), *x = malloc((size_t)k * 4), *y = malloc((size_t)n * 4);
	/* touched with non-zero data: untouched calloc pages all map the one zero page (cache-hot) */
	for (size_t i = 0; i < (size_t)n * (size_t)k; i++)
		a[i] = 0.5f;
	for (size_t i = 0; i < (size_t)k; i++)
		x[i] = 0.25f;
	memset(y, 0, (size_t)n * 4);
	double t[16];
	for (int i = 0; i < 2 + reps; i++) {
		double t0 = bench_now();
		cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, a, k, x, 1, 0.0f, y, 1);
		if (i >= 2)
			t[i - 2] = bench_now() - t0;
	}
	free(a);
	free(x);
	free(y);
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_d);
	return t[reps / 2];
}

/* Section 1a: the GEMM table (bench/microbench.sh documents it). */
static void gemm_section(int scale)
{
	/* the machine's peak as a GEMM reaches it: the fastest of 3 oneDNN 2048^3 calls per dtype */
	double peak[2] = { bench_dnnl_peak(2048, dnnl_bf16, 3), bench_dnnl_peak(2048, dnnl_f32, 3) };
	if (peak[0] <= 0)
		peak[0] = peak[1];   /* no bf16 matmul in oneDNN here: the fp32 GEMM is what bf16 gets */
	printf("\n# GEMM (GFLOP/s): perfdb op vs oneDNN direct (and OpenBLAS sgemv at fp32 M=1), and the\n"
	       "# perfdb op as %% of the machine's peak = oneDNN 2048^3, fastest of 3: bf16 %.1f, fp32 %.1f GFLOP/s\n",
	       peak[0], peak[1]);
	printf("%-5s %6s %6s %6s %10s %10s %4s %8s %10s %7s  %s\n", "dtype", "M", "N", "K", "perfdb", "oneDNN", "ref",
	       "ratio", "sgemv", "%peak", "perfdb Kernel Used");
	const int64_t nk[][2] = { { 10240, 5120 }, { 5120, 25600 } };
	const int64_t ms[] = { 1, 128, 4096 };
	for (int dt = 0; dt < 2; dt++)
		for (size_t s = 0; s < 2; s++)
			for (size_t mi = 0; mi < 3; mi++) {
				int64_t m = ms[mi] / scale ? ms[mi] / scale : 1, n = nk[s][0] / scale, k = nk[s][1] / scale;
				int reps = m >= 4096 ? 3 : 5;
				char ins[96], outs[64];
				snprintf(ins, sizeof(ins), "%lld,%lld;%lld,%lld", (long long)m, (long long)k, (long long)n,
					 (long long)k);
				snprintf(outs, sizeof(outs), "%lld,%lld", (long long)m, (long long)n);
				const char *t = dt ? "DT_FLOAT" : "DT_BF16";
				char dts[32];
				snprintf(dts, sizeof(dts), "%s;%s", t, t);
				double flop = 2.0 * (double)m * (double)n * (double)k;
				char kern[64] = "";
				double tp = bench_time_op_kernel(&pool, "MatMulV2", ins, dts, outs, t, nthreads, reps, kern,
								 sizeof(kern));
				dnnl_data_type_t rt = dt ? dnnl_f32 : dnnl_bf16;
				double td = bench_dnnl_matmul(m, n, k, rt, rt, dnnl_ba, 2, reps, NULL);
				if (td <= 0 && !dt) {
					rt = dnnl_f32;
					td = bench_dnnl_matmul(m, n, k, rt, rt, dnnl_ba, 2, reps, NULL);
				}
				double tg = dt && m == 1 ? time_sgemv((int)n, (int)k, reps) : 0;
				char gv[32] = "-";
				if (tg > 0)
					snprintf(gv, sizeof(gv), "%.1f", flop / tg / 1e9);
				double gp = tp > 0 ? flop / tp / 1e9 : 0;
				printf("%-5s %6lld %6lld %6lld %10.1f %10.1f %4s %7.0f%% %10s %6.0f%%  %s\n", dt ? "fp32" : "bf16",
				       (long long)m, (long long)n, (long long)k, gp, td > 0 ? flop / td / 1e9 : 0,
				       rt == dnnl_f32 ? "f32" : "bf16", tp > 0 && td > 0 ? 100 * td / tp : 0, gv,
				       peak[dt] > 0 ? 100 * gp / peak[dt] : 0, kern);
			}
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 1;
	if (scale < 1)
		scale = 1;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	nthreads = threads > 0 ? threads : 1;
	struct perfdb_err err;
	if (perfdb_backend_cpu.open(threads > 0 ? threads : 1, 0, &bench_ctx, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("# environment\n");
	struct perfdb_strbuf d = PERFDB_STRBUF_INIT;
	perfdb_backend_cpu.describe(bench_ctx, &d);
	printf("%s", d.buf);
	perfdb_strbuf_release(&d);
	/* the fp32 GEMV reference's library (perfdb itself does not link OpenBLAS) */
	openblas_set_num_threads(threads > 0 ? threads : 1);
	printf("reference openblas=%s core=%s\n", openblas_get_config(), openblas_get_corename());
	int gemm_only = argc > 3 && strcmp(argv[3], "gemm") == 0, mem_only = argc > 3 && strcmp(argv[3], "mem") == 0;
	if (!mem_only)
		gemm_section(scale);
	if (gemm_only) {
		perfdb_engine_pool_release(&pool);
		return 0;
	}
	struct bench_triad tr;
	if (bench_triad_init(&tr, (size_t)32 << 20, nthreads) < 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	printf("\n# memory-bound ops (GB/s, well above the 32 MiB LLC) vs a STREAM triad whose passes alternate\n"
	       "# with the op's calls (%d thread(s) each; medians of 5)\n", nthreads);
	struct { const char *op, *ins, *dts, *outs, *odt; } mo[] = {
		{ "RmsNorm", "8192,5120;5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "SwiGlu", "4096,51200", "DT_BF16", "4096,25600", "DT_BF16" },
		{ "Add", "8192,5120;8192,5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		/* the broadcast forms a decoder's forward runs (kern_binary.c): bias row,
		 * per-row scale, attention mask; and Mul and Sub plain beside them */
		{ "Add", "8192,5120;5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "Add", "8192,5120;8192,1", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "Add", "16,2048,2048;1,2048,2048", "DT_BF16;DT_BF16", "16,2048,2048", "DT_BF16" },
		{ "Mul", "8192,5120;8192,5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "Mul", "8192,5120;5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "Mul", "8192,5120;8192,1", "DT_FLOAT;DT_FLOAT", "8192,5120", "DT_FLOAT" },
		{ "Sub", "8192,5120;8192,5120", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "Sub", "8192,5120;8192,1", "DT_BF16;DT_BF16", "8192,5120", "DT_BF16" },
		{ "SoftmaxV2", "4096,8192", "DT_BF16", "4096,8192", "DT_BF16" },
		{ "RmsNorm", "8192,5120;5120", "DT_FLOAT;DT_FLOAT", "8192,5120", "DT_FLOAT" },
		{ "RmsNorm", "8192,5120;5120", "DT_FLOAT16;DT_FLOAT16", "8192,5120", "DT_FLOAT16" },
		{ "SoftmaxV2", "4096,8192", "DT_FLOAT", "4096,8192", "DT_FLOAT" },
		{ "SoftmaxV2", "4096,8192", "DT_FLOAT16", "4096,8192", "DT_FLOAT16" },
		{ "AddRmsNormBias", "8192,5120;8192,5120;5120;5120", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "8192,5120",
		  "DT_BF16" },
		{ "AddRmsNormBias", "8192,5120;8192,5120;5120;5120", "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;DT_FLOAT16",
		  "8192,5120", "DT_FLOAT16" },
		{ "SwiGlu", "4096,51200", "DT_FLOAT", "4096,25600", "DT_FLOAT" },
		{ "SwiGlu", "4096,51200", "DT_FLOAT16", "4096,25600", "DT_FLOAT16" },
		{ "GatherV2", "151936,5120;4096", "DT_BF16;DT_INT64", "4096,5120", "DT_BF16" },
		{ "Transpose", "4096,8192", "DT_BF16", "8192,4096", "DT_BF16" },
	};
	printf("%-14s %-5s %-15s %10s %11s %8s %10s  %s\n", "op", "dtype", "operand 1", "GB/s", "triad GB/s",
	       "triad%", "ms",
	       "Kernel Used");
	for (size_t i = 0; i < sizeof(mo) / sizeof(mo[0]); i++) {
		double bytes = 0, triad = 0;
		char kern[64] = "";
		double t = bench_time_op_full(&pool, mo[i].op, mo[i].ins, mo[i].dts, mo[i].outs, mo[i].odt, nthreads, 5,
					      &bytes, &tr, &triad, kern, sizeof(kern));
		if (strcmp(mo[i].op, "GatherV2") == 0)   /* bytes moved: the rows read, not the table */
			bytes = 2.0 * 4096 * 5120 * 2 + 4096 * 8;
		const char *dn = strcmp(mo[i].odt, "DT_FLOAT16") == 0 ? "fp16" :
				 strcmp(mo[i].odt, "DT_FLOAT") == 0 ? "fp32" : "bf16";
		char shape[40];
		const char *semi = strchr(mo[i].ins, ';');
		/* the second operand's shape tells the broadcast form apart */
		snprintf(shape, sizeof(shape), "%s", semi && (strncmp(mo[i].op, "Add", 3) == 0 ||
			 strcmp(mo[i].op, "Mul") == 0 || strcmp(mo[i].op, "Sub") == 0) ? semi + 1 : "");
		printf("%-14s %-5s %-15s %10.1f %11.1f %7.0f%% %10.3f  %s\n", mo[i].op, dn, shape, t > 0 ? bytes / t / 1e9 : 0, triad,
		       t > 0 && triad > 0 ? 100 * bytes / t / 1e9 / triad : 0, t * 1e3, kern);
	}
	bench_triad_free(&tr);
	perfdb_engine_pool_release(&pool);
	return 0;
}
