/*
 * A table of an Ascend SQLite profile read through an application-defined
 * aggregate over its rows (`SELECT perfdb_take(cols…) FROM T`): the
 * aggregate's step receives each row's values as they stand in SQLite's
 * registers.  Stepping a result row per task and fetching each of its
 * columns with a call of its own spent a quarter of the CPU of a
 * million-task parse in those calls' per-call checks (docs/measuring.md
 * "Ascend SQLite profiles").  A step that fails fills the scan's error and
 * stops the statement with SQLITE_ERROR.
 */
#include <sqlite3.h>
#include <stdio.h>

#include "parse/ascend_db.h"

static void take_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct adb_take *t = sqlite3_user_data(ctx);
	if (t->rc == 0 && (t->rc = t->row(t, argv)) < 0)
		sqlite3_result_error(ctx, "perfdb_take", -1);
}

static void take_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

/* SQLite's failure while reading t's table */
static int take_error(struct adb_take *t)
{
	char what[64];
	snprintf(what, sizeof(what), "reading %s", t->table);
	return adb_db_error(t->r, what);
}

int adb_take_open(struct adb_take *t, const char *cols, int ncols, const char *table, const char *where)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT perfdb_take(%s) FROM %s%s%s", cols, table, where ? " WHERE " : "",
		 where ? where : "");
	t->table = table;
	t->st = NULL;
	if (sqlite3_create_function_v2(t->r->db, "perfdb_take", ncols, SQLITE_UTF8 | SQLITE_DIRECTONLY, t,
				       NULL, take_step, take_final, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(t->r->db, sql, -1, &t->st, NULL) != SQLITE_OK)
		return take_error(t);
	return 0;
}

int adb_take_run(struct adb_take *t, const int64_t *range)
{
	int rc;
	if (range && (sqlite3_bind_int64(t->st, 1, range[0]) != SQLITE_OK ||
		      sqlite3_bind_int64(t->st, 2, range[1]) != SQLITE_OK))
		rc = SQLITE_ERROR;
	else
		while ((rc = sqlite3_step(t->st)) == SQLITE_ROW)
			;
	int out = t->rc;
	if (out == 0 && rc != SQLITE_DONE)
		out = take_error(t);
	sqlite3_reset(t->st);
	return out;
}

void adb_take_close(struct adb_take *t)
{
	sqlite3_finalize(t->st);
	t->st = NULL;
}

int adb_take_all(struct adb_take *t, const char *cols, int ncols, const char *table)
{
	int rc = adb_take_open(t, cols, ncols, table, NULL);
	if (rc == 0)
		rc = adb_take_run(t, NULL);
	adb_take_close(t);
	return rc;
}

const char *adb_type_name(int type)
{
	return type == SQLITE_TEXT ? "text" : type == SQLITE_FLOAT ? "a real" : "a blob";
}

int adb_int_of(struct adb_reader *r, sqlite3_value *sv, const char *what, int64_t *v, int *present)
{
	int t = sqlite3_value_type(sv);
	*present = t != SQLITE_NULL;
	*v = 0;
	if (t == SQLITE_NULL)
		return 0;
	if (t != SQLITE_INTEGER)
		return perfdb_err_set(r->err, PERFDB_EPARSE, "%s: %s holds %s, not an integer", r->path, what,
				      adb_type_name(t));
	*v = sqlite3_value_int64(sv);
	return 0;
}

size_t adb_rows_bound(struct adb_reader *r, const char *table, int64_t *lo)
{
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s), "
		 "(SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size())",
		 table, table);
	sqlite3_stmt *st;
	size_t out = 0;
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	    sqlite3_column_type(st, 1) == SQLITE_INTEGER) {
		int64_t a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1),
			bytes = sqlite3_column_int64(st, 2);
		/*
		 * Rowids sparser than one per 24 bytes of file are not sized by:
		 * each array sized from them (24 bytes a rowid at most) then
		 * stays within the file's own size, however the rowids were
		 * chosen, where a real profile's rows take 30-90 bytes each.
		 * Within these limits the difference cannot overflow.
		 */
		if (a >= -(INT64_C(1) << 62) && b <= (INT64_C(1) << 62) && b >= a && b - a < bytes / 24 &&
		    b - a < INT32_MAX / 2) {
			*lo = a;
			out = (size_t)(b - a) + 1;
		}
	}
	sqlite3_finalize(st);
	return out;
}
