/*
 * The --json summary of a finished run (writeback and microbench
 * --json, docs/replay.md): each table's counts, the gaps, the report files.
 */
#include <jansson.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "replay/replay.h"

int perfdb_finish_result_json(const struct perfdb_finish_result *r, struct perfdb_strbuf *out)
{
	const struct perfdb_wb_result *wb = &r->wb;
	json_t *files = json_array();
	for (size_t i = 0; i < wb->nfiles; i++) {
		const struct perfdb_wb_file *f = &wb->files[i];
		json_array_append_new(files, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
			"file", f->path, "operator", f->stem, "updated", (json_int_t)f->updated,
			"added", (json_int_t)f->added, "deleted", (json_int_t)f->ndeleted,
			"unchanged", (json_int_t)f->unchanged, "missing", (json_int_t)f->nmissing,
			"duplicates", (json_int_t)f->ndups, "written", f->written));
	}
	json_t *j = json_pack("{s:o, s:I, s:s, s:s}", "tables", files, "gaps", (json_int_t)wb->ngaps,
			      "report", r->md_path, "hotspots_csv", r->csv_path);
	return perfdb_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
}
