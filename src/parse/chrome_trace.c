/*
 * PyTorch profiler Chrome-trace reader (src/parse/chrome_trace.h;
 * rules in docs/chrome_trace.md).
 *
 * One streaming pass (trace_stream.c) classifies each event: a cpu_op
 * gives its CPU row at once and its interval to the linker, launches, flow
 * endpoints and device activities go to the linker as small records
 * (threads, kernel names and op keys interned to numbers).  Once the file
 * is read the linker (trace_link.c) joins them and hands back the
 * activities of each op call, which become the GPU rows.
 */
#include "parse/chrome_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aten_shapes.h"
#include "strtab.h"
#include "trace_cells.h"
#include "trace_comm.h"
#include "trace_defer.h"
#include "parse/trace_link.h"
#include "trace_source.h"
#include "trace_stream.h"

struct reader {
	const char *name;
	const struct perfdb_chrome_trace_opts *o;
	const struct perfdb_row_sink *cpu, *gpu;
	struct perfdb_chrome_trace_info *info;
	struct perfdb_tlink *link;
	struct perfdb_strtab threads, kernels, keys;
	struct perfdb_tcells cells;
	struct perfdb_strbuf scratch, dur, type;
	struct perfdb_strbuf outs, outt, outf;   /* a row's output cells (aten_shapes.h) */
	struct perfdb_strbuf comm_key;           /* an op's collective key field (trace_comm.h) */
	struct perfdb_strbuf strides;            /* a CPU row's Input Strides cell (trace_cells.h) */
	struct perfdb_tdefer held;               /* conversions waiting for their dtype (trace_defer.h) */
	struct perfdb_tmeta meta;
	long long first_device;
	int have_first_device;
	struct perfdb_kernel_share *shares;
	size_t capshares;
	unsigned char *list_flag;   /* per op key: a TensorList input recorded as [] */
	size_t nlist_flag;
	/* the same for CPU rows, which count only in a trace without device activity */
	struct perfdb_chrome_trace_info cpu_lists;
};

/* An op type whose rows lack a TensorList's shapes: said once per type (issue 48). */
static void note_unshaped_list(struct perfdb_chrome_trace_info *in, const char *name, size_t len)
{
	size_t shown = in->unshaped_list_ops < PERFDB_CHROME_TRACE_LIST_OPS ?
		       in->unshaped_list_ops : PERFDB_CHROME_TRACE_LIST_OPS;
	for (size_t i = 0; i < shown; i++)
		if (strlen(in->unshaped_list_op[i]) == (len < 127 ? len : 127) &&
		    memcmp(in->unshaped_list_op[i], name, strlen(in->unshaped_list_op[i])) == 0)
			return;
	if (shown < PERFDB_CHROME_TRACE_LIST_OPS)
		snprintf(in->unshaped_list_op[shown], sizeof(in->unshaped_list_op[0]), "%.*s",
			 (int)(len < 127 ? len : 127), name);
	in->unshaped_list_ops++;
}

static int flagged(const struct reader *r, uint32_t key)
{
	return key < r->nlist_flag && r->list_flag[key];
}

static struct perfdb_span sb_span(const struct perfdb_strbuf *sb)
{
	return (struct perfdb_span){ sb->buf, sb->len };
}

/* Every span empty, not NULL: the aggregator copies them with memcpy. */
static void row_init(struct perfdb_kernel_row *row)
{
	static const struct perfdb_span none = { "", 0 };
	memset(row, 0, sizeof(*row));
	row->type = row->name = row->op_state = row->accel_core = none;
	row->in_shapes = row->in_dtypes = row->in_formats = none;
	row->out_shapes = row->out_dtypes = row->out_formats = row->duration = none;
	row->start = row->wait = none;
	for (size_t k = 0; k < PERFDB_NCOUNTERS; k++)
		row->counters[k] = none;
	row->device = none;
}

/*
 * The output cells the inputs fix (aten_shapes.h), and the quoted empty
 * list `""` for a shape cell the trace cannot fill (no inputs recorded, an
 * output no rule gives), never an empty cell: TensorCast reads tables with
 * pandas, which turns an empty cell into NaN and then fails to parse "nan"
 * as a shape, losing the table.  The spans point into r's buffers until
 * the next row.
 */
static int shape_cells(struct reader *r, struct perfdb_kernel_row *row)
{
	static const struct perfdb_span empty_list = { "\"\"", 2 };
	int rc = perfdb_aten_output(row->type.p, row->type.len, row->in_shapes.p, row->in_shapes.len,
				    row->in_dtypes.p, row->in_dtypes.len, &r->outs, &r->outt, &r->outf);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		row->out_shapes = (struct perfdb_span){ r->outs.buf, r->outs.len };
		row->out_dtypes = (struct perfdb_span){ r->outt.buf, r->outt.len };
		row->out_formats = (struct perfdb_span){ r->outf.buf, r->outf.len };
	}
	if (!row->in_shapes.len)
		row->in_shapes = empty_list;
	if (!row->out_shapes.len)
		row->out_shapes = empty_list;
	return 0;
}

static int str_is(const struct perfdb_tfield *f, const char *s)
{
	return f->kind == PERFDB_TV_STR && f->text.len == strlen(s) &&
	       memcmp(f->text.buf, s, f->text.len) == 0;
}

static int is_launch_cat(const struct perfdb_tfield *cat)
{
	return str_is(cat, "cuda_runtime") || str_is(cat, "cuda_driver") ||
	       str_is(cat, "privateuse1_runtime") || str_is(cat, "privateuse1_driver");
}

/*
 * A collective's own annotation (`nccl:all_reduce`, recorded by the process
 * group around the NCCL call, with the tensor it moves in Input Dims): an
 * op, so that the collective's kernels link to it and land in a row with
 * what they moved, not in record_param_comms' rows without shapes.
 */
static int is_collective_annotation(const struct perfdb_tevent *ev)
{
	static const char *const pre[] = { "nccl:", "rccl:", "gloo:", "hccl:" };
	const struct perfdb_tfield *cat = &ev->f[PERFDB_TF_CAT], *nm = &ev->f[PERFDB_TF_NAME];
	if (!str_is(cat, "user_annotation") || nm->kind != PERFDB_TV_STR || ev->dims_kind != PERFDB_TV_NUM)
		return 0;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (nm->text.len > strlen(pre[i]) && memcmp(nm->text.buf, pre[i], strlen(pre[i])) == 0)
			return 1;
	return 0;
}

static int is_device_cat(const struct perfdb_tfield *cat)
{
	return str_is(cat, "kernel") || str_is(cat, "gpu_memcpy") || str_is(cat, "gpu_memset");
}

static const char *const field_names[PERFDB_TF_N] = {
	"ph", "cat", "name", "pid", "tid", "ts", "dur", "id",
	"External id", "correlation", "device", "stream",
	"Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size",
};

/* A decimal in microseconds, as a number or a string, to nanoseconds. */
static int to_ns(const struct perfdb_tfield *f, int64_t *out)
{
	if (f->kind != PERFDB_TV_NUM && f->kind != PERFDB_TV_STR)
		return 0;
	const char *p = f->text.buf, *e = p + f->text.len;
	int neg = 0;
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	int64_t ip = 0;
	const char *s = p;
	/* epoch microseconds have 16 digits: exact up to 9.2e15 us, past a double */
	while (p < e && *p >= '0' && *p <= '9' && ip <= 900000000000000LL)
		ip = ip * 10 + (*p++ - '0');
	int64_t frac = 0;
	int nd = 0, round_up = 0;
	if (p > s && p < e && *p == '.') {
		p++;
		const char *fs = p;
		while (p < e && *p >= '0' && *p <= '9') {
			if (nd < 3) {
				frac = frac * 10 + (*p - '0');
				nd++;
			} else if (p == fs + 3 && *p >= '5') {
				round_up = 1;
			}
			p++;
		}
	}
	if (p == e && p > s) {
		while (nd++ < 3)
			frac *= 10;
		int64_t v = ip * 1000 + frac + round_up;
		*out = neg ? -v : v;
		return 1;
	}
	/* exponent forms and the like */
	char buf[64];
	if (f->text.len >= sizeof(buf))
		return 0;
	memcpy(buf, f->text.buf, f->text.len);
	buf[f->text.len] = '\0';
	char *end;
	double d = strtod(buf, &end);
	if (end == buf || *end || !isfinite(d) || fabs(d) > 9e15)
		return 0;
	*out = (int64_t)llround(d * 1000.0);
	return 1;
}

static int to_us(const struct perfdb_tfield *f, double *out)
{
	if (f->kind != PERFDB_TV_NUM && f->kind != PERFDB_TV_STR)
		return 0;
	char buf[64];
	if (!f->text.len || f->text.len >= sizeof(buf))
		return 0;
	memcpy(buf, f->text.buf, f->text.len);
	buf[f->text.len] = '\0';
	char *end;
	double d = strtod(buf, &end);
	if (*end || !isfinite(d) || d < 0)
		return 0;
	*out = d;
	return 1;
}

/* An integer id (number or numeric string): 1, 0 absent, -1 mistyped. */
static int to_id(const struct perfdb_tfield *f, int64_t *out)
{
	*out = PERFDB_TLINK_NONE;
	if (f->kind == PERFDB_TV_ABSENT || (f->kind == PERFDB_TV_OTHER && f->text.len == 4 &&
					    memcmp(f->text.buf, "null", 4) == 0))
		return 0;
	if (f->kind != PERFDB_TV_NUM && f->kind != PERFDB_TV_STR)
		return -1;
	char buf[32];
	if (!f->text.len || f->text.len >= sizeof(buf))
		return -1;
	memcpy(buf, f->text.buf, f->text.len);
	buf[f->text.len] = '\0';
	char *end;
	long long v = strtoll(buf, &end, 10);
	if (*end || v == INT64_MIN)
		return -1;
	*out = v;
	return 1;
}

static int field_err(struct perfdb_err *err, const struct perfdb_tevent *ev, int id,
		     const char *what)
{
	const struct perfdb_tfield *cat = &ev->f[PERFDB_TF_CAT];
	return perfdb_err_set(err, PERFDB_EPARSE, "%.*s event: \"%s\" %s", (int)cat->text.len,
			      cat->text.buf, field_names[id], what);
}

static int need_ns(const struct perfdb_tevent *ev, int id, int64_t *out, struct perfdb_err *err)
{
	if (to_ns(&ev->f[id], out))
		return 0;
	return field_err(err, ev, id, ev->f[id].kind == PERFDB_TV_ABSENT ? "is missing" :
			 "is not a number of microseconds");
}

static int need_us(const struct perfdb_tevent *ev, int id, double *out, struct perfdb_err *err)
{
	if (to_us(&ev->f[id], out))
		return 0;
	return field_err(err, ev, id, ev->f[id].kind == PERFDB_TV_ABSENT ? "is missing" :
			 "is not a non-negative number");
}

static int opt_id(const struct perfdb_tevent *ev, int id, int64_t *out, struct perfdb_err *err)
{
	if (to_id(&ev->f[id], out) >= 0)
		return 0;
	return field_err(err, ev, id, "is not an integer");
}

static int need_name(const struct perfdb_tevent *ev, struct perfdb_err *err)
{
	if (ev->f[PERFDB_TF_NAME].kind == PERFDB_TV_STR)
		return 0;
	return field_err(err, ev, PERFDB_TF_NAME, ev->f[PERFDB_TF_NAME].kind == PERFDB_TV_ABSENT ?
			 "is missing" : "is not a string");
}

static int nomem(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

/* The (pid, tid) pair as a number. */
static int thread_of(struct reader *r, const struct perfdb_tevent *ev, uint32_t *out,
		     struct perfdb_err *err)
{
	struct perfdb_strbuf *sb = &r->scratch;
	perfdb_strbuf_reset(sb);
	const struct perfdb_tfield *pid = &ev->f[PERFDB_TF_PID], *tid = &ev->f[PERFDB_TF_TID];
	if (perfdb_strbuf_addch(sb, '0' + (int)pid->kind) < 0 ||
	    perfdb_strbuf_add(sb, pid->text.buf, pid->text.len) < 0 ||
	    perfdb_strbuf_addch(sb, '\x1f') < 0 || perfdb_strbuf_addch(sb, '0' + (int)tid->kind) < 0 ||
	    perfdb_strbuf_add(sb, tid->text.buf, tid->text.len) < 0)
		return nomem(err);
	int64_t id = perfdb_strtab_intern(&r->threads, sb->buf, sb->len);
	if (id < 0)
		return nomem(err);
	*out = (uint32_t)id;
	return 0;
}

static int cpu_key(struct reader *r, const struct perfdb_tevent *ev, int64_t ts, int64_t end,
		   int64_t ext, struct perfdb_err *err);

/* A held conversion's row (trace_defer.h). */
static int emit_held(void *ctx, const struct perfdb_held *h, struct perfdb_err *err)
{
	struct reader *r = ctx;
	struct perfdb_kernel_row row;
	row_init(&row);
	row.file = r->name;
	if (perfdb_held_row(h, &row, &r->outs, &r->outt, &r->outf) < 0 ||
	    (!h->out_dtype[0] && shape_cells(r, &row) < 0))
		return nomem(err);
	return r->cpu->row(r->cpu->ctx, &row, err);
}

static int cpu_op(struct reader *r, const struct perfdb_tevent *ev, struct perfdb_err *err)
{
	int64_t ts, end, ext;
	double dur;
	PERFDB_TRY(need_name(ev, err));
	PERFDB_TRY(need_ns(ev, PERFDB_TF_TS, &ts, err));
	PERFDB_TRY(need_us(ev, PERFDB_TF_DUR, &dur, err));
	PERFDB_TRY(opt_id(ev, PERFDB_TF_EXT, &ext, err));
	end = ts + (int64_t)llround(dur * 1000.0);
	r->info->cpu_ops++;
	struct perfdb_tcells *c = &r->cells;
	perfdb_strbuf_reset(&c->shapes);
	perfdb_strbuf_reset(&c->dtypes);
	perfdb_strbuf_reset(&c->formats);
	if (ev->dims_kind == PERFDB_TV_ABSENT) {
		r->info->cpu_ops_no_shapes++;
	} else {
		int rc = ev->dims_kind == PERFDB_TV_NUM ?
			perfdb_tcells_build(c, ev->dims.buf, ev->dims.len, ev->types.buf,
					    ev->types.len) : 1;
		if (rc < 0)
			return nomem(err);
		if (rc > 0)
			return perfdb_err_set(err, PERFDB_EPARSE,
					      "cpu_op \"%s\": \"Input Dims\" is not a list of integer lists",
					      ev->f[PERFDB_TF_NAME].text.buf);
		r->info->cpu_rows++;
		if (r->cpu && r->cpu->row) {
			struct perfdb_kernel_row row;
			row_init(&row);
			PERFDB_TRY(thread_of(r, ev, &row.thread, err));
			row.timed = 1;
			row.ts_ns = ts;
			row.end_ns = end;
			/* one table name rule for CPU and GPU traces: aten::mm -> aten.mm */
			const struct perfdb_strbuf *nm = &ev->f[PERFDB_TF_NAME].text;
			if (!nm->len)
				r->info->unnamed++;   /* its row has no Type: never written, counted and said */
			if (perfdb_parse_op_table_name(nm->buf, nm->len, &r->type) < 0)
				return nomem(err);
			row.type = row.name = sb_span(&r->type);
			row.trace_name = sb_span(nm);
			row.accel_core = (struct perfdb_span){ "CPU", 3 };
			row.in_shapes = sb_span(&c->shapes);
			row.in_dtypes = sb_span(&c->dtypes);
			row.in_formats = sb_span(&c->formats);
			perfdb_strbuf_reset(&r->strides);
			if (ev->strides_kind == PERFDB_TV_NUM && ev->dims_kind == PERFDB_TV_NUM &&
			    perfdb_tcells_strides(ev->dims.buf, ev->dims.len, ev->strides.buf,
						  ev->strides.len, &r->strides) < 0)
				return nomem(err);
			row.in_strides = sb_span(&r->strides);
			perfdb_strbuf_reset(&r->dur);
			if (perfdb_strbuf_add(&r->dur, ev->f[PERFDB_TF_DUR].text.buf,
					      ev->f[PERFDB_TF_DUR].text.len) < 0)
				return nomem(err);
			row.duration = sb_span(&r->dur);
			row.file = r->name;
			if (c->unshaped_list)
				note_unshaped_list(&r->cpu_lists, nm->buf, nm->len);
			/* conversions wait for their copy_ child's dtype (trace_defer.h) */
			PERFDB_TRY(perfdb_tdefer_flush(&r->held, row.thread, ts, 0, emit_held, r, err));
			if (nm->len == 11 && memcmp(nm->buf, "aten::copy_", 11) == 0)
				perfdb_tdefer_copy(&r->held, &row);
			if (perfdb_tdefer_wants(nm->buf, nm->len)) {
				if (perfdb_tdefer_hold(&r->held, &row) < 0)
					return nomem(err);
				return cpu_key(r, ev, ts, end, ext, err);
			}
			if (shape_cells(r, &row) < 0)
				return nomem(err);
			PERFDB_TRY(r->cpu->row(r->cpu->ctx, &row, err));
		}
	}
	return cpu_key(r, ev, ts, end, ext, err);
}

/* The op's key (name, cells and what a collective's args say, 0x1f-separated)
 * and its call, for linking its device activities. */
static int cpu_key(struct reader *r, const struct perfdb_tevent *ev, int64_t ts, int64_t end,
		   int64_t ext, struct perfdb_err *err)
{
	struct perfdb_tcells *c = &r->cells;
	struct perfdb_strbuf *k = &r->scratch;
	perfdb_strbuf_reset(k);
	const struct perfdb_strbuf *nm = &ev->f[PERFDB_TF_NAME].text;
	if (perfdb_strbuf_add(k, nm->buf, nm->len) < 0 || perfdb_strbuf_addch(k, '\x1f') < 0 ||
	    perfdb_strbuf_add(k, c->shapes.buf, c->shapes.len) < 0 ||
	    perfdb_strbuf_addch(k, '\x1f') < 0 ||
	    perfdb_strbuf_add(k, c->dtypes.buf, c->dtypes.len) < 0 ||
	    perfdb_strbuf_addch(k, '\x1f') < 0 ||
	    perfdb_strbuf_add(k, c->formats.buf, c->formats.len) < 0 ||
	    perfdb_tcomm_key(ev, is_collective_annotation(ev), &r->comm_key) < 0 ||
	    perfdb_strbuf_addch(k, '\x1f') < 0 ||
	    perfdb_strbuf_add(k, r->comm_key.buf, r->comm_key.len) < 0)
		return nomem(err);
	int64_t key = perfdb_strtab_intern(&r->keys, k->buf, k->len);
	if (key < 0)
		return nomem(err);
	if (c->unshaped_list) {
		if ((size_t)key >= r->nlist_flag) {
			size_t n = (size_t)key + 1 > 2 * r->nlist_flag ? (size_t)key + 1 : 2 * r->nlist_flag;
			unsigned char *v = realloc(r->list_flag, n);
			if (!v)
				return nomem(err);
			memset(v + r->nlist_flag, 0, n - r->nlist_flag);
			r->list_flag = v;
			r->nlist_flag = n;
		}
		r->list_flag[key] = 1;
	}
	uint32_t th;
	PERFDB_TRY(thread_of(r, ev, &th, err));
	return perfdb_tlink_op(r->link, th, ts, end, ext, (uint32_t)key, err);
}

static int launch(struct reader *r, const struct perfdb_tevent *ev, struct perfdb_err *err)
{
	int64_t ts, corr, ext;
	double dur = 0;
	PERFDB_TRY(need_ns(ev, PERFDB_TF_TS, &ts, err));
	if (ev->f[PERFDB_TF_DUR].kind != PERFDB_TV_ABSENT)
		PERFDB_TRY(need_us(ev, PERFDB_TF_DUR, &dur, err));
	PERFDB_TRY(opt_id(ev, PERFDB_TF_CORR, &corr, err));
	PERFDB_TRY(opt_id(ev, PERFDB_TF_EXT, &ext, err));
	uint32_t th;
	PERFDB_TRY(thread_of(r, ev, &th, err));
	r->info->launches++;
	return perfdb_tlink_launch(r->link, th, ts, ts + (int64_t)llround(dur * 1000.0), corr, ext,
				   err);
}

static int activity(struct reader *r, const struct perfdb_tevent *ev, struct perfdb_err *err)
{
	int64_t ts, corr, dev;
	double dur;
	PERFDB_TRY(need_name(ev, err));
	PERFDB_TRY(need_ns(ev, PERFDB_TF_TS, &ts, err));
	PERFDB_TRY(need_us(ev, PERFDB_TF_DUR, &dur, err));
	PERFDB_TRY(opt_id(ev, PERFDB_TF_CORR, &corr, err));
	PERFDB_TRY(opt_id(ev, PERFDB_TF_DEVICE, &dev, err));
	if (dev == PERFDB_TLINK_NONE && to_id(&ev->f[PERFDB_TF_PID], &dev) <= 0)
		dev = -1;   /* Kineto's device pid is the device index */
	if (dev < INT32_MIN || dev > INT32_MAX)
		dev = -1;
	const struct perfdb_strbuf *nm = &ev->f[PERFDB_TF_NAME].text;
	int64_t name = perfdb_strtab_intern(&r->kernels, nm->buf, nm->len);
	if (name < 0)
		return nomem(err);
	uint32_t th;
	PERFDB_TRY(thread_of(r, ev, &th, err));
	int is_kernel = str_is(&ev->f[PERFDB_TF_CAT], "kernel");
	r->info->activities++;
	r->info->kernels += is_kernel;
	if (!r->have_first_device) {
		r->have_first_device = 1;
		r->first_device = dev;
	}
	return perfdb_tlink_device(r->link, th, ts, ts + (int64_t)llround(dur * 1000.0), corr, dur,
				   (uint32_t)name, (int32_t)dev, is_kernel, err);
}

static int flow(struct reader *r, const struct perfdb_tevent *ev, int is_start,
		struct perfdb_err *err)
{
	int64_t ts, id;
	if (!to_ns(&ev->f[PERFDB_TF_TS], &ts) || to_id(&ev->f[PERFDB_TF_ID], &id) <= 0) {
		r->info->bad_events++;   /* a flow that binds nothing: harmless */
		return 0;
	}
	uint32_t th;
	PERFDB_TRY(thread_of(r, ev, &th, err));
	r->info->flows++;
	return perfdb_tlink_flow(r->link, is_start, th, ts, id, err);
}

static int on_event(void *ctx, const struct perfdb_tevent *ev, struct perfdb_err *err)
{
	struct reader *r = ctx;
	r->info->events++;
	const struct perfdb_tfield *ph = &ev->f[PERFDB_TF_PH], *cat = &ev->f[PERFDB_TF_CAT];
	if (str_is(ph, "X")) {
		if (cat->kind == PERFDB_TV_ABSENT) {
			r->info->legacy_events++;
			return 0;
		}
		if (str_is(cat, "cpu_op") || is_collective_annotation(ev))
			return cpu_op(r, ev, err);
		if (is_launch_cat(cat))
			return launch(r, ev, err);
		if (is_device_cat(cat))
			return activity(r, ev, err);
		return 0;
	}
	if (str_is(cat, "ac2g") && (str_is(ph, "s") || str_is(ph, "f")))
		return flow(r, ev, str_is(ph, "s"), err);
	return 0;
}

/* ---- rows from the linked calls ------------------------------------------ */

static const char *device_name(const struct reader *r, int32_t dev)
{
	for (size_t i = 0; i < r->meta.ndevices; i++)
		if (r->meta.devices[i].id == dev)
			return r->meta.devices[i].name;
	return "";
}

/* "dur" sums as the shortest decimal that reads back. */
static int put_us(struct perfdb_strbuf *out, double x)
{
	perfdb_strbuf_reset(out);
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

/* Split a key back into its 5 fields. */
static void key_fields(const struct reader *r, uint32_t key, struct perfdb_span f[5])
{
	size_t len;
	const char *p = perfdb_strtab_get(&r->keys, key, &len), *e = p + len;
	for (int i = 0; i < 5; i++) {
		const char *q = i < 4 ? memchr(p, '\x1f', (size_t)(e - p)) : e;
		if (!q)
			q = e;
		f[i] = (struct perfdb_span){ p, (size_t)(q - p) };
		p = q < e ? q + 1 : e;
	}
}

static int offer(struct reader *r, struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	r->info->gpu_rows++;
	if (!r->gpu || !r->gpu->row)
		return 0;
	if (shape_cells(r, row) < 0)
		return nomem(err);
	row->accel_core = (struct perfdb_span){ "GPU", 3 };
	row->file = r->name;
	return r->gpu->row(r->gpu->ctx, row, err);
}

static int per_kernel_rows(struct reader *r, const struct perfdb_tlink_call *c,
			   const struct perfdb_span f[5], struct perfdb_err *err)
{
	for (size_t i = 0; i < c->ndev; i++) {
		const struct perfdb_tlink_dev *d = &c->dev[i];
		if (!d->is_kernel)
			continue;
		struct perfdb_kernel_row row;
		row_init(&row);
		size_t nl;
		const char *nm = perfdb_strtab_get(&r->kernels, d->name, &nl);
		row.type = row.name = row.trace_name = (struct perfdb_span){ nm, nl };
		if (c->linked) {
			row.in_shapes = f[1];
			row.in_dtypes = f[2];
			row.in_formats = f[3];
		}
		if (put_us(&r->dur, d->dur_us) < 0)
			return nomem(err);
		row.duration = sb_span(&r->dur);
		const char *dn = device_name(r, d->device);
		row.device = (struct perfdb_span){ dn, strlen(dn) };
		PERFDB_TRY(offer(r, &row, err));
	}
	return 0;
}

static int on_call(void *ctx, const struct perfdb_tlink_call *c, struct perfdb_err *err)
{
	struct reader *r = ctx;
	struct perfdb_span f[5] = { { "", 0 }, { "", 0 }, { "", 0 }, { "", 0 }, { "", 0 } };
	struct perfdb_tcomm tc;
	memset(&tc, 0, sizeof(tc));
	if (c->linked) {
		key_fields(r, c->key, f);
		if (perfdb_tcomm_resolve(f[0], f[1], f[2], f[4], &r->meta, &tc) < 0)
			return nomem(err);
		perfdb_tcomm_cells(&tc, f);
	}
	r->info->activities_linked += c->linked ? c->ndev : 0;
	if (c->linked && c->ndev && flagged(r, c->key))
		note_unshaped_list(r->info, f[0].p, f[0].len);
	if (c->ndev > r->capshares) {
		struct perfdb_kernel_share *ns = realloc(r->shares, c->ndev * sizeof(*ns));
		if (!ns)
			return nomem(err);
		r->shares = ns;
		r->capshares = c->ndev;
	}
	/* one row per device the call ran on */
	for (size_t i = 0; i < c->ndev; i++) {
		int32_t dev = c->dev[i].device;
		size_t j = 0;
		while (j < i && c->dev[j].device != dev)
			j++;
		if (j < i)
			continue;   /* that device's row is written */
		double total = 0;
		size_t ns = 0;
		for (size_t k = i; k < c->ndev; k++) {
			const struct perfdb_tlink_dev *d = &c->dev[k];
			if (d->device != dev)
				continue;
			total += d->dur_us;
			size_t nl;
			const char *nm = perfdb_strtab_get(&r->kernels, d->name, &nl);
			size_t s = 0;
			while (s < ns && !(r->shares[s].name.p == nm))
				s++;
			if (s == ns)
				r->shares[ns++] = (struct perfdb_kernel_share){ { nm, nl }, 0 };
			r->shares[s].us += d->dur_us;
		}
		const char *dn = device_name(r, dev);
		PERFDB_TRY(perfdb_tcomm_call(&tc, total, dn, r->o, r->info, err));
		if (r->o && r->o->per_kernel)
			continue;
		struct perfdb_kernel_row row;
		row_init(&row);
		if (c->linked) {
			if (perfdb_parse_op_table_name(f[0].p, f[0].len, &r->type) < 0)
				return nomem(err);
			row.type = row.name = sb_span(&r->type);
			row.trace_name = f[0];
			row.in_shapes = f[1];
			row.in_dtypes = f[2];
			row.in_formats = f[3];
		} else {
			row.type = row.name = row.trace_name = r->shares[0].name;
		}
		if (put_us(&r->dur, total) < 0)
			return nomem(err);
		row.duration = sb_span(&r->dur);
		row.device = (struct perfdb_span){ dn, strlen(dn) };
		row.shares = r->shares;
		row.nshares = ns;
		PERFDB_TRY(offer(r, &row, err));
	}
	if (r->o && r->o->per_kernel)
		return per_kernel_rows(r, c, f, err);
	return 0;
}

static void copy_meta(struct reader *r)
{
	struct perfdb_chrome_trace_info *in = r->info;
	in->ndevices = r->meta.ndevices;
	in->has_dist = r->meta.has_dist;
	in->rank = r->meta.rank;
	in->world_size = r->meta.world_size;
	snprintf(in->backend, sizeof(in->backend), "%s", r->meta.backend);
	in->has_base_time = r->meta.has_base_time;
	in->base_time_ns = r->meta.base_time_ns;
	const char *g = r->have_first_device ? device_name(r, (int32_t)r->first_device) : "";
	if (!g[0] && r->meta.ndevices)
		g = r->meta.devices[0].name;
	snprintf(in->gpu_name, sizeof(in->gpu_name), "%s", g);
}

static int read_src(struct perfdb_tsrc *src, const char *name,
		    const struct perfdb_chrome_trace_opts *opts,
		    const struct perfdb_row_sink *cpu_sink, const struct perfdb_row_sink *gpu_sink,
		    struct perfdb_chrome_trace_info *info, struct perfdb_err *err)
{
	struct reader r;
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.o = opts;
	r.cpu = cpu_sink;
	r.gpu = gpu_sink;
	r.info = info;
	perfdb_strtab_init(&r.threads);
	perfdb_strtab_init(&r.kernels);
	perfdb_strtab_init(&r.keys);
	perfdb_tcells_init(&r.cells);
	perfdb_strbuf_init(&r.scratch);
	perfdb_strbuf_init(&r.dur);
	perfdb_strbuf_init(&r.type);
	perfdb_strbuf_init(&r.outs);
	perfdb_strbuf_init(&r.outt);
	perfdb_strbuf_init(&r.outf);
	perfdb_strbuf_init(&r.comm_key);
	perfdb_strbuf_init(&r.strides);
	perfdb_tdefer_init(&r.held);
	info->gzip = src->gz;
	int rc = perfdb_tlink_new(&r.link, opts ? opts->mem_limit : 0, opts ? opts->spill_dir : NULL,
				  err);
	if (rc == 0)
		rc = perfdb_trace_stream(src, on_event, &r, &r.meta, &info->bytes, err);
	if (rc == 0)
		rc = perfdb_tdefer_flush(&r.held, 0, 0, 1, emit_held, &r, err);
	if (rc == 0) {
		struct perfdb_tlink_stats st;
		rc = perfdb_tlink_finish(r.link, on_call, &r, &st, err);
		info->spilled = st.spilled;
	}
	info->kernels_unmatched = info->activities - info->activities_linked;
	if (rc == 0 && info->activities == 0) {
		/* a CPU-only trace: its cpu_op rows are the tables */
		info->unshaped_list_ops = r.cpu_lists.unshaped_list_ops;
		memcpy(info->unshaped_list_op, r.cpu_lists.unshaped_list_op, sizeof(info->unshaped_list_op));
	}
	copy_meta(&r);
	perfdb_tlink_free(r.link);
	perfdb_strtab_release(&r.threads);
	perfdb_strtab_release(&r.kernels);
	perfdb_strtab_release(&r.keys);
	perfdb_tcells_release(&r.cells);
	perfdb_strbuf_release(&r.scratch);
	perfdb_strbuf_release(&r.dur);
	perfdb_strbuf_release(&r.type);
	free(r.list_flag);
	perfdb_strbuf_release(&r.outs);
	perfdb_strbuf_release(&r.outt);
	perfdb_strbuf_release(&r.outf);
	perfdb_strbuf_release(&r.comm_key);
	perfdb_strbuf_release(&r.strides);
	perfdb_tdefer_release(&r.held);
	free(r.shares);
	return rc;
}

int perfdb_chrome_trace_read_mem(const char *name, const void *data, size_t len,
				 const struct perfdb_chrome_trace_opts *opts,
				 const struct perfdb_row_sink *cpu_sink,
				 const struct perfdb_row_sink *gpu_sink,
				 struct perfdb_chrome_trace_info *info,
				 struct perfdb_err *err)
{
	struct perfdb_chrome_trace_info local;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	struct perfdb_tsrc src;
	int rc = perfdb_tsrc_mem(&src, name, data, len, err);
	if (rc == 0)
		rc = read_src(&src, name, opts, cpu_sink, gpu_sink, info, err);
	perfdb_tsrc_release(&src);
	return rc;
}

int perfdb_chrome_trace_read(const char *path, const struct perfdb_chrome_trace_opts *opts,
			     const struct perfdb_row_sink *cpu_sink,
			     const struct perfdb_row_sink *gpu_sink,
			     struct perfdb_chrome_trace_info *info,
			     struct perfdb_err *err)
{
	struct perfdb_chrome_trace_info local;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	struct perfdb_tsrc src;
	int rc = perfdb_tsrc_open(&src, path, err);
	if (rc == 0)
		rc = read_src(&src, path, opts, cpu_sink, gpu_sink, info, err);
	perfdb_tsrc_release(&src);
	return rc;
}
