/*
 * DispatchFFNCombine's row rules (docs/ops.md "DispatchFFNCombine"), all
 * the operator's: the seven slots and the shapes of one expert-parallel
 * MoE layer, the reference's max_output_size, and the ranks a collective
 * row of EP size > 1 is replayed by (one per EP member, under mpirun).
 */
#include <string.h>

#include "ops/dfc.h"
#include "ops/rules.h"

int perfdb_dfc_plan(const struct perfdb_op_case *c, struct perfdb_dfc_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	if (c->nin != 7)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s rows need seven input metadata slots (x;w1;w2;expert_ids;scale1;scale2;probs), this one has %zu",
				      c->op, c->nin);
	for (int i = 0; i < 4; i++)
		if (!c->in[i].present)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input slot %d is empty", c->op, i);
	if (c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs output 0 (T,H)", c->op);
	const struct perfdb_tensor *x = &c->in[0], *w1 = &c->in[1], *w2 = &c->in[2], *id = &c->in[3];
	p->ep = c->ep_size > 0 ? c->ep_size : 1;
	if (x->ndims != 2 || (x->dtype != PERFDB_DTYPE_BF16 && x->dtype != PERFDB_DTYPE_FLOAT))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x must be a bf16 or fp32 (T,H)", c->op);
	p->t = x->dims[0];
	p->h = x->dims[1];
	if (w1->ndims != 3 || w1->dims[1] != p->h || w1->dims[2] % 2 ||
	    (!perfdb_dtype_is_float(w1->dtype) && w1->dtype != PERFDB_DTYPE_INT8))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: w1 must be (E,H,n) with H = %lld and n even", c->op,
				      (long long)p->h);
	p->e = w1->dims[0];
	p->n = w1->dims[2];
	if (w2->ndims != 3 || w2->dims[0] != p->e || w2->dims[1] != p->n / 2 || w2->dims[2] != p->h ||
	    (!perfdb_dtype_is_float(w2->dtype) && w2->dtype != PERFDB_DTYPE_INT8))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: w2 must be (E,n/2,H) = (%lld,%lld,%lld)", c->op,
				      (long long)p->e, (long long)(p->n / 2), (long long)p->h);
	if (id->ndims != 2 || id->dims[0] != p->t || id->dims[1] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: expert ids (slot 3) must be (T,k) for T = %lld", c->op,
				      (long long)p->t);
	p->k = id->dims[1];
	if (!perfdb_dtype_is_float(id->dtype) && (id->dtype == PERFDB_DTYPE_BOOL || id->dtype == PERFDB_DTYPE_FLOAT64 ||
					 perfdb_dtype_bits(id->dtype) < 8))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: expert ids dtype %s not supported", c->op,
				      perfdb_dtype_name(id->dtype));
	if (c->in[6].present && (c->in[6].numel != p->t * p->k || !perfdb_dtype_is_float(c->in[6].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: probs (slot 6) must be float (T,k)", c->op);
	const struct perfdb_tensor *o = &c->out[0];
	if (o->ndims != 2 || o->dims[0] != p->t || o->dims[1] != p->h || !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be float (T,H)", c->op);
	if (p->t * p->k > PERFDB_DFC_MAX_OUTPUT)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: T*k = %lld routed rows exceed max_output %d", c->op,
				      (long long)(p->t * p->k), PERFDB_DFC_MAX_OUTPUT);
	if (p->ep > 1 && !c->comm)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s with EP size %d needs its %d ranks: launch `mpirun -np %d perfdb microbench ... --dispatch-ffn-combine-ep-size %d`",
				      c->op, p->ep, p->ep, p->ep, p->ep);
	if (c->comm && c->nranks != p->ep)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s: EP size %d but %d MPI ranks: launch `mpirun -np %d` (one rank per EP member)",
				      c->op, p->ep, c->nranks, p->ep);
	return 0;
}

int perfdb_rules_dfc(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_dfc_plan p;
	return perfdb_dfc_plan(c, &p, err);
}
