/*
 * `perfdb grid --json` (docs/grid.md "--json"): a run's files and totals as
 * one JSON document.
 */
#include <jansson.h>
#include <stdlib.h>

#include "perfdb/json_out.h"
#include "grid/grid.h"

static const char *status_name(enum perfdb_grid_file_status s)
{
	switch (s) {
	case PERFDB_GRID_FILE_APPENDED:
		return "appended";
	case PERFDB_GRID_FILE_NO_GENERATOR:
		return "no_generator";
	case PERFDB_GRID_FILE_NO_TEMPLATE:
		return "no_template";
	case PERFDB_GRID_FILE_NO_NEW_ROWS:
		return "no_new_rows";
	}
	return "?";
}

int perfdb_grid_session_json(const struct perfdb_grid_session *s, const char *db,
			     struct perfdb_strbuf *out)
{
	json_t *files = json_array();
	for (size_t i = 0; i < s->res.nfiles; i++) {
		const struct perfdb_grid_file *f = &s->res.files[i];
		json_t *cols = json_array();
		for (size_t k = 0; k < f->ncols_added; k++)
			json_array_append_new(cols, json_string(f->cols_added[k]));
		json_array_append_new(files, json_pack(
			"{s:s, s:s, s:s?, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:b}",
			"file", f->path, "kernel", f->kernel, "pattern", f->pattern,
			"status", status_name(f->status), "candidates", (json_int_t)f->candidates,
			"sampled", (json_int_t)f->sampled, "hbm_filtered", (json_int_t)f->hbm_filtered,
			"time_filtered", (json_int_t)f->time_filtered,
			"duplicates", (json_int_t)f->duplicates, "appended", (json_int_t)f->appended,
			"columns_added", cols, "written", f->written));
	}
	json_t *ms = json_array();
	for (size_t i = 0; i < s->models.n; i++)
		json_array_append_new(ms, json_string(s->models.v[i].id));
	json_t *j = json_pack(
		"{s:s, s:b, s:o, s:b, s:s, s:s?, s:I, s:o, s:b, s:I, s:f, s:I, s:I, s:I, s:o}",
		"database", db, "dry_run", s->go.dry_run, "models", ms,
		"models_given", s->go.models_given, "config", s->cfg_path, "op_mapping", s->opmap_file,
		"rows", (json_int_t)s->go.rows,
		"seed", s->go.use_rng ? json_integer((json_int_t)s->go.seed) : json_null(),
		"seed_chosen", s->seed_chosen, "max_hbm_bytes", (json_int_t)s->go.max_hbm_bytes,
		"max_row_seconds", s->go.max_row_s,
		"csv_files", (json_int_t)s->res.nfiles, "appended", (json_int_t)s->res.appended,
		"written", (json_int_t)s->res.written, "files", files);
	return perfdb_json_dump(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, out);
}

