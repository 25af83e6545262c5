/*
 * The MatMul family's shape planning (docs/ops.md "MatMul"), shared by every
 * backend: a row of MatMulV2/V3, MatMulCommon, BatchMatMulV2 or
 * TransposeBatchMatMul becomes one strided batched GEMM C[b] = A[b]·B[b] of
 * logical shapes (Bt,M,K)·(Bt,K,N)→(Bt,M,N) over the stored buffers, so a
 * transposed operand (`.t()` of a recorded (N,K) weight) or the (M,B,K)
 * layout of TransposeBatchMatMul costs no copy on any backend.  Which
 * dtypes a backend's GEMM takes is that backend's limit, not planned here.
 * The family's row rule is this plan: a row is the definition's when it
 * has one (perfdb_rules_matmul).
 */
#include <string.h>

#include "ops/opdef.h"
#include "ops/rules.h"

static int is2(const struct perfdb_tensor *t)
{
	return t->present && t->ndims == 2;
}

static int is3(const struct perfdb_tensor *t)
{
	return t->present && t->ndims == 3;
}

/* Strides of a stored row-major (r, c) matrix used as (rows, cols) logical, transposed or not. */
static void mat2(const struct perfdb_tensor *t, int trans, int64_t s[3])
{
	s[0] = 0;
	if (trans) {
		s[1] = 1;
		s[2] = t->dims[1];
	} else {
		s[1] = t->dims[1];
		s[2] = 1;
	}
}

int perfdb_gemm_plan_2d(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	if (!is2(a) || !is2(b) || !is2(o))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs 2-D inputs 0, 1 and output 0", c->op);
	int64_t m = o->dims[0], n = o->dims[1], k;
	int ta;
	if (a->dims[0] == m) {
		ta = 0;
		k = a->dims[1];
	} else if (a->dims[1] == m) {
		ta = 1;
		k = a->dims[0];
	} else {
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 0 has no dim M=%lld", c->op, (long long)m);
	}
	if (c->b_nk <= 0 && b->dims[0] == k && b->dims[1] == n)
		g->btrans = 0;
	else if (c->b_nk >= 0 && b->dims[1] == k && b->dims[0] == n)
		g->btrans = 1;
	else
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 1 is not (%lld,%lld)%s", c->op,
				      (long long)k, (long long)n, c->b_nk ? "" : " or its transpose");
	g->bt = 1;
	g->m = m;
	g->n = n;
	g->k = k;
	mat2(a, ta, g->sa);
	mat2(b, g->btrans, g->sb);
	g->sc[0] = 0;
	g->sc[1] = n;
	g->sc[2] = 1;
	return 0;
}

static int plan3(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	if (!is3(a) || !is3(b) || !is3(o))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs 3-D inputs 0, 1 and output 0", c->op);
	int64_t d0 = o->dims[0], d1 = o->dims[1], n = o->dims[2];
	int tbmm = strcmp(c->op, "TransposeBatchMatMul") == 0;
	/*
	 * TransposeBatchMatMul's x may also come as (B,M,K) with the output
	 * (M,B,N): the transpose is on the output only (as the grid writes it).
	 */
	int a_bmk = tbmm && a->dims[0] == d1 && a->dims[1] == d0 && b->dims[0] == d1 &&
		    !(a->dims[0] == d0 && a->dims[1] == d1);
	if (!a_bmk && (a->dims[0] != d0 || a->dims[1] != d1))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 0 and output 0 disagree", c->op);
	int64_t k = a->dims[2];
	int perm;  /* 1: (M,B,K) layout, batch is dim 1; 2: (B,M,K) in, (M,B,N) out */
	if (a_bmk)
		perm = 2;
	else if (b->dims[0] == d0)
		perm = 0;
	else if (tbmm && b->dims[0] == d1)
		perm = 1;
	else
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: batch of input 1 does not match", c->op);
	if (c->b_nk <= 0 && b->dims[1] == k && b->dims[2] == n)
		g->btrans = 0;
	else if (c->b_nk >= 0 && b->dims[2] == k && b->dims[1] == n)
		g->btrans = 1;
	else
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 1 is not (B,%lld,%lld) or (B,%lld,%lld)",
				      c->op, (long long)k, (long long)n, (long long)n, (long long)k);
	g->bt = perm ? d1 : d0;
	g->m = perm ? d0 : d1;
	g->n = n;
	g->k = k;
	if (perm == 1) {   /* A stored (M,B,K), C stored (M,B,N) */
		g->sa[0] = k; g->sa[1] = d1 * k; g->sa[2] = 1;
		g->sc[0] = n; g->sc[1] = d1 * n; g->sc[2] = 1;
	} else if (perm == 2) {   /* A stored (B,M,K), C stored (M,B,N) */
		g->sa[0] = d0 * k; g->sa[1] = k; g->sa[2] = 1;
		g->sc[0] = n; g->sc[1] = d1 * n; g->sc[2] = 1;
	} else {
		g->sa[0] = d1 * k; g->sa[1] = k; g->sa[2] = 1;
		g->sc[0] = d1 * n; g->sc[1] = n; g->sc[2] = 1;
	}
	g->sb[0] = k * n;
	g->sb[1] = g->btrans ? 1 : n;
	g->sb[2] = g->btrans ? k : 1;
	return 0;
}

int perfdb_gemm_plan(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err)
{
	memset(g, 0, sizeof(*g));
	if (c->nin < 2 || c->nout < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs 2 inputs and 1 output", c->op);
	if ((strcmp(c->op, "BatchMatMulV2") == 0 && is2(&c->in[0])) || strncmp(c->op, "MatMul", 6) == 0)
		return perfdb_gemm_plan_2d(c, g, err);
	return plan3(c, g, err);
}

int perfdb_rules_matmul(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_gemm g;
	return perfdb_gemm_plan(c, &g, err);
}
