/*
 * The pieces of the Ascend SQLite reader that its two files share
 * (ascend_db.c: the file, its schema and STRING_IDS; ascend_db_tasks.c: the
 * tasks, scanned, joined and sorted into rows).  Not an API.
 */
#ifndef PERFDB_PARSE_ASCEND_DB_H
#define PERFDB_PARSE_ASCEND_DB_H

#include <sqlite3.h>
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
