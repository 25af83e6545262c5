/*
 * CPU backend, MatMul family (docs/spec/replay.md §4 table): MatMulV2, MatMulV3,
 * MatMulCommon, BatchMatMulV2, TransposeBatchMatMul.
 *
 * Every case becomes one batched GEMM C[b] = A[b] · B[b] of logical shapes
 * (Bt,M,K)·(Bt,K,N)→(Bt,M,N) over the stored buffers with strides, so a
 * transposed operand (`.t()` of a recorded (N,K) weight) or the (M,B,K)
 * layout of TransposeBatchMatMul costs no copy.  Every case, fp32 M = 1
 * included (oneDNN measured faster there than OpenBLAS cblas_sgemv), goes to
 * a oneDNN matmul primitive created once per row, with the weight reordered
 * once, outside the timed loop, to the layout oneDNN prefers (format_tag
 * any), as an inference engine does.
 */
#include <dnnl.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"

/*
 * Weight rotation: a weight that fits the last-level cache would be timed
 * cache-warm on every sample after the first, which an inference engine
 * streaming many layers' weights never sees.  Such a weight gets copies
 * (ROT_SPAN bytes in all, at most ROT_MAX) and each call uses the next one,
 * so the weight of a call was last touched ROT_SPAN bytes ago (twice the
 * 32 MiB L3 of the EPYC; recorded in the run's env file).  Below ROT_SPAN,
 * not only below the L3: a bf16 weight of 40-60 MiB timed back to back
 * kept enough of itself in the L3 to read 1.2x faster than through two
 * copies, where a weight of 80 MiB read the same either way
 * (docs/measuring.md "Working sets between one and two L3s").
 */
#define ROT_SPAN ((size_t)64 << 20)
#define ROT_MAX 64

size_t cpu_rotation_copies(size_t bytes)
{
	if (bytes == 0 || bytes >= ROT_SPAN)
		return 1;
	size_t n = (ROT_SPAN + bytes - 1) / bytes;
	return n > ROT_MAX ? ROT_MAX : n;
}

struct mm_state {
	struct perfdb_gemm g;
	dnnl_primitive_t prim;
	dnnl_memory_t a, b, w, c;       /* w: reordered weight (NULL: b used as is) */
	struct cpu_cvt ca, cc;          /* the fp32 fallback's conversions (used 0: none) */
	dnnl_memory_t *rot;             /* rotation copies; rot[0] is w or b (not owned) */
	size_t nrot, next;
	dnnl_engine_t eng;              /* the backend context's (not owned) */
	dnnl_stream_t strm;
};

static int dnnl_fail(struct perfdb_err *err, const char *what, dnnl_status_t st)
{
	return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN %s failed (status %d)", what, (int)st);
}

/*
 * The CPU's limit: oneDNN's float GEMMs.  The layouts are the definition's
 * rule (src/ops/gemm_plan.c), checked before this.
 */
static int mm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *o = &c->out[0];
	for (int i = 0; i < 2; i++)
		if (!perfdb_dtype_is_float(c->in[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %d dtype %s not supported",
					      c->op, i, perfdb_dtype_name(c->in[i].dtype));
	if (o->present && !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output dtype %s not supported", c->op,
				      perfdb_dtype_name(o->dtype));
	return 0;
}

static dnnl_data_type_t dt_of(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_BF16 ? dnnl_bf16 : d == PERFDB_DTYPE_FLOAT16 ? dnnl_f16 : dnnl_f32;
}

static void mm_release(struct perfdb_op_case *c)
{
	struct mm_state *s = c->priv;
	if (!s)
		return;
	if (s->prim)
		dnnl_primitive_destroy(s->prim);
	if (s->a)
		dnnl_memory_destroy(s->a);
	if (s->b)
		dnnl_memory_destroy(s->b);
	if (s->w)
		dnnl_memory_destroy(s->w);
	if (s->c)
		dnnl_memory_destroy(s->c);
	cpu_cvt_release(&s->ca);
	cpu_cvt_release(&s->cc);
	for (size_t i = 1; i < s->nrot; i++)
		if (s->rot[i])
			dnnl_memory_destroy(s->rot[i]);
	free(s->rot);
	free(s);
	c->priv = NULL;
}

/* Copies of the weight as the primitive takes it, below ROT_SPAN (cpu_rotation_copies). */
static int rotate_setup(struct mm_state *s, struct perfdb_err *err)
{
	dnnl_memory_t w = s->w ? s->w : s->b;
	const dnnl_memory_desc_t *md;
	void *src;
	if (dnnl_memory_get_memory_desc(w, &md) != dnnl_success || dnnl_memory_get_data_handle(w, &src) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "oneDNN: cannot query the weight memory");
	size_t bytes = dnnl_memory_desc_get_size(md);
	size_t n = cpu_rotation_copies(bytes);
	if (n < 2)
		return 0;
	s->rot = calloc(n, sizeof(*s->rot));
	if (!s->rot)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	s->rot[0] = w;
	s->nrot = n;
	for (size_t i = 1; i < n; i++) {
		void *dst;
		if (dnnl_memory_create(&s->rot[i], md, s->eng, DNNL_MEMORY_ALLOCATE) != dnnl_success ||
		    dnnl_memory_get_data_handle(s->rot[i], &dst) != dnnl_success)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory for the weight copies");
		memcpy(dst, src, bytes);   /* also faults the pages in, outside the timed loop */
	}
	return 0;
}

static int mm_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct mm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(perfdb_gemm_plan(c, &s->g, err));   /* the definition's plan, its check passed */
	struct perfdb_gemm *g = &s->g;
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	const struct cpu_ctx *x = cpu_ctx_of(c, err);
	if (!x)
		return -PERFDB_EINVAL;
	dnnl_engine_t eng = s->eng = x->eng;
	dnnl_stream_t strm = s->strm = x->strm;
	dnnl_status_t st;
	dnnl_dims_t da = { g->bt, g->m, g->k }, db = { g->bt, g->k, g->n }, dc = { g->bt, g->m, g->n };
	dnnl_dims_t sa = { g->sa[0] ? g->sa[0] : g->m * g->k, g->sa[1], g->sa[2] };
	dnnl_dims_t sb = { g->sb[0] ? g->sb[0] : g->k * g->n, g->sb[1], g->sb[2] };
	dnnl_dims_t sc = { g->sc[0] ? g->sc[0] : g->m * g->n, g->sc[1], g->sc[2] };
	/* one batch: 2-D descriptors (oneDNN's small-M kernels are chosen for 2-D only) */
	int nd = g->bt == 1 ? 2 : 3, o3 = 3 - nd;
	dnnl_memory_desc_t mda, mdb, mdb_any, mdc;
	if (dnnl_memory_desc_init_by_strides(&mda, nd, da + o3, dt_of(a->dtype), sa + o3) != dnnl_success ||
	    dnnl_memory_desc_init_by_strides(&mdb, nd, db + o3, dt_of(b->dtype), sb + o3) != dnnl_success ||
	    dnnl_memory_desc_init_by_tag(&mdb_any, nd, db + o3, dt_of(b->dtype), dnnl_format_tag_any) != dnnl_success ||
	    dnnl_memory_desc_init_by_strides(&mdc, nd, dc + o3, dt_of(o->dtype), sc + o3) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: oneDNN rejects the shapes", c->op);
	dnnl_primitive_desc_t pd;
	dnnl_memory_desc_t a32, c32;
	int f32;
	if ((st = cpu_mm_pd(eng, &mda, &mdb_any, &mdc, &pd, &a32, &c32, &f32)) != dnnl_success)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: oneDNN has no matmul for %s x %s -> %s (status %d)",
				      c->op, perfdb_dtype_name(a->dtype), perfdb_dtype_name(b->dtype),
				      perfdb_dtype_name(o->dtype), (int)st);
	cpu_mm_kernel_name(pd, f32, c->kernel, sizeof(c->kernel));
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	st = dnnl_primitive_create(&s->prim, pd);
	int rc = 0;
	if (st == dnnl_success && a32.data_type != mda.data_type)
		rc = cpu_cvt_init(&s->ca, eng, &mda, a->data, &a32, DNNL_MEMORY_ALLOCATE, x->threads, err);
	else if (st == dnnl_success)
		st = dnnl_memory_create(&s->a, &mda, eng, a->data);
	if (st == dnnl_success && rc == 0)
		st = dnnl_memory_create(&s->b, &mdb, eng, b->data);
	if (st == dnnl_success && rc == 0 && c32.data_type != mdc.data_type)
		rc = cpu_cvt_init(&s->cc, eng, &c32, DNNL_MEMORY_ALLOCATE, &mdc, o->data, x->threads, err);
	else if (st == dnnl_success && rc == 0)
		st = dnnl_memory_create(&s->c, &mdc, eng, o->data);
	if (rc < 0) {
		dnnl_primitive_desc_destroy(pd);
		return rc;
	}
	if (st == dnnl_success && !dnnl_memory_desc_equal(wmd, &mdb)) {
		/* the one-time weight reorder of an inference engine */
		dnnl_primitive_desc_t rpd;
		dnnl_primitive_t r;
		st = dnnl_memory_create(&s->w, wmd, eng, DNNL_MEMORY_ALLOCATE);
		if (st == dnnl_success)
			st = dnnl_reorder_primitive_desc_create(&rpd, &mdb, eng, wmd, eng, NULL);
		if (st == dnnl_success) {
			st = dnnl_primitive_create(&r, rpd);
			dnnl_primitive_desc_destroy(rpd);
			if (st == dnnl_success) {
				dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, s->b }, { DNNL_ARG_TO, s->w } };
				st = dnnl_primitive_execute(r, strm, 2, args);
				if (st == dnnl_success)
					st = dnnl_stream_wait(strm);
				dnnl_primitive_destroy(r);
			}
		}
	}
	dnnl_primitive_desc_destroy(pd);
	if (st != dnnl_success)
		return dnnl_fail(err, "matmul setup", st);
	return rotate_setup(s, err);
}

static int mm_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct mm_state *s = c->priv;
	dnnl_memory_t w = s->w ? s->w : s->b;
	if (s->nrot) {
		w = s->rot[s->next];
		s->next = (s->next + 1) % s->nrot;
	}
	dnnl_exec_arg_t args[] = {
		{ DNNL_ARG_SRC, s->ca.used ? s->ca.to : s->a },
		{ DNNL_ARG_WEIGHTS, w },
		{ DNNL_ARG_DST, s->cc.used ? s->cc.from : s->c },
	};
	dnnl_status_t st = s->ca.used ? cpu_cvt_exec(&s->ca, s->strm) : dnnl_success;
	if (st == dnnl_success)
		st = dnnl_primitive_execute(s->prim, s->strm, 3, args);
	if (st == dnnl_success && s->cc.used)
		st = cpu_cvt_exec(&s->cc, s->strm);
	if (st == dnnl_success)
		st = dnnl_stream_wait(s->strm);
	return st == dnnl_success ? 0 : dnnl_fail(err, "matmul", st);
}

#define MM(n) { .name = n, .check = mm_check, .prepare = mm_prepare, .run = mm_run, \
		.release = mm_release, .cold_itself = 1 }

const struct perfdb_op_impl cpu_ops_matmul[] = {
	MM("BatchMatMulV2"), MM("MatMulCommon"), MM("MatMulV2"), MM("MatMulV3"),
	MM("TransposeBatchMatMul"),
	{ .name = NULL },
};
