/*
 * Row signatures: see include/perfdb/signature.h.
 *
 * Follows docs/spec/replay.md §1b (reference signature_utils.get_sig at
 * 84fec85) with Decision 5: every dtype field is canonicalised with
 * perfdb_dtype_canonical, so `FLOAT16` and `DT_FLOAT16` give one signature.
 *
 * The steps mirror the reference function by function, because a row only
 * matches when the database side and the profile side normalise alike:
 *
 *   perfdb_shape_split_slots  _split_slot_cell
 *   normalize_slot            _normalize_shape_slot
 *   normalize_attr            _normalize_shape_attr_sig
 *   parse_slot                _parse_shape_slot
 *   matmul_sig                canonicalize_matmul_family_signature
 *   generic_sig               canonicalize_profile_signature + get_sig
 *
 * The signature string is the five fields (in shapes, in dtypes, in
 * formats, out shapes, out dtypes) joined with '|', plus the trimmed
 * `EP Size` for DispatchFFNCombine: the reference's _serialize_sig.
 *
 * Where the reference joins a list with ';' and splits the result again,
 * so do we: re-splitting re-trims, and the output must be byte-identical.
 *
 * Deliberate differences from the reference, all on malformed dims only:
 * a negative dim, one above INT64_MAX or more than PERFDB_SHAPE_MAX_DIMS
 * dims make a slot unparsable (Python's int() would accept the first two),
 * so such a matmul row takes the generic rule and such an Index row keeps
 * all its slots.
 */
#include "perfdb/signature.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"

/* Field separator of the printable signature. */
#define SEP '|'

static struct perfdb_span span_of(const char *s)
{
	return (struct perfdb_span){ s ? s : "", s ? strlen(s) : 0 };
}

static struct perfdb_span span_sb(const struct perfdb_strbuf *sb)
{
	return (struct perfdb_span){ sb->buf, sb->len };
}

static int span_eq(struct perfdb_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static int has_suffix(struct perfdb_span s, const char *suf)
{
	size_t n = strlen(suf);
	return s.len >= n && memcmp(s.p + s.len - n, suf, n) == 0;
}

/* normalize_op_name: trim, then strip one of `_run.py`, `_run`, `.csv`
 * (first that matches, in that order). */
static struct perfdb_span normalize_op(struct perfdb_span s)
{
	static const char *const suffixes[] = { "_run.py", "_run", ".csv" };
	s = perfdb_span_trim(s);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (has_suffix(s, suffixes[i])) {
			s.len -= strlen(suffixes[i]);
			break;
		}
	}
	return s;
}

/* get_sig's op resolution: op.strip().strip('"') then normalize_op_name. */
static struct perfdb_span resolve_op(const char *op)
{
	struct perfdb_span s = perfdb_span_trim(span_of(op));
	while (s.len && s.p[0] == '"') {
		s.p++;
		s.len--;
	}
	while (s.len && s.p[s.len - 1] == '"')
		s.len--;
	return normalize_op(s);
}

static bool is_matmul_span(struct perfdb_span op)
{
	return span_eq(op, "MatMulV2") || span_eq(op, "MatMulV3") ||
	       span_eq(op, "MatMulCommon");
}

bool perfdb_sig_is_matmul_family(const char *op)
{
	return is_matmul_span(normalize_op(span_of(op)));
}

int perfdb_sig_normalize_op(const char *name, struct perfdb_strbuf *out)
{
	struct perfdb_span s = normalize_op(span_of(name));
	perfdb_strbuf_reset(out);
	return perfdb_strbuf_add(out, s.p, s.len);
}

/* Append v[0..n) joined with ';'. */
static int join(const struct perfdb_span *v, size_t n, struct perfdb_strbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, ';'));
		PERFDB_TRY(perfdb_strbuf_add(out, v[i].p, v[i].len));
	}
	return 0;
}

/* Append the canonical spelling of each dtype, joined with ';'. */
static int join_canonical(const struct perfdb_span *v, size_t n,
			  struct perfdb_strbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, ';'));
		PERFDB_TRY(perfdb_dtype_canonical(v[i], out));
	}
	return 0;
}

/*
 * _normalize_shape_slot: append the slot's dims joined with ','.  Null
 * spellings (exact set of the reference, `N/A` case-sensitive here) append
 * nothing; one pair of parens is dropped; dims split on runs of ',' and
 * whitespace.  Dims are not checked: `4,x` stays `4,x`.
 */
static int normalize_slot(struct perfdb_span slot, struct perfdb_strbuf *out)
{
	struct perfdb_span body, tok;
	if (!perfdb_shape_slot_body(slot, 0, &body))
		return 0;
	for (int first = 1; perfdb_shape_next_dim(&body, &tok); first = 0) {
		if (!first)
			PERFDB_TRY(perfdb_strbuf_addch(out, ','));
		PERFDB_TRY(perfdb_strbuf_add(out, tok.p, tok.len));
	}
	return 0;
}

/*
 * Scratch space of one signature computation: slot lists (views) and
 * buffers.  A view list must not outlive a change to the buffer it points
 * into; each helper below says which lists and buffers it clobbers.
 */
struct work {
	struct perfdb_slots a, b, c, d, e;
	struct perfdb_strbuf raw_shapes, raw_dtypes, raw_formats, tmp, attrs;
	struct perfdb_strbuf field[5]; /* in shapes/dtypes/formats, out shapes/dtypes */
};

static void work_init(struct work *w)
{
	perfdb_slots_init(&w->a);
	perfdb_slots_init(&w->b);
	perfdb_slots_init(&w->c);
	perfdb_slots_init(&w->d);
	perfdb_slots_init(&w->e);
	perfdb_strbuf_init(&w->raw_shapes);
	perfdb_strbuf_init(&w->raw_dtypes);
	perfdb_strbuf_init(&w->raw_formats);
	perfdb_strbuf_init(&w->tmp);
	perfdb_strbuf_init(&w->attrs);
	for (size_t i = 0; i < 5; i++)
		perfdb_strbuf_init(&w->field[i]);
}

static void work_release(struct work *w)
{
	perfdb_slots_release(&w->a);
	perfdb_slots_release(&w->b);
	perfdb_slots_release(&w->c);
	perfdb_slots_release(&w->d);
	perfdb_slots_release(&w->e);
	perfdb_strbuf_release(&w->raw_shapes);
	perfdb_strbuf_release(&w->raw_dtypes);
	perfdb_strbuf_release(&w->raw_formats);
	perfdb_strbuf_release(&w->tmp);
	perfdb_strbuf_release(&w->attrs);
	for (size_t i = 0; i < 5; i++)
		perfdb_strbuf_release(&w->field[i]);
}

/* Cut a buffer back to len bytes. */
static void truncate_to(struct perfdb_strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

/*
 * _normalize_shape_attr_sig: write to shapes_out (if not NULL) the
 * normalised shape slots and to attrs_out the attribute of every slot
 * whose shape is non-empty, each list with its trailing empty entries
 * trimmed and joined with ';'.  Both outputs are reset first.  Clobbers
 * w->d, w->e and w->tmp.
 */
static int normalize_attr(struct perfdb_span shapes_text,
			  struct perfdb_span attr_text,
			  struct perfdb_strbuf *shapes_out,
			  struct perfdb_strbuf *attrs_out, struct work *w)
{
	struct perfdb_slots *ss = &w->d, *as = &w->e;
	struct perfdb_strbuf *shapes = shapes_out ? shapes_out : &w->tmp;

	PERFDB_TRY(perfdb_shape_split_slots(shapes_text, ss));
	PERFDB_TRY(perfdb_shape_split_slots(attr_text, as));
	perfdb_strbuf_reset(shapes);
	perfdb_strbuf_reset(attrs_out);

	/* Both lists are padded to the longer one.  Each is written in full,
	 * remembering where its last non-empty entry ended; cutting there is
	 * the trailing trim. */
	size_t n = ss->n > as->n ? ss->n : as->n;
	size_t shape_keep = 0, attr_keep = 0;
	for (size_t i = 0; i < n; i++) {
		if (i) {
			PERFDB_TRY(perfdb_strbuf_addch(shapes, ';'));
			PERFDB_TRY(perfdb_strbuf_addch(attrs_out, ';'));
		}
		size_t before = shapes->len;
		if (i < ss->n)
			PERFDB_TRY(normalize_slot(ss->v[i], shapes));
		if (shapes->len == before)
			continue; /* no tensor: its attribute is dropped */
		shape_keep = shapes->len;
		if (i < as->n && as->v[i].len) {
			PERFDB_TRY(perfdb_strbuf_add(attrs_out, as->v[i].p,
						     as->v[i].len));
			attr_keep = attrs_out->len;
		}
	}
	truncate_to(shapes, shape_keep);
	truncate_to(attrs_out, attr_keep);
	return 0;
}

/*
 * Output shapes and dtypes of both rules: fields 3 and 4.  The dtypes are
 * normalised against the output shapes, then each ';' piece is
 * canonicalised (Decision 5; the 84fec85 reference kept them verbatim).
 * Clobbers w->d, w->e, w->tmp and w->attrs.
 */
static int out_fields(const struct perfdb_sig_row *row, struct work *w)
{
	struct perfdb_strbuf *dtypes = &w->field[4];
	PERFDB_TRY(normalize_attr(span_of(row->out_shapes), span_of(row->out_dtypes),
				  &w->field[3], &w->attrs, w));
	perfdb_strbuf_reset(dtypes);
	/* A plain split, as the reference's output_dtypes.split(";"). */
	const char *p = w->attrs.buf, *end = w->attrs.buf + w->attrs.len;
	for (;;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;
		PERFDB_TRY(perfdb_dtype_canonical(
			(struct perfdb_span){ p, (size_t)(stop - p) }, dtypes));
		if (!semi)
			break;
		PERFDB_TRY(perfdb_strbuf_addch(dtypes, ';'));
		p = semi + 1;
	}
	return 0;
}

/* _parse_shape_slot: dims of a slot, or 0 when it is null or malformed. */
static size_t parse_slot(struct perfdb_span slot, int64_t *dims)
{
	size_t n = 0;
	if (perfdb_shape_parse_dims(slot, dims, PERFDB_SHAPE_MAX_DIMS, &n, NULL) < 0)
		return 0;
	return n;
}

/* The K of canonicalize_matmul_family_signature; false when there is none. */
static bool matmul_k(const int64_t *a, const int64_t *b, int64_t m, int64_t n,
		     int64_t *k)
{
	if (a[0] == m && ((b[0] == n && a[1] == b[1]) ||
			  (b[1] == n && a[1] == b[0]))) {
		*k = a[1];
		return true;
	}
	/* common = set(A) & set(B): at most two distinct values. */
	int64_t common[2], outer = 0;
	size_t ncommon = 0, nouter = 0;
	for (size_t i = 0; i < 2; i++) {
		if (i == 1 && a[1] == a[0])
			break;
		if (a[i] == b[0] || a[i] == b[1])
			common[ncommon++] = a[i];
	}
	for (size_t i = 0; i < ncommon; i++) {
		if (common[i] != m && common[i] != n) {
			outer = common[i];
			nouter++;
		}
	}
	if (nouter == 1) {
		*k = outer;
		return true;
	}
	if (ncommon == 1) {
		*k = common[0];
		return true;
	}
	return false;
}

/*
 * canonicalize_matmul_family_signature: A = in0, B = in1, out0 = (M, N),
 * all 2-D.  Fills the five fields and sets *done when a K is found; the
 * caller falls through to the generic rule otherwise.
 */
static int matmul_sig(const struct perfdb_sig_row *row, struct work *w,
		      bool *done)
{
	int64_t a[PERFDB_SHAPE_MAX_DIMS], b[PERFDB_SHAPE_MAX_DIMS];
	int64_t o[PERFDB_SHAPE_MAX_DIMS];
	int64_t m, n, k;

	*done = false;
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_shapes), &w->a));
	if (w->a.n < 2 || parse_slot(w->a.v[0], a) != 2 ||
	    parse_slot(w->a.v[1], b) != 2)
		return 0;
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->out_shapes), &w->a));
	if (w->a.n < 1 || parse_slot(w->a.v[0], o) != 2)
		return 0;
	m = o[0];
	n = o[1];
	if (!matmul_k(a, b, m, n, &k))
		return 0;

	for (size_t i = 0; i < 5; i++)
		perfdb_strbuf_reset(&w->field[i]);
	PERFDB_TRY(perfdb_strbuf_addf(&w->field[0], "%" PRId64 ",%" PRId64
				      ";%" PRId64 ",%" PRId64, m, k, n, k));
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_dtypes), &w->a));
	PERFDB_TRY(join_canonical(w->a.v, w->a.n < 2 ? w->a.n : 2, &w->field[1]));
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_formats), &w->a));
	PERFDB_TRY(join(w->a.v, w->a.n < 2 ? w->a.n : 2, &w->field[2]));
	/* The output dtypes come from the generic normalisation; the output
	 * shapes field is then overwritten with `M,N`. */
	PERFDB_TRY(out_fields(row, w));
	perfdb_strbuf_reset(&w->field[3]);
	PERFDB_TRY(perfdb_strbuf_addf(&w->field[3], "%" PRId64 ",%" PRId64, m, n));
	*done = true;
	return 0;
}

/*
 * canonicalize_profile_signature, then the generic normalisation.  The
 * Index and Slice-family rules pick input slots; the result is joined with
 * ';' and split again by the normalisation, as in the reference.
 */
static int generic_sig(struct perfdb_span op, const struct perfdb_sig_row *row,
		       struct work *w)
{
	/* The three input lists as views; a rule may point them at the small
	 * arrays below instead of the split cells. */
	struct perfdb_span *shp, *dt, *fmt;
	size_t nshp, ndt, nfmt;
	struct perfdb_span pick_shp[2], pick_dt[2], pick_fmt[2];
	char index_dim[24];

	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_shapes), &w->a));
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_dtypes), &w->b));
	PERFDB_TRY(perfdb_shape_split_slots(span_of(row->in_formats), &w->c));
	shp = w->a.v;
	nshp = w->a.n;
	dt = w->b.v;
	ndt = w->b.n;
	fmt = w->c.v;
	nfmt = w->c.n;

	if (span_eq(op, "Index")) {
		/* [in0, str(out0[0])], dtypes and formats (first, last). */
		int64_t o[PERFDB_SHAPE_MAX_DIMS];
		size_t on = 0;
		PERFDB_TRY(perfdb_shape_split_slots(span_of(row->out_shapes), &w->d));
		if (w->d.n)
			on = parse_slot(w->d.v[0], o);
		if (on && nshp) {
			snprintf(index_dim, sizeof(index_dim), "%" PRId64, o[0]);
			pick_shp[0] = shp[0];
			pick_shp[1] = (struct perfdb_span){ index_dim, strlen(index_dim) };
			shp = pick_shp;
			nshp = 2;
			if (ndt) {
				pick_dt[0] = dt[0];
				pick_dt[1] = dt[ndt - 1];
				dt = pick_dt;
				ndt = 2;
			}
			if (nfmt) {
				pick_fmt[0] = fmt[0];
				pick_fmt[1] = fmt[nfmt - 1];
				fmt = pick_fmt;
				nfmt = 2;
			}
		}
	} else if (span_eq(op, "Slice") || span_eq(op, "SliceAiCore") ||
		   span_eq(op, "Transpose") || span_eq(op, "TransposeAiCore")) {
		/* Slot 0 only; its format becomes ND. */
		if (nshp > 1)
			nshp = 1;
		if (ndt > 1)
			ndt = 1;
		if (nfmt) {
			pick_fmt[0] = (struct perfdb_span){ "ND", 2 };
			fmt = pick_fmt;
			nfmt = 1;
		}
	}

	perfdb_strbuf_reset(&w->raw_shapes);
	perfdb_strbuf_reset(&w->raw_dtypes);
	perfdb_strbuf_reset(&w->raw_formats);
	PERFDB_TRY(join(shp, nshp, &w->raw_shapes));
	PERFDB_TRY(join_canonical(dt, ndt, &w->raw_dtypes));
	PERFDB_TRY(join(fmt, nfmt, &w->raw_formats));

	PERFDB_TRY(normalize_attr(span_sb(&w->raw_shapes), span_sb(&w->raw_dtypes),
				  &w->field[0], &w->field[1], w));
	PERFDB_TRY(normalize_attr(span_sb(&w->raw_shapes), span_sb(&w->raw_formats),
				  NULL, &w->field[2], w));
	return out_fields(row, w);
}

static int compute(const char *op, const struct perfdb_sig_row *row,
		   struct perfdb_strbuf *out, struct work *w)
{
	struct perfdb_span name = resolve_op(op);
	bool done = false;

	if (is_matmul_span(name))
		PERFDB_TRY(matmul_sig(row, w, &done));
	if (!done)
		PERFDB_TRY(generic_sig(name, row, w));

	for (size_t i = 0; i < 5; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, SEP));
		PERFDB_TRY(perfdb_strbuf_add(out, w->field[i].buf, w->field[i].len));
	}
	/* The matmul rule returns before the EP Size check in the reference;
	 * no matmul op is DispatchFFNCombine, so the order does not matter. */
	if (span_eq(name, "DispatchFFNCombine")) {
		struct perfdb_span ep = perfdb_span_trim(span_of(row->ep_size));
		PERFDB_TRY(perfdb_strbuf_addch(out, SEP));
		PERFDB_TRY(perfdb_strbuf_add(out, ep.p, ep.len));
	}
	return 0;
}

int perfdb_sig_compute(const char *op, const struct perfdb_sig_row *row,
		       struct perfdb_strbuf *out)
{
	struct work w;
	work_init(&w);
	perfdb_strbuf_reset(out);
	int rc = compute(op, row, out, &w);
	work_release(&w);
	return rc;
}

int perfdb_sig_report_form(const struct perfdb_sig_row *row,
			   struct perfdb_strbuf *out)
{
	const char *in = row->in_shapes && *row->in_shapes ? row->in_shapes : "N/A";
	const char *o = row->out_shapes && *row->out_shapes ? row->out_shapes : "N/A";
	perfdb_strbuf_reset(out);
	return perfdb_strbuf_addf(out, "%s -> %s", in, o);
}
