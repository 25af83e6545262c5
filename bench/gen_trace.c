/*
 * gen_trace: write a synthetic PyTorch profiler (Kineto) trace of a given
 * size for bench/trace.sh.
 *
 * usage: gen_trace OUT.json --mb N [--seed S]
 *
 * The trace looks like a transformer training step as Kineto records it:
 * three host threads (the main thread, the autograd thread, a data loader
 * that launches copies), four CUDA streams on two devices, and per layer
 * the usual nesting (aten::linear > aten::t + aten::addmm > launch,
 * aten::layer_norm > aten::native_layer_norm > launch, aten::softmax >
 * aten::_softmax > launch, aten::copy_ > cudaMemcpyAsync, a fill_ with a
 * memset) with shapes over a few batch sizes.  The link layouts rotate by
 * layer: the older Kineto layout (the launch's "External id" is its
 * correlation id, no flows), the newer one (the launch's "External id" is
 * its op's, ac2g flow events), and one where device activities carry no
 * correlation and only the flow events link them.  As Kineto does, the
 * device activities are written after all the host events, so a reader
 * cannot link in file order.  Events carry the args real traces carry,
 * so bytes per event are realistic (about 300-600).  Deterministic for a
 * seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct gen {
	FILE *host, *dev;
	unsigned long long ext, corr, evidx;
	int first_host, first_dev;
	double t;          /* host clock, us */
	double gt[4];      /* per stream clock */
};

static void sep(FILE *f, int *first)
{
	if (!*first)
		fputs(",\n", f);
	*first = 0;
}

static void put_dims(FILE *f, int shapes, int b)
{
	switch (shapes) {
	case 0: fprintf(f, "[[%d, 4096], [4096, 4096], [4096]]", b); break;
	case 1: fprintf(f, "[[%d, 4096], [4096], [4096], [], []]", b); break;
	case 2: fprintf(f, "[[%d, 32, 128, 128], [], []]", b); break;
	default: fprintf(f, "[[%d, 4096], [%d, 4096], []]", b, b); break;
	}
}

static void op_begin(struct gen *g, int tid, const char *name, double dur, int shapes, int b,
		     unsigned long long *ext_out)
{
	unsigned long long ext = ++g->ext;
	*ext_out = ext;
	sep(g->host, &g->first_host);
	fprintf(g->host,
		"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 4037, \"tid\": %d, "
		"\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %llu, \"Record function id\": %llu, "
		"\"Ev Idx\": %llu", name, tid, g->t, dur, ext, ext, ++g->evidx);
	if (shapes >= 0) {
		fputs(", \"Input Dims\": ", g->host);
		put_dims(g->host, shapes, b);
		fputs(", \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
		      "\"Scalar\", \"Scalar\"], \"Input Strides\": [[4096, 1], [1, 4096], [1]], "
		      "\"Concrete Inputs\": [\"\", \"\", \"\", \"1\", \"1\"]", g->host);
	}
	fputs(", \"Sequence number\": 1096588, \"Fwd thread id\": 1}}", g->host);
}

/* One launch inside the op whose External id is op_ext, and its device activity. */
static void launch(struct gen *g, int tid, unsigned long long op_ext, int layout, int cat,
		   const char *kname, double kdur, int stream)
{
	unsigned long long corr = ++g->corr;
	unsigned long long ext = layout == 0 ? corr : op_ext;
	static const char *const lname[] = { "cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync" };
	static const char *const dcat[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	double lts = g->t + 0.4;
	sep(g->host, &g->first_host);
	fprintf(g->host,
		"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 4037, "
		"\"tid\": %d, \"ts\": %.3f, \"dur\": 4.812, \"args\": {\"External id\": %llu, "
		"\"cbid\": 211, \"correlation\": %llu}}", lname[cat], tid, lts, ext, corr);
	if (layout > 0) {
		sep(g->host, &g->first_host);
		fprintf(g->host, "  {\"ph\": \"s\", \"id\": %llu, \"pid\": 4037, \"tid\": %d, "
			"\"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\"}", corr, tid, lts);
	}
	int dev = stream >= 2;
	double *gt = &g->gt[stream];
	if (*gt < lts + 5)
		*gt = lts + 5;
	sep(g->dev, &g->first_dev);
	fprintf(g->dev,
		"  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
		"\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %llu, \"queued\": 0, "
		"\"device\": %d, \"context\": 1, \"stream\": %d", dcat[cat], kname, dev, 7 + stream,
		*gt, kdur, ext, dev, 7 + stream);
	if (layout < 2)
		fprintf(g->dev, ", \"correlation\": %llu", corr);
	if (cat == 0)
		fputs(", \"registers per thread\": 168, \"shared memory\": 98304, \"blocks per SM\": "
		      "0.894737, \"warps per SM\": 7.157895, \"grid\": [34, 4, 1], \"block\": [256, 1, 1], "
		      "\"est. achieved occupancy %\": 6}}", g->dev);
	else
		fputs(", \"bytes\": 16777216, \"memory bandwidth (GB/s)\": 1228.8}}", g->dev);
	if (layout > 0) {
		sep(g->dev, &g->first_dev);
		fprintf(g->dev, "  {\"ph\": \"f\", \"id\": %llu, \"pid\": %d, \"tid\": %d, "
			"\"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", corr, dev,
			7 + stream, *gt);
	}
	*gt += kdur + 1.25;
}

static double jitter(double base)
{
	return base * (0.8 + (double)(next() % 4000) / 10000.0);
}

static void layer(struct gen *g, int tid, int layout, int b)
{
	unsigned long long e1, e2, e3;
	int s = (int)(next() % 4);
	op_begin(g, tid, "aten::linear", 60, 0, b, &e1);
	g->t += 2;
	op_begin(g, tid, "aten::t", 3, 0, b, &e2);
	g->t += 5;
	op_begin(g, tid, "aten::addmm", 40, 0, b, &e3);
	launch(g, tid, e3, layout, 0,
	       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
	       "execute_segment_k_off_kernel__5x_cublas", jitter(b * 0.9), s);
	g->t += 55;
	op_begin(g, tid, "aten::layer_norm", 30, 1, b, &e1);
	g->t += 3;
	op_begin(g, tid, "aten::native_layer_norm", 25, 1, b, &e2);
	launch(g, tid, e2, layout, 0,
	       "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
	       "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, "
	       "float*, float*, c10::BFloat16*)", jitter(b * 0.05), s);
	g->t += 30;
	op_begin(g, tid, "aten::softmax", 20, 2, b / 16 + 1, &e1);
	g->t += 2;
	op_begin(g, tid, "aten::_softmax", 16, 2, b / 16 + 1, &e2);
	launch(g, tid, e2, layout, 0,
	       "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, "
	       "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>"
	       "(c10::BFloat16*, c10::BFloat16 const*, int)", jitter(b * 0.2), s);
	g->t += 20;
	op_begin(g, tid, "aten::add", 10, 3, b, &e1);
	launch(g, tid, e1, layout, 0,
	       "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
	       "c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<"
	       "c10::BFloat16>, std::array<char*, 3ul>)", jitter(b * 0.03), s);
	launch(g, tid, e1, layout, 0, "triton_poi_fused_add_mul_0", jitter(b * 0.01), s);
	g->t += 12;
	op_begin(g, tid, "aten::copy_", 12, 3, b, &e1);
	launch(g, tid, e1, layout, 1, "Memcpy DtoD (Device -> Device)", jitter(b * 0.02), s);
	g->t += 14;
	op_begin(g, tid, "aten::fill_", 8, -1, b, &e1);
	launch(g, tid, e1, layout, 2, "Memset (Device)", 1.5, s);
	g->t += 10;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	double mb = 100;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
			mb = atof(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			rng ^= strtoull(argv[++i], NULL, 10) * 0x9E3779B97F4A7C15ull;
		else if (!out)
			out = argv[i];
		else {
			fprintf(stderr, "usage: gen_trace OUT.json --mb N [--seed S]\n");
			return 2;
		}
	}
	if (!out) {
		fprintf(stderr, "usage: gen_trace OUT.json --mb N [--seed S]\n");
		return 2;
	}
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.first_host = g.first_dev = 1;
	g.t = 1682725898082228.0;
	g.corr = 1000000;   /* CUPTI ids run in their own range, apart from External ids */
	g.host = fopen(out, "w");
	g.dev = tmpfile();
	if (!g.host || !g.dev) {
		perror("gen_trace");
		return 1;
	}
	fputs("{\n \"schemaVersion\": 1,\n \"deviceProperties\": [\n"
	      "  {\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, "
	      "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132},\n"
	      "  {\"id\": 1, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, "
	      "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
	      " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8},\n"
	      " \"record_shapes\": 1,\n \"traceEvents\": [\n", g.host);
	static const int batch[] = { 1, 8, 64, 256, 1024 };
	double target = mb * 1e6;
	for (unsigned long long step = 0;; step++) {
		int tid = step % 3 == 0 ? 4037 : step % 3 == 1 ? 23695 : 24001;
		layer(&g, tid, (int)(step % 3), batch[next() % 5]);
		if ((step & 255) == 0 && (double)(ftell(g.host) + ftell(g.dev)) >= target)
			break;
	}
	/* the device activities after every host event, as Kineto writes them */
	fputs(",\n", g.host);
	rewind(g.dev);
	char buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), g.dev)) > 0)
		fwrite(buf, 1, n, g.host);
	fputs("\n ],\n \"traceName\": \"bench\"\n}\n", g.host);
	if (fclose(g.host) != 0) {
		perror("gen_trace");
		return 1;
	}
	fclose(g.dev);
	return 0;
}
