/*
 * `perfdb comm-suite --json` (docs/comm.md "comm-suite"): the planned
 * launches (--dry-run), or the launches as they went and the tables they
 * left, as one JSON document.
 */
#include <jansson.h>
#include <stdlib.h>

#include "comm/comm.h"
#include "perfdb/json_out.h"

int perfdb_comm_suite_plan_json(const struct perfdb_comm_suite *s, struct perfdb_strbuf *out)
{
	json_t *launches = json_array();
	for (size_t i = 0; i < s->nlaunch; i++) {
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		perfdb_comm_argv_format(s->launch[i].argv, &sb);
		json_array_append_new(launches, json_pack("{s:s, s:s}", "title", s->launch[i].title,
							  "command", sb.buf));
		perfdb_strbuf_release(&sb);
	}
	return perfdb_json_dump(launches, JSON_INDENT(2), out);
}

int perfdb_comm_suite_json(const struct perfdb_comm_suite *s,
			   const struct perfdb_comm_suite_result *r, const char *outdir,
			   struct perfdb_strbuf *out)
{
	json_t *launches = json_array(), *tables = json_array();
	for (size_t i = 0; i < r->nlaunch; i++) {
		const struct perfdb_comm_launch_result *l = &r->launch[i];
		json_array_append_new(launches, json_pack("{s:s, s:s, s:i, s:f, s:b}", "title", l->title,
							  "command", l->command, "status", l->status,
							  "seconds", l->seconds, "ok", l->ok));
	}
	for (size_t i = 0; i < r->ntables; i++)
		json_array_append_new(tables, json_pack("{s:s, s:I}", "file", r->tables[i].file,
							"rows", (json_int_t)r->tables[i].rows));
	json_t *root = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:b}", "output_dir", outdir,
				 "mode", s->multi_node ? "multi-node" : "single-node",
				 "hosts", (json_int_t)s->nhosts, "nproc", (json_int_t)s->nproc,
				 "world", (json_int_t)s->world, "launches", launches,
				 "tables", tables, "ok", !r->nfailed);
	return perfdb_json_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6), out);
}
