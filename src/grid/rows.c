/*
 * From candidates to database rows (docs/spec/grid.md §1 "Row build", §3
 * "Post-processing", §5 HBM estimator, Decisions 4, 5 and 8).
 *
 * Per table, once: columns a generator sets that the header lacks are
 * appended (FIA's 15 Runtime columns as in the reference; `EP Size` for
 * DispatchFFNCombine, Decision 5); the template row (the first data row)
 * gives every column's value for new rows: `OP State`, `Accelerator Core`,
 * the dtype and format columns and `Output Shapes` are copied, `Input
 * Shapes` is empty, a header whose lowercase holds duration, latency, time,
 * cycles, ratio, miss or utilization gets `0` (so do the `Runtime …`
 * columns: "runtime" holds "time"), every other column is copied.
 *
 * Per candidate: shapes are padded with empty slots to the template's slot
 * count (never truncated); a slot whose dtype or format (the generator's
 * value, else the template's; split on ';') is "", NULL, NONE, UNDEFINED
 * or DT_UNDEFINED is cleared; the HBM estimate (generated row's own dtypes,
 * Decision 4) drops rows above the budget (strict '>'); the shape cells
 * are `"a,b;;c"` with literal quotes; the row signature (signature.h, the
 * reference get_sig) drops a row already present among the source rows or
 * the earlier new rows.
 *
 * The file image: the source rows byte for byte (Decision 8) when the
 * header is unchanged, else the table re-serialized with the new columns
 * empty; then the new rows sorted by their input-shape tuples, ties in
 * generation order.
 */
#include "grid_internal.h"
#include "ops/opdef.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perfdb/csv.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/signature.h"

static const char *const keep_cols[] = {
	PERFDB_COL_OP_STATE, PERFDB_COL_ACCEL_CORE, PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
	PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS, PERFDB_COL_OUT_SHAPES,
};

static bool zero_fill(const char *h)
{
	static const char *const kw[] = { "duration", "latency", "time", "cycles", "ratio",
					   "miss", "utilization" };
	/* header.strip().lower() */
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strcasestr(h, kw[i]))
			return true;
	return false;
}

unsigned grid_dtype_bytes(const char *p, size_t len)
{
	static const struct { const char *n; unsigned b; } tab[] = {
		{ "DT_FLOAT", 4 }, { "DT_FLOAT16", 2 }, { "DT_BF16", 2 }, { "DT_BFLOAT16", 2 },
		{ "DT_FLOAT32", 4 }, { "DT_FLOAT64", 8 }, { "DT_DOUBLE", 8 }, { "DT_INT8", 1 },
		{ "DT_INT16", 2 }, { "DT_INT32", 4 }, { "DT_INT64", 8 }, { "DT_UINT8", 1 },
		{ "DT_UINT16", 2 }, { "DT_UINT32", 4 }, { "DT_UINT64", 8 }, { "DT_BOOL", 1 },
		{ "DT_COMPLEX64", 8 }, { "DT_COMPLEX128", 16 }, { "DT_FLOAT8_E4M3", 1 },
		{ "DT_FLOAT8_E5M2", 1 }, { "DT_FLOAT8", 1 }, { "FLOAT", 4 }, { "INT8", 1 },
		{ "INT16", 2 }, { "INT32", 4 }, { "INT64", 8 }, { "UINT8", 1 }, { "BOOL", 1 },
	};
	while (len && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
		p++;
		len--;
	}
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r' ||
		       p[len - 1] == '\n'))
		len--;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].n) == len && strncasecmp(tab[i].n, p, len) == 0)
			return tab[i].b;
	return 2;   /* unknown or missing: FP16 */
}

/* Saturating a*b for the estimate. */
static uint64_t satmul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t satadd(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Bytes of the dtype at slot idx of a ';'-separated cell (2 when absent). */
static unsigned dtype_at(const char *cell, size_t idx)
{
	const char *p = cell;
	while (*p == ' ' || *p == '"')
		p++;
	for (size_t i = 0; i < idx; i++) {
		p = strchr(p, ';');
		if (!p)
			return 2;
		p++;
	}
	size_t n = strcspn(p, ";");
	while (n && p[n - 1] == '"')
		n--;
	return grid_dtype_bytes(p, n);
}

static uint64_t side_bytes(const struct grid_shape *s, size_t n, const char *dtypes)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].nd)
			continue;
		uint64_t e = 1;
		for (size_t d = 0; d < s[i].nd; d++)
			e = satmul(e, (uint64_t)s[i].d[d]);
		total = satadd(total, satmul(e, dtype_at(dtypes ? dtypes : "", i)));
	}
	return total;
}

uint64_t grid_hbm_estimate(const struct grid_shape *in, size_t nin,
			   const struct grid_shape *out, size_t nout,
			   const char *in_dtypes, const char *out_dtypes)
{
	return satadd(side_bytes(in, nin, in_dtypes), side_bytes(out, nout, out_dtypes));
}

int grid_shape_text(const struct grid_shape *s, size_t n, struct perfdb_strbuf *out)
{
	char num[24];
	for (size_t i = 0; i < n; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, ';'));
		for (size_t d = 0; d < s[i].nd; d++) {
			if (d)
				PERFDB_TRY(perfdb_strbuf_addch(out, ','));
			/* hand-rolled: this is the hot path of big grids */
			char *e = num + sizeof(num), *q = e;
			uint64_t v = (uint64_t)s[i].d[d];
			do {
				*--q = (char)('0' + v % 10);
				v /= 10;
			} while (v);
			PERFDB_TRY(perfdb_strbuf_add(out, q, (size_t)(e - q)));
		}
	}
	return 0;
}

/* reference parse_shape_text: the slot count of a template shape cell */
size_t grid_template_slots(const char *cell)
{
	static const char *const missing[] = { "", "N/A", "NA", "NULL", "NONE", "UNDEFINED" };
	struct perfdb_span s = perfdb_span_trim((struct perfdb_span){ cell, strlen(cell) });
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
			if (strlen(missing[i]) == s.len && strncasecmp(missing[i], s.p, s.len) == 0)
				return 0;
		if (pass == 0 && s.len >= 2 && s.p[0] == '"' && s.p[s.len - 1] == '"') {
			s.p++;
			s.len -= 2;
		}
		s = perfdb_span_trim(s);
	}
	/* one slot per top-level ';', plus the text after the last one only if
	 * there is any: "2;" is one slot, as the reference counts it, so a
	 * generated row gets no trailing empty slot from it ("2;;" is two) */
	size_t n = 1;
	int depth = 0, open_slot = 1;
	for (size_t i = 0; i < s.len; i++) {
		open_slot = 1;
		if (s.p[i] == ';' && depth == 0) {
			n++;
			open_slot = 0;
		} else if (s.p[i] == '(') {
			depth++;
		} else if (s.p[i] == ')') {
			depth = depth > 0 ? depth - 1 : 0;
		}
	}
	return open_slot ? n : n - 1;
}

/* split_metadata_slots + is_absent_slot: absent[i] for each ';' part. */
static int absent_mask(const char *cell, bool **mask, size_t *n)
{
	struct perfdb_span s = perfdb_span_trim((struct perfdb_span){ cell, strlen(cell) });
	while (s.len && s.p[0] == '"') {
		s.p++;
		s.len--;
	}
	while (s.len && s.p[s.len - 1] == '"')
		s.len--;
	*n = 0;
	free(*mask);
	*mask = NULL;
	if (!s.len)
		return 0;
	size_t cnt = 1;
	for (size_t i = 0; i < s.len; i++)
		cnt += s.p[i] == ';';
	*mask = malloc(cnt * sizeof(**mask));
	if (!*mask)
		return -PERFDB_ENOMEM;
	const char *p = s.p, *end = s.p + s.len;
	for (size_t k = 0; k < cnt; k++) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;
		struct perfdb_span part = perfdb_span_trim((struct perfdb_span){ p, (size_t)(stop - p) });
		static const char *const absent[] = { "", "NULL", "NONE", "UNDEFINED", "DT_UNDEFINED" };
		bool a = false;
		for (size_t j = 0; j < 5; j++)
			a |= strlen(absent[j]) == part.len &&
			     strncasecmp(absent[j], part.p, part.len) == 0;
		(*mask)[k] = a;
		p = stop + 1;
	}
	*n = cnt;
	return 0;
}

enum { MD_IN_DT, MD_IN_FMT, MD_OUT_DT, MD_OUT_FMT, MD_N };
static const char *const md_names[MD_N] = { PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS,
					    PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS };

struct krow {
	size_t in_off, in_len, out_off, out_len;
	size_t ex_first, nex;            /* into f->ex */
	size_t key_off, key_slots;       /* into f->keys */
	size_t seq;
};

struct kex {
	size_t col;
	size_t off, len;                 /* into f->pool */
};

struct grid_file {
	struct perfdb_table *t;
	char *op;
	uint64_t max_hbm;
	long c_in, c_out, c_ep;
	long c_md[MD_N];
	size_t nt_in, nt_out;
	bool *tmask[MD_N];               /* template absent masks */
	size_t ntmask[MD_N];
	bool *smask;                     /* aten tables: template input slots without a shape (scalar arguments) */
	size_t nsmask;
	bool *xmask;                     /* scratch for a generator's value */
	size_t nxmask;
	struct perfdb_strbuf tesc;       /* escaped template values */
	size_t *tesc_off, *tesc_len;
	const char **added;
	size_t nadded;
	struct perfdb_sig_index ix;
	struct perfdb_strbuf pool;       /* shape cells and extra values of kept rows */
	int64_t *keys;
	size_t nkeys, capkeys;
	struct krow *rows;
	size_t nrows, caprows;
	struct kex *ex;
	size_t nex, capex;
	struct grid_file_stats st;
	struct grid_shape in[GRID_MAX_SLOTS * 2], out[GRID_MAX_SLOTS * 2];
	struct perfdb_strbuf in_cell, out_cell, sig;
	const struct perfdb_device *dev;   /* grid_file_set_time_limit */
	double calls, max_s;
};

void grid_file_set_time_limit(struct grid_file *f, const struct perfdb_device *dev, double calls, double max_s)
{
	f->dev = dev;
	f->calls = calls;
	f->max_s = max_s;
}

/* Whether the row in f's cells would take over f->max_s to replay on f->dev. */
static int over_time(const struct grid_file *f, const char *const *md)
{
	if (!f->dev || !(f->max_s > 0))
		return 0;
	struct perfdb_op_case c;
	struct perfdb_op_cost w;
	struct perfdb_err ignored;
	if (perfdb_case_build(f->op, f->in_cell.buf, md[MD_IN_DT], md[MD_IN_FMT], f->out_cell.buf ? f->out_cell.buf : "",
			      md[MD_OUT_DT], "", &c, &ignored) < 0 ||
	    perfdb_op_cost(&c, &w, &ignored) < 0)
		return 0;   /* no cost: nothing to say it is too slow */
	double t = perfdb_op_cost_seconds(&w, f->dev);
	return t >= 0 && t * f->calls > f->max_s;
}

void grid_file_free(struct grid_file *f)
{
	if (!f)
		return;
	free(f->op);
	for (int i = 0; i < MD_N; i++)
		free(f->tmask[i]);
	free(f->xmask);
	free(f->smask);
	perfdb_strbuf_release(&f->tesc);
	free(f->tesc_off);
	free(f->tesc_len);
	free(f->added);
	perfdb_sig_index_release(&f->ix);
	perfdb_strbuf_release(&f->pool);
	free(f->keys);
	free(f->rows);
	free(f->ex);
	perfdb_strbuf_release(&f->in_cell);
	perfdb_strbuf_release(&f->out_cell);
	perfdb_strbuf_release(&f->sig);
	free(f);
}

static int oom(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

int grid_file_new(struct grid_file **out, struct perfdb_table *t, const char *op,
		  const char *const *add_cols, uint64_t max_hbm_bytes, struct perfdb_err *err)
{
	*out = NULL;
	struct grid_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->op = strdup(op))) {
		free(f);
		return oom(err);
	}
	f->t = t;
	f->max_hbm = max_hbm_bytes;
	perfdb_strbuf_init(&f->tesc);
	perfdb_strbuf_init(&f->pool);
	perfdb_strbuf_init(&f->in_cell);
	perfdb_strbuf_init(&f->out_cell);
	perfdb_strbuf_init(&f->sig);
	perfdb_sig_index_init(&f->ix);
	int rc = 0;
	size_t nadd = 0;
	while (add_cols && add_cols[nadd])
		nadd++;
	f->added = calloc(nadd ? nadd : 1, sizeof(*f->added));
	if (!f->added)
		rc = oom(err);
	for (size_t i = 0; rc == 0 && i < nadd; i++) {
		if (perfdb_table_col(t, add_cols[i]) >= 0)
			continue;
		long c = perfdb_table_insert_col(t, add_cols[i], t->ncols, err);
		if (c < 0)
			rc = (int)c;
		else
			f->added[f->nadded++] = t->cols[c];
	}
	if (rc == 0 && t->nrows == 0)
		rc = perfdb_err_set(err, PERFDB_EINVAL, "%s: no template row", t->name);
	if (rc < 0) {
		grid_file_free(f);
		return rc;
	}
	f->c_in = perfdb_table_col(t, PERFDB_COL_IN_SHAPES);
	f->c_out = perfdb_table_col(t, PERFDB_COL_OUT_SHAPES);
	f->c_ep = perfdb_table_col(t, PERFDB_COL_EP_SIZE);
	for (int i = 0; i < MD_N; i++)
		f->c_md[i] = perfdb_table_col(t, md_names[i]);
	f->nt_in = grid_template_slots(perfdb_table_get(t, 0, f->c_in));
	f->nt_out = grid_template_slots(perfdb_table_get(t, 0, f->c_out));
	for (int i = 0; rc == 0 && i < MD_N; i++)
		if (absent_mask(perfdb_table_get(t, 0, f->c_md[i]), &f->tmask[i], &f->ntmask[i]) < 0)
			rc = oom(err);
	/*
	 * A PyTorch op table's slot is one argument of the op; a template slot
	 * without a shape is a scalar argument (aten.add's alpha, a Python
	 * float other), whatever dtype the profiler gave it: it stays empty.
	 */
	if (rc == 0 && f->op && strncmp(f->op, "aten.", 5) == 0 &&
	    absent_mask(perfdb_table_get(t, 0, f->c_in), &f->smask, &f->nsmask) < 0)
		rc = oom(err);
	f->tesc_off = calloc(t->ncols, sizeof(size_t));
	f->tesc_len = calloc(t->ncols, sizeof(size_t));
	if (rc == 0 && (!f->tesc_off || !f->tesc_len))
		rc = oom(err);
	for (size_t c = 0; rc == 0 && c < t->ncols; c++) {
		const char *h = t->cols[c], *v = t->rows[0].cells[c];
		bool keep = false;
		for (size_t k = 0; k < sizeof(keep_cols) / sizeof(keep_cols[0]); k++)
			keep |= strcmp(h, keep_cols[k]) == 0;
		if (!keep && strcmp(h, PERFDB_COL_IN_SHAPES) == 0)
			v = "";
		else if (!keep && zero_fill(h))
			v = "0";
		f->tesc_off[c] = f->tesc.len;
		if (perfdb_csv_put_field(&f->tesc, v, strlen(v)) < 0)
			rc = oom(err);
		f->tesc_len[c] = f->tesc.len - f->tesc_off[c];
	}
	if (rc == 0)
		rc = perfdb_table_index(t, op, &f->ix, err);
	if (rc < 0) {
		grid_file_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

const struct grid_file_stats *grid_file_stats(const struct grid_file *f)
{
	return &f->st;
}

size_t grid_file_added_cols(const struct grid_file *f, const char *const **names)
{
	*names = f->added;
	return f->nadded;
}

static const char *extra_of(const struct grid_cand *c, const char *col)
{
	for (size_t i = 0; i < c->nextra; i++)
		if (strcmp(c->extra_col[i], col) == 0)
			return c->extra_val[i];
	return NULL;
}

static void clear_slots(struct grid_shape *s, size_t n, const bool *m1, size_t n1,
			const bool *m2, size_t n2)
{
	for (size_t i = 0; i < n; i++)
		if ((i < n1 && m1[i]) || (i < n2 && m2[i]))
			s[i].nd = 0;
}

static int pool_cell(struct grid_file *f, const struct perfdb_strbuf *text, size_t *off,
		     size_t *len)
{
	*off = f->pool.len;
	*len = text->len;
	return perfdb_strbuf_add(&f->pool, text->buf, text->len);
}

/* The metadata's absent-slot masks applied to the padded slots (and the shape mask to the inputs). */
static int clear_absent(struct grid_file *f, const struct grid_cand *c, const char *const *md,
			size_t nin, size_t nout, struct perfdb_err *err)
{
	for (int side = 0; side < 2; side++) {
		const bool *m[2];
		size_t n[2];
		bool *tmp[2] = { NULL, NULL };
		for (int k = 0; k < 2; k++) {
			int idx = side * 2 + k;
			if (extra_of(c, md_names[idx])) {
				if (absent_mask(md[idx], &tmp[k], &n[k]) < 0) {
					free(tmp[0]);
					return oom(err);
				}
				m[k] = tmp[k];
			} else {
				m[k] = f->tmask[idx];
				n[k] = f->ntmask[idx];
			}
		}
		if (side == 0) {
			clear_slots(f->in, nin, m[0], n[0], m[1], n[1]);
			clear_slots(f->in, nin, f->smask, f->nsmask, NULL, 0);
		}
		else
			clear_slots(f->out, nout, m[0], n[0], m[1], n[1]);
		free(tmp[0]);
		free(tmp[1]);
	}
	return 0;
}

/* The shape cells: `"text"`, or empty when the text is empty. */
static int shape_cells(struct grid_file *f, size_t nin, size_t nout, struct perfdb_err *err)
{
	struct perfdb_strbuf *ic = &f->in_cell, *oc = &f->out_cell;
	perfdb_strbuf_reset(ic);
	perfdb_strbuf_reset(oc);
	int rc = perfdb_strbuf_addch(ic, '"');
	if (rc == 0)
		rc = grid_shape_text(f->in, nin, ic);
	if (rc == 0)
		rc = perfdb_strbuf_addch(ic, '"');
	if (rc == 0 && f->c_out >= 0) {
		rc = perfdb_strbuf_addch(oc, '"');
		if (rc == 0)
			rc = grid_shape_text(f->out, nout, oc);
		if (rc == 0)
			rc = perfdb_strbuf_addch(oc, '"');
	}
	if (rc < 0)
		return oom(err);
	if (ic->len == 2)
		perfdb_strbuf_reset(ic);
	if (oc->len == 2)
		perfdb_strbuf_reset(oc);
	return 0;
}

/* A kept row: its cells in the pool, its sort key, its extra columns. */
static int keep_row(struct grid_file *f, const struct grid_cand *c, size_t nin,
		    struct perfdb_err *err)
{
	struct perfdb_strbuf *ic = &f->in_cell, *oc = &f->out_cell;
	if (f->nrows == f->caprows) {
		size_t cap = f->caprows ? f->caprows * 2 : 256;
		struct krow *r = realloc(f->rows, cap * sizeof(*r));
		if (!r)
			return oom(err);
		f->rows = r;
		f->caprows = cap;
	}
	struct krow *r = &f->rows[f->nrows];
	r->seq = f->nrows;
	if (pool_cell(f, ic, &r->in_off, &r->in_len) < 0 ||
	    pool_cell(f, oc, &r->out_off, &r->out_len) < 0)
		return oom(err);
	/* sort key: the slots of the input cell (none for an empty cell) */
	size_t need = f->nkeys + nin * (GRID_MAX_DIMS + 1);
	if (need > f->capkeys) {
		size_t cap = f->capkeys ? f->capkeys : 4096;
		while (cap < need)
			cap *= 2;
		int64_t *k = realloc(f->keys, cap * sizeof(*k));
		if (!k)
			return oom(err);
		f->keys = k;
		f->capkeys = cap;
	}
	r->key_off = f->nkeys;
	r->key_slots = ic->len ? nin : 0;
	for (size_t i = 0; i < r->key_slots; i++) {
		f->keys[f->nkeys++] = f->in[i].nd;
		for (size_t d = 0; d < f->in[i].nd; d++)
			f->keys[f->nkeys++] = f->in[i].d[d];
	}
	r->ex_first = f->nex;
	r->nex = 0;
	for (size_t i = 0; i < c->nextra; i++) {
		long col = perfdb_table_col(f->t, c->extra_col[i]);
		if (col < 0)
			continue;   /* cannot happen: grid_file_new added the columns */
		if (f->nex == f->capex) {
			size_t cap = f->capex ? f->capex * 2 : 256;
			struct kex *e = realloc(f->ex, cap * sizeof(*e));
			if (!e)
				return oom(err);
			f->ex = e;
			f->capex = cap;
		}
		struct kex *e = &f->ex[f->nex++];
		e->col = (size_t)col;
		e->off = f->pool.len;
		e->len = strlen(c->extra_val[i]);
		if (perfdb_strbuf_add(&f->pool, c->extra_val[i], e->len) < 0)
			return oom(err);
		r->nex++;
	}
	return 0;
}

int grid_file_add(struct grid_file *f, const struct grid_cand *c, struct perfdb_err *err)
{
	f->st.considered++;
	size_t nin = c->nin > f->nt_in ? c->nin : f->nt_in;
	size_t nout = c->nout > f->nt_out ? c->nout : f->nt_out;
	if (nin > GRID_MAX_SLOTS * 2 || nout > GRID_MAX_SLOTS * 2)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the template row has more than %d "
				      "shape slots", f->t->name, GRID_MAX_SLOTS * 2);
	memcpy(f->in, c->in, c->nin * sizeof(c->in[0]));
	for (size_t i = c->nin; i < nin; i++)
		f->in[i].nd = 0;
	memcpy(f->out, c->out, c->nout * sizeof(c->out[0]));
	for (size_t i = c->nout; i < nout; i++)
		f->out[i].nd = 0;

	/* the row's metadata cells: the generator's value, else the template's */
	const char *md[MD_N];
	for (int k = 0; k < MD_N; k++) {
		md[k] = extra_of(c, md_names[k]);
		if (!md[k])
			md[k] = perfdb_table_get(f->t, 0, f->c_md[k]);
	}
	PERFDB_TRY(clear_absent(f, c, md, nin, nout, err));
	if (f->max_hbm &&
	    grid_hbm_estimate(f->in, nin, f->out, nout, md[MD_IN_DT], md[MD_OUT_DT]) > f->max_hbm) {
		f->st.hbm_filtered++;
		return 0;
	}

	PERFDB_TRY(shape_cells(f, nin, nout, err));
	if (over_time(f, md)) {
		f->st.time_filtered++;
		return 0;
	}
	struct perfdb_strbuf *ic = &f->in_cell, *oc = &f->out_cell;
	const char *ep = extra_of(c, PERFDB_COL_EP_SIZE);
	struct perfdb_sig_row sr = {
		.in_shapes = ic->buf,
		.in_dtypes = f->c_md[MD_IN_DT] >= 0 ? md[MD_IN_DT] : NULL,
		.in_formats = f->c_md[MD_IN_FMT] >= 0 ? md[MD_IN_FMT] : NULL,
		.out_shapes = f->c_out >= 0 ? oc->buf : NULL,
		.out_dtypes = f->c_md[MD_OUT_DT] >= 0 ? md[MD_OUT_DT] : NULL,
		.ep_size = ep ? ep : f->c_ep >= 0 ? perfdb_table_get(f->t, 0, f->c_ep) : NULL,
	};
	if (perfdb_sig_compute(f->op, &sr, &f->sig) < 0)
		return oom(err);
	if (perfdb_sig_index_find(&f->ix, f->sig.buf)) {
		f->st.duplicates++;
		return 0;
	}
	if (perfdb_sig_index_add(&f->ix, f->sig.buf, f->t->nrows + f->nrows) < 0)
		return oom(err);

	PERFDB_TRY(keep_row(f, c, nin, err));
	f->nrows++;
	f->st.kept++;
	return 0;
}

/* Python tuple-of-tuples order, then generation order (keys: the file's key array). */
static int cmp_rows(const void *pa, const void *pb, void *keys)
{
	const struct krow *a = pa, *b = pb;
	const int64_t *ka = (const int64_t *)keys + a->key_off, *kb = (const int64_t *)keys + b->key_off;
	size_t n = a->key_slots < b->key_slots ? a->key_slots : b->key_slots;
	for (size_t i = 0; i < n; i++) {
		int64_t na = *ka++, nb = *kb++;
		int64_t m = na < nb ? na : nb;
		for (int64_t d = 0; d < m; d++) {
			if (ka[d] != kb[d])
				return ka[d] < kb[d] ? -1 : 1;
		}
		if (na != nb)
			return na < nb ? -1 : 1;
		ka += na;
		kb += nb;
	}
	if (a->key_slots != b->key_slots)
		return a->key_slots < b->key_slots ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int put_row(struct grid_file *f, const struct krow *r, struct perfdb_strbuf *out)
{
	const struct perfdb_table *t = f->t;
	size_t ex = r->ex_first, exend = r->ex_first + r->nex;
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			PERFDB_TRY(perfdb_strbuf_addch(out, ','));
		const struct kex *hit = NULL;
		for (size_t k = ex; k < exend; k++)
			if (f->ex[k].col == c)
				hit = &f->ex[k];
		if (hit) {
			PERFDB_TRY(perfdb_csv_put_field(out, f->pool.buf + hit->off, hit->len));
		} else if ((long)c == f->c_in || (long)c == f->c_out) {
			size_t off = (long)c == f->c_in ? r->in_off : r->out_off;
			size_t len = (long)c == f->c_in ? r->in_len : r->out_len;
			if (len) {
				/* the cell holds quotes: `"text"` is written `"""text"""` */
				PERFDB_TRY(perfdb_strbuf_add(out, "\"\"\"", 3));
				PERFDB_TRY(perfdb_strbuf_add(out, f->pool.buf + off + 1, len - 2));
				PERFDB_TRY(perfdb_strbuf_add(out, "\"\"\"", 3));
			}
		} else {
			PERFDB_TRY(perfdb_strbuf_add(out, f->tesc.buf + f->tesc_off[c],
						     f->tesc_len[c]));
		}
	}
	return perfdb_strbuf_add(out, "\r\n", 2);
}

int grid_file_image(struct grid_file *f, const char *orig, size_t origlen,
		    struct perfdb_strbuf *out, struct perfdb_err *err)
{
	int rc;
	if (f->nadded == 0 && orig) {
		rc = perfdb_strbuf_add(out, orig, origlen);
		if (rc == 0 && origlen && orig[origlen - 1] != '\n' && orig[origlen - 1] != '\r')
			rc = perfdb_strbuf_add(out, "\r\n", 2);
	} else {
		rc = perfdb_table_serialize(f->t, out);
	}
	if (rc < 0)
		return oom(err);
	struct krow *sorted = malloc((f->nrows ? f->nrows : 1) * sizeof(*sorted));
	if (!sorted)
		return oom(err);
	memcpy(sorted, f->rows, f->nrows * sizeof(*sorted));
	qsort_r(sorted, f->nrows, sizeof(*sorted), cmp_rows, f->keys);
	rc = perfdb_strbuf_grow(out, f->nrows * (f->tesc.len + 64));
	for (size_t i = 0; rc == 0 && i < f->nrows; i++)
		rc = put_row(f, &sorted[i], out);
	free(sorted);
	return rc < 0 ? oom(err) : 0;
}

const char *grid_file_row_cell(struct grid_file *f, size_t i, const char *col,
			       struct perfdb_strbuf *scratch)
{
	if (i >= f->nrows)
		return NULL;
	long c = perfdb_table_col(f->t, col);
	if (c < 0)
		return NULL;
	const struct krow *r = &f->rows[i];
	perfdb_strbuf_reset(scratch);
	for (size_t k = r->ex_first; k < r->ex_first + r->nex; k++)
		if ((long)f->ex[k].col == c) {
			perfdb_strbuf_add(scratch, f->pool.buf + f->ex[k].off, f->ex[k].len);
			return scratch->buf;
		}
	if (c == f->c_in) {
		perfdb_strbuf_add(scratch, f->pool.buf + r->in_off, r->in_len);
	} else if (c == f->c_out) {
		perfdb_strbuf_add(scratch, f->pool.buf + r->out_off, r->out_len);
	} else {
		/* the template value: unescape the CSV field */
		const char *p = f->tesc.buf + f->tesc_off[c];
		size_t n = f->tesc_len[c];
		if (n >= 2 && p[0] == '"') {
			for (size_t k = 1; k + 1 < n; k++) {
				perfdb_strbuf_addch(scratch, p[k]);
				if (p[k] == '"')
					k++;
			}
		} else {
			perfdb_strbuf_add(scratch, p, n);
		}
	}
	return scratch->buf;
}
