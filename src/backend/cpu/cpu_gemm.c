/*
 * oneDNN GEMM helper of the MoE and quantisation families (cpu_gemm.h).
 * Like ops_matmul.c it uses the backend context's one engine and stream
 * (cpu_internal.h struct cpu_ctx: oneDNN caches kernels per engine, so
 * an engine per row would cost their JIT again).  Where oneDNN has no
 * kernel for a 16-bit float GEMM, the fp32 one runs instead (cpu_mm_pd).
 */
#include "cpu_gemm.h"
#include "cpu_internal.h"

#include <stdio.h>
#include <string.h>

static int fail(struct perfdb_err *err, const char *what, dnnl_status_t st)
{
	return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN %s failed (status %d)", what, (int)st);
}

/* The dtype of a plain layout the own rows convert, or -1. */
static int own_dtype(const dnnl_memory_desc_t *md, enum perfdb_dtype *out)
{
	if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 || md->ndims < 2 ||
	    md->ndims > 3 || md->format_desc.blocking.strides[md->ndims - 1] != 1)
		return -1;
	switch (md->data_type) {
	case dnnl_f32: *out = PERFDB_DTYPE_FLOAT; return 0;
	case dnnl_bf16: *out = PERFDB_DTYPE_BF16; return 0;
	case dnnl_f16: *out = PERFDB_DTYPE_FLOAT16; return 0;
	default: return -1;
	}
}

/* Whether the own rows take from -> to (fp32 on one side only), filling their plan. */
static int own_plan(struct cpu_cvt *cv, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to)
{
	if (own_dtype(from, &cv->fdt) < 0 || own_dtype(to, &cv->tdt) < 0 || from->ndims != to->ndims ||
	    (cv->fdt == PERFDB_DTYPE_FLOAT) == (cv->tdt == PERFDB_DTYPE_FLOAT))
		return 0;
	int nd = from->ndims;
	for (int d = 0; d < nd; d++)
		if (from->dims[d] != to->dims[d])
			return 0;
	const dnnl_dim_t *f = from->format_desc.blocking.strides, *t = to->format_desc.blocking.strides;
	cv->n = from->dims[nd - 1];
	cv->rows0 = nd == 3 ? from->dims[0] : 1;
	cv->rows1 = from->dims[nd - 2];
	cv->fs[0] = nd == 3 ? f[0] : 0;
	cv->ts[0] = nd == 3 ? t[0] : 0;
	cv->fs[1] = f[nd - 2];
	cv->ts[1] = t[nd - 2];
	return 1;
}

int cpu_cvt_init(struct cpu_cvt *cv, dnnl_engine_t eng, const dnnl_memory_desc_t *from, void *from_data,
		 const dnnl_memory_desc_t *to, void *to_data, int threads, struct perfdb_err *err)
{
	memset(cv, 0, sizeof(*cv));
	cv->used = 1;
	cv->threads = threads;
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_status_t st = dnnl_memory_create(&cv->from, from, eng, from_data);
	if (st == dnnl_success)
		st = dnnl_memory_create(&cv->to, to, eng, to_data);
	if (st == dnnl_success && !own_plan(cv, from, to)) {
		st = dnnl_reorder_primitive_desc_create(&rpd, from, eng, to, eng, NULL);
		if (st == dnnl_success)
			st = dnnl_primitive_create(&cv->prim, rpd);
	}
	if (rpd)
		dnnl_primitive_desc_destroy(rpd);
	if (st != dnnl_success) {
		cpu_cvt_release(cv);
		return fail(err, "conversion reorder", st);
	}
	return 0;
}

struct cvt_job {
	const struct cpu_cvt *cv;
	void *src, *dst;
};

static void cvt_rows(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct cvt_job *j = ctx;
	const struct cpu_cvt *cv = j->cv;
	for (size_t r = lo; r < hi; r++) {
		int64_t i0 = (int64_t)r / cv->rows1, i1 = (int64_t)r % cv->rows1;
		size_t fo = (size_t)(i0 * cv->fs[0] + i1 * cv->fs[1]), to = (size_t)(i0 * cv->ts[0] + i1 * cv->ts[1]);
		if (cv->fdt == PERFDB_DTYPE_FLOAT) {
			struct perfdb_tensor t = { .dtype = cv->tdt, .data = j->dst };
			cpu_store_row(&t, to, (size_t)cv->n, (const float *)j->src + fo);
		} else {
			struct perfdb_tensor t = { .dtype = cv->fdt, .data = j->src };
			cpu_load_row(&t, fo, (size_t)cv->n, (float *)j->dst + to);
		}
	}
}

dnnl_status_t cpu_cvt_exec(const struct cpu_cvt *cv, dnnl_stream_t strm)
{
	if (cv->prim) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, cv->from }, { DNNL_ARG_TO, cv->to } };
		return dnnl_primitive_execute(cv->prim, strm, 2, args);
	}
	struct cvt_job j = { .cv = cv };
	dnnl_status_t st = dnnl_stream_wait(strm);
	if (st == dnnl_success)
		st = dnnl_memory_get_data_handle(cv->from, &j.src);
	if (st == dnnl_success)
		st = dnnl_memory_get_data_handle(cv->to, &j.dst);
	if (st != dnnl_success)
		return st;
	size_t rows = (size_t)(cv->rows0 * cv->rows1);
	cpu_parallel(rows, rows * (size_t)cv->n, cv->threads, cvt_rows, &j);
	return dnnl_success;
}

void cpu_cvt_release(struct cpu_cvt *cv)
{
	if (cv->prim)
		dnnl_primitive_destroy(cv->prim);
	if (cv->from)
		dnnl_memory_destroy(cv->from);
	if (cv->to)
		dnnl_memory_destroy(cv->to);
	memset(cv, 0, sizeof(*cv));
}

static int is_half(const dnnl_memory_desc_t *md)
{
	return md->data_type == dnnl_bf16 || md->data_type == dnnl_f16;
}

/* The dense fp32 layout of md's dims (md itself when it is fp32). */
static dnnl_status_t dense_f32(const dnnl_memory_desc_t *md, dnnl_memory_desc_t *out, dnnl_format_tag_t tag)
{
	if (md->data_type == dnnl_f32) {
		*out = *md;
		return dnnl_success;
	}
	return dnnl_memory_desc_init_by_tag(out, md->ndims, md->dims, dnnl_f32, tag);
}

dnnl_status_t cpu_mm_pd(dnnl_engine_t eng, const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *w,
			const dnnl_memory_desc_t *c, dnnl_primitive_desc_t *pd, dnnl_memory_desc_t *a32,
			dnnl_memory_desc_t *c32, int *f32)
{
	*pd = NULL;
	*f32 = 0;
	*a32 = *a;
	*c32 = *c;
	dnnl_matmul_desc_t md;
	dnnl_status_t st = dnnl_matmul_desc_init(&md, a, w, NULL, c);
	if (st == dnnl_success)
		st = dnnl_primitive_desc_create(pd, &md, NULL, eng, NULL);
	if (st != dnnl_unimplemented || !(is_half(a) || is_half(w) || is_half(c)))
		return st;
	dnnl_format_tag_t tag = a->ndims == 2 ? dnnl_ab : dnnl_abc, any = dnnl_format_tag_any;
	dnnl_memory_desc_t w32;
	if ((st = dense_f32(a, a32, tag)) != dnnl_success || (st = dense_f32(c, c32, tag)) != dnnl_success ||
	    (st = dnnl_memory_desc_init_by_tag(&w32, w->ndims, w->dims, dnnl_f32, any)) != dnnl_success ||
	    (st = dnnl_matmul_desc_init(&md, a32, &w32, NULL, c32)) != dnnl_success)
		return st;
	st = dnnl_primitive_desc_create(pd, &md, NULL, eng, NULL);
	*f32 = st == dnnl_success;
	return st;
}

void cpu_mm_kernel_name(const_dnnl_primitive_desc_t pd, int f32, char *buf, size_t n)
{
	const char *impl = NULL;
	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
		impl = "?";
	snprintf(buf, n, "onednn:%s%s", impl, f32 ? "+f32" : "");
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
	dnnl_memory_desc_t amd, wany, cmd, a32, c32;
	if (dnnl_memory_desc_init_by_strides(&amd, 2, da, at, sa) != dnnl_success ||
	    dnnl_memory_desc_init_by_tag(&wany, 2, dw, wt, dnnl_format_tag_any) != dnnl_success ||
	    dnnl_memory_desc_init_by_strides(&cmd, 2, dc, ct, sc) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN rejects the GEMM shape %lldx%lldx%lld",
				      (long long)m, (long long)k, (long long)n);
	dnnl_primitive_desc_t pd;
	int f32;
	dnnl_status_t st = cpu_mm_pd(mm->eng, &amd, &wany, &cmd, &pd, &a32, &c32, &f32);
	if (st != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN has no matmul for dtypes %d x %d -> %d (status %d)",
				      (int)at, (int)wt, (int)ct, (int)st);
	cpu_mm_kernel_name(pd, f32, mm->kernel, sizeof(mm->kernel));
	mm->wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	st = dnnl_primitive_create(&mm->prim, pd);
	dnnl_primitive_desc_destroy(pd);
	if (st != dnnl_success) {
		cpu_mm_release(mm);
		return fail(err, "matmul setup", st);
	}
	int rc = 0;
	if (at != a32.data_type)
		rc = cpu_cvt_init(&mm->ca, mm->eng, &amd, DNNL_MEMORY_NONE, &a32, DNNL_MEMORY_ALLOCATE, x->threads, err);
	else if ((st = dnnl_memory_create(&mm->a, &amd, mm->eng, DNNL_MEMORY_NONE)) != dnnl_success)
		rc = fail(err, "matmul setup", st);
	if (rc == 0 && ct != c32.data_type)
		rc = cpu_cvt_init(&mm->cc, mm->eng, &c32, DNNL_MEMORY_ALLOCATE, &cmd, DNNL_MEMORY_NONE, x->threads, err);
	else if (rc == 0 && (st = dnnl_memory_create(&mm->c, &cmd, mm->eng, DNNL_MEMORY_NONE)) != dnnl_success)
		rc = fail(err, "matmul setup", st);
	if (rc < 0)
		cpu_mm_release(mm);
	return rc;
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
	/* the fp32 fallback: A converted into the primitive's source, its fp32 C converted out */
	dnnl_memory_t src = mm->ca.used ? mm->ca.to : mm->a, dst = mm->cc.used ? mm->cc.from : mm->c;
	dnnl_status_t st = dnnl_memory_set_data_handle(mm->ca.used ? mm->ca.from : mm->a, (void *)a);
	if (st == dnnl_success)
		st = dnnl_memory_set_data_handle(mm->cc.used ? mm->cc.to : mm->c, c);
	if (st == dnnl_success && mm->ca.used)
		st = cpu_cvt_exec(&mm->ca, mm->strm);
	if (st == dnnl_success) {
		dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, w }, { DNNL_ARG_DST, dst } };
		st = dnnl_primitive_execute(mm->prim, mm->strm, 3, args);
	}
	if (st == dnnl_success && mm->cc.used)
		st = cpu_cvt_exec(&mm->cc, mm->strm);
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
	cpu_cvt_release(&mm->ca);
	cpu_cvt_release(&mm->cc);
	memset(mm, 0, sizeof(*mm));
}
