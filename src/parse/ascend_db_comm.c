/*
 * An Ascend SQLite profile's collectives (COMMUNICATION_OP) into the comm
 * tables (src/parse/ascend_db.h; docs/parse.md "Comm tables from profiles").
 *
 * One COMMUNICATION_OP row is one call of a collective on this device:
 * opType (`hcom_allReduce_`), dataType (an ENUM_HCCL_DATA_TYPE id), count
 * (elements of that type, the HCCL call's count), groupName (the
 * communicator) and its start and end in ns.  The group's size is not in
 * the row: torch_npu records each communicator's ranks in META_DATA's
 * `parallel_group_info` (JSON keyed by the groupName string, each with
 * `global_ranks`), which msprof-analyze joins the same way.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascend_db.h"
#include "comm_agg.h"

/* ENUM_HCCL_DATA_TYPE as msprof documents it, for a file without the table. */
static const char *const hccl_types[] = {
	"INT8", "INT16", "INT32", "FP16", "FP32", "INT64", "UINT64", "UINT8", "UINT16", "UINT32",
	"FP64", "BFP16", "INT128",
};

static enum perfdb_dtype hccl_dtype(const char *name)
{
	static const struct {
		const char *name;
		enum perfdb_dtype t;
	} map[] = {
		{ "INT8", PERFDB_DTYPE_INT8 }, { "INT16", PERFDB_DTYPE_INT16 },
		{ "INT32", PERFDB_DTYPE_INT32 }, { "FP16", PERFDB_DTYPE_FLOAT16 },
		{ "FP32", PERFDB_DTYPE_FLOAT }, { "INT64", PERFDB_DTYPE_INT64 },
		{ "UINT64", PERFDB_DTYPE_UINT64 }, { "UINT8", PERFDB_DTYPE_UINT8 },
		{ "UINT16", PERFDB_DTYPE_UINT16 }, { "UINT32", PERFDB_DTYPE_UINT32 },
		{ "FP64", PERFDB_DTYPE_FLOAT64 }, { "BFP16", PERFDB_DTYPE_BF16 },
	};
	for (size_t i = 0; name && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].name, name) == 0)
			return map[i].t;
	return PERFDB_DTYPE_UNKNOWN;
}

struct comm_ctx {
	struct adb_reader *r;
	enum perfdb_dtype types[256];   /* by ENUM_HCCL_DATA_TYPE id (ids past 255: unknown) */
	json_t *groups;                 /* parallel_group_info, or NULL */
};

/* 1 when table exists with every column of want, 0 when not (or lacking one: *have says which). */
static int table_has(struct adb_reader *r, const char *table, const char *const *want, size_t n, long *have)
{
	PERFDB_TRY(adb_columns(r, table, want, n, have));
	return *have == (1L << n) - 1;
}

static int load_types(struct comm_ctx *c)
{
	for (size_t i = 0; i < 256; i++)
		c->types[i] = i < sizeof(hccl_types) / sizeof(hccl_types[0]) ? hccl_dtype(hccl_types[i])
									  : PERFDB_DTYPE_UNKNOWN;
	static const char *const want[] = { "id", "name" };
	long cols;
	int has = table_has(c->r, "ENUM_HCCL_DATA_TYPE", want, 2, &cols);
	if (has <= 0)
		return has;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->r->db, "SELECT id, name FROM ENUM_HCCL_DATA_TYPE", -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(c->r, "reading ENUM_HCCL_DATA_TYPE");
	for (size_t i = 0; i < 256; i++)
		c->types[i] = PERFDB_DTYPE_UNKNOWN;   /* the file's own table decides */
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id >= 0 && id < 256)
			c->types[id] = hccl_dtype((const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : adb_db_error(c->r, "reading ENUM_HCCL_DATA_TYPE");
}

static int load_groups(struct comm_ctx *c)
{
	static const char *const want[] = { "name", "value" };
	long cols;
	int has = table_has(c->r, "META_DATA", want, 2, &cols);
	if (has <= 0)
		return has;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->r->db, "SELECT value FROM META_DATA WHERE name = 'parallel_group_info'",
			       -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(c->r, "reading META_DATA");
	int rc = sqlite3_step(st), out = 0;
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT) {
		json_error_t je;
		c->groups = json_loadb((const char *)sqlite3_column_text(st, 0),
				       (size_t)sqlite3_column_bytes(st, 0), 0, &je);
		if (!c->groups || !json_is_object(c->groups))
			out = perfdb_err_set(c->r->err, PERFDB_EPARSE,
				"%s: META_DATA parallel_group_info is not a JSON object (line %d, column %d: %s)",
				c->r->path, je.line, je.column, c->groups ? "not an object" : je.text);
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		out = adb_db_error(c->r, "reading META_DATA");
	}
	sqlite3_finalize(st);
	return out;
}

/* The communicator's size from parallel_group_info, or 0. */
static long group_size(const struct comm_ctx *c, const char *name)
{
	json_t *g = c->groups ? json_object_get(c->groups, name) : NULL;
	json_t *ranks = g ? json_object_get(g, "global_ranks") : NULL;
	return json_is_array(ranks) ? (long)json_array_size(ranks) : 0;
}

/* A text column's STRING_IDS value, or an error naming the row. */
static int text_of(struct comm_ctx *c, sqlite3_stmt *st, int col, const char *what, size_t row,
		   struct perfdb_span *out)
{
	if (sqlite3_column_type(st, col) != SQLITE_INTEGER)
		return perfdb_err_set(c->r->err, PERFDB_EPARSE, "%s: COMMUNICATION_OP.%s of row %zu is not "
				      "a STRING_IDS id", c->r->path, what, row);
	sqlite3_int64 id = sqlite3_column_int64(st, col);
	if (!adb_strings_get(&c->r->str, id, out))
		return perfdb_err_set(c->r->err, PERFDB_EPARSE, "%s: COMMUNICATION_OP.%s of row %zu is "
				      "id %lld, which STRING_IDS lacks", c->r->path, what, row, (long long)id);
	return 0;
}

static void skip(struct perfdb_csv_input_stats *stats, const char *why, const char *group)
{
	if (!stats->comm_skipped++)
		snprintf(stats->comm_skip, sizeof(stats->comm_skip), "%s%s%.64s%s", why,
			 group ? " '" : "", group ? group : "", group ? "'" : "");
}

static int read_ops(struct comm_ctx *c, struct perfdb_comm_agg *agg,
		    struct perfdb_csv_input_stats *stats)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->r->db, "SELECT opType, dataType, count, groupName, startNs, endNs "
			       "FROM COMMUNICATION_OP ORDER BY startNs", -1, &st, NULL) != SQLITE_OK)
		return adb_db_error(c->r, "reading COMMUNICATION_OP");
	int rc, out = 0;
	size_t row = 0;
	char group[256];
	while (out == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		row++;
		struct perfdb_span op, grp;
		if ((out = text_of(c, st, 0, "opType", row, &op)) < 0 ||
		    (out = text_of(c, st, 3, "groupName", row, &grp)) < 0)
			break;
		int kind = perfdb_comm_obs_op(op.p, op.len);
		if (kind < 0)
			continue;   /* broadcast, send, ...: no comm table */
		snprintf(group, sizeof(group), "%.*s", (int)(grp.len < 255 ? grp.len : 255), grp.p);
		sqlite3_int64 dt = sqlite3_column_int64(st, 1);
		enum perfdb_dtype t = dt >= 0 && dt < 256 ? c->types[dt] : PERFDB_DTYPE_UNKNOWN;
		double cnt = sqlite3_column_double(st, 2);
		long n = group_size(c, group);
		if (sqlite3_column_type(st, 4) != SQLITE_INTEGER || sqlite3_column_type(st, 5) != SQLITE_INTEGER) {
			skip(stats, "no start or end time", NULL);
			continue;
		}
		sqlite3_int64 t0 = sqlite3_column_int64(st, 4), t1 = sqlite3_column_int64(st, 5);
		if (!n) {
			skip(stats, "no group size: META_DATA parallel_group_info lacks the group", group);
			continue;
		}
		if (!perfdb_dtype_bytes(t, 1) || !(cnt >= 1) || cnt > 1e15 || cnt != (double)(long long)cnt ||
		    t1 < t0) {
			skip(stats, "no dtype size, element count or duration", NULL);
			continue;
		}
		struct perfdb_comm_obs o = {
			(enum perfdb_comm_op)kind, (long long)cnt * (long long)perfdb_dtype_bytes(t, 1), n,
			perfdb_comm_obs_dtype(t), "profiled:hccl", (double)(t1 - t0) / 1000.0,
		};
		stats->comm_calls++;
		if ((out = perfdb_comm_agg_add(agg, &o, c->r->err)) < 0)
			break;
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = adb_db_error(c->r, "reading COMMUNICATION_OP");
	sqlite3_finalize(st);
	return out;
}

int adb_read_comm(struct adb_reader *r, struct perfdb_comm_agg *agg, struct perfdb_csv_input_stats *stats)
{
	static const char *const want[] = { "opType", "dataType", "count", "groupName", "startNs", "endNs" };
	long cols;
	int has = table_has(r, "COMMUNICATION_OP", want, 6, &cols);
	if (has < 0 || cols == -1)
		return has < 0 ? has : 0;
	if (!has) {
		/* an older or a foreign layout: the compute tables still come; its rows are said */
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM COMMUNICATION_OP", -1, &st, NULL) != SQLITE_OK)
			return adb_db_error(r, "reading COMMUNICATION_OP");
		sqlite3_int64 nrows = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
		if (!nrows)
			return 0;
		stats->comm_skipped = (size_t)nrows;
		for (size_t i = 0; i < 6; i++)
			if (!(cols & (1L << i))) {
				snprintf(stats->comm_skip, sizeof(stats->comm_skip),
					 "table COMMUNICATION_OP has no column %s", want[i]);
				break;
			}
		return 0;
	}
	struct comm_ctx c = { .r = r };
	int rc = load_types(&c);
	if (rc == 0)
		rc = load_groups(&c);
	if (rc == 0)
		rc = read_ops(&c, agg, stats);
	json_decref(c.groups);
	return rc;
}
