/*
 * The --json summary of a finished run (writeback and microbench
 * --json, docs/replay.md): each table's counts, the gaps, the report files,
 * and for a replay its run status (the status JSON's lists, counted, with
 * the failed and contended rows and their reasons).
 */
#include <jansson.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "replay/replay.h"

/* [{"row": …, "reason": …}] of a status list. */
static json_t *rows_of(const struct perfdb_status_failure *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "row", v[i].op, "reason", v[i].reason));
	return a;
}

int perfdb_finish_result_json(const struct perfdb_finish_result *r, const struct perfdb_status *st,
			      struct perfdb_strbuf *out)
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
	if (st) {
		json_t *sj = json_pack("{s:I, s:I, s:o, s:o}", "success", (json_int_t)st->nsuccess,
			"skipped", (json_int_t)st->nskipped, "failed", rows_of(st->failed, st->nfailed),
			"contended", rows_of(st->contended, st->ncontended));
		if (sj && st->has_rows)
			json_object_set_new(sj, "rows", perfdb_status_rows_json(st));
		json_object_set_new(j, "status", sj);
	}
	return perfdb_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
}
