/*
 * CUDA backend, memory-bound operators with the backend's own kernels
 * (kernels.cu; Sort: CUB in sort.cu): Add, RmsNorm, SwiGlu, SoftmaxV2,
 * GatherV2, Transpose, ScatterNdUpdate, Sort, TensorMove (a copy kernel:
 * cuda_kernels.h cuk_copy says why not cudaMemcpyAsync) and the others
 * below.
 *
 * Slots and semantics are the operator layer's (src/ops/, run by
 * the engine before these checks), and so are the indices' spreading over
 * their table (perfdb_gather_indices): each check here holds only what
 * these kernels add (int32/int64 indices, fp32 rstd, 8 dims, CUB's size).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "perfdb/half.h"
#include "ops/rules.h"

/* An op whose rules are all the operator layer's: these kernels take every row it accepts. */
static int no_limits(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)c;
	(void)err;
	return 0;
}

static int64_t last(const struct perfdb_tensor *t)
{
	return t->ndims ? t->dims[t->ndims - 1] : 1;
}

/* ---- Add ---------------------------------------------------------------- */

/* cuk_add reads y[i % numel(y)]: the trailing broadcasts only, not a (T,1) column */
static int add_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin > 1 && c->in[1].present && !perfdb_rules_trailing_bcast(&c->in[1], &c->out[0]))
		return perfdb_err_set(err, PERFDB_EINVAL, "Add: input 1 broadcasts over a non-trailing dim "
				      "(not supported by the cuda backend)");
	return 0;
}

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
	if (c->nout > 1 && c->out[1].present && c->out[1].dtype != PERFDB_DTYPE_FLOAT)
		return perfdb_err_set(err, PERFDB_EINVAL, "RmsNorm: rstd output must be DT_FLOAT");
	return 0;
}

static int rms_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t h = last(&c->in[0]), rows = h ? c->in[0].numel / h : 0;
	float *rstd = c->nout > 1 && c->out[1].present ? k->dout[1] : NULL;
	CU_TRY(err, cuk_rmsnorm(k->din[0], cu_float_dt(c->in[0].dtype), k->din[1], cu_float_dt(c->in[1].dtype),
				k->dout[0], cu_float_dt(c->out[0].dtype), rstd, rows, h, PERFDB_EPS_RMSNORM, s));
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
	enum perfdb_dtype d = c->in[1].dtype;
	if (d != PERFDB_DTYPE_INT32 && d != PERFDB_DTYPE_INT64)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: indices must be INT32 or INT64 on the cuda backend");
	return 0;
}

static int gather_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_gather_indices(c, err));
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
	CU_TRY(err, cuk_copy(k->din[0], k->dout[0], c->out[0].bytes, s));
	return 0;
}

/* ---- MaskedFill: out = mask ? value : x ------------------------------------------- */

struct mfill_state {
	float v;
};

static int mfill_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	struct mfill_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	k->state = s;
	/* the value is a one-element tensor read once, as the CPU backend reads in2[0] */
	const struct perfdb_tensor *v = c->nin > 2 && c->in[2].present ? &c->in[2] : NULL;
	if (v && v->numel > 0 && cu_float_dt(v->dtype) >= 0) {
		s->v = perfdb_float_elem(v->data, v->dtype, 0);
	}
	return 0;
}

static int mfill_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	struct mfill_state *m = k->state;
	CU_TRY(err, cuk_masked_fill(k->din[0], cu_float_dt(c->in[0].dtype), k->din[1], c->in[1].numel, m->v, k->dout[0],
				    c->out[0].numel, s));
	return 0;
}

static void free_state(struct cu_case *k)
{
	free(k->state);
	k->state = NULL;
}

/* ---- AddRmsNormBias ------------------------------------------------------------------ */

static int arnb_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nout > 1 && c->out[1].present && c->out[1].dtype != PERFDB_DTYPE_FLOAT)
		return perfdb_err_set(err, PERFDB_EINVAL, "AddRmsNormBias: rstd output must be DT_FLOAT");
	return 0;
}

static int arnb_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t h = last(&c->in[0]), rows = h ? c->in[0].numel / h : 0;
	int hasb = c->nin > 3 && c->in[3].present, hasx = c->nout > 2 && c->out[2].present;
	struct cuk_arnb a = {
		.x1 = k->din[0], .x2 = k->din[1], .gamma = k->din[2], .bias = hasb ? k->din[3] : NULL,
		.y = k->dout[0], .xsum = hasx ? k->dout[2] : NULL,
		.rstd = c->nout > 1 && c->out[1].present ? k->dout[1] : NULL,
		.d1 = cu_float_dt(c->in[0].dtype), .d2 = cu_float_dt(c->in[1].dtype), .dg = cu_float_dt(c->in[2].dtype),
		.db = hasb ? cu_float_dt(c->in[3].dtype) : 0, .dy = cu_float_dt(c->out[0].dtype),
		.dxs = hasx ? cu_float_dt(c->out[2].dtype) : 0, .h = h, .eps = PERFDB_EPS_RMSNORM,
	};
	CU_TRY(err, cuk_add_rmsnorm(&a, rows, s));
	return 0;
}

/* ---- Slice and PadV3: the leading block, copied (PadV3 zero-fills first) ------------- */

static int block_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->in[0].ndims > 8)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: more than 8 dims not supported on the cuda backend", c->op);
	return 0;
}

static int block_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	struct cuk_dims sd = { .n = (int)x->ndims }, dd = { .n = (int)x->ndims }, blk = { .n = (int)x->ndims };
	for (size_t i = 0; i < x->ndims; i++) {
		sd.v[i] = x->dims[i];
		dd.v[i] = o->dims[i];
		blk.v[i] = x->dims[i] < o->dims[i] ? x->dims[i] : o->dims[i];
	}
	if (o->numel > x->numel)   /* PadV3: zeros around the copy */
		CU_TRY(err, cudaMemsetAsync(k->dout[0], 0, o->bytes, s));
	CU_TRY(err, cuk_block_copy(k->din[0], k->dout[0], &sd, &dd, &blk, (int)perfdb_dtype_bytes(x->dtype, 1), s));
	return 0;
}

/* ---- Index: out = x[idx] along dim 0 (the last present input holds the indices) -------- */

static size_t index_slot(const struct perfdb_op_case *c)
{
	for (size_t i = c->nin; i-- > 1;)
		if (c->in[i].present)
			return i;
	return 0;
}

static int index_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	enum perfdb_dtype d = c->in[index_slot(c)].dtype;
	if (d != PERFDB_DTYPE_INT32 && d != PERFDB_DTYPE_INT64)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index: indices must be INT32 or INT64 on the cuda backend");
	return 0;
}

static int index_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_gather_indices(c, err));
	return cu_upload_in(c, k, index_slot(c), err);
}

static int index_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = &c->in[0];
	size_t ix = index_slot(c);
	int64_t row = (x->numel / x->dims[0]) * (int64_t)perfdb_dtype_bytes(x->dtype, 1);
	CU_TRY(err, cuk_gather(k->din[0], k->din[ix], c->in[ix].dtype == PERFDB_DTYPE_INT64, k->dout[0], c->in[ix].numel,
			       row, s));
	return 0;
}

/* ---- ArgMaxV2: the CPU backend's rule for the reduced dim (docs/ops.md) ---------------- */

static int argmax_dims(const struct perfdb_op_case *c, int64_t *outer, int64_t *d, int64_t *inner)
{
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	size_t dim = x->ndims;
	for (size_t k = 0; k < x->ndims && dim == x->ndims; k++) {
		int ok = 1;
		if (o->ndims + 1 == x->ndims) {
			for (size_t i = 0, j = 0; i < x->ndims; i++)
				if (i != k)
					ok &= x->dims[i] == o->dims[j++];
		} else if (o->ndims == x->ndims) {
			for (size_t i = 0; i < x->ndims; i++)
				ok &= i == k ? o->dims[i] == 1 : x->dims[i] == o->dims[i];
		} else {
			ok = 0;
		}
		if (ok)
			dim = k;
	}
	if (dim == x->ndims)
		return -1;
	*outer = *inner = 1;
	*d = x->dims[dim];
	for (size_t i = 0; i < dim; i++)
		*outer *= x->dims[i];
	for (size_t i = dim + 1; i < x->ndims; i++)
		*inner *= x->dims[i];
	return 0;
}

static int argmax_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	int64_t outer, d, inner;
	if (argmax_dims(c, &outer, &d, &inner) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: the output is not the input less one dim");
	CU_TRY(err, cuk_argmax(k->din[0], cu_float_dt(c->in[0].dtype), k->dout[0],
			       c->out[0].dtype == PERFDB_DTYPE_INT64, outer, d, inner, s));
	return 0;
}

/* ---- ScatterNdUpdate: var[idx[i]] = updates[i] (docs/ops.md) ----------------------------- */

static int scatter_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->in[1].dtype != PERFDB_DTYPE_INT32 && c->in[1].dtype != PERFDB_DTYPE_INT64)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: indices must be int32 or int64");
	if (c->nout > 0 && c->out[0].present && c->out[0].bytes != c->in[0].bytes)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: output 0 must be var's size");
	return 0;
}

/*
 * The NPU updates var in place.  With an output slot the output starts as
 * a copy of var (made once, untimed) and each call writes only the N
 * update rows into it, the traffic of the in-place op; without one var is
 * updated in place.  Indices: the CPU backend's (distinct rows when N <= V).
 */
static int scatter_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_gather_indices(c, err));
	PERFDB_TRY(cu_upload_in(c, k, 1, err));
	if (k->dout[0])
		CU_TRY(err, cudaMemcpy(k->dout[0], k->din[0], c->in[0].bytes, cudaMemcpyDeviceToDevice));
	return 0;
}

static int scatter_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	const struct perfdb_tensor *v = &c->in[0];
	int64_t row = (v->numel / v->dims[0]) * (int64_t)perfdb_dtype_bytes(v->dtype, 1);
	CU_TRY(err, cuk_scatter(k->din[2], k->din[1], c->in[1].dtype == PERFDB_DTYPE_INT64,
				k->dout[0] ? k->dout[0] : k->din[0], c->in[1].numel, row, s));
	return 0;
}

/* ---- Sort: rows of the last dim ascending, stable; values and positions (sort.cu) ---------- */

struct sort_state {
	int *offsets;
	void *iota, *scratch, *temp;
	struct cuk_sort a;
};

static int sort_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->out[0].dtype != c->in[0].dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: values output must have the input's dtype");
	if (c->in[0].numel > INT32_MAX)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: %lld elements, over CUB's 2^31 - 1",
				      (long long)c->in[0].numel);
	return 0;
}

static int sort_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = &c->in[0];
	int h = (int)last(x), rows = h ? (int)(x->numel / h) : 0;
	int has_idx = c->nout > 1 && c->out[1].present, idx64 = has_idx && c->out[1].dtype == PERFDB_DTYPE_INT64;
	size_t n = (size_t)rows * (size_t)h, vb = idx64 ? 8 : 4;
	struct sort_state *st = calloc(1, sizeof(*st));
	if (!st)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	k->state = st;
	int *off = malloc(((size_t)rows + 1) * sizeof(int));
	char *iota = malloc((n ? n : 1) * vb);
	if (!off || !iota) {
		free(off);
		free(iota);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	for (int r = 0; r <= rows; r++)
		off[r] = r * h;
	for (size_t i = 0; i < n; i++) {
		int64_t j = (int64_t)(i % (size_t)h);
		if (idx64)
			memcpy(iota + i * 8, &j, 8);
		else
			((int32_t *)(void *)iota)[i] = (int32_t)j;
	}
	cudaError_t e = cudaMalloc((void **)&st->offsets, ((size_t)rows + 1) * sizeof(int));
	if (e == cudaSuccess)
		e = cudaMalloc(&st->iota, (n ? n : 1) * vb);
	if (e == cudaSuccess)
		e = cudaMemcpy(st->offsets, off, ((size_t)rows + 1) * sizeof(int), cudaMemcpyHostToDevice);
	if (e == cudaSuccess)
		e = cudaMemcpy(st->iota, iota, (n ? n : 1) * vb, cudaMemcpyHostToDevice);
	free(off);
	free(iota);
	CU_TRY(err, e);
	if (!has_idx)   /* the positions still come out of the pair sort: into scratch */
		CU_TRY(err, cudaMalloc(&st->scratch, (n ? n : 1) * vb));
	st->a = (struct cuk_sort){ .x = k->din[0], .vals = k->dout[0], .idx = has_idx ? k->dout[1] : st->scratch,
				   .offsets = st->offsets, .iota = st->iota, .dt = cu_float_dt(x->dtype),
				   .idx64 = idx64, .rows = rows, .h = h };
	CU_TRY(err, cuk_sort_rows(&st->a, 0));   /* temp NULL: CUB's scratch size */
	CU_TRY(err, cudaMalloc(&st->temp, st->a.temp_bytes ? st->a.temp_bytes : 1));
	st->a.temp = st->temp;
	return 0;
}

static int sort_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err)
{
	(void)c;
	struct sort_state *st = k->state;
	struct cuk_sort a = st->a;
	CU_TRY(err, cuk_sort_rows(&a, s));
	return 0;
}

static void sort_teardown(struct cu_case *k)
{
	struct sort_state *st = k->state;
	if (!st)
		return;
	cudaFree(st->offsets);
	cudaFree(st->iota);
	cudaFree(st->scratch);
	cudaFree(st->temp);
	free(st);
	k->state = NULL;
}

const struct cu_op cu_ops_mem[] = {
	CU_OP("Add", "own", add_check, NULL, add_enqueue, NULL),
	CU_OP("RmsNorm", "own", rms_check, NULL, rms_enqueue, NULL),
	CU_OP("SoftmaxV2", "own", no_limits, NULL, softmax_enqueue, NULL),
	CU_OP("SwiGlu", "own", no_limits, NULL, swiglu_enqueue, NULL),
	CU_OP("GatherV2", "own", gather_check, gather_setup, gather_enqueue, NULL),
	CU_OP("Transpose", "own", no_limits, NULL, tr_enqueue, NULL),
	CU_OP("TensorMove", "own", no_limits, NULL, move_enqueue, NULL),
	CU_OP("MaskedFill", "own", no_limits, mfill_setup, mfill_enqueue, free_state),
	CU_OP("AddRmsNormBias", "own", arnb_check, NULL, arnb_enqueue, NULL),
	CU_OP("Slice", "own", block_check, NULL, block_enqueue, NULL),
	CU_OP("PadV3", "own", block_check, NULL, block_enqueue, NULL),
	CU_OP("Index", "own", index_check, index_setup, index_enqueue, NULL),
	CU_OP("ArgMaxV2", "own", no_limits, NULL, argmax_enqueue, NULL),
	CU_OP("ScatterNdUpdate", "own", scatter_check, scatter_setup, scatter_enqueue, NULL),
	CU_OP("Sort", "cub", sort_check, sort_setup, sort_enqueue, sort_teardown),
	{ .impl = { .name = NULL } },
};
