/*
 * COMPUTE_TASK_INFO of an Ascend SQLite profile: each compute task's
 * globalTaskId and its cells as an interned combination of STRING_IDS ids.
 *
 * It is the widest table (thirteen columns a task) and SQLite's decoding
 * of it is most of a parse, so it is read by two threads on two
 * connections: each takes the next chunk of rowids until none is left
 * (the second thread joins once it has read TASK), and stores each task
 * at its rowid's place in one array sized from the rowids, so the chunks
 * need no merging; each thread interns into its own combinations, merged
 * at the end (a few hundred).  Without a rowid bound the table is read in
 * one pass by the first thread, appending.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/hugebuf.h"
#include "parse/ascend_db.h"

/* 8,192 rows, about 2 ms each: the threads end within a chunk of each
 * other, and a chunk's seek (a few pages) is noise beside its rows. */
#define CHUNK_ROWS ((int64_t)1 << 13)
#define TAG1 ((uint32_t)1 << 31)

static const char *const c_col[ADB_NCOL] = {
	"name", "opType", "taskType", "inputShapes", "inputDataTypes", "inputFormats",
	"outputShapes", "outputDataTypes", "outputFormats", "opState",
};

static uint64_t combo_hash(const int64_t *k)
{
	uint64_t h = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < ADB_NCOL; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	return h;
}

static int combos_grow(struct adb_combos *c)
{
	size_t scap = c->scap ? c->scap * 2 : 1024;
	uint32_t *s = calloc(scap, sizeof(*s));
	if (!s)
		return -PERFDB_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		size_t j = (size_t)combo_hash(c->ids + i * ADB_NCOL) & (scap - 1);
		while (s[j])
			j = (j + 1) & (scap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(c->slot);
	c->slot = s;
	c->scap = scap;
	return 0;
}

/* k's index among the combinations (added when new), or -PERFDB_ENOMEM */
static long combos_intern(struct adb_combos *c, const int64_t *k)
{
	if (c->n >= TAG1 - 2)
		return -PERFDB_ENOMEM;   /* the ids would reach the tag bit */
	if ((c->n + 1) * 2 > c->scap && combos_grow(c) < 0)
		return -PERFDB_ENOMEM;
	c->fresh = 0;
	size_t j = (size_t)combo_hash(k) & (c->scap - 1);
	while (c->slot[j]) {
		if (memcmp(c->ids + (size_t)(c->slot[j] - 1) * ADB_NCOL, k, ADB_NCOL * sizeof(*k)) == 0)
			return (long)c->slot[j] - 1;
		j = (j + 1) & (c->scap - 1);
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		int64_t *v = realloc(c->ids, cap * ADB_NCOL * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		c->ids = v;
		c->cap = cap;
	}
	memcpy(c->ids + c->n * ADB_NCOL, k, ADB_NCOL * sizeof(*k));
	c->slot[j] = (uint32_t)c->n + 1;
	c->fresh = 1;
	return (long)c->n++;
}

static void combos_release(struct adb_combos *c)
{
	free(c->ids);
	free(c->slot);
	memset(c, 0, sizeof(*c));
}

/* An id column: its value (-1 for NULL), or an error naming the task and the column. */
static int id_of(struct adb_reader *r, sqlite3_value *v, int q, int64_t gtid, int64_t *out)
{
	int t = sqlite3_value_type(v);
	*out = -1;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
				      "holds %s, not a STRING_IDS id", r->path, c_col[q], (long long)gtid,
				      adb_type_name(t));
	*out = sqlite3_value_int64(v);
	return 0;
}

/* A new combination's ids must name strings (checked once per combination, not per task). */
static int check_ids(struct adb_reader *r, const int64_t *k, int64_t gtid)
{
	struct perfdb_span sp;
	for (int q = 0; q < ADB_NCOL; q++)
		if (k[q] != -1 && (k[q] < 0 || !adb_strings_get(&r->str, k[q], &sp)))
			return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
					      "names STRING_IDS id %lld, which does not exist", r->path,
					      c_col[q], (long long)gtid, (long long)k[q]);
	return 0;
}

static int grow(struct adb_info_scan *s, struct adb_reader *r)
{
	size_t cap = s->cap ? 2 * s->cap : 4096;
	struct adb_info *v = realloc(s->info, cap * sizeof(*v));
	if (v)
		s->info = v;
	int64_t *w = v && s->has_wait ? realloc(s->wait, cap * sizeof(*w)) : NULL;
	if (w)
		s->wait = w;
	if (!v || (s->has_wait && !w))
		return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory reading %s", r->path);
	s->cap = cap;
	return 0;
}

/* One row: rowid (NULL when appending), globalTaskId, the ADB_NCOL id columns, waitNs. */
static int take_info(struct adb_take *t, sqlite3_value **v)
{
	struct adb_info_part *p = t->x;
	struct adb_info_scan *s = p->s;
	struct adb_reader *r = &p->r;
	int64_t rowid = sqlite3_value_int64(v[0]), gtid, k[ADB_NCOL], w;
	int present, pw, out;
	if ((out = adb_int_of(r, v[1], "COMPUTE_TASK_INFO.globalTaskId", &gtid, &present)) < 0)
		goto fail;
	if (!present)
		return 0;   /* joins no task */
	for (int q = 0; q < ADB_NCOL && out == 0; q++)
		out = id_of(r, v[q + 2], q, gtid, &k[q]);
	if (out == 0)
		out = adb_int_of(r, v[ADB_NCOL + 2], "COMPUTE_TASK_INFO.waitNs", &w, &pw);
	if (out < 0)
		goto fail;
	long c = combos_intern(&p->combos, k);
	if (c < 0) {
		out = perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory reading %s", r->path);
		goto fail;
	}
	if (p->combos.fresh && (out = check_ids(r, k, gtid)) < 0)
		goto fail;
	size_t i;
	if (s->span) {
		if (rowid < s->lo || (uint64_t)rowid - (uint64_t)s->lo >= s->span) {
			out = perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO row %lld lies "
					     "outside the rowids it had when the scan began", r->path,
					     (long long)rowid);
			goto fail;
		}
		i = (size_t)((uint64_t)rowid - (uint64_t)s->lo);
	} else {
		if (s->n == s->cap && (out = grow(s, r)) < 0)
			goto fail;
		i = s->n++;
	}
	/* + 1: 0 marks a rowid that holds no task */
	s->info[i].gtid = gtid;
	s->info[i].combo = ((uint32_t)c + 1) | p->tag;
	if (s->has_wait)
		s->wait[i] = pw ? w : INT64_MIN;
	return 0;
fail:
	p->err_row = rowid;
	return out;
}

int adb_info_begin(struct adb_info_scan *s, struct adb_reader *r, int has_state, int has_wait)
{
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->has_state = has_state;
	s->has_wait = has_wait;
	atomic_init(&s->next, 0);
	atomic_init(&s->stop, 0);
	for (int k = 0; k < 2; k++) {
		s->part[k].s = s;
		s->part[k].err_row = INT64_MAX;
		s->part[k].tag = k ? TAG1 : 0;
	}
	/*
	 * Allocated once at the bound on huge pages: grown by doubling, the
	 * arrays faulted in 4 KiB at a time (a tenth of a parse on this VM)
	 * and were copied whenever realloc() could not grow them in place.
	 */
	size_t span = adb_rows_bound(r, "COMPUTE_TASK_INFO", &s->lo);
	if (!span)
		return 0;
	s->info = perfdb_huge_alloc(span * sizeof(*s->info), NULL);
	s->wait = has_wait ? perfdb_huge_alloc(span * sizeof(*s->wait), NULL) : NULL;
	if (!s->info || (has_wait && !s->wait))
		return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory reading %s", r->path);
	s->span = s->cap = span;
	return 0;
}

void adb_info_work(struct adb_info_scan *s, int k, sqlite3 *db)
{
	struct adb_info_part *p = &s->part[k];
	p->r = *s->r;
	p->r.db = db;
	p->r.err = &p->err;
	if (!s->span && k)
		return;   /* one pass, the first thread's */
	char cols[256];
	snprintf(cols, sizeof(cols), "%s, globalTaskId, name, opType, taskType, inputShapes, "
		 "inputDataTypes, inputFormats, outputShapes, outputDataTypes, outputFormats, %s, %s",
		 s->span ? "rowid" : "NULL", s->has_state ? "opState" : "NULL",
		 s->has_wait ? "waitNs" : "NULL");
	struct adb_take t = { .r = &p->r, .row = take_info, .x = p };
	p->rc = adb_take_open(&t, cols, ADB_NCOL + 3, "COMPUTE_TASK_INFO",
			      s->span ? "rowid BETWEEN ?1 AND ?2" : NULL);
	if (p->rc < 0)
		p->err_row = INT64_MIN;
	while (p->rc == 0 && s->span && !atomic_load(&s->stop)) {
		/* chunks go out in rowid order, so a chunk left untaken after a
		 * failure lies above it: the error reported is the lowest row's */
		int64_t c = atomic_fetch_add(&s->next, 1);
		if ((uint64_t)c * (uint64_t)CHUNK_ROWS >= s->span)
			break;
		int64_t range[2] = { s->lo + c * CHUNK_ROWS, s->lo + c * CHUNK_ROWS + CHUNK_ROWS - 1 };
		if ((p->rc = adb_take_run(&t, range)) < 0 && p->err_row == INT64_MAX)
			p->err_row = range[0];
	}
	if (p->rc == 0 && !s->span)
		p->rc = adb_take_run(&t, NULL);
	if (p->rc < 0)
		atomic_store(&s->stop, 1);
	adb_take_close(&t);
}

static int cmp_info(const void *a, const void *b)
{
	const struct adb_info *x = a, *y = b;
	return x->gtid < y->gtid ? -1 : x->gtid > y->gtid;
}

/* info (and wait beside it) by globalTaskId */
static int sort_info(struct adb_info_scan *s)
{
	if (!s->has_wait) {
		qsort(s->info, s->n, sizeof(*s->info), cmp_info);
		return 0;
	}
	struct iw { struct adb_info i; int64_t wait; } *v = malloc((s->n ? s->n : 1) * sizeof(*v));
	if (!v)
		return perfdb_err_set(s->r->err, PERFDB_ENOMEM, "out of memory reading %s", s->r->path);
	for (size_t i = 0; i < s->n; i++)
		v[i] = (struct iw){ s->info[i], s->wait[i] };
	qsort(v, s->n, sizeof(*v), cmp_info);   /* struct adb_info leads: gtid first */
	for (size_t i = 0; i < s->n; i++) {
		s->info[i] = v[i].i;
		s->wait[i] = v[i].wait;
	}
	free(v);
	return 0;
}

int adb_info_end(struct adb_info_scan *s)
{
	struct adb_info_part *p0 = &s->part[0], *p1 = &s->part[1];
	if (p0->rc < 0 || p1->rc < 0) {
		const struct adb_info_part *e = p1->rc < 0 && (p0->rc == 0 || p1->err_row < p0->err_row) ? p1 : p0;
		*s->r->err = e->err;
		return e->rc;
	}
	/* the second part's combinations, as the first's ids */
	uint32_t *map = malloc((p1->combos.n ? p1->combos.n : 1) * sizeof(*map));
	if (!map)
		return perfdb_err_set(s->r->err, PERFDB_ENOMEM, "out of memory reading %s", s->r->path);
	for (size_t i = 0; i < p1->combos.n; i++) {
		long c = combos_intern(&p0->combos, p1->combos.ids + i * ADB_NCOL);
		if (c < 0) {
			free(map);
			return perfdb_err_set(s->r->err, PERFDB_ENOMEM, "out of memory reading %s", s->r->path);
		}
		map[i] = (uint32_t)c;
	}
	size_t all = s->span ? s->span : s->n, n = 0;
	int sorted = 1;
	for (size_t i = 0; i < all; i++) {
		uint32_t c = s->info[i].combo;
		if (!c)
			continue;   /* no task at this rowid */
		c = c & TAG1 ? map[(c & ~TAG1) - 1] : c - 1;
		if (n && s->info[n - 1].gtid > s->info[i].gtid)
			sorted = 0;
		s->info[n] = (struct adb_info){ s->info[i].gtid, c };
		if (s->has_wait)
			s->wait[n] = s->wait[i];
		n++;
	}
	free(map);
	s->n = n;
	return sorted ? 0 : sort_info(s);
}

void adb_info_release(struct adb_info_scan *s)
{
	for (int k = 0; k < 2; k++)
		combos_release(&s->part[k].combos);
	free(s->info);
	free(s->wait);
	s->info = NULL;
	s->wait = NULL;
}
