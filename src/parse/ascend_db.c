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
 * holds.  STRING_IDS is held in memory (its strings once each), and so
 * are the tasks, 40-odd bytes each, read on two threads and sorted by
 * time in memory (ascend_db_info.c, ascend_db_tasks.c).
 */
#include <errno.h>
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
#include "parse/ascend_db.h"
#include "parse/parse.h"

/* ---- STRING_IDS ----------------------------------------------------------- */


void adb_strings_release(struct adb_strings *s)
{
	free(s->ids);
	free(s->off);
	free(s->len);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

static size_t slot_of(const struct adb_strings *s, int64_t id)
{
	uint64_t h = perfdb_fnv1a64(&id, sizeof(id));
	size_t i = (size_t)h & (s->cap - 1);
	while (s->off[i] != UINT32_MAX && s->ids[i] != id)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int strings_grow(struct adb_strings *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	struct adb_strings t = { 0 };
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
static int strings_add(struct adb_strings *s, int64_t id, const char *v, size_t len)
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

int adb_strings_get(const struct adb_strings *s, int64_t id, struct perfdb_span *out)
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

int adb_db_error(struct adb_reader *r, const char *what)
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
static int check_header(const char *path, unsigned long long *size, struct perfdb_err *err)
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
	*size = stok ? (unsigned long long)st.st_size : 0;
	return 0;
}

int adb_open(struct adb_reader *r, const char *uri, int cache_kib)
{
	/* NOMUTEX: one thread uses each connection, so no lock per sqlite3_column_* call */
	int rc = sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = r->db ? adb_db_error(r, "cannot open") :
			     perfdb_err_set(r->err, PERFDB_ENOMEM, "out of memory opening %s", r->path);
		sqlite3_close(r->db);
		r->db = NULL;
		return rc;
	}
	/* bounded memory: the page cache is capped */
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA cache_size=-%d", cache_kib);
	sqlite3_exec(r->db, pragma, NULL, NULL, NULL);
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

int adb_columns(struct adb_reader *r, const char *table, const char *const *want, size_t nwant,
		      long *have)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(r, "reading the schema");
	*have = 0;
	int rows = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows++;
		const char *nm = (const char *)sqlite3_column_text(st, 1);
		for (size_t i = 0; nm && i < nwant; i++)
			if (strcmp(nm, want[i]) == 0)
				*have |= 1L << i;
	}
	int out = rc == SQLITE_DONE ? 0 : adb_db_error(r, "reading the schema");
	sqlite3_finalize(st);
	if (!rows)
		*have = -1;
	return out;
}

static int missing(struct adb_reader *r, const char *table, long have, const char *const *want,
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

int adb_load_strings(struct adb_reader *r)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(r->db, "SELECT id, value FROM STRING_IDS", -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(r, "reading STRING_IDS");
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
		out = adb_db_error(r, "reading STRING_IDS");
	sqlite3_finalize(st);
	return out;
}

int perfdb_parse_read_db(const char *path, const struct perfdb_row_sink *sink,
			 struct perfdb_comm_agg *comm, struct perfdb_csv_input_stats *stats,
			 struct perfdb_err *err)
{
	memset(stats, 0, sizeof(*stats));
	PERFDB_TRY(check_header(path, &stats->bytes, err));
	PERFDB_TRY(check_sidecars(path, err));
	struct adb_reader r = { .path = path, .err = err };
	/* the TASK scan opens the file again, on its own connection */
	char *uri = uri_of(path);
	if (!uri)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = adb_open(&r, uri, 4096);
	if (rc < 0) {
		free(uri);
		return rc;
	}
	static const char *const str_cols[] = { "id", "value" };
	static const char *const task_cols[] = { "startNs", "endNs", "globalTaskId" };
	static const char *const cti_cols[] = {
		"name", "globalTaskId", "taskType", "opType", "inputShapes", "inputDataTypes",
		"inputFormats", "outputShapes", "outputDataTypes", "outputFormats", "opState", "waitNs",
	};
	long hs = 0, ht = 0, hc = 0;
	rc = adb_columns(&r, "STRING_IDS", str_cols, 2, &hs);
	if (rc == 0)
		rc = adb_columns(&r, "TASK", task_cols, 3, &ht);
	if (rc == 0)
		rc = adb_columns(&r, "COMPUTE_TASK_INFO", cti_cols, 12, &hc);
	if (rc == 0)
		rc = missing(&r, "COMPUTE_TASK_INFO", hc, cti_cols, 10);
	if (rc == 0)
		rc = missing(&r, "TASK", ht, task_cols, 3);
	if (rc == 0)
		rc = missing(&r, "STRING_IDS", hs, str_cols, 2);
	if (rc == 0)
		rc = adb_load_strings(&r);
	if (rc == 0)
		rc = adb_read_tasks(&r, uri, (hc >> 10) & 1, (hc >> 11) & 1, sink, stats);
	if (rc == 0 && comm)
		rc = adb_read_comm(&r, comm, stats);
	free(uri);
	adb_strings_release(&r.str);
	sqlite3_close(r.db);
	return rc < 0 ? rc : 0;
}
