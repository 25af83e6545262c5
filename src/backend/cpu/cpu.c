/*
 * The CPU backend (docs/spec/replay.md Decision 1): GEMMs through oneDNN's C API
 * (ops_matmul.c), element-wise, norm and index ops with our own
 * kernels (ops_eltwise.c, ops_norm.c, ops_index.c, ops_reduce.c).  Tensors keep their own
 * dtype (bf16, fp16, fp32, integers); the kernels compute in fp32.
 * OpenBLAS is not linked: every GEMM, fp32 M = 1 included, goes through
 * oneDNN (ops_matmul.c; docs/replay.md "CPU backend").
 */
#include <dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dnnl_load.h"

static const struct perfdb_op_impl *const tables[] = {
	cpu_ops_matmul, cpu_ops_eltwise, cpu_ops_norm, cpu_ops_index, cpu_ops_reduce,
	cpu_ops_rope, cpu_ops_cache, cpu_ops_misc,
	cpu_ops_moe, cpu_ops_quant, cpu_ops_dfc,
	cpu_ops_attention, cpu_ops_attention_sparse,
	cpu_ops_mla_preprocess,
};

static const struct perfdb_op_impl *cpu_find_op(const char *op)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct perfdb_op_impl *o = tables[t]; o->name; o++)
			if (strcmp(o->name, op) == 0)
				return o;
	return NULL;
}

static bool cpu_supports_op(const char *op)
{
	return cpu_find_op(op) != NULL;
}

static void cpu_free(void *ctx)
{
	struct cpu_ctx *x = ctx;
	if (!x)
		return;
	if (x->strm)
		dnnl_stream_destroy(x->strm);
	if (x->eng)
		dnnl_engine_destroy(x->eng);
	free(x);
}

static int cpu_open(int threads, int device, void **ctx, struct perfdb_err *err)
{
	*ctx = NULL;
	if (device != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "--backend cpu: device %d does not exist (the host is 0)", device);
	struct perfdb_err why;
	perfdb_err_clear(&why);
	if (cpu_dnnl_open(&why) < 0)
		return perfdb_err_set(err, PERFDB_EIO, "--backend cpu: %s", why.msg);
	struct cpu_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	x->threads = threads > 0 ? threads : 1;
	x->isa = perfdb_cpu_isa();
	/* oneDNN's OpenMP runtime reads OMP_NUM_THREADS at its first primitive */
	char b[16];
	snprintf(b, sizeof(b), "%d", x->threads);
	setenv("OMP_NUM_THREADS", b, 1);
	dnnl_status_t st = dnnl_engine_create(&x->eng, dnnl_cpu, 0);
	if (st == dnnl_success)
		st = dnnl_stream_create(&x->strm, x->eng, dnnl_stream_default_flags);
	if (st != dnnl_success) {
		cpu_free(x);
		return perfdb_err_set(err, PERFDB_EIO, "--backend cpu: oneDNN engine creation failed (status %d)", (int)st);
	}
	*ctx = x;
	return 0;
}

/* oneDNN's name of the ISA its kernels may use (dnnl_get_effective_cpu_isa). */
static const char *onednn_isa_name(dnnl_cpu_isa_t isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return "other";
	}
}

static void cpu_describe(void *ctx, struct perfdb_strbuf *out)
{
	const struct cpu_ctx *x = ctx;
	const dnnl_version_t *v = dnnl_version();   /* NULL where oneDNN is not loaded (dnnl_load.c) */
	if (x) {
		/* what the rows ran with: the own kernels' level and oneDNN's (Kernel Used names each GEMM's) */
		const char *cap = getenv("PERFDB_MAX_CPU_ISA"), *dcap = getenv("ONEDNN_MAX_CPU_ISA");
		perfdb_strbuf_addf(out, "cpu_isa=%s (detected %s, PERFDB_MAX_CPU_ISA=%s)\n", perfdb_cpu_isa_name(x->isa),
				   perfdb_cpu_isa_name(perfdb_cpu_isa_detect()), cap ? cap : "(unset)");
		perfdb_strbuf_addf(out, "onednn_isa=%s (ONEDNN_MAX_CPU_ISA=%s)\n",
				   onednn_isa_name(dnnl_get_effective_cpu_isa()), dcap ? dcap : "(unset)");
	}
	if (v)
		perfdb_strbuf_addf(out, "onednn=%d.%d.%d (%s)\n", v->major, v->minor, v->patch, v->hash);
}

const struct perfdb_backend_i perfdb_backend_cpu = {
	.api_version = PERFDB_BACKEND_API_VERSION,
	.name = "cpu",
	.device_kind = "cpu",
	.open = cpu_open,
	.free = cpu_free,
	.supports_op = cpu_supports_op,
	.find_op = cpu_find_op,
	.describe = cpu_describe,
};
