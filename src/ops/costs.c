/*
 * The operators' costs (opdef.h struct perfdb_op_cost, docs/ops.md
 * "Costs"): the byte counts every cost shares, the streaming ops (each
 * tensor touched once, a fixed FLOP count per element) and the matrix-unit
 * ops, whose FLOPs come from the same plans the backends run (the GEMM
 * layouts, GroupedMatmul's groups, DispatchFFNCombine's layer).
 */
#include <math.h>
#include <string.h>

#include "ops/costs.h"
#include "ops/dfc.h"
#include "ops/moe.h"

double perfdb_cost_elems_bytes(const struct perfdb_tensor *t, double numel)
{
	return numel * (double)perfdb_dtype_bits(t->dtype) / 8.0;
}

double perfdb_cost_bytes_from(const struct perfdb_op_case *c, size_t from)
{
	double b = 0;
	for (size_t i = from; i < c->nin; i++)
		b += perfdb_cost_tbytes(&c->in[i]);
	for (size_t i = 0; i < c->nout; i++)
		b += perfdb_cost_tbytes(&c->out[i]);
	return b;
}

double perfdb_cost_all_bytes(const struct perfdb_op_case *c)
{
	double b = 0;
	for (size_t i = 0; i < c->nin; i++)
		b += perfdb_cost_tbytes(&c->in[i]);
	for (size_t i = 0; i < c->nout; i++)
		if (!(c->def && c->def->inplace && c->def->inplace(c, i) >= 0))
			b += perfdb_cost_tbytes(&c->out[i]);
	return b;
}

/* ---- streaming ops ----------------------------------------------------------- */

/* The operands' dtype: input 0's, else output 0's (Fill has no data input). */
static enum perfdb_dtype operand_dtype(const struct perfdb_op_case *c)
{
	if (c->nin && c->in[0].present)
		return c->in[0].dtype;
	return c->nout && c->out[0].present ? c->out[0].dtype : PERFDB_DTYPE_FLOAT;
}

static double numel_of(const struct perfdb_tensor *t)
{
	return t->present ? (double)t->numel : 0;
}

/* Every tensor once; per FLOPs for each element of `of`. */
static int stream(const struct perfdb_op_case *c, const struct perfdb_tensor *of, double per,
		  struct perfdb_op_cost *w)
{
	w->bytes = perfdb_cost_all_bytes(c);
	w->flops = per * (of ? numel_of(of) : 0);
	w->unit = PERFDB_OP_UNIT_VECTOR;
	w->dtype = operand_dtype(c);
	return 0;
}

static const struct perfdb_tensor *out0(const struct perfdb_op_case *c)
{
	return c->nout ? &c->out[0] : NULL;
}

static const struct perfdb_tensor *in0(const struct perfdb_op_case *c)
{
	return c->nin ? &c->in[0] : NULL;
}

/* The FLOPs per element below are the conventions of docs/ops.md "Costs". */
int perfdb_cost_add(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, out0(c), 1, w);
}

int perfdb_cost_move(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, NULL, 0, w);
}

/* silu(a)·b: exp, add, divide, two multiplies per output element. */
int perfdb_cost_swiglu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, out0(c), 5, w);
}

/* silu(x) = x / (1 + exp(-x)): negate, exp, add, divide per element. */
int perfdb_cost_silu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, out0(c), 4, w);
}

/* rsqrt(x) = 1 / sqrt(x): a square root and a divide per element. */
int perfdb_cost_rsqrt(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, out0(c), 2, w);
}

/* gelu(x) = x/2 (1 + erf(x/sqrt 2)): scale, erf, add, two multiplies per element. */
int perfdb_cost_gelu(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, out0(c), 5, w);
}

/* square, sum, scale by rstd, scale by gamma. */
int perfdb_cost_rmsnorm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 4, w);
}

/* the add (and bias) before the norm's four */
int perfdb_cost_add_rmsnorm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 6, w);
}

/* mean, centre, square, sum, scale, gamma, beta */
int perfdb_cost_layer_norm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 7, w);
}

/* max, subtract, exp, sum, divide */
int perfdb_cost_softmax(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 5, w);
}

/* |x| max, scale, round */
int perfdb_cost_dynamic_quant(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 3, w);
}

/* scale, offset */
int perfdb_cost_ascend_quant(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 2, w);
}

/* x·cos + rot(x)·sin on every output element of every output */
int perfdb_cost_rope(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	stream(c, NULL, 0, w);
	for (size_t i = 0; i < c->nout; i++)
		w->flops += 3 * numel_of(&c->out[i]);
	return 0;
}

/* q and k: the norm's four and the rotation's three; v is a copy */
int perfdb_cost_qkv_rope(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	stream(c, NULL, 0, w);
	for (size_t i = 0; i < c->nout && i < 2; i++)
		w->flops += 7 * numel_of(&c->out[i]);
	return 0;
}

/* one compare per input element */
int perfdb_cost_argmax(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 1, w);
}

/* the scores' activation (sigmoid or softmax: five) per (token, expert) */
int perfdb_cost_gating_topk(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	return stream(c, in0(c), 5, w);
}

/* a multiply-add per permuted element when probs weight them, else a copy */
int perfdb_cost_token_unpermute(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	int probs = c->nin > 2 && c->in[2].present;
	return stream(c, in0(c), probs ? 2 : 1, w);
}

/* ---- matrix-unit ops ----------------------------------------------------------- */

static void matrix(const struct perfdb_op_case *c, double flops, double bytes, struct perfdb_op_cost *w)
{
	w->flops = flops;
	w->bytes = bytes;
	w->unit = PERFDB_OP_UNIT_MATRIX;
	w->dtype = operand_dtype(c);
}

int perfdb_cost_matmul(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_gemm g;
	PERFDB_TRY(perfdb_gemm_plan(c, &g, err));
	matrix(c, 2.0 * (double)g.bt * (double)g.m * (double)g.n * (double)g.k, perfdb_cost_all_bytes(c), w);
	return 0;
}

/*
 * x1 (M,K) and x2 (K,N) in either storage order, out (M,N): x1·x2 has
 * M·K·K·N elements, so K = sqrt(|x1|·|x2| / |out|) whatever the layouts.
 */
int perfdb_cost_quant_matmul(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || !c->nout || !c->out[0].present ||
	    c->out[0].numel < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: needs x1, x2 and an output", c->op);
	double mn = (double)c->out[0].numel;
	double k = sqrt((double)c->in[0].numel * (double)c->in[1].numel / mn);
	matrix(c, 2.0 * mn * round(k), perfdb_cost_all_bytes(c), w);
	return 0;
}

/*
 * 2·T·K·N; of the E weights only the groups that receive tokens are read:
 * the tokens split evenly (perfdb_even_group_end), min(T, E) groups.
 */
int perfdb_cost_gmm(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_gmm_shape s;
	PERFDB_TRY(perfdb_gmm_shape(c, &s, err));
	const struct perfdb_tensor *wt = &c->in[1];
	double used = s.e > 0 ? (double)(s.t < s.e ? s.t : s.e) / (double)s.e : 1;
	double bytes = perfdb_cost_all_bytes(c) - perfdb_cost_tbytes(wt) * (1 - used);
	matrix(c, 2.0 * (double)s.t * (double)s.k * (double)s.n, bytes, w);
	return 0;
}

/* The layer's two GEMMs over the T·k routed rows: (H -> n) and (n/2 -> H). */
int perfdb_cost_dfc(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_dfc_plan p;
	PERFDB_TRY(perfdb_dfc_plan(c, &p, err));
	double rows = (double)p.t * (double)p.k, h = (double)p.h, n = (double)p.n;
	matrix(c, 2.0 * rows * h * n + 2.0 * rows * (n / 2) * h, perfdb_cost_all_bytes(c), w);
	return 0;
}
