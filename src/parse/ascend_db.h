/*
 * The pieces of the Ascend SQLite reader that its files share
 * (ascend_db.c: the file, its schema and STRING_IDS; ascend_db_take.c: a
 * table's rows handed to a function; ascend_db_info.c: COMPUTE_TASK_INFO
 * read on two threads; ascend_db_tasks.c: TASK, joined to it and sorted
 * (ascend_db_sort.c) into rows; ascend_db_comm.c: COMMUNICATION_OP).  Not
 * an API.
 */
#ifndef PERFDB_PARSE_ASCEND_DB_H
#define PERFDB_PARSE_ASCEND_DB_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

#include "parse/parse.h"

/* STRING_IDS: id -> text, open addressing; a slot is empty when off == UINT32_MAX */
struct adb_strings {
	int64_t *ids;        /* open addressing; slot empty when off == UINT32_MAX */
	uint32_t *off, *len;
	size_t cap, n;
	char *text;
	size_t tlen, tcap;
};

struct adb_reader {
	const char *path;
	sqlite3 *db;
	struct adb_strings str;
	struct perfdb_err *err;
};

/* STRING_IDS into r->str (checked: integer ids, UTF-8 text). */
int adb_load_strings(struct adb_reader *r);
void adb_strings_release(struct adb_strings *s);

/* The text of a STRING_IDS id: 1, or 0 when there is none. */
int adb_strings_get(const struct adb_strings *s, int64_t id, struct perfdb_span *out);

/* r->db opened read-only and immutable on uri (file:…?immutable=1), its page
 * cache capped at cache_kib KiB; on failure the error is in r->err. */
int adb_open(struct adb_reader *r, const char *uri, int cache_kib);

/* The columns of table present among want, as a bit set (1 << i: want[i]);
 * *have = -1: no such table. */
int adb_columns(struct adb_reader *r, const char *table, const char *const *want, size_t nwant,
		long *have);

/* SQLite's failure as a one-line error naming the file and what was read. */
int adb_db_error(struct adb_reader *r, const char *what);

/*
 * A table's rows handed to row() one at a time, by an application-defined
 * aggregate (`SELECT perfdb_take(cols) FROM table [WHERE where]`) on
 * r->db.  row() returns 0 or an error it has filled in; the first error
 * stops the statement, and the run returns it.
 */
struct adb_take {
	struct adb_reader *r;
	int (*row)(struct adb_take *t, sqlite3_value **v);
	void *x;                 /* row()'s own */
	int rc;                  /* row()'s first error */
	const char *table;
	sqlite3_stmt *st;
};

int adb_take_open(struct adb_take *t, const char *cols, int ncols, const char *table, const char *where);
/* One run of the statement; range: ?1 and ?2 of where, or NULL. */
int adb_take_run(struct adb_take *t, const int64_t *range);
void adb_take_close(struct adb_take *t);
/* open, run and close, over the whole table */
int adb_take_all(struct adb_take *t, const char *cols, int ncols, const char *table);

/* A value's type as an error message names it: "text", "a real", "a blob". */
const char *adb_type_name(int type);

/* An integer column (*present = 0 for NULL), or an error naming what. */
int adb_int_of(struct adb_reader *r, sqlite3_value *sv, const char *what, int64_t *v, int *present);

/*
 * How many rows table can hold at most, from its first and last rowid (two
 * index seeks, not a count), *lo the first; 0 when there is no usable bound
 * (no rowid, an empty table, rowids sparser than one per 24 bytes of file).
 */
size_t adb_rows_bound(struct adb_reader *r, const char *table, int64_t *lo);

/* ---- COMPUTE_TASK_INFO (ascend_db_info.c) ----------------------------------- */

/* The columns a compute task's cells come from, in the order of combos' ids. */
enum { ADB_NAME, ADB_OPTYPE, ADB_TASKTYPE, ADB_INS, ADB_IND, ADB_INF, ADB_OUTS, ADB_OUTD, ADB_OUTF,
       ADB_STATE, ADB_NCOL };

/* Cell combinations as ADB_NCOL STRING_IDS ids each (-1: NULL), interned:
 * a profile repeats a few hundred of them. */
struct adb_combos {
	int64_t *ids;
	size_t n, cap;
	int fresh;           /* the last intern added a combination */
	uint32_t *slot;      /* open addressing: index + 1, 0 empty */
	size_t scap;
};

struct adb_info {        /* one compute task */
	int64_t gtid;
	uint32_t combo;
};

struct adb_info_scan;

struct adb_info_part {   /* what one thread read */
	struct adb_info_scan *s;
	struct adb_combos combos;
	struct adb_reader r;     /* its connection; the shared STRING_IDS; err -> &err */
	struct perfdb_err err;
	int rc;
	int64_t err_row;         /* the rowid of its error, INT64_MAX for none */
	uint32_t tag;            /* marks its combination ids until they are merged */
};

/*
 * COMPUTE_TASK_INFO read by one or two threads, each taking chunks of
 * rowids until none is left, each task stored at its rowid's place; then
 * merged: info[0..n) sorted by globalTaskId, combination ids into
 * part[0].combos, wait[i] the task's waitNs (INT64_MIN for NULL) when
 * has_wait.
 */
struct adb_info_scan {
	struct adb_reader *r;
	int has_state, has_wait;
	int64_t lo;              /* the first rowid */
	size_t span;             /* rowids in [lo, lo + span): stored by rowid; 0: appended in order */
	atomic_long next;        /* the next chunk to take */
	atomic_int stop;         /* a part failed: no more chunks */
	struct adb_info *info;
	int64_t *wait;
	size_t n, cap;
	struct adb_info_part part[2];
};

/* Sizes the arrays from the table's rowids; 0 or an out-of-memory error. */
int adb_info_begin(struct adb_info_scan *s, struct adb_reader *r, int has_state, int has_wait);
/* Part k (0: the caller's connection, 1: a second one, db) reads its share. */
void adb_info_work(struct adb_info_scan *s, int k, sqlite3 *db);
/* The parts merged; the error of the lowest row any part failed on, in s->r->err. */
int adb_info_end(struct adb_info_scan *s);
void adb_info_release(struct adb_info_scan *s);

/* ---- the compute tasks (ascend_db_sort.c) ---------------------------------- */

struct adb_task {        /* one TASK row that has compute info */
	int64_t start, end;      /* ns; INT64_MIN: NULL */
	uint32_t combo, rank;    /* rank: its globalTaskId's place among them, for ties */
};

/* (start, rank), a missing start first: qsort's comparator, and the order
 * adb_sort_tasks gives */
int adb_cmp_task(const void *a, const void *b);

/* t in adb_cmp_task's order, stable (ranks below nrank); 1 when it cannot,
 * and t is left as it was: sort with qsort and adb_cmp_task instead. */
int adb_sort_tasks(struct adb_task *t, size_t n, size_t nrank);

/* The compute tasks in time order into sink (uri: the file, for the second connection). */
int adb_read_tasks(struct adb_reader *r, const char *uri, int has_state, int has_wait,
		   const struct perfdb_row_sink *sink, struct perfdb_csv_input_stats *stats);

/* COMMUNICATION_OP's all_reduce, all_gather, reduce_scatter and all_to_all
 * calls into agg (ascend_db_comm.c); calls that cannot be sized are counted
 * in stats. */
struct perfdb_comm_agg;
int adb_read_comm(struct adb_reader *r, struct perfdb_comm_agg *agg,
		  struct perfdb_csv_input_stats *stats);

#endif
