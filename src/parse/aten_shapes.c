/*
 * Output cells of PyTorch op calls (aten_shapes.h; docs/chrome_trace.md
 * "Output cells").  The rules are aten's: elementwise ops broadcast their
 * tensor inputs (numpy rules, right-aligned, a 1 stretches), comparisons
 * give bool, in-place and same-shape ops give their first input's shape,
 * the GEMMs give (…, M, N).  Anything whose output depends on a scalar
 * argument the trace does not record (a reduction's dim, cat's dim, to's
 * dtype, view shapes) is left unknown rather than guessed.
 */
#include "aten_shapes.h"

#include <errno.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"

#define MAX_SLOTS 64
#define MAX_RANK 16

struct tens {
	int present;              /* a tensor (dims or a dtype), not a scalar slot */
	int rank;
	int64_t d[MAX_RANK];
	const char *dt;           /* its dtype cell, not NUL-terminated */
	size_t dtlen;
};

enum kind { K_NONE, K_SELF, K_BINARY, K_COMPARE, K_MM, K_ADDMM, K_BMM, K_BADDBMM, K_LINEAR,
	    K_MATMUL, K_EMBEDDING };

static const struct {
	const char *op;
	enum kind k;
} ops[] = {
	/* same shape and dtype as input 0 (in-place ops write input 0) */
	{ "neg", K_SELF }, { "tanh", K_SELF }, { "sigmoid", K_SELF }, { "exp", K_SELF },
	{ "exp_", K_SELF }, { "log", K_SELF }, { "log_", K_SELF }, { "log2", K_SELF },
	{ "log10", K_SELF }, { "sqrt", K_SELF }, { "rsqrt", K_SELF }, { "relu", K_SELF },
	{ "relu_", K_SELF }, { "silu", K_SELF }, { "silu_", K_SELF }, { "gelu", K_SELF },
	{ "clamp", K_SELF }, { "clamp_", K_SELF }, { "clamp_min", K_SELF }, { "nan_to_num", K_SELF },
	{ "logit", K_SELF }, { "abs", K_SELF }, { "reciprocal", K_SELF }, { "fill_", K_SELF },
	{ "zero_", K_SELF }, { "copy_", K_SELF }, { "clone", K_SELF }, { "contiguous", K_SELF },
	{ "softmax", K_SELF }, { "_softmax", K_SELF }, { "log_softmax", K_SELF },
	{ "_log_softmax", K_SELF }, { "masked_fill", K_SELF }, { "masked_fill_", K_SELF },
	{ "threshold_backward", K_SELF }, { "sigmoid_backward", K_SELF }, { "tanh_backward", K_SELF },
	{ "logit_backward", K_SELF }, { "gelu_backward", K_SELF }, { "silu_backward", K_SELF },
	{ "_softmax_backward_data", K_SELF }, { "dropout", K_SELF }, { "native_dropout", K_SELF },
	{ "scatter_", K_SELF }, { "scatter_add_", K_SELF }, { "index_put_", K_SELF },
	{ "_index_put_impl_", K_SELF }, { "cumsum", K_SELF }, { "triu", K_SELF }, { "tril", K_SELF },
	{ "rms_norm", K_SELF }, { "_fused_rms_norm", K_SELF }, { "layer_norm", K_SELF },
	{ "native_layer_norm", K_SELF }, { "add_", K_SELF }, { "sub_", K_SELF }, { "mul_", K_SELF },
	{ "div_", K_SELF }, { "pow_", K_SELF }, { "addcmul_", K_SELF }, { "addcdiv_", K_SELF },
	{ "bitwise_not", K_SELF },
	/* broadcast of the tensor inputs, input 0's dtype */
	{ "add", K_BINARY }, { "sub", K_BINARY }, { "mul", K_BINARY }, { "div", K_BINARY },
	{ "pow", K_BINARY }, { "rsub", K_BINARY }, { "maximum", K_BINARY }, { "minimum", K_BINARY },
	{ "addcmul", K_BINARY }, { "addcdiv", K_BINARY },
	/* broadcast, bool */
	{ "eq", K_COMPARE }, { "ne", K_COMPARE }, { "ge", K_COMPARE }, { "gt", K_COMPARE },
	{ "le", K_COMPARE }, { "lt", K_COMPARE }, { "logical_and", K_COMPARE },
	{ "logical_or", K_COMPARE }, { "logical_xor", K_COMPARE }, { "logical_not", K_COMPARE },
	{ "mm", K_MM }, { "addmm", K_ADDMM }, { "bmm", K_BMM }, { "baddbmm", K_BADDBMM },
	{ "linear", K_LINEAR }, { "matmul", K_MATMUL }, { "embedding", K_EMBEDDING },
};

static enum kind kind_of(const char *table, size_t tlen)
{
	/* aten ops only: the table is "aten." + the op (an overload is "%2E…": not taken) */
	if (tlen <= 5 || memcmp(table, "aten.", 5) != 0)
		return K_NONE;
	const char *op = table + 5;
	size_t n = tlen - 5;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].op) == n && memcmp(ops[i].op, op, n) == 0)
			return ops[i].k;
	return K_NONE;
}

/* The slots of the cells; returns the count, or -1 on a shape it cannot read. */
static int read_slots(const char *s, size_t slen, const char *dt, size_t dlen, struct tens *t)
{
	if (slen >= 2 && s[0] == '"' && s[slen - 1] == '"') {
		s++;
		slen -= 2;
	}
	int n = 0;
	const char *p = s, *e = s + slen, *q = dt, *qe = dt + dlen;
	for (;;) {
		if (n == MAX_SLOTS)
			return -1;
		const char *end = memchr(p, ';', (size_t)(e - p));
		if (!end)
			end = e;
		const char *qend = q < qe ? memchr(q, ';', (size_t)(qe - q)) : NULL;
		if (!qend)
			qend = qe;
		struct tens *x = &t[n++];
		memset(x, 0, sizeof(*x));
		x->dt = q;
		x->dtlen = (size_t)(qend - q);
		x->present = end > p || x->dtlen > 0;
		for (const char *c = p; c < end;) {
			if (x->rank == MAX_RANK)
				return -1;
			char *stop;
			errno = 0;
			long long v = strtoll(c, &stop, 10);
			/* a dim past int64 is refused whole: strtoll's clamp would write a shape nobody recorded */
			if (stop == c || v < 0 || stop > end || errno == ERANGE)
				return -1;
			x->d[x->rank++] = v;
			c = stop;
			if (c < end && *c == ',')
				c++;
			else if (c < end)
				return -1;
		}
		if (end == e)
			break;
		p = end + 1;
		q = qend < qe ? qend + 1 : qe;
	}
	return n;
}

/* Broadcast b into a (numpy rules); 0 when they do not broadcast. */
static int broadcast(struct tens *a, const struct tens *b)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	int64_t d[MAX_RANK];
	for (int i = 0; i < r; i++) {
		int ia = a->rank - r + i, ib = b->rank - r + i;
		int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
		if (x != y && x != 1 && y != 1)
			return 0;
		d[i] = x == 1 ? y : x;
	}
	a->rank = r;
	memcpy(a->d, d, sizeof(d[0]) * (size_t)r);
	return 1;
}

/* A (…, M, K) x (…, K, N) product with broadcast batch dims into o; 0 when K differs. */
static int product(const struct tens *a, const struct tens *b, int btrans, struct tens *o)
{
	if (a->rank < 1 || b->rank < 1)
		return 0;
	/* aten.matmul's 1-D rules: a vector is a row (left) or a column (right), dropped after */
	struct tens x = *a, y = *b;
	int vl = x.rank == 1, vr = y.rank == 1 && !btrans;
	if (vl) {
		x.rank = 2;
		x.d[1] = x.d[0];
		x.d[0] = 1;
	}
	if (vr) {
		y.rank = 2;
		y.d[1] = 1;
	}
	if (y.rank < 2)
		return 0;
	int64_t m = x.d[x.rank - 2], k = x.d[x.rank - 1];
	int64_t kb = btrans ? y.d[y.rank - 1] : y.d[y.rank - 2], n = btrans ? y.d[y.rank - 2] : y.d[y.rank - 1];
	if (k != kb)
		return 0;
	struct tens bx = x, by = y;
	bx.rank -= 2;
	by.rank -= 2;
	if (!broadcast(&bx, &by))
		return 0;
	*o = bx;
	if (!vl)
		o->d[o->rank++] = m;
	if (!vr)
		o->d[o->rank++] = n;
	o->dt = a->dt;
	o->dtlen = a->dtlen;
	return 1;
}

/* The tensors among the slots, in order, at most max. */
static int tensors(struct tens *t, int n, const struct tens **v, int max)
{
	int c = 0;
	for (int i = 0; i < n && c < max; i++)
		if (t[i].present)
			v[c++] = &t[i];
	return c;
}

int perfdb_aten_output(const char *table, size_t tlen, const char *shapes, size_t slen,
		       const char *dtypes, size_t dlen, struct perfdb_strbuf *out_shapes,
		       struct perfdb_strbuf *out_dtypes, struct perfdb_strbuf *out_formats)
{
	enum kind k = kind_of(table, tlen);
	if (k == K_NONE)
		return 0;
	struct tens t[MAX_SLOTS], o;
	int n = read_slots(shapes, slen, dtypes, dlen, t);
	if (n < 1)
		return 0;
	const struct tens *v[4];
	int nt = tensors(t, n, v, 4);
	const char *dt = NULL;
	size_t dtl = 0;
	switch (k) {
	case K_SELF:
		if (!t[0].present)
			return 0;
		o = t[0];
		break;
	case K_BINARY:
	case K_COMPARE:
		if (!t[0].present)
			return 0;
		o = t[0];
		for (int i = 1; i < n; i++)
			if (t[i].present && !broadcast(&o, &t[i]))
				return 0;
		if (k == K_COMPARE) {
			dt = "BOOL";
			dtl = 4;
		}
		break;
	case K_MM:
		if (nt < 2 || v[0]->rank != 2 || v[1]->rank != 2 || !product(v[0], v[1], 0, &o))
			return 0;
		break;
	case K_ADDMM:
		if (nt < 3 || v[1]->rank != 2 || v[2]->rank != 2 || !product(v[1], v[2], 0, &o))
			return 0;
		break;
	case K_BMM:
		if (nt < 2 || v[0]->rank != 3 || v[1]->rank != 3 || v[0]->d[0] != v[1]->d[0] ||
		    !product(v[0], v[1], 0, &o))
			return 0;
		break;
	case K_BADDBMM:
		if (nt < 3 || v[1]->rank != 3 || v[2]->rank != 3 || v[1]->d[0] != v[2]->d[0] ||
		    !product(v[1], v[2], 0, &o))
			return 0;
		break;
	case K_LINEAR:
		/* weight (N, K) or (K) */
		if (nt < 2 || v[0]->rank < 1 || v[1]->rank < 1 || v[1]->rank > 2)
			return 0;
		if (v[1]->rank == 1) {
			if (v[0]->d[v[0]->rank - 1] != v[1]->d[0])
				return 0;
			o = *v[0];
			o.rank--;
		} else {
			struct tens w = *v[1];
			w.rank = 2;
			if (v[0]->d[v[0]->rank - 1] != w.d[1])
				return 0;
			o = *v[0];
			o.d[o.rank - 1] = w.d[0];
		}
		break;
	case K_MATMUL:
		if (nt < 2 || !product(v[0], v[1], 0, &o))
			return 0;
		break;
	case K_EMBEDDING:
		/* weight (V, D), indices (…) -> (…, D), the weight's dtype */
		if (nt < 2 || v[0]->rank != 2 || v[1]->rank >= MAX_RANK)
			return 0;
		o = *v[1];
		o.d[o.rank++] = v[0]->d[1];
		o.dt = v[0]->dt;
		o.dtlen = v[0]->dtlen;
		break;
	default:
		return 0;
	}
	if (!dt) {
		dt = o.dt;
		dtl = o.dtlen;
	}
	perfdb_strbuf_reset(out_shapes);
	perfdb_strbuf_reset(out_dtypes);
	perfdb_strbuf_reset(out_formats);
	int rc = perfdb_strbuf_addch(out_shapes, '"');
	for (int i = 0; i < o.rank && rc == 0; i++)
		rc = perfdb_strbuf_addf(out_shapes, "%s%lld", i ? "," : "", (long long)o.d[i]);
	if (rc == 0)
		rc = perfdb_strbuf_addch(out_shapes, '"');
	if (rc == 0)
		rc = perfdb_strbuf_add(out_dtypes, dt, dtl);
	if (rc == 0)
		rc = perfdb_strbuf_addstr(out_formats, "ND");
	return rc < 0 ? -PERFDB_ENOMEM : 1;
}
