/*
 * Ascend's SQLite profile exports read as kernel_details rows (docs/parse.md
 * "Ascend SQLite profiles"; issue 48): msprof --type=db (`msprof_<ts>.db`)
 * and torch_npu's export_type db (`ascend_pytorch_profiler_<rank>.db`).
 *
 * Schema (msprof's analysis DB, as published in its sources, 2025): text
 * columns hold ids into STRING_IDS(id, value); TASK(startNs, endNs,
 * globalTaskId, …) has the device times in ns; COMPUTE_TASK_INFO(name,
 * globalTaskId, blockDim, mixBlockDim, taskType, opType, inputFormats,
 * inputDataTypes, inputShapes, outputFormats, outputDataTypes, outputShapes,
 * attrInfo[, opState, hf32Eligible]) describes each compute task.  A row
 * per compute task, in device time order (as kernel_details lists them):
 * Type = opType, Name = name, OP State = opState, Accelerator Core =
 * taskType, the shape, dtype and format cells from their columns (a shape
 * cell gets kernel_details' literal quotes when the string has none),
 * Duration(us) = (endNs - startNs) / 1000, Start Time(us) = startNs / 1000,
 * Wait Time(us) = waitNs / 1000 where the column exists.
 *
 * The file is opened read-only and immutable (no lock, no journal, no -shm
 * file is made), after its header is checked; a -wal or -journal file
 * beside it is refused, because an immutable reader would not see what it
 * holds.  STRING_IDS is held in memory (its strings once each); the tasks
 * stream through SQLite's own sorter, whose memory is capped.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/hash.h"
#include "perfdb/utf8.h"
#include "parse/parse.h"

/* ---- STRING_IDS ----------------------------------------------------------- */

struct strings {
	int64_t *ids;        /* open addressing; slot empty when off == UINT32_MAX */
	uint32_t *off, *len;
	size_t cap, n;
	char *text;
	size_t tlen, tcap;
};

static void strings_release(struct strings *s)
{
	free(s->ids);
	free(s->off);
	free(s->len);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

static size_t slot_of(const struct strings *s, int64_t id)
{
	uint64_t h = perfdb_fnv1a64(&id, sizeof(id));
	size_t i = (size_t)h & (s->cap - 1);
	while (s->off[i] != UINT32_MAX && s->ids[i] != id)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int strings_grow(struct strings *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	struct strings t = { 0 };
	t.ids = malloc(cap * sizeof(*t.ids));
	t.off = malloc(cap * sizeof(*t.off));
	t.len = malloc(cap * sizeof(*t.len));
	if (!t.ids || !t.off || !t.len) {
		free(t.ids);
		free(t.off);
		free(t.len);
		return -PERFDB_ENOMEM;
	}
	memset(t.off, 0xff, cap * sizeof(*t.off));
	t.cap = cap;
	for (size_t i = 0; i < s->cap; i++)
		if (s->off[i] != UINT32_MAX) {
			size_t j = slot_of(&t, s->ids[i]);
			t.ids[j] = s->ids[i];
			t.off[j] = s->off[i];
			t.len[j] = s->len[i];
		}
	free(s->ids);
	free(s->off);
	free(s->len);
	s->ids = t.ids;
	s->off = t.off;
	s->len = t.len;
	s->cap = cap;
	return 0;
}

/* 1: added, 0: the id was there already, <0: out of memory or too much text */
static int strings_add(struct strings *s, int64_t id, const char *v, size_t len)
{
	if ((s->n + 1) * 2 > s->cap && strings_grow(s) < 0)
		return -PERFDB_ENOMEM;
	size_t i = slot_of(s, id);
	if (s->off[i] != UINT32_MAX)
		return 0;
	if (s->tlen + len + 1 > UINT32_MAX)
		return -PERFDB_EINVAL;
	if (s->tlen + len + 1 > s->tcap) {
		size_t cap = s->tcap ? s->tcap : 65536;
		while (cap < s->tlen + len + 1)
			cap *= 2;
		char *t = realloc(s->text, cap);
		if (!t)
			return -PERFDB_ENOMEM;
		s->text = t;
		s->tcap = cap;
	}
	memcpy(s->text + s->tlen, v, len);
	s->text[s->tlen + len] = '\0';
	s->ids[i] = id;
	s->off[i] = (uint32_t)s->tlen;
	s->len[i] = (uint32_t)len;
	s->tlen += len + 1;
	s->n++;
	return 1;
}

static int strings_get(const struct strings *s, int64_t id, struct perfdb_span *out)
{
	if (!s->cap)
		return 0;
	size_t i = slot_of(s, id);
	if (s->off[i] == UINT32_MAX)
		return 0;
	out->p = s->text + s->off[i];
	out->len = s->len[i];
	return 1;
}

/* ---- the file ------------------------------------------------------------- */

struct reader {
	const char *path;
	sqlite3 *db;
	struct strings str;
	struct perfdb_err *err;
};

static int db_error(struct reader *r, const char *what)
{
	int code = sqlite3_errcode(r->db);
	int ec = code == SQLITE_NOMEM ? PERFDB_ENOMEM : PERFDB_EPARSE;
	const char *why = code == SQLITE_CORRUPT || code == SQLITE_NOTADB ?
		"the file is damaged or truncated" : sqlite3_errmsg(r->db);
	return perfdb_err_set(r->err, ec, "%s: %s: %s (SQLite: %s)", r->path, what, why,
			      sqlite3_errstr(code));
}

/* A -wal or -journal file beside it holds data an immutable reader would not see. */
static int check_sidecars(const char *path, struct perfdb_err *err)
{
	static const char *const suf[] = { "-wal", "-journal" };
	for (size_t i = 0; i < 2; i++) {
		char p[4200];
		if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suf[i]) >= sizeof(p))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: path too long", path);
		struct stat st;
		if (lstat(p, &st) == 0)
			return perfdb_err_set(err, PERFDB_EPARSE,
				"%s: a %s file lies beside it: the profile was not closed (a profiler "
				"still writing, or killed); let it finish, or checkpoint it with "
				"`sqlite3 %s 'PRAGMA wal_checkpoint'` on a copy", path, p, path);
	}
	return 0;
}

/* The 16-byte SQLite header, and a file long enough to hold its first page header. */
static int check_header(const char *path, struct perfdb_err *err)
{
	int fd = perfdb_open_regular(path, err);
	if (fd < 0)
		return fd;
	unsigned char h[100];
	ssize_t n = read(fd, h, sizeof(h));
	int saved = errno;
	struct stat st;
	int stok = fstat(fd, &st) == 0;
	close(fd);
	if (n < 0)
		return perfdb_err_errno(err, saved, "cannot read '%s'", path);
	if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0)
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: not an SQLite database (no "
				      "'SQLite format 3' header at byte 0)", path);
	if (n < 100)
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: truncated: %zd bytes, shorter than "
				      "SQLite's 100-byte header", path, n);
	unsigned page = (unsigned)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
	if (stok && pages && (unsigned long long)st.st_size < (unsigned long long)pages * page)
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: truncated: %lld bytes, its header "
				      "says %u pages of %u bytes", path, (long long)st.st_size, pages, page);
	return 0;
}

/* file:<path>?immutable=1 with the path's URI-special bytes escaped. */
static char *uri_of(const char *path)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + 32);
	if (!u)
		return NULL;
	char *o = u + sprintf(u, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 || *p > 0x7e)
			o += sprintf(o, "%%%02X", *p);
		else
			*o++ = (char)*p;
	}
	strcpy(o, "?immutable=1");
	return u;
}

/* The columns of table present among want, as a bit set (1 << i: want[i]); *have = -1: no such table. */
static int columns_of(struct reader *r, const char *table, const char *const *want, size_t nwant,
		      long *have)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(r, "reading the schema");
	*have = 0;
	int rows = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows++;
		const char *nm = (const char *)sqlite3_column_text(st, 1);
		for (size_t i = 0; nm && i < nwant; i++)
			if (strcmp(nm, want[i]) == 0)
				*have |= 1L << i;
	}
	int out = rc == SQLITE_DONE ? 0 : db_error(r, "reading the schema");
	sqlite3_finalize(st);
	if (!rows)
		*have = -1;
	return out;
}

static int missing(struct reader *r, const char *table, long have, const char *const *want,
		   size_t nreq)
{
	if (have == -1)
		return perfdb_err_set(r->err, PERFDB_ESCHEMA,
			"%s: no %s table: not an Ascend profile database (msprof --type=db, or "
			"torch_npu with export_type db)", r->path, table);
	for (size_t i = 0; i < nreq; i++)
		if (!(have & (1L << i)))
			return perfdb_err_set(r->err, PERFDB_ESCHEMA,
				"%s: table %s has no column %s (schema of msprof's analysis DB, "
				"docs/parse.md \"Ascend SQLite profiles\")", r->path, table, want[i]);
	return 0;
}

static int load_strings(struct reader *r)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, "SELECT id, value FROM STRING_IDS", -1, &st, NULL) != SQLITE_OK)
		return db_error(r, "reading STRING_IDS");
	int rc, out = 0;
	size_t row = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && out == 0) {
		row++;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
			out = perfdb_err_set(r->err, PERFDB_EPARSE, "%s: STRING_IDS row %zu: id is "
					     "not an integer", r->path, row);
			break;
		}
		int vt = sqlite3_column_type(st, 1);
		if (vt != SQLITE_TEXT && vt != SQLITE_NULL) {
			out = perfdb_err_set(r->err, PERFDB_EPARSE, "%s: STRING_IDS row %zu (id %lld): "
					     "value is not text", r->path, row,
					     (long long)sqlite3_column_int64(st, 0));
			break;
		}
		const char *v = (const char *)sqlite3_column_text(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		/* the CSV reader's rule: a string perfdb writes is one it reads back */
		if (v && perfdb_utf8_check(v, len) != len) {
			out = perfdb_err_set(r->err, PERFDB_EPARSE, "%s: STRING_IDS id %lld: invalid "
					     "UTF-8 at byte %zu of its value", r->path,
					     (long long)sqlite3_column_int64(st, 0), perfdb_utf8_check(v, len));
			break;
		}
		int a = strings_add(&r->str, sqlite3_column_int64(st, 0), v ? v : "", v ? len : 0);
		if (a < 0)
			out = a == -PERFDB_ENOMEM ? perfdb_err_set(r->err, PERFDB_ENOMEM,
				"out of memory reading STRING_IDS of %s", r->path) :
				perfdb_err_set(r->err, PERFDB_EPARSE, "%s: STRING_IDS holds more than 4 GiB of text",
					       r->path);
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = db_error(r, "reading STRING_IDS");
	sqlite3_finalize(st);
	return out;
}

/* ---- tasks ---------------------------------------------------------------- */

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
static int id_of(struct reader *r, sqlite3_stmt *st, int q, int64_t gtid, int64_t *out)
{
	int t = sqlite3_column_type(st, q);
	*out = -1;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
				      "holds %s, not a STRING_IDS id", r->path, c_col[q - 1], (long long)gtid,
				      t == SQLITE_TEXT ? "text" : t == SQLITE_FLOAT ? "a real" : "a blob");
	*out = sqlite3_column_int64(st, q);
	return 0;
}

/* A new combination's ids must name strings (checked once per combination, not per task). */
static int check_ids(struct reader *r, const int64_t *k, int64_t gtid)
{
	struct perfdb_span sp;
	for (int q = 0; q < C_N; q++)
		if (k[q] != -1 && (k[q] < 0 || !strings_get(&r->str, k[q], &sp)))
			return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: COMPUTE_TASK_INFO.%s of task %lld "
					      "names STRING_IDS id %lld, which does not exist", r->path,
					      c_col[q], (long long)gtid, (long long)k[q]);
	return 0;
}

static int int_of(struct reader *r, sqlite3_stmt *st, int q, const char *what, int64_t *v, int *present)
{
	int t = sqlite3_column_type(st, q);
	*present = t != SQLITE_NULL;
	*v = 0;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: %s holds %s, not an integer", r->path, what,
				      t == SQLITE_TEXT ? "text" : t == SQLITE_FLOAT ? "a real" : "a blob");
	*v = sqlite3_column_int64(st, q);
	return 0;
}

static int scan_info(struct reader *r, int has_state, int has_wait, struct tasks *x)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT globalTaskId, name, opType, taskType, inputShapes, "
		 "inputDataTypes, inputFormats, outputShapes, outputDataTypes, outputFormats, %s, %s "
		 "FROM COMPUTE_TASK_INFO", has_state ? "opState" : "NULL", has_wait ? "waitNs" : "NULL");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(r, "reading COMPUTE_TASK_INFO");
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
		out = db_error(r, "reading COMPUTE_TASK_INFO");
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
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct reader r = { .path = x->path, .err = &x->err };
	int rc = sqlite3_open_v2(x->uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	r.db = db;
	if (rc != SQLITE_OK) {
		x->rc = db ? db_error(&r, "cannot open") : perfdb_err_set(&x->err, PERFDB_ENOMEM, "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_exec(db, "PRAGMA cache_size=-2048", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(db, "SELECT startNs, endNs, globalTaskId FROM TASK", -1, &st, NULL) != SQLITE_OK) {
		x->rc = db_error(&r, "reading TASK");
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
		out = db_error(&r, "reading TASK");
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
static int quoted(struct perfdb_strbuf *b, struct perfdb_span s, struct perfdb_span *out)
{
	if (s.len >= 2 && s.p[0] == '"' && s.p[s.len - 1] == '"') {
		*out = s;
		return 0;
	}
	perfdb_strbuf_reset(b);
	if (perfdb_strbuf_addch(b, '"') < 0 || perfdb_strbuf_add(b, s.p, s.len) < 0 ||
	    perfdb_strbuf_addch(b, '"') < 0)
		return -PERFDB_ENOMEM;
	*out = (struct perfdb_span){ b->buf, b->len };
	return 0;
}

static int emit(struct reader *r, const struct tasks *x, const struct perfdb_row_sink *sink,
		struct perfdb_csv_input_stats *stats)
{
	struct perfdb_strbuf dur = PERFDB_STRBUF_INIT, start = PERFDB_STRBUF_INIT,
			     wait = PERFDB_STRBUF_INIT, ins = PERFDB_STRBUF_INIT, outs = PERFDB_STRBUF_INIT;
	/* each combination's cells, looked up once */
	struct perfdb_span *span = malloc((x->combos.n ? x->combos.n : 1) * C_N * sizeof(*span));
	if (!span)
		return perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory");
	for (size_t c = 0; c < x->combos.n * C_N; c++)
		if (x->combos.ids[c] < 0 || !strings_get(&r->str, x->combos.ids[c], &span[c]))
			span[c] = (struct perfdb_span){ "", 0 };
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
		if ((kr.in_shapes.len && quoted(&ins, kr.in_shapes, &kr.in_shapes) < 0) ||
		    (kr.out_shapes.len && quoted(&outs, kr.out_shapes, &kr.out_shapes) < 0)) {
			out = perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory");
			break;
		}
		if (k->end != INT64_MIN && put_us(&dur, k->end - k->start) == 0)
			kr.duration = (struct perfdb_span){ dur.buf, dur.len };
		if (k->start != INT64_MIN && put_us(&start, k->start) == 0)
			kr.start = (struct perfdb_span){ start.buf, start.len };
		if (x->wait && x->wait[k->rank] != INT64_MIN && put_us(&wait, x->wait[k->rank]) == 0)
			kr.wait = (struct perfdb_span){ wait.buf, wait.len };
		stats->rows++;
		out = sink->row(sink->ctx, &kr, r->err);
	}
	perfdb_strbuf_release(&dur);
	perfdb_strbuf_release(&start);
	perfdb_strbuf_release(&wait);
	perfdb_strbuf_release(&ins);
	perfdb_strbuf_release(&outs);
	free(span);
	return out;
}

static int read_tasks(struct reader *r, const char *uri, int has_state, int has_wait,
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

int perfdb_parse_read_db(const char *path, const struct perfdb_row_sink *sink,
			 struct perfdb_csv_input_stats *stats, struct perfdb_err *err)
{
	memset(stats, 0, sizeof(*stats));
	PERFDB_TRY(check_header(path, err));
	PERFDB_TRY(check_sidecars(path, err));
	struct stat fst;
	if (stat(path, &fst) == 0)
		stats->bytes = (unsigned long long)fst.st_size;
	struct reader r = { .path = path, .err = err };
	char *uri = uri_of(path);
	if (!uri)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	/* the TASK scan opens the file again, on its own connection */
	/* NOMUTEX: one thread uses the connection, so no lock per sqlite3_column_* call */
	int rc = sqlite3_open_v2(uri, &r.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		free(uri);
		rc = r.db ? db_error(&r, "cannot open") :
			    perfdb_err_set(err, PERFDB_ENOMEM, "out of memory opening %s", path);
		sqlite3_close(r.db);
		return rc;
	}
	/* bounded memory: a 4 MiB page cache, the sorter spilling past it */
	sqlite3_exec(r.db, "PRAGMA cache_size=-4096", NULL, NULL, NULL);
	static const char *const str_cols[] = { "id", "value" };
	static const char *const task_cols[] = { "startNs", "endNs", "globalTaskId" };
	static const char *const cti_cols[] = {
		"name", "globalTaskId", "taskType", "opType", "inputShapes", "inputDataTypes",
		"inputFormats", "outputShapes", "outputDataTypes", "outputFormats", "opState", "waitNs",
	};
	long hs = 0, ht = 0, hc = 0;
	rc = columns_of(&r, "STRING_IDS", str_cols, 2, &hs);
	if (rc == 0)
		rc = columns_of(&r, "TASK", task_cols, 3, &ht);
	if (rc == 0)
		rc = columns_of(&r, "COMPUTE_TASK_INFO", cti_cols, 12, &hc);
	if (rc == 0)
		rc = missing(&r, "COMPUTE_TASK_INFO", hc, cti_cols, 10);
	if (rc == 0)
		rc = missing(&r, "TASK", ht, task_cols, 3);
	if (rc == 0)
		rc = missing(&r, "STRING_IDS", hs, str_cols, 2);
	if (rc == 0)
		rc = load_strings(&r);
	if (rc == 0)
		rc = read_tasks(&r, uri, (hc >> 10) & 1, (hc >> 11) & 1, sink, stats);
	free(uri);
	strings_release(&r.str);
	sqlite3_close(r.db);
	return rc < 0 ? rc : 0;
}
