/*
 * bench/microbench.sh's attention part: the CPU backend's
 * FusedInferAttentionScore (src/backend/cpu/ops_attention*.c, through the
 * op interface, buffers from the engine) beside the machine's GEMM peak and
 * memory bandwidth measured in the same run.
 *
 *   microbench_attention [THREADS [HEAD_DIV]]
 *
 * THREADS (default 1): the op's threads; OMP_NUM_THREADS must match for
 * oneDNN.  HEAD_DIV (default 8): the prefill head counts are divided by it
 * (one 64-head causal prefill at 4096 is ~280 GFLOP, minutes on a shared
 * core); achieved GFLOP/s do not depend on the head count once there are
 * enough heads for the threads.
 *
 * - GEMM peak: a square 2048³ oneDNN matmul (bf16 and fp32, weights in
 *   oneDNN's preferred layout), GFLOP/s = 2·n³ / median time.
 * - Prefill, causal (sparse 3), TND, one sequence of 2048 and 4096:
 *   GQA like Qwen3-32B (64 q heads, 8 kv heads, d 128) and MLA like
 *   DeepSeek-V3 (128 heads, q·k 128 + 64 rope, v 128), bf16.
 *   FLOP = 2·H·(dqk + dv)·S(S+1)/2 (the visible pairs only).
 * - Decode: one query token per sequence, batch 1, 64 q / 8 kv heads,
 *   d 128, bf16 paged caches (block 128, shuffled table), KV 4096..32768.
 *   GB/s = K + V bytes read / best time, beside a STREAM triad (a = b +
 *   s·c, fp32, 3 x 128 MiB, THREADS threads) whose passes alternate with
 *   the decode calls (bench_util.h: the host's bandwidth moves by a third
 *   within minutes, so both sides must see the same conditions).
 * Best (minimum) of 3 (prefill, GEMM) or 7 (decode, and the triad passes
 * between them) timed calls after a warm-up: on a shared machine the
 * minimum is the run least disturbed by other processes, for every number
 * alike.
 * The "cpu" columns divide by the process's CPU time per thread instead of
 * the wall time (what a call costs when it is not preempted); on one
 * thread only: the kernel adds another thread's CPU time to the process
 * clock at its next tick or switch, so over a sub-millisecond call on two
 * threads the clock read half the time and the column twice the rate.
 * The "cpu" columns use the best process CPU time per thread instead of
 * wall time: what the work costs when the cores are shared.
 */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_dnnl.h"
#include "bench_util.h"
#include "replay/engine.h"

/* The CPU backend's context (open in main), handed to every case. */
static void *bench_ctx;

static struct perfdb_engine_pool pool;

struct cells {
	const char *name[8], *val[8];
	int n;
};

static const char *cell_of(const void *ctx, const char *col)
{
	const struct cells *cs = ctx;
	for (int i = 0; i < cs->n; i++)
		if (strcmp(cs->name[i], col) == 0)
			return cs->val[i];
	return NULL;
}

/* slots as "i:shape:dtype" entries; the others empty */
static void row(const char *const *slots, int n, char *shapes, char *dts, size_t len)
{
	shapes[0] = dts[0] = '\0';
	for (int i = 0; i < 31; i++) {
		const char *sh = "", *dt = "DT_UNDEFINED";
		char b1[64] = "", b2[32] = "";
		for (int k = 0; k < n; k++) {
			int idx;
			if (sscanf(slots[k], "%d:%63[^:]:%31s", &idx, b1, b2) == 3 && idx == i) {
				sh = b1;
				dt = b2;
				break;
			}
		}
		size_t a = strlen(shapes), b = strlen(dts);
		snprintf(shapes + a, len - a, "%s%s", i ? ";" : "", sh);
		snprintf(dts + b, len - b, "%s%s", i ? ";" : "", dt);
	}
}

/* Best wall seconds of FusedInferAttentionScore on a hand-made row (0 on failure); *cpu: best CPU seconds / threads. */
/*
 * Best seconds of reps calls.  With tr, a triad pass precedes each call and
 * *tri gets the best triad GB/s of those passes (bench_util.h: why).
 */
static double time_fia(const char *const *slots, int n, const char *out, const struct cells *cs, int threads,
		       int reps, double *cpu, struct bench_triad *tr, double *tri)
{
	char shapes[1024], dts[1024];
	row(slots, n, shapes, dts, sizeof(shapes));
	struct perfdb_op_case c;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op("FusedInferAttentionScore");
	*cpu = 0;
	if (perfdb_engine_build_case(impl->name, shapes, dts, "", out, "DT_BF16", "", &c, &err) < 0) {
		fprintf(stderr, "FIA: %s\n", err.msg);
		return 0;
	}
	c.threads = threads;
	c.backend_ctx = bench_ctx;
	c.cell = cell_of;
	c.cell_ctx = cs;
	if (perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err) < 0 || perfdb_engine_alloc_case(&pool, &c, 1, &err) < 0 ||
	    impl->prepare(&c, &err) < 0) {
		fprintf(stderr, "FIA: %s\n", err.msg);
		impl->release(&c);
		return 0;
	}
	double t[16], best_cpu = 1e30, best_tri = 1e30;
	impl->run(&c, &err);
	for (int i = 0; i < reps; i++) {
		if (tr) {
			double ts = bench_triad_once(tr);
			best_tri = ts < best_tri ? ts : best_tri;
		}
		double t0 = bench_now(), c0 = bench_cpu_now();
		impl->run(&c, &err);
		t[i] = bench_now() - t0;
		double cc = (bench_cpu_now() - c0) / threads;
		best_cpu = cc < best_cpu ? cc : best_cpu;
	}
	impl->release(&c);
	*cpu = best_cpu;
	if (tr)
		*tri = bench_triad_gbs(tr, best_tri);
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_d);
	return t[0];
}

/* The "cpu" column: amount / (CPU seconds per thread) / 1e9, or "-" above one thread (header). */
static const char *cpu_col(char *b, int threads, double cpu_s, double amount)
{
	if (threads == 1 && cpu_s > 0)
		snprintf(b, 32, "%.1f", amount / cpu_s / 1e9);
	else
		snprintf(b, 32, "-");
	return b;
}

int main(int argc, char **argv)
{
	char cb[32];   /* cpu_col's text */
	int threads = argc > 1 ? atoi(argv[1]) : 1, div = argc > 2 ? atoi(argv[2]) : 8;
	threads = threads > 0 ? threads : 1;
	div = div > 0 ? div : 1;
	struct perfdb_err err;
	if (perfdb_backend_cpu.open(threads, 0, &bench_ctx, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("# attention (FusedInferAttentionScore, CPU backend), threads=%d, prefill heads / %d\n", threads, div);
	double pk_bf = bench_dnnl_peak(2048, dnnl_bf16, 3), pk_f = bench_dnnl_peak(2048, dnnl_f32, 3);
	printf("GEMM peak 2048^3 (oneDNN): bf16 %.1f GFLOP/s, fp32 %.1f GFLOP/s\n\n", pk_bf, pk_f);
	printf("%-22s %6s %6s %10s %10s %9s %9s %10s\n", "prefill (causal)", "heads", "seq", "ms", "GFLOP/s",
	       "%bf16pk", "%fp32pk", "cpu GF/s");
	for (int mla = 0; mla < 2; mla++)
		for (int64_t S = 2048; S <= 4096; S *= 2) {
			int64_t hq = (mla ? 128 : 64) / div, hkv = mla ? hq : (8 / div ? 8 / div : 1);
			hq = hq ? hq : 1;
			char s0[64], s1[64], s2[64], s24[64], s25[64], out[64], len[32];
			snprintf(s0, sizeof(s0), "0:%lld,%lld,128:DT_BF16", (long long)S, (long long)hq);
			snprintf(s1, sizeof(s1), "1:%lld,%lld,128:DT_BF16", (long long)S, (long long)hkv);
			snprintf(s2, sizeof(s2), "2:%lld,%lld,128:DT_BF16", (long long)S, (long long)hkv);
			snprintf(s24, sizeof(s24), "24:%lld,%lld,64:DT_BF16", (long long)S, (long long)hq);
			snprintf(s25, sizeof(s25), "25:%lld,%lld,64:DT_BF16", (long long)S, (long long)hkv);
			snprintf(out, sizeof(out), "%lld,%lld,128", (long long)S, (long long)hq);
			snprintf(len, sizeof(len), "%lld", (long long)S);
			const char *slots[] = { s0, s1, s2, "4:2048,2048:INT8", "5:1:INT64", "6:1:INT64", s24, s25 };
			struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
					      "Runtime sparse_mode", "Runtime input_layout" }, { len, len, "3", "TND" }, 4 };
			double tc = 0, t = time_fia(slots, mla ? 8 : 6, out, &cs, threads, 3, &tc, NULL, NULL);
			double flop = 2.0 * (double)hq * (mla ? 192.0 + 128.0 : 256.0) * (double)S * (double)(S + 1) / 2.0;
			double gf = t > 0 ? flop / t / 1e9 : 0;
			printf("%-22s %6lld %6lld %10.1f %10.1f %8.0f%% %8.0f%% %10s\n",
			       mla ? "MLA 192(128+64)/128" : "GQA 64:8 d128", (long long)hq, (long long)S, t * 1e3, gf,
			       100 * gf / pk_bf, 100 * gf / pk_f, cpu_col(cb, threads, tc, flop));
		}
	struct bench_triad tr;
	if (bench_triad_init(&tr, (size_t)32 << 20, threads) < 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	printf("\n%-22s %6s %10s %10s %10s %9s %10s\n", "decode (paged, bf16)", "kv", "ms", "GB/s", "triad GB/s",
	       "%triad", "cpu GB/s");
	for (int64_t L = 4096; L <= 32768; L *= 2) {
		int64_t nb = L / 128;
		char s0[64], s1[64], s2[64], s14[64], kvl[32];
		snprintf(s0, sizeof(s0), "0:1,64,128:DT_BF16");
		snprintf(s1, sizeof(s1), "1:%lld,8,128,128:DT_BF16", (long long)nb);
		snprintf(s2, sizeof(s2), "2:%lld,8,128,128:DT_BF16", (long long)nb);
		snprintf(s14, sizeof(s14), "14:1,%lld:INT32", (long long)nb);
		snprintf(kvl, sizeof(kvl), "%lld", (long long)L);
		const char *slots[] = { s0, s1, s2, "4:2048,2048:INT8", "5:1:INT64", "6:1:INT64", s14 };
		struct cells cs = { { "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_values",
				      "Runtime sparse_mode", "Runtime input_layout" }, { "1", kvl, "3", "TND" }, 4 };
		double tc = 0, triad = 0, t = time_fia(slots, 7, "1,64,128", &cs, threads, 7, &tc, &tr, &triad);
		double bytes = 2.0 * (double)L * 8 * 128 * 2;
		printf("%-22s %6lld %10.3f %10.1f %10.1f %8.0f%% %10s\n", "GQA 64:8 d128", (long long)L, t * 1e3,
		       t > 0 ? bytes / t / 1e9 : 0, triad, t > 0 && triad > 0 ? 100 * bytes / t / 1e9 / triad : 0,
		       cpu_col(cb, threads, tc, bytes));
	}
	bench_triad_free(&tr);
	perfdb_engine_pool_release(&pool);
	return 0;
}
