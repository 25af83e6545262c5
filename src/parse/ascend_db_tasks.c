/*
 * The tasks of an Ascend SQLite profile (ascend_db.c opens the file and
 * loads STRING_IDS): TASK read on a second connection while
 * COMPUTE_TASK_INFO is read (ascend_db_info.c, whose chunks the second
 * thread then shares), joined by globalTaskId, sorted by (startNs,
 * globalTaskId) and handed to the sink as kernel_details rows
 * (docs/parse.md "Ascend SQLite profiles").
 *
 * Two scans instead of a join and an ORDER BY in SQL (which seeks
 * COMPUTE_TASK_INFO once per task and sorts through SQLite's sorter: 9 s
 * for a million tasks); the tasks are sorted in memory, 24 bytes each.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/hugebuf.h"
#include "parse/ascend_db.h"

struct tasks {
	struct adb_info_scan info;
	uint32_t *dense;     /* globalTaskId - lo -> info index + 1, when the ids are dense */
	int64_t lo, hi;
	struct adb_task *t;
	size_t n;
};

static void tasks_release(struct tasks *x)
{
	adb_info_release(&x->info);
	free(x->dense);
	free(x->t);
	memset(x, 0, sizeof(*x));
}

/* globalTaskIds are usually 1..n: then a task finds its row in one step */
static void index_dense(struct tasks *x)
{
	const struct adb_info_scan *s = &x->info;
	if (!s->n)
		return;
	x->lo = s->info[0].gtid;
	x->hi = s->info[s->n - 1].gtid;
	uint64_t span = (uint64_t)x->hi - (uint64_t)x->lo + 1;
	if (span > 2 * (uint64_t)s->n + 1024 || span > UINT32_MAX)
		return;
	x->dense = calloc((size_t)span, sizeof(*x->dense));
	if (!x->dense)
		return;   /* the binary search still works */
	for (size_t i = 0; i < s->n; i++)
		if (!x->dense[s->info[i].gtid - x->lo])
			x->dense[s->info[i].gtid - x->lo] = (uint32_t)i + 1;
}

static long find_info(const struct tasks *x, int64_t gtid, size_t *cursor)
{
	if (x->dense) {
		if (gtid < x->lo || gtid > x->hi)
			return -1;
		return (long)x->dense[gtid - x->lo] - 1;
	}
	/* TASK usually lists tasks in the order COMPUTE_TASK_INFO does: try the next one first */
	const struct adb_info_scan *s = &x->info;
	if (*cursor < s->n && s->info[*cursor].gtid == gtid)
		return (long)(*cursor)++;
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->info[mid].gtid < gtid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->info[lo].gtid == gtid) {
		*cursor = lo + 1;
		return (long)lo;
	}
	return -1;
}

/*
 * TASK's rows as they are (startNs, endNs, globalTaskId; INT64_MIN for
 * NULL), read on a second connection while the first reads
 * COMPUTE_TASK_INFO; then this thread takes its share of
 * COMPUTE_TASK_INFO's chunks on the same connection.
 */
struct raw_scan {
	const char *path, *uri;
	struct adb_info_scan *info;
	struct adb_task *t;      /* holds the raw triple until resolve() rewrites it in place */
	size_t n, cap;
	int rc;
	struct perfdb_err err;
};

struct raw { int64_t start, end, gtid; };   /* the same 24 bytes as struct adb_task */

static int take_raw(struct adb_take *t, sqlite3_value **v)
{
	struct raw_scan *x = t->x;
	int64_t val[3];
	int pr[3], out = 0;
	static const char *const what[3] = { "TASK.startNs", "TASK.endNs", "TASK.globalTaskId" };
	for (int q = 0; q < 3 && out == 0; q++)
		out = adb_int_of(t->r, v[q], what[q], &val[q], &pr[q]);
	if (out < 0)
		return out;
	if (!pr[2])
		return 0;   /* joins nothing */
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 4096;
		struct adb_task *nv = realloc(x->t, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(&x->err, PERFDB_ENOMEM, "out of memory reading %s", x->path);
		x->t = nv;
		x->cap = cap;
	}
	struct raw *w = (struct raw *)&x->t[x->n++];
	/* a task without both times has no duration: kept as an invalid sample */
	w->start = pr[0] ? val[0] : INT64_MIN;
	w->end = pr[0] && pr[1] ? val[1] : INT64_MIN;
	w->gtid = val[2];
	return 0;
}

static void *scan_raw(void *arg)
{
	struct raw_scan *x = arg;
	struct adb_reader r = { .path = x->path, .err = &x->err };
	if ((x->rc = adb_open(&r, x->uri, 2048)) < 0)
		return NULL;
	/* sized once from the rowids, on huge pages (see adb_info_begin) */
	int64_t lo;
	size_t bound = adb_rows_bound(&r, "TASK", &lo);
	if (bound && (x->t = perfdb_huge_alloc(bound * sizeof(*x->t), NULL)) != NULL)
		x->cap = bound;
	struct adb_take t = { .r = &r, .row = take_raw, .x = x };
	x->rc = adb_take_all(&t, "startNs, endNs, globalTaskId", 3, "TASK");
	if (x->rc == 0)
		adb_info_work(x->info, 1, r.db);
	sqlite3_close(r.db);
	return NULL;
}

/* The raw tasks joined to their compute rows in place (others dropped), in time order. */
static void resolve(struct tasks *x, struct raw_scan *raw)
{
	_Static_assert(sizeof(struct raw) == sizeof(struct adb_task), "rewritten in place");
	index_dense(x);
	size_t cursor = 0, n = 0;
	int sorted = 1;
	for (size_t i = 0; i < raw->n; i++) {
		struct raw w = *(struct raw *)&raw->t[i];
		long k = find_info(x, w.gtid, &cursor);
		if (k < 0)
			continue;   /* not a compute task (communication, memcpy, …) */
		struct adb_task *t = &raw->t[n];
		t->start = w.start;
		t->end = w.end;
		t->combo = x->info.info[k].combo;
		t->rank = (uint32_t)k;
		if (n && adb_cmp_task(&raw->t[n - 1], t) > 0)
			sorted = 0;
		n++;
	}
	x->t = raw->t;
	x->n = n;
	raw->t = NULL;
	/* the rows are done with; freed before the sort, whose copy then takes their place */
	free(x->info.info);
	x->info.info = NULL;
	free(x->dense);
	x->dense = NULL;
	if (!sorted && adb_sort_tasks(x->t, x->n, x->info.n) != 0)
		qsort(x->t, x->n, sizeof(*x->t), adb_cmp_task);
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
static struct perfdb_span *combo_cells(struct adb_reader *r, const struct adb_combos *c, char **store)
{
	size_t n = c->n * ADB_NCOL, extra = 0;
	struct perfdb_span *span = malloc((n ? n : 1) * sizeof(*span));
	if (!span)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (c->ids[i] < 0 || !adb_strings_get(&r->str, c->ids[i], &span[i]))
			span[i] = (struct perfdb_span){ "", 0 };
		int q = (int)(i % ADB_NCOL);
		if ((q == ADB_INS || q == ADB_OUTS) && needs_quotes(span[i]))
			extra += span[i].len + 2;
	}
	char *w = *store = malloc(extra ? extra : 1);
	if (!w) {
		free(span);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int q = (int)(i % ADB_NCOL);
		if ((q != ADB_INS && q != ADB_OUTS) || !needs_quotes(span[i]))
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
	const struct adb_combos *combos = &x->info.part[0].combos;
	const int64_t *waits = x->info.wait;
	struct perfdb_span *span = combo_cells(r, combos, &store);
	/* the sink's memo per combination, when it keeps one */
	uint32_t *memo = sink->row_memo ? calloc(combos->n ? combos->n : 1, sizeof(*memo)) : NULL;
	if (!span || (sink->row_memo && !memo)) {
		free(span);
		free(store);
		free(memo);
		return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory");
	}
	int out = 0;
	for (size_t i = 0; i < x->n && out == 0; i++) {
		const struct adb_task *k = &x->t[i];
		struct perfdb_kernel_row kr;
		memset(&kr, 0, sizeof(kr));
		kr.file = r->path;
		struct perfdb_span *cell[ADB_NCOL] = {
			&kr.name, &kr.type, &kr.accel_core, &kr.in_shapes, &kr.in_dtypes, &kr.in_formats,
			&kr.out_shapes, &kr.out_dtypes, &kr.out_formats, &kr.op_state,
		};
		for (int q = 0; q < ADB_NCOL; q++)
			*cell[q] = span[(size_t)k->combo * ADB_NCOL + q];
		/* an end - start past 64 bits (a damaged or crafted file) is no duration either */
		int fits = k->start < 0 ? k->end <= INT64_MAX + k->start : k->end >= INT64_MIN + k->start;
		if (k->end != INT64_MIN && fits && put_us(&dur, k->end - k->start) == 0)
			kr.duration = (struct perfdb_span){ dur.buf, dur.len };
		if (k->start != INT64_MIN && put_us(&start, k->start) == 0)
			kr.start = (struct perfdb_span){ start.buf, start.len };
		if (waits && waits[k->rank] != INT64_MIN && put_us(&wait, waits[k->rank]) == 0)
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
	int rc = adb_info_begin(&x.info, r, has_state, has_wait);
	if (rc < 0) {
		tasks_release(&x);
		return rc;
	}
	struct raw_scan raw = { .path = r->path, .uri = uri, .info = &x.info };
	pthread_t th;
	int threaded = pthread_create(&th, NULL, scan_raw, &raw) == 0;
	if (!threaded)
		scan_raw(&raw);
	adb_info_work(&x.info, 0, r->db);
	if (threaded)
		pthread_join(th, NULL);
	/* one error, the same whatever finished first: COMPUTE_TASK_INFO's lowest row's, then TASK's */
	rc = adb_info_end(&x.info);
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
