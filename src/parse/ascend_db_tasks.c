/*
 * The tasks of an Ascend SQLite profile (ascend_db.c opens the file and
 * loads STRING_IDS): COMPUTE_TASK_INFO and TASK scanned on two connections
 * at once, joined by globalTaskId, sorted by (startNs, globalTaskId) and
 * handed to the sink as kernel_details rows (docs/parse.md "Ascend SQLite
 * profiles").
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ascend_db.h"

/*
 * Two sequential scans instead of a join and an ORDER BY in SQL (which
 * seeks COMPUTE_TASK_INFO once per task and sorts through SQLite's
 * sorter: 9 s for a million tasks): COMPUTE_TASK_INFO in its own order
 * gives each task's cells as a combination of STRING_IDS ids, interned
 * (a profile repeats a few hundred of them), then TASK gives the times;
 * the tasks are sorted by (startNs, globalTaskId) in memory, 24 bytes each.
 */
enum { C_NAME, C_OPTYPE, C_TASKTYPE, C_INS, C_IND, C_INF, C_OUTS, C_OUTD, C_OUTF, C_STATE, C_N };

static const char *const c_col[C_N] = {
	"name", "opType", "taskType", "inputShapes", "inputDataTypes", "inputFormats",
	"outputShapes", "outputDataTypes", "outputFormats", "opState",
};

struct combos {
	int64_t *ids;        /* C_N per combination; -1: NULL */
	size_t n, cap;
	int fresh;           /* the last intern added a combination */
	uint32_t *slot;      /* open addressing: index + 1, 0 empty */
	size_t scap;
};

static uint64_t combo_hash(const int64_t *k)
{
	uint64_t h = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < C_N; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	return h;
}

static int combos_grow(struct combos *c)
{
	size_t scap = c->scap ? c->scap * 2 : 1024;
	uint32_t *s = calloc(scap, sizeof(*s));
	if (!s)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		size_t j = (size_t)combo_hash(c->ids + i * C_N) & (scap - 1);
		while (s[j])
			j = (j + 1) & (scap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(c->slot);
	c->slot = s;
	c->scap = scap;
	return 0;
}

static long combos_intern(struct combos *c, const int64_t *k)
{
	if ((c->n + 1) * 2 > c->scap && combos_grow(c) < 0)
		return -PERFDB_ENOMEM;
	c->fresh = 0;
	size_t j = (size_t)combo_hash(k) & (c->scap - 1);
	while (c->slot[j]) {
		if (memcmp(c->ids + (size_t)(c->slot[j] - 1) * C_N, k, C_N * sizeof(*k)) == 0)
			return (long)c->slot[j] - 1;
		j = (j + 1) & (c->scap - 1);
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		int64_t *v = realloc(c->ids, cap * C_N * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		c->ids = v;
		c->cap = cap;
	}
	memcpy(c->ids + c->n * C_N, k, C_N * sizeof(*k));
	c->slot[j] = (uint32_t)c->n + 1;
	c->fresh = 1;
	return (long)c->n++;
}

struct info {            /* one COMPUTE_TASK_INFO row */
	int64_t gtid;
	uint32_t combo;
};

struct task {            /* one TASK row that has compute info */
	int64_t start, end;
	uint32_t combo, rank;   /* rank: its globalTaskId's place among them, for ties */
};

struct tasks {
	struct combos combos;
	struct info *info;
	size_t ninfo, capinfo;
	uint32_t *dense;     /* globalTaskId - lo -> info index + 1, when the ids are dense */
	int64_t lo, hi;
	int64_t *wait;       /* per info row, when the column exists */
	struct task *t;
	size_t n, cap;
};

static void tasks_release(struct tasks *x)
{
	free(x->combos.ids);
	free(x->combos.slot);
	free(x->info);
	free(x->dense);
	free(x->wait);
	free(x->t);
	memset(x, 0, sizeof(*x));
}

static int cmp_info(const void *a, const void *b)
{
	const struct info *x = a, *y = b;
	return x->gtid < y->gtid ? -1 : x->gtid > y->gtid;
}

static int cmp_task(const void *a, const void *b)
{
	const struct task *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* An id column: its value (-1 for NULL), or an error naming the task and the column. */
static int id_of(struct adb_reader *r, sqlite3_stmt *st, int q, int64_t gtid, int64_t *out)
{
	/* one column call, then the value's own accessors: a third of a
	 * million-task parse went to the column calls' per-call checks */
	sqlite3_value *v = sqlite3_column_value(st, q);
	int t = sqlite3_value_type(v);
	*out = -1;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
				      "holds %s, not a STRING_IDS id", r->path, c_col[q - 1], (long long)gtid,
				      t == SQLITE_TEXT ? "text" : t == SQLITE_FLOAT ? "a real" : "a blob");
	*out = sqlite3_value_int64(v);
	return 0;
}

/* A new combination's ids must name strings (checked once per combination, not per task). */
static int check_ids(struct adb_reader *r, const int64_t *k, int64_t gtid)
{
	struct perfdb_span sp;
	for (int q = 0; q < C_N; q++)
		if (k[q] != -1 && (k[q] < 0 || !adb_strings_get(&r->str, k[q], &sp)))
			return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
					      "names STRING_IDS id %lld, which does not exist", r->path,
					      c_col[q], (long long)gtid, (long long)k[q]);
	return 0;
}

static int int_of(struct adb_reader *r, sqlite3_stmt *st, int q, const char *what, int64_t *v, int *present)
{
	sqlite3_value *sv = sqlite3_column_value(st, q);
	int t = sqlite3_value_type(sv);
	*present = t != SQLITE_NULL;
	*v = 0;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: %s holds %s, not an integer", r->path, what,
				      t == SQLITE_TEXT ? "text" : t == SQLITE_FLOAT ? "a real" : "a blob");
	*v = sqlite3_value_int64(sv);
	return 0;
}

static int scan_info(struct adb_reader *r, int has_state, int has_wait, struct tasks *x)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT globalTaskId, name, opType, taskType, inputShapes, "
		 "inputDataTypes, inputFormats, outputShapes, outputDataTypes, outputFormats, %s, %s "
		 "FROM COMPUTE_TASK_INFO", has_state ? "opState" : "NULL", has_wait ? "waitNs" : "NULL");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(r, "reading COMPUTE_TASK_INFO");
	int rc, out = 0, sorted = 1;
	while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gtid, k[C_N], w;
		int present, pw;
		if ((out = int_of(r, st, 0, "COMPUTE_TASK_INFO.globalTaskId", &gtid, &present)) < 0)
			break;
		if (!present)
			continue;   /* joins no task */
		for (int q = 0; q < C_N && out == 0; q++)
			out = id_of(r, st, q + 1, gtid, &k[q]);
		if (out == 0)
			out = int_of(r, st, 11, "COMPUTE_TASK_INFO.waitNs", &w, &pw);
		if (out < 0)
			break;
		long c = combos_intern(&x->combos, k);
		if (c >= 0 && x->combos.fresh && (out = check_ids(r, k, gtid)) < 0)
			break;
		if (c >= 0 && x->ninfo == x->capinfo) {
			size_t cap = x->capinfo ? 2 * x->capinfo : 4096;
			struct info *v = realloc(x->info, cap * sizeof(*v));
			if (v)
				x->info = v;
			int64_t *wv = v && has_wait ? realloc(x->wait, cap * sizeof(*wv)) : NULL;
			if (wv)
				x->wait = wv;
			if (v && (!has_wait || wv))
				x->capinfo = cap;
			else
				c = -PERFDB_ENOMEM;
		}
		if (c < 0) {
			out = perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory reading %s", r->path);
			break;
		}
		if (x->ninfo && x->info[x->ninfo - 1].gtid > gtid)
			sorted = 0;
		x->info[x->ninfo].gtid = gtid;
		x->info[x->ninfo].combo = (uint32_t)c;
		if (has_wait)
			x->wait[x->ninfo] = pw ? w : INT64_MIN;
		x->ninfo++;
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = adb_db_error(r, "reading COMPUTE_TASK_INFO");
	sqlite3_finalize(st);
	if (out == 0 && !sorted && !has_wait) {
		qsort(x->info, x->ninfo, sizeof(*x->info), cmp_info);
	} else if (out == 0 && !sorted) {
		/* each wait travels with its row */
		struct iw { struct info i; int64_t wait; } *v = malloc((x->ninfo ? x->ninfo : 1) * sizeof(*v));
		if (!v)
			return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory reading %s", r->path);
		for (size_t i = 0; i < x->ninfo; i++)
			v[i] = (struct iw){ x->info[i], x->wait[i] };
		qsort(v, x->ninfo, sizeof(*v), cmp_info);   /* struct info leads: gtid first */
		for (size_t i = 0; i < x->ninfo; i++) {
			x->info[i] = v[i].i;
			x->wait[i] = v[i].wait;
		}
		free(v);
	}
	return out;
}

/* globalTaskIds are usually 1..n: then a task finds its row in one step */
static void index_dense(struct tasks *x)
{
	if (!x->ninfo)
		return;
	x->lo = x->info[0].gtid;
	x->hi = x->info[x->ninfo - 1].gtid;
	uint64_t span = (uint64_t)x->hi - (uint64_t)x->lo + 1;
	if (span > 2 * (uint64_t)x->ninfo + 1024 || span > UINT32_MAX)
		return;
	x->dense = calloc((size_t)span, sizeof(*x->dense));
	if (!x->dense)
		return;   /* the binary search still works */
	for (size_t i = 0; i < x->ninfo; i++)
		if (!x->dense[x->info[i].gtid - x->lo])
			x->dense[x->info[i].gtid - x->lo] = (uint32_t)i + 1;
}

static long find_info(const struct tasks *x, int64_t gtid, size_t *cursor)
{
	if (x->dense) {
		if (gtid < x->lo || gtid > x->hi)
			return -1;
		return (long)x->dense[gtid - x->lo] - 1;
	}
	/* TASK usually lists tasks in the order COMPUTE_TASK_INFO does: try the next one first */
	if (*cursor < x->ninfo && x->info[*cursor].gtid == gtid)
		return (long)(*cursor)++;
	size_t lo = 0, hi = x->ninfo;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->info[mid].gtid < gtid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->ninfo && x->info[lo].gtid == gtid) {
		*cursor = lo + 1;
		return (long)lo;
	}
	return -1;
}

/*
 * TASK's rows as they are (startNs, endNs, globalTaskId; INT64_MIN for
 * NULL), read on a second connection while the first reads
 * COMPUTE_TASK_INFO: the two scans are independent, and take the two cores.
 */
struct raw_scan {
	const char *path, *uri;
	struct task *t;      /* holds the raw triple until resolve() rewrites it in place */
	size_t n, cap;
	int rc;
	struct perfdb_err err;
};

struct raw { int64_t start, end, gtid; };   /* the same 24 bytes as struct task */

static void *scan_raw(void *arg)
{
	struct raw_scan *x = arg;
	sqlite3_stmt *st = NULL;
	struct adb_reader r = { .path = x->path, .err = &x->err };
	if ((x->rc = adb_open(&r, x->uri, 2048)) < 0)
		return NULL;
	sqlite3 *db = r.db;
	int rc;
	if (sqlite3_prepare_v2(db, "SELECT startNs, endNs, globalTaskId FROM TASK", -1, &st, NULL) != SQLITE_OK) {
		x->rc = adb_db_error(&r, "reading TASK");
		sqlite3_close(db);
		return NULL;
	}
	int out = 0;
	while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t v[3];
		int pr[3];
		static const char *const what[3] = { "TASK.startNs", "TASK.endNs", "TASK.globalTaskId" };
		for (int q = 0; q < 3 && out == 0; q++)
			out = int_of(&r, st, q, what[q], &v[q], &pr[q]);
		if (out < 0)
			break;
		if (!pr[2])
			continue;   /* joins nothing */
		if (x->n == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 4096;
			struct task *nv = realloc(x->t, cap * sizeof(*nv));
			if (!nv) {
				out = perfdb_err_set(&x->err, PERFDB_ENOMEM, "out of memory reading %s", x->path);
				break;
			}
			x->t = nv;
			x->cap = cap;
		}
		struct raw *w = (struct raw *)&x->t[x->n++];
		/* a task without both times has no duration: kept as an invalid sample */
		w->start = pr[0] ? v[0] : INT64_MIN;
		w->end = pr[0] && pr[1] ? v[1] : INT64_MIN;
		w->gtid = v[2];
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = adb_db_error(&r, "reading TASK");
	sqlite3_finalize(st);
	sqlite3_close(db);
	x->rc = out;
	return NULL;
}

/* The raw tasks joined to their compute rows in place (others dropped), in time order. */
static void resolve(struct tasks *x, struct raw_scan *raw)
{
	_Static_assert(sizeof(struct raw) == sizeof(struct task), "rewritten in place");
	index_dense(x);
	size_t cursor = 0, n = 0;
	int sorted = 1;
	for (size_t i = 0; i < raw->n; i++) {
		struct raw w = *(struct raw *)&raw->t[i];
		long k = find_info(x, w.gtid, &cursor);
		if (k < 0)
			continue;   /* not a compute task (communication, memcpy, …) */
		struct task *t = &raw->t[n];
		t->start = w.start;
		t->end = w.end;
		t->combo = x->info[k].combo;
		t->rank = (uint32_t)k;
		if (n && cmp_task(&raw->t[n - 1], t) > 0)
			sorted = 0;
		n++;
	}
	x->t = raw->t;
	x->n = n;
	x->cap = raw->cap;
	raw->t = NULL;
	/* the rows are done with; freed before the sort, whose copy then takes their place */
	free(x->info);
	x->info = NULL;
	free(x->dense);
	x->dense = NULL;
	if (!sorted)
		qsort(x->t, x->n, sizeof(*x->t), cmp_task);
}

/* ns as µs with three decimals, exactly: "12.345" */
static int put_us(struct perfdb_strbuf *b, int64_t ns)
{
	char tmp[32], *p = tmp + sizeof(tmp);
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	for (int i = 0; i < 3; i++, a /= 10)
		*--p = (char)('0' + a % 10);
	*--p = '.';
	do {
		*--p = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	if (ns < 0)
		*--p = '-';
	perfdb_strbuf_reset(b);
	return perfdb_strbuf_add(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* kernel_details writes a shape cell in literal quotes ("4,8;4,8"); so does this reader. */
static int needs_quotes(struct perfdb_span s)
{
	return s.len && !(s.len >= 2 && s.p[0] == '"' && s.p[s.len - 1] == '"');
}

/*
 * Each combination's cells, looked up once, its shape cells quoted into
 * one block (*store, the caller's to free).
 */
static struct perfdb_span *combo_cells(struct adb_reader *r, const struct combos *c, char **store)
{
	size_t n = c->n * C_N, extra = 0;
	struct perfdb_span *span = malloc((n ? n : 1) * sizeof(*span));
	if (!span)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (c->ids[i] < 0 || !adb_strings_get(&r->str, c->ids[i], &span[i]))
			span[i] = (struct perfdb_span){ "", 0 };
		int q = (int)(i % C_N);
		if ((q == C_INS || q == C_OUTS) && needs_quotes(span[i]))
			extra += span[i].len + 2;
	}
	char *w = *store = malloc(extra ? extra : 1);
	if (!w) {
		free(span);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int q = (int)(i % C_N);
		if ((q != C_INS && q != C_OUTS) || !needs_quotes(span[i]))
			continue;
		w[0] = '"';
		memcpy(w + 1, span[i].p, span[i].len);
		w[span[i].len + 1] = '"';
		span[i] = (struct perfdb_span){ w, span[i].len + 2 };
		w += span[i].len;
	}
	return span;
}

static int emit(struct adb_reader *r, const struct tasks *x, const struct perfdb_row_sink *sink,
		struct perfdb_csv_input_stats *stats)
{
	struct perfdb_strbuf dur = PERFDB_STRBUF_INIT, start = PERFDB_STRBUF_INIT,
			     wait = PERFDB_STRBUF_INIT;
	char *store = NULL;
	struct perfdb_span *span = combo_cells(r, &x->combos, &store);
	/* the sink's memo per combination, when it keeps one */
	uint32_t *memo = sink->row_memo ? calloc(x->combos.n ? x->combos.n : 1, sizeof(*memo)) : NULL;
	if (!span || (sink->row_memo && !memo)) {
		free(span);
		free(store);
		free(memo);
		return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory");
	}
	int out = 0;
	for (size_t i = 0; i < x->n && out == 0; i++) {
		const struct task *k = &x->t[i];
		struct perfdb_kernel_row kr;
		memset(&kr, 0, sizeof(kr));
		kr.file = r->path;
		struct perfdb_span *cell[C_N] = {
			&kr.name, &kr.type, &kr.accel_core, &kr.in_shapes, &kr.in_dtypes, &kr.in_formats,
			&kr.out_shapes, &kr.out_dtypes, &kr.out_formats, &kr.op_state,
		};
		for (int q = 0; q < C_N; q++)
			*cell[q] = span[(size_t)k->combo * C_N + q];
		if (k->end != INT64_MIN && put_us(&dur, k->end - k->start) == 0)
			kr.duration = (struct perfdb_span){ dur.buf, dur.len };
		if (k->start != INT64_MIN && put_us(&start, k->start) == 0)
			kr.start = (struct perfdb_span){ start.buf, start.len };
		if (x->wait && x->wait[k->rank] != INT64_MIN && put_us(&wait, x->wait[k->rank]) == 0)
			kr.wait = (struct perfdb_span){ wait.buf, wait.len };
		stats->rows++;
		out = memo ? sink->row_memo(sink->ctx, &kr, &memo[k->combo], r->err)
			   : sink->row(sink->ctx, &kr, r->err);
	}
	perfdb_strbuf_release(&dur);
	perfdb_strbuf_release(&start);
	perfdb_strbuf_release(&wait);
	free(span);
	free(store);
	free(memo);
	return out;
}

int adb_read_tasks(struct adb_reader *r, const char *uri, int has_state, int has_wait,
		   const struct perfdb_row_sink *sink, struct perfdb_csv_input_stats *stats)
{
	struct tasks x;
	memset(&x, 0, sizeof(x));
	struct raw_scan raw = { .path = r->path, .uri = uri };
	pthread_t th;
	int threaded = pthread_create(&th, NULL, scan_raw, &raw) == 0;
	if (!threaded)
		scan_raw(&raw);
	int rc = scan_info(r, has_state, has_wait, &x);
	if (threaded)
		pthread_join(th, NULL);
	/* one error, the same whatever finished first: COMPUTE_TASK_INFO's, then TASK's */
	if (rc == 0 && raw.rc < 0) {
		*r->err = raw.err;
		rc = raw.rc;
	}
	if (rc == 0) {
		resolve(&x, &raw);
		rc = emit(r, &x, sink, stats);
	}
	free(raw.t);
	tasks_release(&x);
	return rc;
}

