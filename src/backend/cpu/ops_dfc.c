/*
 * CPU backend, DispatchFFNCombine (docs/spec/replay.md §4; docs/ops.md
 * "DispatchFFNCombine"): the MoE layer of one expert-parallel group as one
 * collective op.  Under `mpirun -np EP` every rank holds E local experts of
 * the E*EP global ones and T tokens with k routed choices each:
 *   dispatch: MPI_Alltoall of the per-(rank, local expert) row counts, then
 *             MPI_Alltoallv of the token rows, ordered by (rank, expert);
 *   FFN:      per local expert, h = SwiGlu(x · w1[e]) (silu of the first
 *             half times the second), y = h · w2[e] (oneDNN, weights
 *             reordered once in prepare);
 *   combine:  MPI_Alltoallv of the results back, out[t] = sum_j probs[t,j] *
 *             y(t, j).
 * Slots: x0 (T,H), w1 (E,H,n), w2 (E,n/2,H), expert ids 3 (T,k), scale 4
 * (E*n,), scale 5 (E*H,) (the int8 path's, unused: the reference's quant
 * branch is dead, spec §7 Q6), probs 6 (T,k); out0 (T,H), out1 (E,) rows
 * per local expert.  Expert ids are rewritten in prepare to balanced ids
 * (rank*k + t*k + j) mod E*EP, so every expert gets the same load.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "ops/dfc.h"

struct dfc_state {
	struct perfdb_dfc_plan p;
	struct cpu_mm *mm1, *mm2;             /* per local expert (m == 0: unused) */
	dnnl_memory_t *w1, *w2;
	int *scount, *rcount;                 /* ep x E rows per (rank, local expert) */
	int *sdisp, *rdisp, *sn, *rn;         /* per rank: row displacements and counts */
	int *pos;                             /* send position of pair (t, j) */
	int64_t *off;                         /* per (rank, expert): next send slot */
	char *sbuf, *rbuf, *xe, *ye, *bsend, *brecv;
	float *y1, *acc, *row;
	void *hb;                             /* SwiGlu output, x's dtype */
	int64_t *me;                          /* rows per local expert, as prepare saw them */
	size_t es;                            /* element bytes of x */
	int rowtype_ok;
	MPI_Datatype rowtype;
};

static void dfc_release(struct perfdb_op_case *c)
{
	struct dfc_state *s = c->priv;
	if (!s)
		return;
	for (int64_t e = 0; e < s->p.e; e++) {
		if (s->mm1)
			cpu_mm_release(&s->mm1[e]);
		if (s->mm2)
			cpu_mm_release(&s->mm2[e]);
		if (s->w1 && s->w1[e])
			dnnl_memory_destroy(s->w1[e]);
		if (s->w2 && s->w2[e])
			dnnl_memory_destroy(s->w2[e]);
	}
	if (s->rowtype_ok)
		MPI_Type_free(&s->rowtype);
	free(s->mm1);
	free(s->mm2);
	free(s->w1);
	free(s->w2);
	free(s->scount);
	free(s->rcount);
	free(s->sdisp);
	free(s->rdisp);
	free(s->sn);
	free(s->rn);
	free(s->pos);
	free(s->off);
	free(s->sbuf);
	free(s->rbuf);
	free(s->xe);
	free(s->ye);
	free(s->bsend);
	free(s->brecv);
	free(s->y1);
	free(s->acc);
	free(s->row);
	free(s->hb);
	free(s->me);
	free(s);
	c->priv = NULL;
}

/* Row counts per (destination rank, local expert) from the expert ids; -1: an id out of range. */
static int count_rows(const struct perfdb_op_case *c, struct dfc_state *s)
{
	const struct perfdb_dfc_plan *p = &s->p;
	int64_t g = p->e * p->ep;
	memset(s->scount, 0, (size_t)(p->ep * p->e) * sizeof(int));
	for (size_t i = 0; i < (size_t)(p->t * p->k); i++) {
		int64_t v = cpu_ld_int(&c->in[3], i);
		if (v < 0 || v >= g)
			return -1;
		s->scount[v]++;            /* global id = rank * E + local id */
	}
	return 0;
}

static int exchange_counts(const struct perfdb_op_case *c, struct dfc_state *s)
{
	int e = (int)s->p.e;
	if (!c->comm) {
		memcpy(s->rcount, s->scount, (size_t)e * sizeof(int));
		return 0;
	}
	return MPI_Alltoall(s->scount, e, MPI_INT, s->rcount, e, MPI_INT, *(MPI_Comm *)c->comm) == MPI_SUCCESS ? 0 : -1;
}

/* Per-rank row counts and displacements from the (rank, expert) counts. */
static void rank_layout(const int *cnt, int ep, int e, int *n, int *disp)
{
	int d = 0;
	for (int r = 0; r < ep; r++) {
		n[r] = 0;
		for (int j = 0; j < e; j++)
			n[r] += cnt[r * e + j];
		disp[r] = d;
		d += n[r];
	}
}

static void *xmalloc(size_t n)
{
	return malloc(n ? n : 1);
}

#define ALLOC(p, n) (((p) = xmalloc((size_t)(n))) != NULL)

static int dfc_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct dfc_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(perfdb_dfc_plan(c, &s->p, err));
	struct perfdb_dfc_plan *p = &s->p;
	int ep = p->ep, e = (int)p->e;
	size_t pairs = (size_t)(p->t * p->k);
	/* balanced expert ids, then the counts: every rank reaches the Alltoall, even after a failure */
	for (size_t i = 0; i < pairs; i++) {
		int64_t v = ((int64_t)c->rank * p->k + (int64_t)i) % (p->e * ep);
		switch (c->in[3].dtype) {
		case PERFDB_DTYPE_INT8: ((int8_t *)c->in[3].data)[i] = (int8_t)v; break;
		case PERFDB_DTYPE_UINT8: ((uint8_t *)c->in[3].data)[i] = (uint8_t)v; break;
		case PERFDB_DTYPE_INT16: ((int16_t *)c->in[3].data)[i] = (int16_t)v; break;
		case PERFDB_DTYPE_INT32: ((int32_t *)c->in[3].data)[i] = (int32_t)v; break;
		case PERFDB_DTYPE_INT64: ((int64_t *)c->in[3].data)[i] = v; break;
		default:
			if (perfdb_dtype_is_float(c->in[3].dtype)) {
				float f = (float)v;
				cpu_store_row(&c->in[3], i, 1, &f);
			}
		}
	}
	int ok = ALLOC(s->scount, (size_t)ep * (size_t)e * sizeof(int)) &&
		 ALLOC(s->rcount, (size_t)ep * (size_t)e * sizeof(int));
	int bad = !ok || count_rows(c, s) < 0;
	if (bad && s->scount)
		memset(s->scount, 0, (size_t)ep * (size_t)e * sizeof(int));
	if (ok && exchange_counts(c, s) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: MPI_Alltoall of the counts failed", c->op);
	if (!ok)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (bad)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: expert ids of dtype %s cannot hold ids up to %lld",
				      c->op, perfdb_dtype_name(c->in[3].dtype), (long long)(p->e * ep - 1));
	s->es = perfdb_dtype_bytes(c->in[0].dtype, 1);
	size_t rowb = (size_t)p->h * s->es;
	size_t rrows = 0;
	for (int i = 0; i < ep * e; i++)
		rrows += (size_t)s->rcount[i];
	int64_t mmax = 1;
	if (!ALLOC(s->me, (size_t)e * sizeof(int64_t)))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (int j = 0; j < e; j++) {
		s->me[j] = 0;
		for (int r = 0; r < ep; r++)
			s->me[j] += s->rcount[r * e + j];
		mmax = s->me[j] > mmax ? s->me[j] : mmax;
	}
	ok = ALLOC(s->sdisp, ep * sizeof(int)) && ALLOC(s->rdisp, ep * sizeof(int)) && ALLOC(s->sn, ep * sizeof(int)) &&
	     ALLOC(s->rn, ep * sizeof(int)) && ALLOC(s->pos, pairs * sizeof(int)) &&
	     ALLOC(s->off, (size_t)ep * (size_t)e * sizeof(int64_t)) && ALLOC(s->sbuf, pairs * rowb) &&
	     ALLOC(s->bsend, rrows * rowb) && ALLOC(s->xe, rrows * rowb) && ALLOC(s->ye, rrows * rowb) &&
	     ALLOC(s->y1, (size_t)mmax * (size_t)p->n * sizeof(float)) &&
	     ALLOC(s->hb, (size_t)mmax * (size_t)(p->n / 2) * s->es) && ALLOC(s->acc, (size_t)p->h * sizeof(float)) &&
	     ALLOC(s->row, (size_t)p->h * sizeof(float));
	if (ok && c->comm)
		ok = ALLOC(s->rbuf, rrows * rowb) && ALLOC(s->brecv, pairs * rowb);
	if (!ok)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (c->comm) {
		if (MPI_Type_contiguous((int)rowb, MPI_BYTE, &s->rowtype) != MPI_SUCCESS ||
		    MPI_Type_commit(&s->rowtype) != MPI_SUCCESS)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: MPI row type", c->op);
		s->rowtype_ok = 1;
	}
	s->mm1 = calloc((size_t)e, sizeof(*s->mm1));
	s->mm2 = calloc((size_t)e, sizeof(*s->mm2));
	s->w1 = calloc((size_t)e, sizeof(*s->w1));
	s->w2 = calloc((size_t)e, sizeof(*s->w2));
	if (!s->mm1 || !s->mm2 || !s->w1 || !s->w2)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	dnnl_data_type_t at = c->in[0].dtype == PERFDB_DTYPE_BF16 ? dnnl_bf16 : dnnl_f32;
	const struct perfdb_tensor *w1 = &c->in[1], *w2 = &c->in[2];
	size_t w1es = perfdb_dtype_bytes(w1->dtype, 1), w2es = perfdb_dtype_bytes(w2->dtype, 1);
	size_t hn = (size_t)p->h * (size_t)p->n;
	for (int j = 0; j < e; j++) {
		if (s->me[j] == 0)
			continue;
		int64_t m = s->me[j], n2 = p->n / 2;
		PERFDB_TRY(cpu_mm_init(&s->mm1[j], c->backend_ctx, m, p->h, p->n, at, p->h, at, dnnl_f32, p->n, err));
		PERFDB_TRY(cpu_mm_init(&s->mm2[j], c->backend_ctx, m, n2, p->h, at, n2, at, at, p->h, err));
		dnnl_data_type_t d1 = w1->dtype == PERFDB_DTYPE_BF16 ? dnnl_bf16 : w1->dtype == PERFDB_DTYPE_INT8 ? dnnl_s8 :
				      w1->dtype == PERFDB_DTYPE_FLOAT16 ? dnnl_f16 : dnnl_f32;
		dnnl_data_type_t d2 = w2->dtype == PERFDB_DTYPE_BF16 ? dnnl_bf16 : w2->dtype == PERFDB_DTYPE_INT8 ? dnnl_s8 :
				      w2->dtype == PERFDB_DTYPE_FLOAT16 ? dnnl_f16 : dnnl_f32;
		PERFDB_TRY(cpu_mm_weight(&s->mm1[j], (const char *)w1->data + (size_t)j * hn * w1es, d1, 0, &s->w1[j], err));
		PERFDB_TRY(cpu_mm_weight(&s->mm2[j], (const char *)w2->data + (size_t)j * hn / 2 * w2es, d2, 0, &s->w2[j], err));
	}
	return 0;
}

CPU_CLONES static void swiglu_f32(const float *x, float *out, size_t h)
{
	for (size_t j = 0; j < h; j++) {
		float a = x[j];
		out[j] = a / (1.0f + cpu_expf(-a)) * x[h + j];
	}
}

CPU_CLONES static void axpy(float *acc, float a, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acc[i] += a * x[i];
}

static int dfc_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct dfc_state *s = c->priv;
	const struct perfdb_dfc_plan *p = &s->p;
	int ep = p->ep, e = (int)p->e;
	size_t pairs = (size_t)(p->t * p->k), rowb = (size_t)p->h * s->es, n2 = (size_t)p->n / 2;
	MPI_Comm *comm = c->comm;
	/* dispatch: counts, then the rows ordered by (rank, local expert) */
	if (count_rows(c, s) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: an expert id is outside 0..%lld", c->op,
				      (long long)(p->e * ep - 1));
	if (exchange_counts(c, s) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: MPI_Alltoall failed", c->op);
	for (int j = 0; j < e; j++) {
		int64_t m = 0;
		for (int r = 0; r < ep; r++)
			m += s->rcount[r * e + j];
		if (m != s->me[j])
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: routing changed after prepare", c->op);
	}
	int64_t o = 0;
	for (int i = 0; i < ep * e; i++) {
		s->off[i] = o;
		o += s->scount[i];
	}
	for (size_t i = 0; i < pairs; i++) {
		int64_t v = cpu_ld_int(&c->in[3], i);
		s->pos[i] = (int)s->off[v]++;
		memcpy(s->sbuf + (size_t)s->pos[i] * rowb, (const char *)c->in[0].data + i / (size_t)p->k * rowb, rowb);
	}
	rank_layout(s->scount, ep, e, s->sn, s->sdisp);
	rank_layout(s->rcount, ep, e, s->rn, s->rdisp);
	const char *recv = s->sbuf;
	if (comm) {
		if (MPI_Alltoallv(s->sbuf, s->sn, s->sdisp, s->rowtype, s->rbuf, s->rn, s->rdisp, s->rowtype, *comm) !=
		    MPI_SUCCESS)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: MPI_Alltoallv (dispatch) failed", c->op);
		recv = s->rbuf;
	}
	/* expert-major copy, FFN per local expert, back to the (source rank, expert) order */
	size_t xo = 0;
	for (int j = 0; j < e; j++) {
		if (s->me[j] == 0)
			continue;
		size_t start = xo;
		for (int r = 0; r < ep; r++) {
			size_t at = (size_t)s->rdisp[r];
			for (int q = 0; q < j; q++)
				at += (size_t)s->rcount[r * e + q];
			size_t m = (size_t)s->rcount[r * e + j];
			memcpy(s->xe + xo * rowb, recv + at * rowb, m * rowb);
			xo += m;
		}
		size_t m = (size_t)s->me[j];
		PERFDB_TRY(cpu_mm_run(&s->mm1[j], s->xe + start * rowb, s->w1[j], s->y1, err));
		for (size_t r = 0; r < m; r++) {
			float *y = s->y1 + r * (size_t)p->n;
			swiglu_f32(y, y, n2);   /* in place: out[j] only reads x[j] and x[h + j] */
			struct perfdb_tensor hv = { .present = true, .dtype = c->in[0].dtype, .numel = (int64_t)(m * n2),
						    .data = s->hb };
			cpu_store_row(&hv, r * n2, n2, y);
		}
		PERFDB_TRY(cpu_mm_run(&s->mm2[j], s->hb, s->w2[j], s->ye + start * rowb, err));
		xo = start;
		for (int r = 0; r < ep; r++) {
			size_t at = (size_t)s->rdisp[r];
			for (int q = 0; q < j; q++)
				at += (size_t)s->rcount[r * e + q];
			size_t mr = (size_t)s->rcount[r * e + j];
			memcpy(s->bsend + at * rowb, s->ye + xo * rowb, mr * rowb);
			xo += mr;
		}
	}
	const char *back = s->bsend;
	if (comm) {
		if (MPI_Alltoallv(s->bsend, s->rn, s->rdisp, s->rowtype, s->brecv, s->sn, s->sdisp, s->rowtype, *comm) !=
		    MPI_SUCCESS)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: MPI_Alltoallv (combine) failed", c->op);
		back = s->brecv;
	}
	/* combine: the weighted sum of each token's k expert outputs */
	struct perfdb_tensor bt = { .present = true, .dtype = c->in[0].dtype, .numel = (int64_t)(pairs * (size_t)p->h),
				    .data = (void *)back };
	const struct perfdb_tensor *pr = c->in[6].present ? &c->in[6] : NULL;
	size_t h = (size_t)p->h, k = (size_t)p->k;
	for (size_t t = 0; t < (size_t)p->t; t++) {
		memset(s->acc, 0, h * sizeof(float));
		for (size_t j = 0; j < k; j++) {
			cpu_load_row(&bt, (size_t)s->pos[t * k + j] * h, h, s->row);
			axpy(s->acc, pr ? cpu_ld(pr, t * k + j) : 1.0f, s->row, h);
		}
		cpu_store_row(&c->out[0], t * h, h, s->acc);
	}
	if (c->nout > 1 && c->out[1].present && c->out[1].numel == p->e)
		for (int j = 0; j < e; j++) {
			float f = (float)s->me[j];
			switch (c->out[1].dtype) {
			case PERFDB_DTYPE_INT32: ((int32_t *)c->out[1].data)[j] = (int32_t)s->me[j]; break;
			case PERFDB_DTYPE_INT64: ((int64_t *)c->out[1].data)[j] = s->me[j]; break;
			default:
				if (perfdb_dtype_is_float(c->out[1].dtype))
					cpu_store_row(&c->out[1], (size_t)j, 1, &f);
			}
		}
	return 0;
}

const struct perfdb_op_impl cpu_ops_dfc[] = {
	{ .name = "DispatchFFNCombine", .check = cpu_no_limits, .prepare = dfc_prepare, .run = dfc_run,
	  .release = dfc_release },
	{ .name = NULL },
};
