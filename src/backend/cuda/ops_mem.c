/*
 * CUDA backend, memory-bound operators with the backend's own kernels
 * (kernels.cu): Add, RmsNorm, SwiGlu, SoftmaxV2, GatherV2, Transpose, and
 * TensorMove as a device-to-device copy (cudaMemcpyAsync: the reference
 * every memory-bound figure is compared with).
 *
 * Slots and semantics are the CPU backend's (docs/ops.md): each check is
 * the CPU op's own check plus what these kernels add (float dtypes for the
 * arithmetic ones, int32/int64 indices, fp32 rstd), so both backends refuse
 * the same rows for the same reasons.
 */
#include <string.h>

#include "cuda_internal.h"

static int cpu_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_op_impl *ci = perfdb_backend_cpu.find_op(c->op);
	return ci ? ci->check(c, err) : 0;
}

static int64_t last(const struct perfdb_tensor *t)
{
	return t->ndims ? t->dims[t->ndims - 1] : 1;
}

/* ---- Add ---------------------------------------------------------------- */

static int add_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int hasy = c->nin > 1 && c->in[1].present;
	CU_TRY(err, cuk_add(k->din[0], cu_float_dt(c->in[0].dtype), hasy ? k->din[1] : NULL,
			    hasy ? cu_float_dt(c->in[1].dtype) : 0, hasy ? c->in[1].numel : 1, k->dout[0],
			    cu_float_dt(c->out[0].dtype), c->out[0].numel, s));
	return 0;
}

/* ---- RmsNorm -------------------------------------------------------------- */

static int rms_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(cpu_check(c, err));
	if (c->nout > 1 && c->out[1].present && c->out[1].dtype != PERFDB_DTYPE_FLOAT)
		return perfdb_err_set(err, PERFDB_EINVAL, "RmsNorm: rstd output must be DT_FLOAT");
	return 0;
}

static int rms_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t h = last(&c->in[0]), rows = h ? c->in[0].numel / h : 0;
	float *rstd = c->nout > 1 && c->out[1].present ? k->dout[1] : NULL;
	CU_TRY(err, cuk_rmsnorm(k->din[0], cu_float_dt(c->in[0].dtype), k->din[1], cu_float_dt(c->in[1].dtype),
				k->dout[0], cu_float_dt(c->out[0].dtype), rstd, rows, h, 1e-6f, s));
	return 0;
}

/* ---- SwiGlu ----------------------------------------------------------------- */

static int swiglu_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t h = last(&c->out[0]), rows = h ? c->out[0].numel / h : 0;
	CU_TRY(err, cuk_swiglu(k->din[0], cu_float_dt(c->in[0].dtype), k->dout[0], cu_float_dt(c->out[0].dtype), rows,
			       h, s));
	return 0;
}

/* ---- SoftmaxV2 -------------------------------------------------------------- */

static int softmax_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t h = last(&c->in[0]), rows = h ? c->in[0].numel / h : 0;
	CU_TRY(err, cuk_softmax(k->din[0], cu_float_dt(c->in[0].dtype), k->dout[0], cu_float_dt(c->out[0].dtype), rows,
				h, s));
	return 0;
}

/* ---- GatherV2 ------------------------------------------------------------------ */

static int gather_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(cpu_check(c, err));
	enum perfdb_dtype d = c->in[1].dtype;
	if (d != PERFDB_DTYPE_INT32 && d != PERFDB_DTYPE_INT64)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: indices must be INT32 or INT64 on the cuda backend");
	return 0;
}

/* The CPU backend's prepare spreads the indices over the table: the same rows on both backends. */
static int gather_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	const struct perfdb_op_impl *ci = perfdb_backend_cpu.find_op(c->op);
	if (ci && ci->prepare) {
		void *mine = c->priv;
		c->priv = NULL;
		int rc = ci->prepare(c, err);
		if (ci->release)
			ci->release(c);
		c->priv = mine;
		PERFDB_TRY(rc);
	}
	return cu_upload_in(c, k, 1, err);
}

static int gather_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t row = c->in[0].dims[1] * (int64_t)perfdb_dtype_bytes(c->in[0].dtype, 1);
	CU_TRY(err, cuk_gather(k->din[0], k->din[1], c->in[1].dtype == PERFDB_DTYPE_INT64, k->dout[0], c->in[1].numel,
			       row, s));
	return 0;
}

/* ---- Transpose ---------------------------------------------------------------- */

/* The CPU backend's rule (docs/ops.md): the first two dims where input and output differ, else (0, 1). */
static int tr_dims(const struct perfdb_op_case *c, int64_t v[5])
{
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	size_t d[2] = { 0, 1 }, nd = 0;
	for (size_t i = 0; i < x->ndims && nd < 2; i++)
		if (x->dims[i] != o->dims[i])
			d[nd++] = i;
	if (nd == 0) {
		d[0] = 0;
		d[1] = 1;
	}
	v[0] = v[2] = 1;
	v[1] = x->dims[d[0]];
	v[3] = x->dims[d[1]];
	v[4] = (int64_t)perfdb_dtype_bytes(x->dtype, 1);
	for (size_t i = 0; i < d[0]; i++)
		v[0] *= x->dims[i];
	for (size_t i = d[0] + 1; i < d[1]; i++)
		v[2] *= x->dims[i];
	for (size_t i = d[1] + 1; i < x->ndims; i++)
		v[4] *= x->dims[i];
	return 0;
}

static int tr_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t v[5];
	tr_dims(c, v);
	CU_TRY(err, cuk_transpose(k->din[0], k->dout[0], v[0], v[1], v[2], v[3], v[4], s));
	return 0;
}

/* ---- TensorMove: the device-to-device copy ------------------------------------ */

static int move_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	CU_TRY(err, cudaMemcpyAsync(k->dout[0], k->din[0], c->out[0].bytes, cudaMemcpyDeviceToDevice, s));
	return 0;
}

const struct cu_op cu_ops_mem[] = {
	CU_OP("Add", true, "own", cpu_check, NULL, add_enqueue, NULL),
	CU_OP("RmsNorm", true, "own", rms_check, NULL, rms_enqueue, NULL),
	CU_OP("SoftmaxV2", true, "own", cpu_check, NULL, softmax_enqueue, NULL),
	CU_OP("SwiGlu", true, "own", cpu_check, NULL, swiglu_enqueue, NULL),
	CU_OP("GatherV2", true, "own", gather_check, gather_setup, gather_enqueue, NULL),
	CU_OP("Transpose", true, "own", cpu_check, NULL, tr_enqueue, NULL),
	CU_OP("TensorMove", true, "cudaMemcpyAsync", cpu_check, NULL, move_enqueue, NULL),
	{ .impl = { .name = NULL } },
};
