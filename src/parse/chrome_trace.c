/*
 * PyTorch profiler Chrome-trace reader: see include/perfdb/chrome_trace.h
 * for the input format, the rows and the cell conventions.  Follows
 * docs/spec/parse.md Decision 6 (Chrome-trace inputs) and §2 (shape cells keep
 * literal quotes and empty slots).
 *
 * Two passes over the loaded event array.  Pass 1 classifies each event
 * (CPU row, kernel row, neither), validates the cpu_ops' "Input Dims", and
 * indexes "External id" -> cpu_op and launch "correlation" -> "External id".
 * Pass 2 offers the rows in event order; a kernel's input cells are built
 * from its joined cpu_op.  The index lets a kernel appear anywhere in the
 * file relative to its op: Kineto writes CPU and GPU activities in separate
 * runs, not interleaved by time.
 */
#include "perfdb/chrome_trace.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"

/* ---- a small map of JSON integer ids ----------------------------------- */

/* Open addressing with linear probing; the first value put for a key wins
 * (ids are unique within one process's trace). */
struct idmap {
	json_int_t *keys;
	json_int_t *vals;
	unsigned char *used;
	size_t cap;  /* 0 or a power of two */
	size_t n;
};

static size_t id_hash(json_int_t k)
{
	uint64_t x = (uint64_t)k; /* splitmix64 finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (size_t)x;
}

static void idmap_release(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int idmap_get(const struct idmap *m, json_int_t key, json_int_t *val)
{
	if (!m->cap)
		return 0;
	for (size_t i = id_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return 0;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
	}
}

static void idmap_insert(struct idmap *m, json_int_t key, json_int_t val)
{
	size_t i = id_hash(key) & (m->cap - 1);
	while (m->used[i]) {
		if (m->keys[i] == key)
			return;
		i = (i + 1) & (m->cap - 1);
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

/* Returns 0 or -PERFDB_ENOMEM (the map is then unchanged). */
static int idmap_put(struct idmap *m, json_int_t key, json_int_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct idmap g = { 0 };
		g.cap = m->cap ? 2 * m->cap : 64;
		g.keys = malloc(g.cap * sizeof(*g.keys));
		g.vals = malloc(g.cap * sizeof(*g.vals));
		g.used = calloc(g.cap, 1);
		if (!g.keys || !g.vals || !g.used) {
			idmap_release(&g);
			return -PERFDB_ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->used[i])
				idmap_insert(&g, m->keys[i], m->vals[i]);
		idmap_release(m);
		*m = g;
	}
	idmap_insert(m, key, val);
	return 0;
}

/* ---- cells ------------------------------------------------------------- */

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
};

static enum perfdb_dtype torch_dtype(struct perfdb_span s)
{
	for (size_t i = 0; i < sizeof(torch_types) / sizeof(torch_types[0]); i++)
		if (strlen(torch_types[i].spelling) == s.len &&
		    memcmp(torch_types[i].spelling, s.p, s.len) == 0)
			return torch_types[i].type;
	return PERFDB_DTYPE_UNKNOWN;
}

/* The cells of one row, reused from row to row. */
struct cells {
	struct perfdb_strbuf shapes, dtypes, formats, dur;
	size_t nslots;
};

static void cells_reset(struct cells *c)
{
	perfdb_strbuf_reset(&c->shapes);
	perfdb_strbuf_reset(&c->dtypes);
	perfdb_strbuf_reset(&c->formats);
	perfdb_strbuf_reset(&c->dur);
	c->nslots = 0;
}

static void cells_release(struct cells *c)
{
	perfdb_strbuf_release(&c->shapes);
	perfdb_strbuf_release(&c->dtypes);
	perfdb_strbuf_release(&c->formats);
	perfdb_strbuf_release(&c->dur);
}

static int is_int_list(const json_t *a)
{
	size_t i;
	const json_t *v;
	if (!json_is_array(a))
		return 0;
	json_array_foreach(a, i, v)
		if (!json_is_integer(v))
			return 0;
	return 1;
}

static int is_list_of_int_lists(const json_t *a)
{
	size_t i;
	const json_t *v;
	if (!json_is_array(a) || json_array_size(a) == 0)
		return 0;
	json_array_foreach(a, i, v)
		if (!is_int_list(v))
			return 0;
	return 1;
}

/*
 * Append one slot: dims (an array of integers), its "Input type" token, and
 * whether it is an element of a tensor list (then a tensor whatever its
 * dims).  Returns 0 or -PERFDB_ENOMEM.
 */
static int put_slot(struct cells *c, const json_t *dims, struct perfdb_span type,
		    int list_elem)
{
	int rc = 0;
	if (c->nslots++ > 0) {
		rc |= perfdb_strbuf_addch(&c->shapes, ';');
		rc |= perfdb_strbuf_addch(&c->dtypes, ';');
		rc |= perfdb_strbuf_addch(&c->formats, ';');
	}
	size_t i;
	const json_t *d;
	json_array_foreach(dims, i, d)
		rc |= perfdb_strbuf_addf(&c->shapes, "%s%" JSON_INTEGER_FORMAT,
					 i ? "," : "", json_integer_value(d));
	enum perfdb_dtype t = torch_dtype(type);
	if (t != PERFDB_DTYPE_UNKNOWN) {
		rc |= perfdb_strbuf_addstr(&c->dtypes, perfdb_dtype_name(t));
		rc |= perfdb_strbuf_addstr(&c->formats, "ND");
	} else if (json_array_size(dims) > 0 || list_elem) {
		size_t at = c->dtypes.len;
		rc |= perfdb_dtype_canonical(type, &c->dtypes);
		/* A verbatim token must not split the cell into extra slots. */
		for (size_t k = at; k < c->dtypes.len; k++)
			if (c->dtypes.buf[k] == ';')
				c->dtypes.buf[k] = '_';
		rc |= perfdb_strbuf_addstr(&c->formats, "ND");
	}
	return rc ? -PERFDB_ENOMEM : 0;
}

/*
 * Build the three input cells of a cpu_op from its "Input Dims" and
 * "Input type".  Returns 0, 1 when the dims are malformed (the op is
 * skipped), or -PERFDB_ENOMEM.
 */
static int build_inputs(const json_t *dims, const json_t *types, struct cells *c)
{
	if (!json_is_array(dims))
		return 1;
	size_t i;
	const json_t *slot;
	json_array_foreach(dims, i, slot)
		if (!is_int_list(slot) && !is_list_of_int_lists(slot))
			return 1;
	int rc = 0;
	if (json_array_size(dims) > 0)
		rc |= perfdb_strbuf_addch(&c->shapes, '"');
	json_array_foreach(dims, i, slot) {
		const json_t *t = json_is_array(types) ? json_array_get(types, i) : NULL;
		struct perfdb_span type = { "", 0 };
		if (json_is_string(t))
			type = (struct perfdb_span){ json_string_value(t), json_string_length(t) };
		if (is_int_list(slot)) {
			rc |= put_slot(c, slot, type, 0);
		} else {
			/* A tensor list: one slot per tensor. */
			size_t j;
			const json_t *elem;
			json_array_foreach(slot, j, elem)
				rc |= put_slot(c, elem, type, 1);
		}
	}
	if (json_array_size(dims) > 0)
		rc |= perfdb_strbuf_addch(&c->shapes, '"');
	return rc ? -PERFDB_ENOMEM : 0;
}

/* "dur" as a decimal string: integers as is, reals by the shortest text
 * that reads back to the same double ("6.144", not "6.1440000000000001"). */
static int put_duration(const json_t *dur, struct perfdb_strbuf *out)
{
	if (json_is_integer(dur))
		return perfdb_strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(dur));
	if (!json_is_real(dur))
		return 0;
	double x = json_real_value(dur);
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return perfdb_strbuf_addf(out, "%.0f", x);
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return perfdb_strbuf_addstr(out, buf);
}

/* ---- events ------------------------------------------------------------ */

enum ev_kind { EV_SKIP = 0, EV_CPU_ROW, EV_KERNEL };

static int str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

static int get_int(const json_t *obj, const char *key, json_int_t *out)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v))
		return 0;
	*out = json_integer_value(v);
	return 1;
}

/* Categories of the host-side calls that carry a launch's correlation. */
static int is_launch_cat(const json_t *cat)
{
	return str_is(cat, "cuda_runtime") || str_is(cat, "cuda_driver") ||
	       str_is(cat, "privateuse1_runtime") || str_is(cat, "privateuse1_driver");
}

static struct perfdb_span jspan(const json_t *s)
{
	if (!json_is_string(s))
		return (struct perfdb_span){ "", 0 };
	return (struct perfdb_span){ json_string_value(s), json_string_length(s) };
}

static const json_t *args_of(const json_t *ev)
{
	const json_t *a = json_object_get(ev, "args");
	return json_is_object(a) ? a : NULL;
}

struct reader {
	const char *name;
	const json_t *root;
	const json_t *events;
	unsigned char *kind;  /* enum ev_kind per event */
	struct idmap ops;     /* External id -> index of a cpu_op row */
	struct idmap launch;  /* correlation -> External id */
	struct cells scratch; /* pass 1: validation */
	struct cells cells;   /* pass 2: the row being offered */
	struct perfdb_chrome_trace_info *info;
};

static void set_gpu_name(struct reader *r, const json_t *device)
{
	const json_t *props = json_is_object(r->root) ?
		json_object_get(r->root, "deviceProperties") : NULL;
	size_t i;
	const json_t *p;
	json_array_foreach(props, i, p) {
		const json_t *id = json_object_get(p, "id");
		const json_t *name = json_object_get(p, "name");
		if (!json_is_string(name))
			continue;
		if (!device || (json_is_integer(id) && json_is_integer(device) &&
				json_integer_value(id) == json_integer_value(device))) {
			snprintf(r->info->gpu_name, sizeof(r->info->gpu_name), "%s",
				 json_string_value(name));
			return;
		}
	}
}

/* Pass 1: classify, validate, index. */
static int scan(struct reader *r)
{
	size_t i;
	const json_t *ev;
	json_array_foreach(r->events, i, ev) {
		r->info->events++;
		if (!json_is_object(ev)) {
			r->info->bad_events++;
			continue;
		}
		if (!str_is(json_object_get(ev, "ph"), "X"))
			continue;
		const json_t *cat = json_object_get(ev, "cat");
		const json_t *args = args_of(ev);
		if (!cat) {
			r->info->legacy_events++;
		} else if (str_is(cat, "cpu_op")) {
			r->info->cpu_ops++;
			const json_t *dims = json_object_get(args, "Input Dims");
			if (!dims) {
				r->info->cpu_ops_no_shapes++;
				continue;
			}
			cells_reset(&r->scratch);
			int rc = build_inputs(dims, json_object_get(args, "Input type"), &r->scratch);
			if (rc < 0)
				return rc;
			if (rc > 0 || !json_is_string(json_object_get(ev, "name"))) {
				r->info->bad_events++;
				continue;
			}
			r->kind[i] = EV_CPU_ROW;
			r->info->cpu_rows++;
			json_int_t ext;
			if (get_int(args, "External id", &ext))
				PERFDB_TRY(idmap_put(&r->ops, ext, (json_int_t)i));
		} else if (str_is(cat, "kernel")) {
			if (!json_is_string(json_object_get(ev, "name"))) {
				r->info->bad_events++;
				continue;
			}
			if (r->info->kernels++ == 0)
				set_gpu_name(r, json_object_get(args, "device"));
			r->kind[i] = EV_KERNEL;
		} else if (is_launch_cat(cat)) {
			json_int_t corr, ext;
			if (get_int(args, "correlation", &corr) && get_int(args, "External id", &ext))
				PERFDB_TRY(idmap_put(&r->launch, corr, ext));
		}
	}
	return 0;
}

/* The cpu_op a kernel was launched from, or NULL. */
static const json_t *kernel_op(const struct reader *r, const json_t *kargs)
{
	json_int_t corr, ext, idx;
	if (get_int(kargs, "correlation", &corr) && idmap_get(&r->launch, corr, &ext) &&
	    idmap_get(&r->ops, ext, &idx))
		return json_array_get(r->events, (size_t)idx);
	if (get_int(kargs, "External id", &ext) && idmap_get(&r->ops, ext, &idx))
		return json_array_get(r->events, (size_t)idx);
	return NULL;
}

static struct perfdb_span sb_span(const struct perfdb_strbuf *sb)
{
	return (struct perfdb_span){ sb->buf, sb->len };
}

/* Pass 2: offer the rows. */
static int emit(struct reader *r, const struct perfdb_row_sink *cpu_sink,
		const struct perfdb_row_sink *gpu_sink, struct perfdb_err *err)
{
	size_t i;
	const json_t *ev;
	json_array_foreach(r->events, i, ev) {
		const struct perfdb_row_sink *sink;
		const json_t *op;
		const char *core;
		if (r->kind[i] == EV_CPU_ROW) {
			sink = cpu_sink;
			op = ev;
			core = "CPU";
		} else if (r->kind[i] == EV_KERNEL) {
			op = kernel_op(r, args_of(ev));
			if (!op)
				r->info->kernels_unmatched++;
			sink = gpu_sink;
			core = "GPU";
		} else {
			continue;
		}
		if (!sink || !sink->row)
			continue;

		struct cells *c = &r->cells;
		cells_reset(c);
		if (op) {
			const json_t *oargs = args_of(op);
			int rc = build_inputs(json_object_get(oargs, "Input Dims"),
					      json_object_get(oargs, "Input type"), c);
			if (rc < 0)
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
		if (put_duration(json_object_get(ev, "dur"), &c->dur) < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");

		struct perfdb_kernel_row row;
		memset(&row, 0, sizeof(row));
		for (size_t k = 0; k < PERFDB_NCOUNTERS; k++)
			row.counters[k] = (struct perfdb_span){ "", 0 };
		row.type = row.name = jspan(json_object_get(ev, "name"));
		row.op_state = row.out_shapes = row.out_dtypes = row.out_formats =
			(struct perfdb_span){ "", 0 };
		row.accel_core = (struct perfdb_span){ core, 3 };
		row.in_shapes = sb_span(&c->shapes);
		row.in_dtypes = sb_span(&c->dtypes);
		row.in_formats = sb_span(&c->formats);
		row.duration = sb_span(&c->dur);
		row.file = r->name;
		row.line = 0;
		PERFDB_TRY(sink->row(sink->ctx, &row, err));
	}
	return 0;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "a value";
}

int perfdb_chrome_trace_read_mem(const char *name, const void *data, size_t len,
				 const struct perfdb_row_sink *cpu_sink,
				 const struct perfdb_row_sink *gpu_sink,
				 struct perfdb_chrome_trace_info *info,
				 struct perfdb_err *err)
{
	struct perfdb_chrome_trace_info local;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));

	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_DECODE_ANY, &je);
	if (!root) {
		/* jansson reports some allocation failures with no code and no text */
		if (json_error_code(&je) == json_error_out_of_memory || !je.text[0])
			return perfdb_err_set(err, PERFDB_ENOMEM,
					      "%s: out of memory loading the trace (%zu bytes): "
					      "traces are loaded whole; raise the memory limit",
					      name, len);
		return perfdb_err_at(err, PERFDB_EPARSE, name, je.line > 0 ? (size_t)je.line : 0,
				     je.column > 0 ? (size_t)je.column : 0, "invalid JSON: %s",
				     je.text);
	}

	const json_t *events = root;
	if (json_is_object(root)) {
		events = json_object_get(root, "traceEvents");
		if (!json_is_array(events)) {
			int rc = events ?
				perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
					      "not a Chrome trace: \"traceEvents\" is %s, not an array",
					      json_kind(events)) :
				perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
					      "not a Chrome trace: no \"traceEvents\" array");
			json_decref(root);
			return rc;
		}
	} else if (!json_is_array(root)) {
		int rc = perfdb_err_at(err, PERFDB_EPARSE, name, 0, 0,
				       "not a Chrome trace: the top level is %s, not an object "
				       "with \"traceEvents\" or an array of events",
				       json_kind(root));
		json_decref(root);
		return rc;
	}

	struct reader r = {
		.name = name,
		.root = root,
		.events = events,
		.scratch = { PERFDB_STRBUF_INIT, PERFDB_STRBUF_INIT, PERFDB_STRBUF_INIT,
			     PERFDB_STRBUF_INIT, 0 },
		.cells = { PERFDB_STRBUF_INIT, PERFDB_STRBUF_INIT, PERFDB_STRBUF_INIT,
			 PERFDB_STRBUF_INIT, 0 },
		.info = info,
	};
	int rc;
	r.kind = calloc(json_array_size(events) + 1, 1);
	if (!r.kind) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
		goto out;
	}
	set_gpu_name(&r, NULL);
	rc = scan(&r);
	if (rc < 0) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
		goto out;
	}
	rc = emit(&r, cpu_sink, gpu_sink, err);
out:
	free(r.kind);
	idmap_release(&r.ops);
	idmap_release(&r.launch);
	cells_release(&r.scratch);
	cells_release(&r.cells);
	json_decref(root);
	return rc;
}

int perfdb_chrome_trace_read(const char *path,
			     const struct perfdb_row_sink *cpu_sink,
			     const struct perfdb_row_sink *gpu_sink,
			     struct perfdb_chrome_trace_info *info,
			     struct perfdb_err *err)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	if (info)
		memset(info, 0, sizeof(*info));
	int rc = perfdb_file_read_all(path, &sb, err);
	if (rc == 0)
		rc = perfdb_chrome_trace_read_mem(path, sb.buf, sb.len, cpu_sink, gpu_sink,
						  info, err);
	perfdb_strbuf_release(&sb);
	return rc;
}
