/*
 * The CUDA backend (docs/cuda.md): operators on this machine's NVIDIA GPU,
 * GEMMs through cuBLASLt (ops_gemm.c), memory-bound operators through the
 * backend's own kernels (ops_mem.c, kernels.cu), attention through its own
 * kernel (ops_attn.c).
 *
 * Timing (the backend's time_run): the engine's warm-up calls run() (enqueue
 * and wait); then each sample replays a CUDA graph that holds graph_calls
 * enqueues of the op, between two CUDA events, and divides by graph_calls.
 * Before the first event the stream is kept busy (an L2 flush kernel over a
 * buffer twice the L2 for memory-bound ops, else a ~20 us spin kernel), so
 * the host's launch latency is not in the sample.  CUPTI records the
 * kernels of the timed replays (cupti.c) for the per-kernel report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "perfdb_cuda.h"
#include "cuda_internal.h"
#include "perfdb/fsio.h"

struct cu_state cu = { .want_dev = -1 };

static const struct cu_op *const tables[] = { cu_ops_gemm, cu_ops_mem, cu_ops_attn };

int cu_check(cudaError_t e, const char *what, struct perfdb_err *err)
{
	if (e == cudaSuccess)
		return 0;
	return perfdb_err_set(err, PERFDB_EIO, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

int cu_lt_check(cublasStatus_t s, const char *what, struct perfdb_err *err)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return 0;
	return perfdb_err_set(err, PERFDB_EIO, "%s: %s", what, cublasLtGetStatusString(s));
}

int cu_float_dt(enum perfdb_dtype d)
{
	switch (d) {
	case PERFDB_DTYPE_FLOAT:
		return CUK_F32;
	case PERFDB_DTYPE_FLOAT16:
		return CUK_F16;
	case PERFDB_DTYPE_BF16:
		return CUK_BF16;
	default:
		return -1;
	}
}

static const struct cu_op *cu_find(const char *op)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct cu_op *o = tables[t]; o->impl.name; o++)
			if (strcmp(o->impl.name, op) == 0)
				return o;
	return NULL;
}

const char *perfdb_cuda_kernel_used(const char *op)
{
	const struct cu_op *o = cu_find(op);
	return o ? o->kernel : NULL;
}

static const struct perfdb_op_impl *cuda_find_op(const char *op)
{
	const struct cu_op *o = cu_find(op);
	return o ? &o->impl : NULL;
}

static bool cuda_supports_op(const char *op)
{
	return cu_find(op) != NULL;
}

static int device_count(struct perfdb_err *err)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return perfdb_err_set(err, PERFDB_EIO, "--backend cuda: no CUDA device found (cudaGetDeviceCount: %s)",
				      cudaGetErrorString(e));
	if (n <= 0)
		return perfdb_err_set(err, PERFDB_EIO, "--backend cuda: no CUDA device found (cudaGetDeviceCount: 0 devices)");
	return n;
}

int cu_ready(struct perfdb_err *err)
{
	static char why[PERFDB_ERR_MSG_MAX];
	if (cu.ready == 1)
		return 0;
	if (cu.ready < 0)
		return perfdb_err_set(err, PERFDB_EIO, "%s", why);
	struct perfdb_err e;
	perfdb_err_clear(&e);
	int n = device_count(&e), rc = n < 0 ? n : 0;
	if (rc == 0) {
		cu.dev = cu.want_dev >= 0 && cu.want_dev < n ? cu.want_dev : perfdb_pick_gpu(n);
		rc = cu_check(cudaSetDevice(cu.dev), "cudaSetDevice", &e);
	}
	if (rc == 0)
		rc = cu_check(cudaGetDeviceProperties(&cu.prop, cu.dev), "cudaGetDeviceProperties", &e);
	if (rc == 0)
		rc = cu_check(cudaStreamCreateWithFlags(&cu.stream, cudaStreamNonBlocking), "cudaStreamCreate", &e);
	if (rc == 0)
		rc = cu_lt_check(cublasLtCreate(&cu.lt), "cublasLtCreate", &e);
	/* 64 MiB: what cuBLAS recommends for Hopper's largest kernels */
	cu.lt_ws_bytes = (size_t)64 << 20;
	if (rc == 0)
		rc = cu_check(cudaMalloc(&cu.lt_ws, cu.lt_ws_bytes), "cudaMalloc (cuBLASLt workspace)", &e);
	cu.flush_bytes = 2 * (size_t)(cu.prop.l2CacheSize > 0 ? cu.prop.l2CacheSize : 64 << 20);
	if (rc == 0)
		rc = cu_check(cudaMalloc(&cu.flush, cu.flush_bytes), "cudaMalloc (L2 flush buffer)", &e);
	if (rc == 0)
		rc = cu_check(cudaMemset(cu.flush, 0, cu.flush_bytes), "cudaMemset", &e);
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", e.msg);
		cu.ready = -1;
		return perfdb_err_set(err, PERFDB_EIO, "%s", why);
	}
	if (!cu.cupti_tried)   /* CUPTI's subscription is the process's: once, kept across contexts */
		cu.cupti = cu_cupti_init(cu.cupti_why, sizeof(cu.cupti_why)) == 0;
	cu.cupti_tried = 1;
	cu.pid = getpid();
	cu.ready = 1;
	return 0;
}

/*
 * The context is the process's one device state (cu): CUDA binds a device
 * to the process's threads, and the engine runs one backend context per
 * process (MPI ranks are processes), so a second open is refused.
 */
static int cuda_open(int threads, int device, void **ctx, struct perfdb_err *err)
{
	(void)threads;
	*ctx = NULL;
	if (cu.ready == 1 && cu.dev != device)
		return perfdb_err_set(err, PERFDB_EINVAL, "--backend cuda: already open on GPU %d", cu.dev);
	cu.want_dev = device;
	PERFDB_TRY(cu_ready(err));
	*ctx = &cu;
	return 0;
}

static void cuda_free(void *ctx)
{
	struct cu_state *x = ctx;
	if (!x || x->ready != 1)
		return;
	perfdb_kernel_report_release(&x->kernels);
	cudaFree(x->flush);
	cudaFree(x->lt_ws);
	cublasLtDestroy(x->lt);
	cudaStreamDestroy(x->stream);
	int cupti = x->cupti, tried = x->cupti_tried;
	char why[sizeof(x->cupti_why)];
	memcpy(why, x->cupti_why, sizeof(why));
	memset(x, 0, sizeof(*x));
	x->cupti = cupti;
	x->cupti_tried = tried;
	memcpy(x->cupti_why, why, sizeof(why));
	x->want_dev = -1;
}

static int cuda_device_count(struct perfdb_err *err)
{
	return device_count(err);
}

/* Properties only: no stream, no cuBLASLt handle, no workspace, no CUPTI. */
static int cuda_device_get(int index, struct perfdb_backend_device *d, struct perfdb_err *err)
{
	struct cudaDeviceProp prop;
	memset(d, 0, sizeof(*d));
	PERFDB_TRY(cu_check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties", err));
	int clk = 0, mclk = 0;
	cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, index);
	cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, index);
	d->index = index;
	snprintf(d->model, sizeof(d->model), "%s", prop.name);
	snprintf(d->description, sizeof(d->description), "%s, sm_%d%d, %d SMs, %.1f GiB, SM clock %d MHz, memory clock "
		 "%d MHz, %d-bit bus, L2 %d MiB", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
		 (double)prop.totalGlobalMem / (1u << 30), clk / 1000, mclk / 1000, prop.memoryBusWidth,
		 prop.l2CacheSize >> 20);
	d->memory_bytes = (double)prop.totalGlobalMem;
	/* DDR: two transfers per memory clock */
	d->memory_bandwidth = 2.0 * (double)mclk * 1e3 * (double)prop.memoryBusWidth / 8.0;
	return 0;
}

static int cuda_detect_device(struct perfdb_device_registry *reg, const char **name_out, struct perfdb_err *err)
{
	int n = device_count(err);
	if (n < 0)
		return n;
	struct perfdb_backend_device bd;
	PERFDB_TRY(cuda_device_get(cu.ready == 1 ? cu.dev : perfdb_pick_gpu(n), &bd, err));
	char name[300];
	perfdb_device_gpu_name(bd.model, bd.memory_bytes, name, sizeof(name));
	const struct perfdb_device *have = perfdb_device_find(reg, name);
	if (have) {
		*name_out = have->name;
		return 0;
	}
	struct perfdb_device d;
	memset(&d, 0, sizeof(d));
	d.memory_bytes = bd.memory_bytes;
	d.memory_bandwidth = bd.memory_bandwidth;
	d.name = name;
	d.kind = (char *)"gpu";
	d.vendor = (char *)"NVIDIA";
	d.description = bd.description;
	d.source = (char *)"detected";
	PERFDB_TRY(perfdb_device_registry_add(reg, &d, err));
	*name_out = perfdb_device_find(reg, name)->name;
	return 0;
}

static void cuda_describe(void *ctx, struct perfdb_strbuf *out)
{
	(void)ctx;   /* the process's one device state (cu) */
	int rt = 0, drv = 0;
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	perfdb_strbuf_addf(out, "cuda=%d.%d\n", rt / 1000, (rt % 1000) / 10);
	perfdb_strbuf_addf(out, "cuda_driver=%d.%d\n", drv / 1000, (drv % 1000) / 10);
	size_t lt = cublasLtGetVersion();
	perfdb_strbuf_addf(out, "cublaslt=%zu\n", lt);
	if (cu.ready == 1) {
		perfdb_strbuf_addf(out, "gpu=%s (sm_%d%d, %d SMs, %zu MiB, L2 %d MiB)\n", cu.prop.name, cu.prop.major,
				   cu.prop.minor, cu.prop.multiProcessorCount, cu.prop.totalGlobalMem >> 20,
				   cu.prop.l2CacheSize >> 20);
		perfdb_strbuf_addf(out, "gpu_index=%d\n", cu.dev);
	}
	perfdb_strbuf_addf(out, "timing=cuda events around CUDA-graph replays; L2 flush (%zu MiB) before "
			   "memory-bound samples\n", cu.flush_bytes >> 20);
	perfdb_strbuf_addf(out, "cupti=%s\n", cu.cupti ? "on" : cu.cupti_why[0] ? cu.cupti_why : "off");
	perfdb_strbuf_addstr(out, "attention=own kernel (FusedInferAttentionScore, TND; cuDNN fused attention not wired in)\n");
}

/* ---- the generic op wrapper --------------------------------------------- */

int cu_upload_in(struct perfdb_op_case *c, struct cu_case *k, size_t i, struct perfdb_err *err)
{
	if (!c->in[i].present || !k->din[i])
		return 0;
	return cu_check(cudaMemcpy(k->din[i], c->in[i].data, c->in[i].bytes, cudaMemcpyHostToDevice), "cudaMemcpy", err);
}

int cu_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(cu_ready(err));
	if (getpid() != cu.pid)   /* CUDA does not survive fork(): subprocess mode's children */
		return perfdb_err_set(err, PERFDB_EINVAL, "the cuda backend cannot run in a forked process "
				      "(use --execution-mode inprocess)");
	const struct cu_op *op = cu_find(c->op);
	if (!op)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: not a cuda backend op", c->op);
	struct cu_case *k = calloc(1, sizeof(*k));
	if (!k)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = k;
	k->op = op;
	for (size_t i = 0; i < c->nin; i++) {
		if (!c->in[i].present)
			continue;
		size_t b = c->in[i].bytes ? c->in[i].bytes : 1;
		CU_TRY(err, cudaMalloc(&k->din[i], b));
		PERFDB_TRY(cu_upload_in(c, k, i, err));
	}
	for (size_t i = 0; i < c->nout; i++) {
		if (!c->out[i].present)
			continue;
		size_t b = c->out[i].bytes ? c->out[i].bytes : 1;
		CU_TRY(err, cudaMalloc(&k->dout[i], b));
		CU_TRY(err, cudaMemset(k->dout[i], 0, b));
	}
	CU_TRY(err, cudaEventCreate(&k->ev0));
	CU_TRY(err, cudaEventCreate(&k->ev1));
	if (op->setup)
		PERFDB_TRY(op->setup(c, k, err));
	return 0;
}

int cu_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct cu_case *k = c->priv;
	PERFDB_TRY(k->op->enqueue(c, k, cu.stream, err));
	return cu_check(cudaStreamSynchronize(cu.stream), c->op, err);
}

/* Device results back into the case's host buffers (the correctness tests read them). */
int perfdb_cuda_download(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct cu_case *k = c->priv;
	for (size_t i = 0; i < c->nout; i++)
		if (c->out[i].present && k->dout[i] && c->out[i].bytes)
			CU_TRY(err, cudaMemcpy(c->out[i].data, k->dout[i], c->out[i].bytes, cudaMemcpyDeviceToHost));
	return 0;
}

void cu_release(struct perfdb_op_case *c)
{
	struct cu_case *k = c->priv;
	if (!k)
		return;
	if (k->collecting) {
		struct perfdb_err e;
		perfdb_err_clear(&e);
		cu_cupti_end(c->op, c->line, k->op->kernel, k->op_calls, &e);   /* a lost report row is not a failure */
	}
	if (k->op->teardown)
		k->op->teardown(k);
	if (k->graph)
		cudaGraphExecDestroy(k->graph);
	if (k->ev0)
		cudaEventDestroy(k->ev0);
	if (k->ev1)
		cudaEventDestroy(k->ev1);
	for (size_t i = 0; i < PERFDB_OP_MAX_TENSORS; i++) {
		cudaFree(k->din[i]);
		cudaFree(k->dout[i]);
	}
	free(k);
	c->priv = NULL;
}

/* ---- timing --------------------------------------------------------------- */

static int capture(struct perfdb_op_case *c, struct cu_case *k, int calls, struct perfdb_err *err)
{
	cudaGraph_t g = NULL;
	CU_TRY(err, cudaStreamBeginCapture(cu.stream, cudaStreamCaptureModeThreadLocal));
	int rc = 0;
	for (int i = 0; i < calls && rc == 0; i++)
		rc = k->op->enqueue(c, k, cu.stream, err);
	cudaError_t e = cudaStreamEndCapture(cu.stream, &g);
	if (rc == 0)
		rc = cu_check(e, "cudaStreamEndCapture", err);
	if (rc == 0)
		rc = cu_check(cudaGraphInstantiate(&k->graph, g, 0), "cudaGraphInstantiate", err);
	if (g)
		cudaGraphDestroy(g);
	if (rc == 0)
		k->graph_calls = calls;
	return rc;
}

/* One timed replay: device ms between the events around the graph. */
static int replay(struct cu_case *k, bool flush, float *ms, struct perfdb_err *err)
{
	if (flush)
		CU_TRY(err, cuk_flush(cu.flush, cu.flush_bytes, cu.stream));
	else
		CU_TRY(err, cuk_spin(20000, cu.stream));
	CU_TRY(err, cudaEventRecord(k->ev0, cu.stream));
	CU_TRY(err, cudaGraphLaunch(k->graph, cu.stream));
	CU_TRY(err, cudaEventRecord(k->ev1, cu.stream));
	CU_TRY(err, cudaEventSynchronize(k->ev1));
	CU_TRY(err, cudaEventElapsedTime(ms, k->ev0, k->ev1));
	return 0;
}

static int cuda_time_run(const struct perfdb_op_impl *impl, struct perfdb_op_case *c, bool flush, double *us,
			 struct perfdb_err *err)
{
	(void)impl;
	struct cu_case *k = c->priv;
	float ms = 0;
	if (!k->graph) {
		/*
		 * Flushed samples hold one call (only the first call after a
		 * flush is cold); others enough back-to-back calls for ~100 us,
		 * so that the per-launch gap of a graph is amortised.  CUPTI is
		 * on before the graphs are instantiated (graph kernel nodes are
		 * traced from then); the calibration replay's records are dropped.
		 */
		if (cu.cupti && !getenv("PERFDB_CUDA_NO_CUPTI"))
			k->collecting = cu_cupti_begin() == 0;
		PERFDB_TRY(capture(c, k, 1, err));
		PERFDB_TRY(replay(k, flush, &ms, err));
		int calls = 1;
		if (!flush && ms > 0)
			calls = (int)fmin(64.0, fmax(1.0, ceil(0.1 / ms)));
		if (calls > 1) {
			cudaGraphExecDestroy(k->graph);
			k->graph = NULL;
			PERFDB_TRY(capture(c, k, calls, err));
		}
		if (k->collecting)
			cu_cupti_discard();
	}
	PERFDB_TRY(replay(k, flush, &ms, err));
	k->op_calls += k->graph_calls;
	*us = (double)ms * 1e3 / k->graph_calls;
	return 0;
}

static int cuda_write_reports(void *ctx, const char *dir, const char *ts, char **path_out, struct perfdb_err *err)
{
	(void)ctx;
	*path_out = NULL;
	if (!cu.cupti || cu.kernels.n == 0)
		return 0;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_kernel_report_csv(&cu.kernels, &b);
	char p[4200];
	snprintf(p, sizeof(p), "%s/cuda_kernels_%s.csv", dir, ts);
	int rc = perfdb_file_write_atomic(p, b.buf, b.len, err);
	perfdb_strbuf_release(&b);
	perfdb_kernel_report_release(&cu.kernels);
	if (rc == 0 && !(*path_out = strdup(p)))
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return rc;
}

const struct perfdb_backend_i perfdb_backend_cuda = {
	.api_version = PERFDB_BACKEND_API_VERSION,
	.name = "cuda",
	.device_kind = "gpu",
	.device_count = cuda_device_count,
	.device_get = cuda_device_get,
	.open = cuda_open,
	.free = cuda_free,
	.supports_op = cuda_supports_op,
	.find_op = cuda_find_op,
	.describe = cuda_describe,
	.detect_device = cuda_detect_device,
	.time_run = cuda_time_run,
	.write_reports = cuda_write_reports,
};
