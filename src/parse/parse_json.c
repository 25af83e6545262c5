/*
 * `perfdb parse --json` (docs/parse.md "--json"): the run's tables, traces
 * and databases as one JSON document.
 */
#include <jansson.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "parse/parse.h"

int perfdb_parse_result_json(const struct perfdb_parse_result *res, const char *outdir,
			     const char *path, struct perfdb_strbuf *out)
{
	json_t *tables = json_array();
	for (size_t i = 0; i < res->ntables; i++) {
		const struct perfdb_parse_table *t = &res->tables[i];
		json_array_append_new(tables, json_pack("{s:s, s:s, s:I, s:I, s:I, s:b, s:b}",
			"file", t->path, "type", t->type, "keys", (json_int_t)t->groups,
			"added", (json_int_t)t->added, "updated", (json_int_t)t->updated,
			"created", t->created, "written", t->written));
	}
	json_t *traces = json_array();
	for (size_t i = 0; i < res->ntr; i++) {
		const struct perfdb_parse_trace *t = &res->tr[i];
		json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "file", t->path,
			"device", t->device, "gzip", t->gzip, "activities", (json_int_t)t->activities,
			"linked", (json_int_t)t->linked, "gpu_rows", (json_int_t)t->gpu_rows,
			"cpu_rows", (json_int_t)t->cpu_rows, "comm_calls", (json_int_t)t->comm_calls,
			"comm_skipped", (json_int_t)t->comm_skipped);
		if (o && t->has_dist)
			json_object_set_new(o, "distributed", json_pack("{s:I, s:I, s:s}",
				"rank", (json_int_t)t->rank, "world_size", (json_int_t)t->world_size,
				"backend", t->backend));
		json_array_append_new(traces, o);
	}
	json_t *dbs = json_array();
	for (size_t i = 0; i < res->ndbs; i++)
		json_array_append_new(dbs, json_pack("{s:s, s:b, s:s}", "device", res->dbs[i].device,
			"gpu", res->dbs[i].gpu, "database", res->dbs[i].outdir ? res->dbs[i].outdir : ""));
	json_t *j = json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
		"generated", (json_int_t)res->ntables, "database", outdir, "profiling_path", path,
		"inputs", (json_int_t)res->inputs, "bytes", (json_int_t)res->bytes,
		"rows", (json_int_t)res->totals.rows,
		"dropped_na", (json_int_t)res->totals.dropped_na,
		"invalid_durations", (json_int_t)res->totals.invalid_durations,
		"empty_type", (json_int_t)res->totals.empty_type,
		"keys", (json_int_t)res->groups, "warnings", (json_int_t)res->warnings,
		"tables", tables, "traces", traces, "databases", dbs);
	return perfdb_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
}
