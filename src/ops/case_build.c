/*
 * A database row's cells as a perfdb_op_case's tensors (docs/spec/replay.md
 * §4 "Parsing", "Building a tensor"; docs/replay.md "Tensors"): the one
 * builder the replay engine (src/replay/case.c) and the report's costs
 * (src/report/model.c) read rows with, so that both see the same tensors.
 * No buffer is allocated.
 */
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "ops/aten.h"
#include "ops/opdef.h"

static struct perfdb_span span_of(const char *s)
{
	return (struct perfdb_span){ s ? s : "", s ? strlen(s) : 0 };
}

static int build_side(const char *op, const char *side, const char *shapes, const char *dtypes,
		      const char *formats, struct perfdb_tensor *t, size_t *n, struct perfdb_err *err)
{
	struct perfdb_slots ss, ds, fs;
	perfdb_slots_init(&ss);
	perfdb_slots_init(&ds);
	perfdb_slots_init(&fs);
	int rc = 0;
	if (perfdb_shape_split_slots(span_of(shapes), &ss) < 0 ||
	    perfdb_shape_split_slots(span_of(dtypes), &ds) < 0 ||
	    perfdb_shape_split_slots(span_of(formats), &fs) < 0) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	if (ss.n > PERFDB_OP_MAX_TENSORS) {
		rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: %zu %s slots, at most %d supported", op, ss.n,
				    side, PERFDB_OP_MAX_TENSORS);
		goto out;
	}
	*n = ss.n;
	for (size_t i = 0; i < ss.n; i++) {
		struct perfdb_tensor *x = &t[i];
		memset(x, 0, sizeof(*x));
		if (perfdb_shape_slot_is_null(ss.v[i]))
			continue;
		x->present = true;
		int64_t d[PERFDB_SHAPE_MAX_DIMS];
		size_t nd;
		if ((rc = perfdb_shape_parse_dims(ss.v[i], d, PERFDB_SHAPE_MAX_DIMS, &nd, err)) < 0)
			goto out;
		struct perfdb_span dt = i < ds.n ? perfdb_span_trim(ds.v[i]) : span_of("");
		if (dt.len == 0) {
			x->dtype = PERFDB_DTYPE_FLOAT;   /* missing dtype -> DT_FLOAT */
		} else {
			x->dtype = perfdb_dtype_parse(dt);
			if (x->dtype == PERFDB_DTYPE_UNKNOWN || x->dtype == PERFDB_DTYPE_UNDEFINED ||
			    perfdb_dtype_bits(x->dtype) < 8) {
				rc = perfdb_err_set(err, PERFDB_EINVAL, "Unsupported dtype: %.*s", (int)dt.len, dt.p);
				goto out;
			}
		}
		struct perfdb_span fm = i < fs.n ? perfdb_span_trim(fs.v[i]) : span_of("");
		x->format = fm.len ? perfdb_format_parse(fm) : PERFDB_FORMAT_ND;
		if (x->format == PERFDB_FORMAT_FRACTAL_NZ && nd == 4) {
			if (perfdb_shape_nz_to_nd(d, nd, x->dims, &x->ndims) < 0) {
				rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: FRACTAL_NZ shape overflows", op);
				goto out;
			}
		} else {
			memcpy(x->dims, d, nd * sizeof(d[0]));
			x->ndims = nd;
		}
		x->numel = perfdb_shape_numel(x->dims, x->ndims);
		if (x->numel < 0) {
			rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: %s %zu has too many elements", op, side, i);
			goto out;
		}
		x->bytes = perfdb_dtype_bytes(x->dtype, (size_t)x->numel);
	}
out:
	perfdb_slots_release(&ss);
	perfdb_slots_release(&ds);
	perfdb_slots_release(&fs);
	return rc;
}

int perfdb_case_build(const char *op, const char *in_shapes, const char *in_dtypes, const char *in_formats,
		      const char *out_shapes, const char *out_dtypes, const char *out_formats,
		      struct perfdb_op_case *c, struct perfdb_err *err)
{
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->def = perfdb_opdef_get(op);
	c->threads = 1;
	PERFDB_TRY(build_side(op, "input", in_shapes, in_dtypes, in_formats, c->in, &c->nin, err));
	PERFDB_TRY(build_side(op, "output", out_shapes, out_dtypes, out_formats, c->out, &c->nout, err));
	const struct perfdb_aten_op *a = perfdb_aten_find(op);
	if (!a)
		return 0;
	/* a PyTorch op's row: the operator doing its work (aten.h) */
	struct perfdb_op_case raw = *c;
	return perfdb_aten_lower(a, &raw, c, err);
}

