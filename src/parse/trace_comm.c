/*
 * Collectives in PyTorch traces (src/parse/trace_comm.h; docs/chrome_trace.md
 * "Collectives").
 */
#include "trace_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "perfdb/shape.h"
#include "trace_cells.h"
#include "parse/chrome_trace.h"

static int put_field(struct perfdb_strbuf *out, const struct perfdb_tfield *f)
{
	int rc = perfdb_strbuf_addch(out, '\x1e');
	if (f->kind == PERFDB_TV_NUM || f->kind == PERFDB_TV_STR)
		for (size_t i = 0; i < f->text.len && rc == 0; i++)
			/* a separator inside a name must not split the key */
			rc = perfdb_strbuf_addch(out, f->text.buf[i] == '\x1e' || f->text.buf[i] == '\x1f' ?
						 '_' : f->text.buf[i]);
	return rc;
}

int perfdb_tcomm_key(const struct perfdb_tevent *ev, int annotation, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	if (annotation)
		return perfdb_strbuf_addch(out, 'A');
	if (ev->f[PERFDB_TF_COLL].kind != PERFDB_TV_STR)
		return 0;
	int rc = perfdb_strbuf_addch(out, 'R');
	for (int i = PERFDB_TF_COLL; i <= PERFDB_TF_GROUP && rc == 0; i++)
		rc = put_field(out, &ev->f[i]);
	return rc;
}

/* A whole decimal integer > 0, else 0. */
static long long count_of(struct perfdb_span s)
{
	if (!s.len || s.len > 18)
		return 0;
	long long v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return 0;
		v = v * 10 + (s.p[i] - '0');
	}
	return v;
}

/* The next piece of *s up to sep (or the end). */
static struct perfdb_span next(struct perfdb_span *s, char sep)
{
	const char *q = memchr(s->p, sep, s->len);
	size_t n = q ? (size_t)(q - s->p) : s->len;
	struct perfdb_span r = { s->p, n };
	s->p += q ? n + 1 : n;
	s->len -= q ? n + 1 : n;
	return r;
}

/* record_param_comms' "allreduce" / "_allgather_base" as the process group's
 * annotation spells the op (`all_reduce`, `_all_gather_base`), so that a
 * collective lands in one table whichever Kineto recorded it. */
static void title_of(struct perfdb_span coll, char *buf, size_t cap)
{
	size_t lead = coll.len && coll.p[0] == '_';
	const char *p = coll.p + lead;
	size_t n = coll.len - lead;
	if (n >= 9 && (memcmp(p, "allreduce", 9) == 0 || memcmp(p, "allgather", 9) == 0))
		snprintf(buf, cap, "%.*sall_%.*s", (int)lead, coll.p, (int)(n - 3), p + 3);
	else
		snprintf(buf, cap, "%.*s", (int)coll.len, coll.p);
}

static void from_args(struct perfdb_span meta, const struct perfdb_tmeta *tm, struct perfdb_tcomm *c)
{
	next(&meta, '\x1e');   /* "R" */
	struct perfdb_span coll = next(&meta, '\x1e'), dt = next(&meta, '\x1e');
	long long in = count_of(next(&meta, '\x1e')), out = count_of(next(&meta, '\x1e'));
	long long group = count_of(next(&meta, '\x1e'));
	const char *be = tm->has_dist && tm->backend[0] ? tm->backend : "c10d";
	char title[64];
	title_of(coll, title, sizeof(title));
	snprintf(c->name, sizeof(c->name), "%s:%s", be, title);
	enum perfdb_dtype t = perfdb_tcells_dtype(dt);
	snprintf(c->shapes, sizeof(c->shapes), "\"%lld\"", in);
	snprintf(c->dtypes, sizeof(c->dtypes), "%s", t ? perfdb_dtype_profiler_name(t) : "");
	snprintf(c->backend, sizeof(c->backend), "profiled:%s", be);
	int op = perfdb_comm_obs_op(coll.p, coll.len);
	if (op < 0)
		return;
	size_t esz = perfdb_dtype_bytes(t, 1);
	/* per rank: reduce_scatter's output, every other op's input (docs/comm.md) */
	long long elems = op == PERFDB_COMM_REDUCE_SCATTER ? out : in;
	if (group <= 0)
		c->skip = "no group size";
	else if (!esz)
		c->skip = "a dtype of unknown size";
	else if (elems <= 0)
		c->skip = "no message size";
	if (c->skip)
		return;
	c->has_obs = 1;
	c->obs = (struct perfdb_comm_obs){ (enum perfdb_comm_op)op, elems * (long long)esz, (long)group,
					   perfdb_comm_obs_dtype(t), c->backend, 0 };
}

/* The bytes of every tensor slot of the cells (a coalesced call lists
 * several), each by its own dtype; -1 when a slot has no tensor shape, no
 * elements or no dtype size.  *first: slot 0's dtype. */
static int slot_bytes(struct perfdb_span shapes, struct perfdb_span dtypes, long long *bytes,
		      enum perfdb_dtype *first)
{
	struct perfdb_slots ss, ds;
	perfdb_slots_init(&ss);
	perfdb_slots_init(&ds);
	int rc = perfdb_shape_split_slots(shapes, &ss) < 0 || perfdb_shape_split_slots(dtypes, &ds) < 0 ?
		-PERFDB_ENOMEM : 0;
	*bytes = 0;
	*first = PERFDB_DTYPE_UNKNOWN;
	size_t n = ss.n > ds.n ? ss.n : ds.n;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct perfdb_span sh = i < ss.n ? ss.v[i] : (struct perfdb_span){ "", 0 };
		enum perfdb_dtype t = perfdb_dtype_parse(i < ds.n ? ds.v[i] : (struct perfdb_span){ "", 0 });
		if (i == 0)
			*first = t;
		int64_t d[PERFDB_SHAPE_MAX_DIMS], numel = 0;
		size_t nd, esz = perfdb_dtype_bytes(t, 1);
		struct perfdb_err e;
		if (!perfdb_shape_slot_is_null(sh) &&
		    perfdb_shape_parse_dims(sh, d, PERFDB_SHAPE_MAX_DIMS, &nd, &e) == 0)
			numel = perfdb_shape_numel(d, nd);
		if (!esz || numel <= 0 || numel > (INT64_MAX - *bytes) / (int64_t)esz) {
			*bytes = -1;
			break;
		}
		*bytes += numel * (long long)esz;
	}
	perfdb_slots_release(&ss);
	perfdb_slots_release(&ds);
	return rc;
}

static int from_annotation(struct perfdb_span name, struct perfdb_span shapes,
			   struct perfdb_span dtypes, const struct perfdb_tmeta *tm,
			   struct perfdb_tcomm *c)
{
	struct perfdb_span be = next(&name, ':');   /* name is now the collective */
	snprintf(c->backend, sizeof(c->backend), "profiled:%.*s", (int)be.len, be.p);
	int op = perfdb_comm_obs_op(name.p, name.len);
	if (op < 0)
		return 0;
	long long bytes;
	enum perfdb_dtype first;
	PERFDB_TRY(slot_bytes(shapes, dtypes, &bytes, &first));
	long group = tm->has_dist && tm->world_size > 0 ? (long)tm->world_size : 0;
	if (!group)
		c->skip = "no group size (the trace has no distributedInfo world_size)";
	else if (bytes <= 0)
		c->skip = "no message size";
	if (c->skip)
		return 0;
	/* the annotation lists the op's input: reduce_scatter's is the n ranks' whole */
	if (op == PERFDB_COMM_REDUCE_SCATTER)
		bytes /= group;
	c->has_obs = 1;
	c->obs = (struct perfdb_comm_obs){ (enum perfdb_comm_op)op, bytes, group,
					   perfdb_comm_obs_dtype(first), c->backend, 0 };
	return 0;
}

int perfdb_tcomm_resolve(struct perfdb_span name, struct perfdb_span shapes,
			 struct perfdb_span dtypes, struct perfdb_span meta,
			 const struct perfdb_tmeta *tm, struct perfdb_tcomm *out)
{
	memset(out, 0, sizeof(*out));
	if (!meta.len)
		return 0;
	out->coll = 1;
	if (meta.p[0] == 'R') {
		from_args(meta, tm, out);
		return 0;
	}
	return from_annotation(name, shapes, dtypes, tm, out);
}

void perfdb_tcomm_cells(const struct perfdb_tcomm *tc, struct perfdb_span f[5])
{
	if (!tc->name[0])
		return;
	f[0] = (struct perfdb_span){ tc->name, strlen(tc->name) };
	f[1] = (struct perfdb_span){ tc->shapes, strlen(tc->shapes) };
	f[2] = (struct perfdb_span){ tc->dtypes, strlen(tc->dtypes) };
	f[3] = tc->dtypes[0] ? (struct perfdb_span){ "ND", 2 } : (struct perfdb_span){ "", 0 };
}

int perfdb_tcomm_call(const struct perfdb_tcomm *tc, double us, const char *device,
		      const struct perfdb_chrome_trace_opts *o, struct perfdb_chrome_trace_info *info,
		      struct perfdb_err *err)
{
	if (!tc->coll)
		return 0;
	if (!tc->has_obs) {
		if (tc->skip && !info->comm_skipped++)
			snprintf(info->comm_skip, sizeof(info->comm_skip), "%s", tc->skip);
		return 0;
	}
	info->comm_calls++;
	if (!o || !o->comm)
		return 0;
	struct perfdb_comm_obs ob = tc->obs;
	ob.dur_us = us;
	return o->comm(o->comm_ctx, &ob, device, err);
}
