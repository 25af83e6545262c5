/*
 * The rotary-embedding family's row rules (docs/ops.md "RoPE and KV
 * cache"): InterleaveRope, split_qkv_rmsnorm_rope_kernel, _triton_rope_siso.
 * The rule on the head dim D (even, and for _triton_rope_siso the cache's
 * last dim) is said in one message with the widest row a backend's
 * kernels rotate, so it is each backend's check (CPU: CPU_ROPE_MAX_D).
 */
#include "ops/rope.h"
#include "ops/rules.h"

static int all_float(const struct perfdb_op_case *c, size_t nin, size_t nout, struct perfdb_err *err)
{
	if (c->nin < nin || c->nout < nout)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs %zu inputs and %zu output(s)", c->op, nin, nout);
	for (size_t i = 0; i < nin; i++)
		if (!c->in[i].present || !perfdb_dtype_is_float(c->in[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %zu must be an fp32/bf16/fp16 tensor",
					      c->op, i);
	for (size_t i = 0; i < nout; i++)
		if (!c->out[i].present || !perfdb_dtype_is_float(c->out[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: output %zu must be an fp32/bf16/fp16 tensor",
					      c->op, i);
	return 0;
}

/* x (B,N,S,D), cos/sin (B or 1, 1, S or 1, D) -> y (B,N,S,D). */
int perfdb_rules_interleave_rope(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(all_float(c, 3, 1, err));
	const struct perfdb_tensor *x = &c->in[0], *cs = &c->in[1], *sn = &c->in[2], *o = &c->out[0];
	if (x->ndims != 4)
		return perfdb_err_set(err, PERFDB_EINVAL, "InterleaveRope: x must be 4-D (B,N,S,D)");
	int64_t d = x->dims[3];
	if (cs->ndims != 4 || !perfdb_tensor_same_dims(cs, sn) || cs->dims[1] != 1 || cs->dims[3] != d ||
	    (cs->dims[0] != 1 && cs->dims[0] != x->dims[0]) || (cs->dims[2] != 1 && cs->dims[2] != x->dims[2]))
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "InterleaveRope: cos and sin must both be (B or 1, 1, S or 1, D)");
	if (o->numel != x->numel || perfdb_rules_last(o) != d)
		return perfdb_err_set(err, PERFDB_EINVAL, "InterleaveRope: output must have x's shape");
	return 0;
}

void perfdb_qkv_plan(const struct perfdb_op_case *c, struct perfdb_qkv_plan *p)
{
	p->hd = (size_t)c->in[1].numel;
	p->q = (size_t)perfdb_rules_last(&c->out[0]);
	p->kv = (size_t)perfdb_rules_last(&c->out[1]);
	p->t = (size_t)(c->out[0].numel / (int64_t)(p->q ? p->q : 1));
}

/* in0 qkv (T, q + 2kv), in1 q_weight (hd), in2 k_weight (optional); out0 q (T,q), out1 k, out2 v (T,kv). */
int perfdb_rules_qkv_rope(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(all_float(c, 2, 3, err));
	if (c->nin > 2 && c->in[2].present &&
	    (!perfdb_dtype_is_float(c->in[2].dtype) || c->in[2].numel != c->in[1].numel))
		return perfdb_err_set(err, PERFDB_EINVAL, "split_qkv_rmsnorm_rope_kernel: k_weight must match q_weight");
	struct perfdb_qkv_plan p;
	perfdb_qkv_plan(c, &p);
	if (p.hd == 0)
		return 0;   /* no head dim: the backend's head-dim rule refuses the row */
	if (p.q == 0 || p.kv == 0 || p.q % p.hd || p.kv % p.hd)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "split_qkv_rmsnorm_rope_kernel: q and kv widths must be multiples of the head dim %zu",
				      p.hd);
	if ((size_t)perfdb_rules_last(&c->in[0]) != p.q + 2 * p.kv || (size_t)c->in[0].numel != p.t * (p.q + 2 * p.kv) ||
	    (size_t)c->out[1].numel != p.t * p.kv || (size_t)c->out[2].numel != p.t * p.kv)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "split_qkv_rmsnorm_rope_kernel: qkv must be (T, q + 2kv) for outputs (T,q), (T,kv), (T,kv)");
	return 0;
}

/* in0 q (T,H,D), in1 k (T,Hk,D) optional, in2 cos_sin_cache (P,D); out0 q, out1 k. */
int perfdb_rules_triton_rope(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 3 || !c->in[0].present || !c->in[2].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso needs q, cos_sin_cache and an output");
	const struct perfdb_tensor *q = &c->in[0], *k = &c->in[1], *cc = &c->in[2];
	if (!perfdb_dtype_is_float(q->dtype) || !perfdb_dtype_is_float(cc->dtype) ||
	    !perfdb_dtype_is_float(c->out[0].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso: tensors must be fp32/bf16/fp16");
	if (q->ndims != 3 || cc->ndims != 2)
		return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso: q must be (T,H,D) and cos_sin_cache (P,D)");
	if (c->out[0].numel != q->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso: output 0 must have q's shape");
	if (k->present) {
		if (!perfdb_dtype_is_float(k->dtype) || k->ndims != 3 || k->dims[0] != q->dims[0] ||
		    k->dims[2] != q->dims[2])
			return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso: k must be (T,Hk,D) like q");
		if (c->nout < 2 || !c->out[1].present || !perfdb_dtype_is_float(c->out[1].dtype) ||
		    c->out[1].numel != k->numel)
			return perfdb_err_set(err, PERFDB_EINVAL, "_triton_rope_siso: output 1 must have k's shape");
	}
	return 0;
}
