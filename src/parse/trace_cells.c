/*
 * cpu_op input cells (src/parse/trace_cells.h): docs/spec/parse.md §2 (shape
 * cells keep literal quotes and empty slots).
 */
#include "trace_cells.h"

#include <stdint.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"

/* torch records a tensor's dtype as caffe2::TypeMeta::name(), the C++ type
 * name as the compiler spells it (GCC: "long int"; clang: "long").  These
 * spellings mark a tensor even when it has no dims (0-d). */
static const struct {
	const char *spelling;
	enum perfdb_dtype type;
} torch_types[] = {
	{ "float", PERFDB_DTYPE_FLOAT },
	{ "double", PERFDB_DTYPE_FLOAT64 },
	{ "c10::Half", PERFDB_DTYPE_FLOAT16 },
	{ "c10::BFloat16", PERFDB_DTYPE_BF16 },
	{ "signed char", PERFDB_DTYPE_INT8 },
	{ "unsigned char", PERFDB_DTYPE_UINT8 },
	{ "short int", PERFDB_DTYPE_INT16 },
	{ "short", PERFDB_DTYPE_INT16 },
	{ "short unsigned int", PERFDB_DTYPE_UINT16 },
	{ "unsigned short", PERFDB_DTYPE_UINT16 },
	{ "int", PERFDB_DTYPE_INT32 },
	{ "unsigned int", PERFDB_DTYPE_UINT32 },
	{ "long int", PERFDB_DTYPE_INT64 },
	{ "long", PERFDB_DTYPE_INT64 },
	{ "long long int", PERFDB_DTYPE_INT64 },
	{ "long long", PERFDB_DTYPE_INT64 },
	{ "long unsigned int", PERFDB_DTYPE_UINT64 },
	{ "unsigned long", PERFDB_DTYPE_UINT64 },
	{ "long long unsigned int", PERFDB_DTYPE_UINT64 },
	{ "unsigned long long", PERFDB_DTYPE_UINT64 },
	{ "bool", PERFDB_DTYPE_BOOL },
	{ "c10::Float8_e4m3fn", PERFDB_DTYPE_FLOAT8_E4M3FN },
	{ "c10::Float8_e5m2", PERFDB_DTYPE_FLOAT8_E5M2 },
	{ "c10::complex<float>", PERFDB_DTYPE_COMPLEX64 },
	/* c10::ScalarType names: record_param_comms' "dtype" (newer Kineto) */
	{ "Float", PERFDB_DTYPE_FLOAT },
	{ "Double", PERFDB_DTYPE_FLOAT64 },
	{ "Half", PERFDB_DTYPE_FLOAT16 },
	{ "BFloat16", PERFDB_DTYPE_BF16 },
	{ "Char", PERFDB_DTYPE_INT8 },
	{ "Byte", PERFDB_DTYPE_UINT8 },
	{ "Short", PERFDB_DTYPE_INT16 },
	{ "Int", PERFDB_DTYPE_INT32 },
	{ "Long", PERFDB_DTYPE_INT64 },
	{ "Bool", PERFDB_DTYPE_BOOL },
	{ "Float8_e4m3fn", PERFDB_DTYPE_FLOAT8_E4M3FN },
	{ "Float8_e5m2", PERFDB_DTYPE_FLOAT8_E5M2 },
};

enum perfdb_dtype perfdb_tcells_dtype(struct perfdb_span s)
{
	for (size_t i = 0; i < sizeof(torch_types) / sizeof(torch_types[0]); i++)
		if (strlen(torch_types[i].spelling) == s.len &&
		    memcmp(torch_types[i].spelling, s.p, s.len) == 0)
			return torch_types[i].type;
	return PERFDB_DTYPE_UNKNOWN;
}

void perfdb_tcells_init(struct perfdb_tcells *c)
{
	perfdb_strbuf_init(&c->shapes);
	perfdb_strbuf_init(&c->dtypes);
	perfdb_strbuf_init(&c->formats);
	c->nslots = 0;
}

void perfdb_tcells_release(struct perfdb_tcells *c)
{
	perfdb_strbuf_release(&c->shapes);
	perfdb_strbuf_release(&c->dtypes);
	perfdb_strbuf_release(&c->formats);
}

/* One slot: dims "8,64" (no brackets), its type, and whether it is an
 * element of a tensor list (a tensor whatever its dims). */
static int put_slot(struct perfdb_tcells *c, struct perfdb_span dims, struct perfdb_span type,
		    int list_elem)
{
	int rc = 0;
	if (c->nslots++ > 0) {
		rc |= perfdb_strbuf_addch(&c->shapes, ';');
		rc |= perfdb_strbuf_addch(&c->dtypes, ';');
		rc |= perfdb_strbuf_addch(&c->formats, ';');
	}
	rc |= perfdb_strbuf_add(&c->shapes, dims.p, dims.len);
	enum perfdb_dtype t = perfdb_tcells_dtype(type);
	if (t != PERFDB_DTYPE_UNKNOWN) {
		rc |= perfdb_strbuf_addstr(&c->dtypes, perfdb_dtype_profiler_name(t));
		rc |= perfdb_strbuf_addstr(&c->formats, "ND");
	} else if (dims.len > 0 || list_elem) {
		size_t at = c->dtypes.len;
		enum perfdb_dtype known = perfdb_dtype_parse(type);
		if (known != PERFDB_DTYPE_UNKNOWN)
			rc |= perfdb_strbuf_addstr(&c->dtypes, perfdb_dtype_profiler_name(known));
		else
			rc |= perfdb_dtype_canonical(type, &c->dtypes);
		/* a verbatim token must not split the cell into extra slots */
		for (size_t k = at; k < c->dtypes.len; k++)
			if (c->dtypes.buf[k] == ';')
				c->dtypes.buf[k] = '_';
		rc |= perfdb_strbuf_addstr(&c->formats, "ND");
	}
	return rc ? -PERFDB_ENOMEM : 0;
}

/* "[ints]" at p: the span of the ints, p moved past ']'; 0 if not. */
static int int_list(const char **p, const char *e, struct perfdb_span *out)
{
	const char *q = *p;
	if (q >= e || *q != '[')
		return 0;
	const char *s = ++q;
	while (q < e && *q != ']') {
		if (*q == '[')
			return 0;
		q++;
	}
	if (q >= e)
		return 0;
	out->p = s;
	out->len = (size_t)(q - s);
	*p = q + 1;
	return 1;
}

int perfdb_tcells_build(struct perfdb_tcells *c, const char *dims, size_t dlen,
			const char *types, size_t tlen)
{
	perfdb_strbuf_reset(&c->shapes);
	perfdb_strbuf_reset(&c->dtypes);
	perfdb_strbuf_reset(&c->formats);
	c->nslots = 0;
	c->unshaped_list = 0;
	const char *p = dims, *e = dims + dlen, *tp = types, *te = types + tlen;
	if (p >= e || *p != '[')
		return 1;
	p++;
	if (p < e && *p == ']')
		return p + 1 == e ? 0 : 1;
	PERFDB_TRY(perfdb_strbuf_addch(&c->shapes, '"') < 0 ? -PERFDB_ENOMEM : 0);
	for (;;) {
		struct perfdb_span type = { "", 0 };
		if (tp < te) {
			const char *q = memchr(tp, '\x1e', (size_t)(te - tp));
			if (!q)
				q = te;
			type = (struct perfdb_span){ tp, (size_t)(q - tp) };
			tp = q < te ? q + 1 : te;
		}
		struct perfdb_span d;
		if (p + 1 < e && p[0] == '[' && p[1] == '[') {
			/* a tensor list: one slot per tensor */
			p++;
			for (;;) {
				if (!int_list(&p, e, &d))
					return 1;
				PERFDB_TRY(put_slot(c, d, type, 1));
				if (p < e && *p == ',') {
					p++;
					continue;
				}
				if (p < e && *p == ']') {
					p++;
					break;
				}
				return 1;
			}
		} else {
			if (!int_list(&p, e, &d))
				return 1;
			if (d.len == 0 && type.len == 10 && memcmp(type.p, "TensorList", 10) == 0)
				c->unshaped_list = 1;
			PERFDB_TRY(put_slot(c, d, type, 0));
		}
		if (p < e && *p == ',') {
			p++;
			continue;
		}
		if (p < e && *p == ']' && p + 1 == e)
			break;
		return 1;
	}
	return perfdb_strbuf_addch(&c->shapes, '"') < 0 ? -PERFDB_ENOMEM : 0;
}

/* The next innermost "[ints]" at or after *p: its span, *p moved past it. */
static int next_slot(const char **p, const char *e, struct perfdb_span *out)
{
	const char *q = *p;
	for (; q < e; q++) {
		if (*q != '[' || (q + 1 < e && q[1] == '['))
			continue;
		const char *s = q + 1, *t = memchr(s, ']', (size_t)(e - s));
		if (!t)
			return 0;
		*out = (struct perfdb_span){ s, (size_t)(t - s) };
		*p = t + 1;
		return 1;
	}
	return 0;
}

/* Strides st are those of a contiguous tensor of dims d. */
static int contiguous(const int64_t *d, const int64_t *st, size_t n)
{
	int64_t expect = 1;
	for (size_t i = n; i-- > 0;) {
		if (d[i] != 1 && st[i] != expect)
			return 0;
		expect *= d[i];
	}
	return 1;
}

int perfdb_tcells_strides(const char *dims, size_t dlen, const char *strides, size_t slen,
			  struct perfdb_strbuf *out)
{
	enum { MAXR = 64 };   /* torch's own limit on a tensor's rank */
	perfdb_strbuf_reset(out);
	const char *dp = dims, *de = dims + dlen, *sp = strides, *se = strides + slen;
	struct perfdb_span ds, ss;
	int strided = 0, slots = 0, ok = 1;
	while (next_slot(&dp, de, &ds)) {
		if (!next_slot(&sp, se, &ss)) {
			ok = 0;
			break;
		}
		/* the shape cells' one tokenizer; a stride that is not an integer
		 * >= 0 makes the list mean nothing certain, as a rank mismatch does */
		int64_t d[MAXR], st[MAXR];
		size_t nd, ns;
		struct perfdb_err e;
		if (perfdb_shape_parse_dims(ds, d, MAXR, &nd, &e) < 0 ||
		    perfdb_shape_parse_dims(ss, st, MAXR, &ns, &e) < 0 || (nd != ns && ns != 0)) {
			ok = 0;   /* a tensor's strides must match its rank */
			break;
		}
		if (nd > 0 && ns == nd && !contiguous(d, st, nd))
			strided = 1;
		if (perfdb_strbuf_addch(out, slots++ ? ';' : '"') < 0 ||
		    perfdb_strbuf_add(out, ss.p, ss.len) < 0)
			return -PERFDB_ENOMEM;
	}
	if (ok && next_slot(&sp, se, &ss))
		ok = 0;   /* more stride slots than dims */
	if (!ok || !strided || !slots) {
		perfdb_strbuf_reset(out);
		return 0;
	}
	return perfdb_strbuf_addch(out, '"') < 0 ? -PERFDB_ENOMEM : 0;
}
