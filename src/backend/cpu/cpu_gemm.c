/*
 * oneDNN GEMM helper of the MoE and quantisation families (cpu_gemm.h).
 * Like ops_matmul.c it uses the backend context's one engine and stream
 * (cpu_internal.h struct cpu_ctx: oneDNN caches kernels per engine, so
 * an engine per row would cost their JIT again).
 */
#include "cpu_gemm.h"
#include "cpu_internal.h"

#include <string.h>

static int fail(struct perfdb_err *err, const char *what, dnnl_status_t st)
{
	return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN %s failed (status %d)", what, (int)st);
}

int cpu_mm_init(struct cpu_mm *mm, const struct cpu_ctx *x, int64_t m, int64_t k, int64_t n, dnnl_data_type_t at, int64_t lda,
		dnnl_data_type_t wt, dnnl_data_type_t ct, int64_t ldc, struct perfdb_err *err)
{
	memset(mm, 0, sizeof(*mm));
	mm->m = m;
	mm->k = k;
	mm->n = n;
	if (!x)
		return perfdb_err_set(err, PERFDB_EINVAL, "the cpu backend is not open (no context)");
	mm->eng = x->eng;
	mm->strm = x->strm;
	dnnl_dims_t da = { m, k }, dw = { k, n }, dc = { m, n }, sa = { lda, 1 }, sc = { ldc, 1 };
	dnnl_memory_desc_t amd, wany, cmd;
	if (dnnl_memory_desc_init_by_strides(&amd, 2, da, at, sa) != dnnl_success ||
	    dnnl_memory_desc_init_by_tag(&wany, 2, dw, wt, dnnl_format_tag_any) != dnnl_success ||
	    dnnl_memory_desc_init_by_strides(&cmd, 2, dc, ct, sc) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN rejects the GEMM shape %lldx%lldx%lld",
				      (long long)m, (long long)k, (long long)n);
	dnnl_matmul_desc_t md;
	dnnl_status_t st = dnnl_matmul_desc_init(&md, &amd, &wany, NULL, &cmd);
	if (st != dnnl_success)
		return fail(err, "matmul descriptor", st);
	dnnl_primitive_desc_t pd;
	if ((st = dnnl_primitive_desc_create(&pd, &md, NULL, mm->eng, NULL)) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN has no matmul for dtypes %d x %d -> %d (status %d)",
				      (int)at, (int)wt, (int)ct, (int)st);
	mm->wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	st = dnnl_primitive_create(&mm->prim, pd);
	dnnl_primitive_desc_destroy(pd);
	if (st == dnnl_success)
		st = dnnl_memory_create(&mm->a, &amd, mm->eng, DNNL_MEMORY_NONE);
	if (st == dnnl_success)
		st = dnnl_memory_create(&mm->c, &cmd, mm->eng, DNNL_MEMORY_NONE);
	if (st != dnnl_success) {
		cpu_mm_release(mm);
		return fail(err, "matmul setup", st);
	}
	return 0;
}

int cpu_mm_weight(const struct cpu_mm *mm, const void *src, dnnl_data_type_t st_dt, int trans,
		  dnnl_memory_t *out, struct perfdb_err *err)
{
	*out = NULL;
	dnnl_dims_t dw = { mm->k, mm->n }, sw = { mm->n, 1 };
	if (trans) {
		sw[0] = 1;
		sw[1] = mm->k;
	}
	dnnl_memory_desc_t smd;
	if (dnnl_memory_desc_init_by_strides(&smd, 2, dw, st_dt, sw) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN rejects the weight shape");
	dnnl_memory_t s = NULL, w = NULL;
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t r = NULL;
	dnnl_status_t st = dnnl_memory_create(&s, &smd, mm->eng, (void *)src);
	if (st == dnnl_success)
		st = dnnl_memory_create(&w, &mm->wmd, mm->eng, DNNL_MEMORY_ALLOCATE);
	if (st == dnnl_success)
		st = dnnl_reorder_primitive_desc_create(&rpd, &smd, mm->eng, &mm->wmd, mm->eng, NULL);
	if (st == dnnl_success)
		st = dnnl_primitive_create(&r, rpd);
	if (st == dnnl_success) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, s }, { DNNL_ARG_TO, w } };
		st = dnnl_primitive_execute(r, mm->strm, 2, args);
		if (st == dnnl_success)
			st = dnnl_stream_wait(mm->strm);
	}
	if (r)
		dnnl_primitive_destroy(r);
	if (rpd)
		dnnl_primitive_desc_destroy(rpd);
	if (s)
		dnnl_memory_destroy(s);
	if (st != dnnl_success) {
		if (w)
			dnnl_memory_destroy(w);
		return fail(err, "weight reorder", st);
	}
	*out = w;
	return 0;
}

int cpu_mm_run(struct cpu_mm *mm, const void *a, dnnl_memory_t w, void *c, struct perfdb_err *err)
{
	dnnl_status_t st = dnnl_memory_set_data_handle(mm->a, (void *)a);
	if (st == dnnl_success)
		st = dnnl_memory_set_data_handle(mm->c, c);
	if (st == dnnl_success) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, mm->a }, { DNNL_ARG_WEIGHTS, w }, { DNNL_ARG_DST, mm->c } };
		st = dnnl_primitive_execute(mm->prim, mm->strm, 3, args);
	}
	if (st == dnnl_success)
		st = dnnl_stream_wait(mm->strm);
	return st == dnnl_success ? 0 : fail(err, "matmul", st);
}

void cpu_mm_release(struct cpu_mm *mm)
{
	if (mm->prim)
		dnnl_primitive_destroy(mm->prim);
	if (mm->a)
		dnnl_memory_destroy(mm->a);
	if (mm->c)
		dnnl_memory_destroy(mm->c);
	memset(mm, 0, sizeof(*mm));
}
