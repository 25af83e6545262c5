/*
 * CPU trace conversions held for their target dtype (src/parse/trace_defer.h).
 */
#include "trace_defer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void perfdb_tdefer_init(struct perfdb_tdefer *d)
{
	memset(d, 0, sizeof(*d));
}

void perfdb_tdefer_release(struct perfdb_tdefer *d)
{
	for (size_t i = 0; i < d->n; i++)
		perfdb_strbuf_release(&d->v[i].s);
	free(d->v);
	perfdb_tdefer_init(d);
}

/*
 * Whether a call [ts, end) of the same thread lies inside the held one:
 * it ends within it, or starts before it ends.  Calls of one thread nest,
 * and a trace that writes whole us puts a child's end up to 1 us past its
 * parent's (predict's nesting, src/predict/trace_ops.c, reads them alike).
 */
static int inside(const struct perfdb_held *h, uint32_t thread, int64_t ts, int64_t end)
{
	return h->thread == thread && h->ts <= ts && (end <= h->end || ts < h->end);
}

static int is(const char *name, size_t len, const char *s)
{
	return strlen(s) == len && memcmp(name, s, len) == 0;
}

int perfdb_tdefer_wants(const char *name, size_t len)
{
	return is(name, len, "aten::to") || is(name, len, "aten::_to_copy");
}

int perfdb_tdefer_hold(struct perfdb_tdefer *d, const struct perfdb_kernel_row *row)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct perfdb_held *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	struct perfdb_held *h = &d->v[d->n];
	memset(h, 0, sizeof(*h));
	perfdb_strbuf_init(&h->s);
	h->thread = row->thread;
	h->ts = row->ts_ns;
	h->end = row->end_ns;
	const struct perfdb_span f[7] = { row->type, row->name, row->trace_name, row->in_shapes,
					  row->in_dtypes, row->in_formats, row->duration };
	for (int i = 0; i < 7; i++) {
		h->off[i] = h->s.len;
		h->len[i] = f[i].len;
		if (perfdb_strbuf_add(&h->s, f[i].p, f[i].len) < 0 || perfdb_strbuf_addch(&h->s, '\0') < 0) {
			perfdb_strbuf_release(&h->s);
			return -PERFDB_ENOMEM;
		}
	}
	d->n++;
	for (size_t i = 0; i < d->nseen && i < PERFDB_TDEFER_SEEN; i++) {
		const struct perfdb_seen_copy *c = &d->seen[i];
		if (inside(h, c->thread, c->ts, c->end) && !h->out_dtype[0])
			snprintf(h->out_dtype, sizeof(h->out_dtype), "%s", c->dtype);
	}
	return 0;
}

void perfdb_tdefer_copy(struct perfdb_tdefer *d, const struct perfdb_kernel_row *copy)
{
	const char *p = copy->in_dtypes.p, *semi = memchr(p, ';', copy->in_dtypes.len);
	size_t n = semi ? (size_t)(semi - p) : copy->in_dtypes.len;
	if (!n || n >= sizeof(d->seen[0].dtype))
		return;   /* dst recorded without a dtype: nothing to learn */
	struct perfdb_seen_copy *sc = &d->seen[d->nseen++ % PERFDB_TDEFER_SEEN];
	*sc = (struct perfdb_seen_copy){ copy->thread, copy->ts_ns, copy->end_ns, "" };
	memcpy(sc->dtype, p, n);
	for (size_t i = 0; i < d->n; i++) {
		struct perfdb_held *h = &d->v[i];
		if (inside(h, copy->thread, copy->ts_ns, copy->end_ns) && !h->out_dtype[0])
			snprintf(h->out_dtype, sizeof(h->out_dtype), "%.*s", (int)n, p);
	}
}

int perfdb_tdefer_flush(struct perfdb_tdefer *d, uint32_t thread, int64_t ts, int all,
			int (*emit)(void *ctx, const struct perfdb_held *h, struct perfdb_err *err),
			void *ctx, struct perfdb_err *err)
{
	size_t kept = 0;
	int rc = 0;
	for (size_t i = 0; i < d->n; i++) {
		struct perfdb_held *h = &d->v[i];
		if (rc == 0 && (all || (h->thread == thread && h->end < ts))) {
			rc = emit(ctx, h, err);
			perfdb_strbuf_release(&h->s);
			continue;
		}
		if (rc < 0 && all) {
			perfdb_strbuf_release(&h->s);
			continue;
		}
		d->v[kept++] = *h;
	}
	d->n = kept;
	return rc;
}

struct perfdb_span perfdb_held_field(const struct perfdb_held *h, int i)
{
	return (struct perfdb_span){ h->s.buf + h->off[i], h->len[i] };
}

int perfdb_held_row(const struct perfdb_held *h, struct perfdb_kernel_row *row, struct perfdb_strbuf *outs,
		    struct perfdb_strbuf *outt, struct perfdb_strbuf *outf)
{
	row->thread = h->thread;
	row->timed = 1;
	row->ts_ns = h->ts;
	row->end_ns = h->end;
	row->type = perfdb_held_field(h, 0);
	row->name = perfdb_held_field(h, 1);
	row->trace_name = perfdb_held_field(h, 2);
	row->in_shapes = perfdb_held_field(h, 3);
	row->in_dtypes = perfdb_held_field(h, 4);
	row->in_formats = perfdb_held_field(h, 5);
	row->duration = perfdb_held_field(h, 6);
	row->accel_core = (struct perfdb_span){ "CPU", 3 };
	if (!h->out_dtype[0])
		return 0;
	/* the output: the input's shape (slot 0) in the dtype copy_ wrote */
	struct perfdb_span in = row->in_shapes;
	size_t q = in.len && in.p[0] == '"', n = 0;
	while (q + n < in.len && in.p[q + n] != ';' && in.p[q + n] != '"')
		n++;
	perfdb_strbuf_reset(outs);
	perfdb_strbuf_reset(outt);
	perfdb_strbuf_reset(outf);
	if (perfdb_strbuf_addf(outs, "\"%.*s\"", (int)n, in.p + q) < 0 ||
	    perfdb_strbuf_addstr(outt, h->out_dtype) < 0 || perfdb_strbuf_addstr(outf, "ND") < 0)
		return -PERFDB_ENOMEM;
	row->out_shapes = (struct perfdb_span){ outs->buf, outs->len };
	row->out_dtypes = (struct perfdb_span){ outt->buf, outt->len };
	row->out_formats = (struct perfdb_span){ outf->buf, outf->len };
	return 0;
}
