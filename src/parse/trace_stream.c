/*
 * Streaming Chrome-trace reader on yajl (src/parse/trace_stream.h).
 *
 * The callbacks keep a stack of the containers that matter (the top-level
 * object, the event array, one event, its "args", the device list, the
 * distributed block, "Input Dims" and "Input type"); any other container is
 * skipped by counting its depth, so the stack never grows past 8.
 */
#include "trace_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "perfdb/utf8.h"

#define CHUNK ((size_t)1 << 18)
#define MAXSTACK 8

enum ctxk {
	C_ROOT, C_TOP, C_EVENTS, C_EVENT, C_ARGS, C_DEVS, C_DEV, C_DIST, C_DIMS, C_TYPES,
};

/* What the value after the current key is. */
enum key {
	K_NONE = 0, K_EVENTS, K_DEVPROPS, K_DIST, K_BASE, K_FIELD, K_DIMS, K_STRIDES, K_TYPES,
	K_DEV_ID, K_DEV_NAME, K_RANK, K_WORLD, K_BACKEND, K_ARGS,
};

struct st {
	struct perfdb_tevent ev;
	struct perfdb_tmeta *meta;
	int (*on_event)(void *, const struct perfdb_tevent *, struct perfdb_err *);
	void *ctx;
	struct perfdb_err *err;
	int rc;                       /* first failure (callbacks return 0 to stop) */
	const char *what;             /* set: a structural error of the current event */
	enum ctxk stack[MAXSTACK];
	int sp;
	unsigned long skip;           /* depth inside a skipped container */
	enum key key;
	int field;                    /* enum perfdb_tfield_id when key == K_FIELD */
	int dims_depth;
	/* the array C_DIMS is reading: "Input Dims" or "Input Strides" */
	struct perfdb_strbuf *arr;
	enum perfdb_tval *arr_kind;
	int saw_events;
	uint64_t nevents;
	long long dev_id;
	char dev_name[128];
	int dev_has_id, dev_has_name;
	int top_kind;                 /* 0 none yet, 1 object, 2 array, 3 scalar */
	const char *events_kind;      /* "traceEvents" when it is not an array */
};

static enum ctxk top(const struct st *s)
{
	return s->stack[s->sp];
}

static void push(struct st *s, enum ctxk c)
{
	s->stack[++s->sp] = c;
}

static int oom(struct st *s)
{
	s->rc = perfdb_err_set(s->err, PERFDB_ENOMEM, "out of memory");
	return 0;
}

static void ev_reset(struct perfdb_tevent *ev)
{
	for (int i = 0; i < PERFDB_TF_N; i++) {
		ev->f[i].kind = PERFDB_TV_ABSENT;
		perfdb_strbuf_reset(&ev->f[i].text);
	}
	ev->dims_kind = PERFDB_TV_ABSENT;
	perfdb_strbuf_reset(&ev->dims);
	ev->strides_kind = PERFDB_TV_ABSENT;
	perfdb_strbuf_reset(&ev->strides);
	ev->types_kind = PERFDB_TV_ABSENT;
	perfdb_strbuf_reset(&ev->types);
	ev->types_n = 0;
}

static int key_is(const unsigned char *k, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(k, s, n) == 0;
}

static const char *const event_keys[] = {
	[PERFDB_TF_PH] = "ph", [PERFDB_TF_CAT] = "cat", [PERFDB_TF_NAME] = "name",
	[PERFDB_TF_PID] = "pid", [PERFDB_TF_TID] = "tid", [PERFDB_TF_TS] = "ts",
	[PERFDB_TF_DUR] = "dur", [PERFDB_TF_ID] = "id",
};

static const char *const arg_keys[] = {
	[PERFDB_TF_EXT] = "External id", [PERFDB_TF_CORR] = "correlation",
	[PERFDB_TF_DEVICE] = "device", [PERFDB_TF_STREAM] = "stream",
	[PERFDB_TF_COLL] = "Collective name", [PERFDB_TF_CDTYPE] = "dtype",
	[PERFDB_TF_IN_NELEMS] = "In msg nelems", [PERFDB_TF_OUT_NELEMS] = "Out msg nelems",
	[PERFDB_TF_GROUP] = "Group size",
};

static int cb_key(void *vs, const unsigned char *k, size_t n)
{
	struct st *s = vs;
	if (s->skip)
		return 1;
	s->key = K_NONE;
	switch (top(s)) {
	case C_TOP:
		if (key_is(k, n, "traceEvents"))
			s->key = K_EVENTS;
		else if (key_is(k, n, "deviceProperties"))
			s->key = K_DEVPROPS;
		else if (key_is(k, n, "distributedInfo"))
			s->key = K_DIST;
		else if (key_is(k, n, "baseTimeNanoseconds"))
			s->key = K_BASE;
		break;
	case C_EVENT:
		for (int i = PERFDB_TF_PH; i <= PERFDB_TF_ID; i++)
			if (key_is(k, n, event_keys[i])) {
				s->key = K_FIELD;
				s->field = i;
			}
		if (key_is(k, n, "args"))
			s->key = K_ARGS;
		break;
	case C_ARGS:
		for (int i = PERFDB_TF_EXT; i < PERFDB_TF_N; i++)
			if (key_is(k, n, arg_keys[i])) {
				s->key = K_FIELD;
				s->field = i;
			}
		if (key_is(k, n, "Input Dims"))
			s->key = K_DIMS;
		else if (key_is(k, n, "Input Strides"))
			s->key = K_STRIDES;
		else if (key_is(k, n, "Input type"))
			s->key = K_TYPES;
		break;
	case C_DEV:
		if (key_is(k, n, "id"))
			s->key = K_DEV_ID;
		else if (key_is(k, n, "name"))
			s->key = K_DEV_NAME;
		break;
	case C_DIST:
		if (key_is(k, n, "rank"))
			s->key = K_RANK;
		else if (key_is(k, n, "world_size"))
			s->key = K_WORLD;
		else if (key_is(k, n, "backend"))
			s->key = K_BACKEND;
		break;
	default:
		break;
	}
	return 1;
}

static long long to_ll(const char *p, size_t n)
{
	char buf[32];
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static int is_integer_text(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (i == 0 && p[i] == '-')))
			return 0;
	return n > 0;
}

/* A scalar value: kind NUM / STR / OTHER with its text. */
static int scalar(struct st *s, enum perfdb_tval kind, const char *p, size_t n)
{
	if (s->skip)
		return 1;
	enum key k = s->key;
	s->key = K_NONE;
	switch (top(s)) {
	case C_ROOT:
		s->top_kind = 3;
		return 1;
	case C_EVENTS:
		s->what = "not an object";
		return 1;   /* reported when the array element is counted (below) */
	case C_EVENT:
	case C_ARGS:
		if (k == K_FIELD) {
			struct perfdb_tfield *f = &s->ev.f[s->field];
			f->kind = kind;
			perfdb_strbuf_reset(&f->text);
			if (perfdb_strbuf_add(&f->text, p, n) < 0)
				return oom(s);
		} else if (k == K_DIMS) {
			s->ev.dims_kind = PERFDB_TV_OTHER;
		} else if (k == K_STRIDES) {
			s->ev.strides_kind = PERFDB_TV_OTHER;
		} else if (k == K_TYPES) {
			s->ev.types_kind = PERFDB_TV_OTHER;
		}
		/* "args": null or a scalar reads as no args */
		return 1;
	case C_DIMS:
		if (kind == PERFDB_TV_NUM && is_integer_text(p, n)) {
			struct perfdb_strbuf *d = s->arr;
			if (d->len && d->buf[d->len - 1] != '[' && perfdb_strbuf_addch(d, ',') < 0)
				return oom(s);
			if (perfdb_strbuf_add(d, p, n) < 0)
				return oom(s);
		} else {
			*s->arr_kind = PERFDB_TV_STR;
		}
		return 1;
	case C_TYPES:
		if (kind == PERFDB_TV_STR) {
			for (size_t i = 0; i < n; i++)
				if (perfdb_strbuf_addch(&s->ev.types, p[i] == '\x1e' ? '_' : p[i]) < 0)
					return oom(s);
		}
		if (perfdb_strbuf_addch(&s->ev.types, '\x1e') < 0)
			return oom(s);
		s->ev.types_n++;
		return 1;
	case C_TOP:
		if (k == K_EVENTS)
			s->events_kind = kind == PERFDB_TV_NUM ? "a number" : kind == PERFDB_TV_STR ?
					 "a string" : "null or a boolean";
		if (k == K_BASE && kind == PERFDB_TV_NUM) {
			s->meta->has_base_time = 1;
			s->meta->base_time_ns = to_ll(p, n);
		}
		return 1;
	case C_DEV:
		if (k == K_DEV_ID && kind == PERFDB_TV_NUM) {
			s->dev_id = to_ll(p, n);
			s->dev_has_id = 1;
		} else if (k == K_DEV_NAME && kind == PERFDB_TV_STR) {
			snprintf(s->dev_name, sizeof(s->dev_name), "%.*s", (int)n, p);
			s->dev_has_name = 1;
		}
		return 1;
	case C_DIST:
		if (k == K_RANK && kind == PERFDB_TV_NUM)
			s->meta->rank = to_ll(p, n);
		else if (k == K_WORLD && kind == PERFDB_TV_NUM)
			s->meta->world_size = to_ll(p, n);
		else if (k == K_BACKEND && kind == PERFDB_TV_STR)
			snprintf(s->meta->backend, sizeof(s->meta->backend), "%.*s", (int)n, p);
		return 1;
	case C_DEVS:
		return 1;
	}
	return 1;
}

static int cb_null(void *vs)
{
	return scalar(vs, PERFDB_TV_OTHER, "null", 4);
}

static int cb_bool(void *vs, int b)
{
	return scalar(vs, PERFDB_TV_OTHER, b ? "true" : "false", b ? 4 : 5);
}

static int cb_number(void *vs, const char *p, size_t n)
{
	return scalar(vs, PERFDB_TV_NUM, p, n);
}

static int cb_string(void *vs, const unsigned char *p, size_t n)
{
	/*
	 * yajl lets overlong forms, surrogates and bytes past U+10FFFF through;
	 * the CSV reader refuses them, so one written to a table would make the
	 * database unreadable (issue 49): held to perfdb's own rule here.
	 */
	size_t bad = perfdb_utf8_check(p, n);
	if (bad < n) {
		struct st *s = vs;
		s->rc = perfdb_err_set(s->err, PERFDB_EPARSE, "invalid UTF-8 byte 0x%02x at byte %zu of a "
				       "string value (perfdb reads and writes UTF-8 only)", p[bad], bad);
		return 0;
	}
	return scalar(vs, PERFDB_TV_STR, (const char *)p, n);
}

static int event_done(struct st *s)
{
	if (s->rc)
		return 0;
	s->nevents++;
	int rc = s->on_event(s->ctx, &s->ev, s->err);
	if (rc < 0) {
		s->rc = rc;
		return 0;
	}
	s->ev.index++;
	ev_reset(&s->ev);
	return 1;
}

static int start(struct st *s, int is_map)
{
	if (s->skip) {
		s->skip++;
		return 1;
	}
	enum key k = s->key;
	s->key = K_NONE;
	enum ctxk t = top(s);
	if (t == C_ROOT) {
		s->top_kind = is_map ? 1 : 2;
		if (is_map) {
			push(s, C_TOP);
		} else {
			s->saw_events = 1;
			push(s, C_EVENTS);
		}
		return 1;
	}
	if (t == C_TOP && k == K_EVENTS && is_map) {
		s->events_kind = "an object";
		s->skip = 1;
	} else if (t == C_TOP && k == K_EVENTS) {
		s->saw_events = 1;
		push(s, C_EVENTS);
	} else if (t == C_TOP && k == K_DEVPROPS && !is_map) {
		push(s, C_DEVS);
	} else if (t == C_TOP && k == K_DIST && is_map) {
		s->meta->has_dist = 1;
		push(s, C_DIST);
	} else if (t == C_EVENTS) {
		if (!is_map) {
			s->what = "not an object";
			s->skip = 1;
		} else {
			push(s, C_EVENT);
		}
	} else if (t == C_EVENT && k == K_ARGS && is_map) {
		push(s, C_ARGS);
	} else if (t == C_EVENT && k == K_FIELD) {
		s->ev.f[s->field].kind = PERFDB_TV_OTHER;
		s->skip = 1;
	} else if (t == C_ARGS && (k == K_DIMS || k == K_STRIDES) && !is_map) {
		/* both are nested arrays of integers, kept as compact JSON */
		s->arr = k == K_DIMS ? &s->ev.dims : &s->ev.strides;
		s->arr_kind = k == K_DIMS ? &s->ev.dims_kind : &s->ev.strides_kind;
		*s->arr_kind = PERFDB_TV_NUM;
		s->dims_depth = 1;
		if (perfdb_strbuf_addch(s->arr, '[') < 0)
			return oom(s);
		push(s, C_DIMS);
	} else if (t == C_ARGS && k == K_TYPES && !is_map) {
		s->ev.types_kind = PERFDB_TV_NUM;
		push(s, C_TYPES);
	} else if (t == C_ARGS && (k == K_FIELD || k == K_DIMS || k == K_STRIDES || k == K_TYPES)) {
		if (k == K_FIELD)
			s->ev.f[s->field].kind = PERFDB_TV_OTHER;
		else if (k == K_DIMS)
			s->ev.dims_kind = PERFDB_TV_OTHER;
		else if (k == K_STRIDES)
			s->ev.strides_kind = PERFDB_TV_OTHER;
		else
			s->ev.types_kind = PERFDB_TV_OTHER;
		s->skip = 1;
	} else if (t == C_DIMS) {
		if (is_map) {
			*s->arr_kind = PERFDB_TV_STR;
			s->skip = 1;
			return 1;
		}
		struct perfdb_strbuf *d = s->arr;
		if (d->buf[d->len - 1] != '[' && perfdb_strbuf_addch(d, ',') < 0)
			return oom(s);
		if (perfdb_strbuf_addch(d, '[') < 0)
			return oom(s);
		s->dims_depth++;
	} else if (t == C_TYPES) {
		/* a non-string entry: an empty slot */
		if (perfdb_strbuf_addch(&s->ev.types, '\x1e') < 0)
			return oom(s);
		s->ev.types_n++;
		s->skip = 1;
	} else if (t == C_DEVS && is_map) {
		s->dev_has_id = s->dev_has_name = 0;
		push(s, C_DEV);
	} else {
		s->skip = 1;
	}
	return 1;
}

static int end(struct st *s)
{
	if (s->skip) {
		s->skip--;
		if (s->skip == 0 && top(s) == C_EVENTS && s->what) {
			s->rc = perfdb_err_set(s->err, PERFDB_EPARSE, "%s", s->what);
			return 0;
		}
		return 1;
	}
	enum ctxk t = top(s);
	if (t == C_DIMS) {
		if (perfdb_strbuf_addch(s->arr, ']') < 0)
			return oom(s);
		if (--s->dims_depth > 0)
			return 1;
	}
	s->sp--;
	if (t == C_EVENT)
		return event_done(s);
	if (t == C_DEV && s->dev_has_id && s->dev_has_name &&
	    s->meta->ndevices < PERFDB_TRACE_MAX_DEVICES) {
		s->meta->devices[s->meta->ndevices].id = s->dev_id;
		snprintf(s->meta->devices[s->meta->ndevices].name,
			 sizeof(s->meta->devices[0].name), "%s", s->dev_name);
		s->meta->ndevices++;
	}
	return 1;
}

static int cb_start_map(void *vs)
{
	return start(vs, 1);
}

static int cb_start_array(void *vs)
{
	return start(vs, 0);
}

static int cb_end(void *vs)
{
	return end(vs);
}

static int cb_scalar_check(struct st *s)
{
	/* a scalar directly in the event array */
	if (!s->skip && top(s) == C_EVENTS && s->what) {
		s->rc = perfdb_err_set(s->err, PERFDB_EPARSE, "%s", s->what);
		return 0;
	}
	return 1;
}

static int cb_null2(void *vs)
{
	return cb_null(vs) && cb_scalar_check(vs);
}

static int cb_bool2(void *vs, int b)
{
	return cb_bool(vs, b) && cb_scalar_check(vs);
}

static int cb_number2(void *vs, const char *p, size_t n)
{
	return cb_number(vs, p, n) && cb_scalar_check(vs);
}

static int cb_string2(void *vs, const unsigned char *p, size_t n)
{
	return cb_string(vs, p, n) && cb_scalar_check(vs);
}

static const yajl_callbacks callbacks = {
	cb_null2, cb_bool2, NULL, NULL, cb_number2, cb_string2,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

static void ev_release(struct perfdb_tevent *ev)
{
	for (int i = 0; i < PERFDB_TF_N; i++)
		perfdb_strbuf_release(&ev->f[i].text);
	perfdb_strbuf_release(&ev->dims);
	perfdb_strbuf_release(&ev->strides);
	perfdb_strbuf_release(&ev->types);
}

static int yajl_failed(struct st *s, yajl_handle h, const unsigned char *chunk, size_t len,
		       uint64_t base, const char *name)
{
	/* yajl_complete_parse feeds itself one byte of its own: not ours */
	uint64_t at = len ? base + yajl_get_bytes_consumed(h) : base;
	if (s->rc) {
		/* ours: name the event */
		char what[PERFDB_ERR_MSG_MAX];
		snprintf(what, sizeof(what), "%s", s->err ? s->err->msg : "");
		if (s->rc == -PERFDB_ENOMEM)
			return s->rc;
		return perfdb_err_set(s->err, -s->rc, "%s: event #%llu (ending at byte %llu): %s",
				      name, (unsigned long long)s->ev.index,
				      (unsigned long long)at, what);
	}
	unsigned char *m = yajl_get_error(h, 0, chunk, len);
	char msg[256];
	snprintf(msg, sizeof(msg), "%s", m ? (const char *)m : "parse error");
	if (m)
		yajl_free_error(h, m);
	size_t ml = strlen(msg);
	while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' '))
		msg[--ml] = '\0';
	return perfdb_err_set(s->err, PERFDB_EPARSE, "%s: invalid JSON at byte %llu: %s", name,
			      (unsigned long long)at, msg);
}

/*
 * The cap on one JSON string (docs/chrome_trace.md "Reading"): yajl
 * re-lexes a token that spans its input chunks from its start at every
 * chunk, so a string of n bytes costs n^2 / CHUNK and is buffered whole;
 * a 100 MB op name took 15-23 s and 1.1 GB (issue 49).  Real names are
 * kilobytes (C++ kernel names, call stacks), so a string past the cap is
 * an error naming where it starts, found by this linear scan before yajl
 * sees the bytes.
 */
#define STRING_CAP ((uint64_t)1 << 20)

struct strscan {
	int in, esc;
	uint64_t len, start;
};

/* 0, or the offset at which a string over STRING_CAP starts + 1. */
static uint64_t scan_strings(struct strscan *z, const unsigned char *p, size_t n, uint64_t base)
{
	size_t i = 0;
	while (i < n) {
		if (!z->in) {
			const unsigned char *q = memchr(p + i, '"', n - i);
			if (!q)
				return 0;
			i = (size_t)(q - p) + 1;
			z->in = 1;
			z->esc = 0;
			z->len = 0;
			z->start = base + (uint64_t)(q - p);
			continue;
		}
		unsigned char c = p[i++];
		if (z->esc)
			z->esc = 0;
		else if (c == '\\')
			z->esc = 1;
		else if (c == '"') {
			z->in = 0;
			continue;
		}
		if (++z->len > STRING_CAP)
			return z->start + 1;
	}
	return 0;
}

int perfdb_trace_stream(struct perfdb_tsrc *src,
			int (*on_event)(void *ctx, const struct perfdb_tevent *ev,
					struct perfdb_err *err),
			void *ctx, struct perfdb_tmeta *meta, uint64_t *bytes,
			struct perfdb_err *err)
{
	struct st *s = calloc(1, sizeof(*s));
	unsigned char *chunk = malloc(CHUNK);
	if (!s || !chunk) {
		free(s);
		free(chunk);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	memset(meta, 0, sizeof(*meta));
	meta->rank = meta->world_size = -1;
	for (int i = 0; i < PERFDB_TF_N; i++)
		perfdb_strbuf_init(&s->ev.f[i].text);
	perfdb_strbuf_init(&s->ev.dims);
	perfdb_strbuf_init(&s->ev.strides);
	perfdb_strbuf_init(&s->ev.types);
	s->meta = meta;
	s->on_event = on_event;
	s->ctx = ctx;
	s->err = err;
	s->stack[0] = C_ROOT;
	int rc = 0;
	uint64_t base = 0;
	struct strscan scan = { 0 };
	yajl_handle h = yajl_alloc(&callbacks, NULL, s);
	if (!h) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		long n = perfdb_tsrc_read(src, chunk, CHUNK, err);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
		if (!n && !base)
			break;   /* empty: said below */
		uint64_t over = n ? scan_strings(&scan, chunk, (size_t)n, base) : 0;
		if (over) {
			rc = perfdb_err_set(err, PERFDB_EPARSE, "%s: the JSON string starting at byte %llu%s is "
					    "longer than %llu bytes, the cap on any name or value "
					    "(docs/chrome_trace.md \"Reading\")", src->name,
					    (unsigned long long)(over - 1), src->gz ? " (of the gunzipped JSON)" : "",
					    (unsigned long long)STRING_CAP);
			goto out;
		}
		yajl_status ys = n ? yajl_parse(h, chunk, (size_t)n) : yajl_complete_parse(h);
		if (ys != yajl_status_ok) {
			rc = yajl_failed(s, h, chunk, (size_t)n, base, src->name);
			goto out;
		}
		base += (uint64_t)n;
		if (!n)
			break;
	}
	if (s->top_kind == 0)
		rc = perfdb_err_set(err, PERFDB_EPARSE, "%s: empty file", src->name);
	else if (s->top_kind == 3)
		rc = perfdb_err_set(err, PERFDB_EPARSE,
				    "%s: not a Chrome trace: the top level is not an object with "
				    "\"traceEvents\" or an array of events", src->name);
	else if (!s->saw_events && s->events_kind)
		rc = perfdb_err_set(err, PERFDB_EPARSE,
				    "%s: not a Chrome trace: \"traceEvents\" is %s, not an array",
				    src->name, s->events_kind);
	else if (!s->saw_events)
		rc = perfdb_err_set(err, PERFDB_EPARSE,
				    "%s: not a Chrome trace: no \"traceEvents\" array", src->name);
out:
	if (bytes)
		*bytes = base;
	if (h)
		yajl_free(h);
	ev_release(&s->ev);
	free(s);
	free(chunk);
	return rc;
}
