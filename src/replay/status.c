/*
 * The run status file (docs/spec/replay.md §4 "run_all_op_status.json",
 * Decision 4): {"success":[op],"failed":[{"op":op,"reason":…}],"skipped":[op]},
 * indent 2, and perfdb's own "contended":[{"op":"<Op>.csv:<line>","reason":…}]
 * (docs/replay.md "Contention"), written only when a row was, and
 * "not_replayed":[{"table":…,"rows":N,"reason":…}] (docs/replay.md "Tables
 * not replayed"), only when a table was.  A missing or malformed file reads
 * as "no status", as in the reference.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"
#include "replay/replay.h"

void perfdb_status_release(struct perfdb_status *s)
{
	for (size_t i = 0; i < s->nsuccess; i++)
		free(s->success[i]);
	for (size_t i = 0; i < s->nskipped; i++)
		free(s->skipped[i]);
	for (size_t i = 0; i < s->nunreplayed; i++) {
		free(s->unreplayed[i].table);
		free(s->unreplayed[i].reason);
	}
	free(s->unreplayed);
	for (size_t i = 0; i < s->nfailed; i++) {
		free(s->failed[i].op);
		free(s->failed[i].reason);
	}
	for (size_t i = 0; i < s->ncontended; i++) {
		free(s->contended[i].op);
		free(s->contended[i].reason);
	}
	free(s->success);
	free(s->skipped);
	free(s->failed);
	free(s->contended);
	memset(s, 0, sizeof(*s));
}

static int read_names(json_t *arr, char ***out, size_t *n)
{
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return -1;
	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *v = json_array_get(arr, i);
		if (!json_is_string(v) || !((*out)[(*n)++] = strdup(json_string_value(v))))
			return -1;
	}
	return 0;
}

/* [{"op":…,"reason":…}] into out; absent: none. */
static int read_failures(json_t *f, struct perfdb_status_failure **out, size_t *n)
{
	if (!f)
		return 0;
	if (!json_is_array(f) || !(*out = calloc(json_array_size(f) + 1, sizeof(**out))))
		return -1;
	for (size_t i = 0; i < json_array_size(f); i++) {
		json_t *e = json_array_get(f, i);
		json_t *op = json_object_get(e, "op"), *why = json_object_get(e, "reason");
		if (!json_is_string(op) || !json_is_string(why))
			return -1;
		(*out)[i].op = strdup(json_string_value(op));
		(*out)[i].reason = strdup(json_string_value(why));
		(*n)++;
		if (!(*out)[i].op || !(*out)[i].reason)
			return -1;
	}
	return 0;
}

int perfdb_status_read(const char *path, struct perfdb_status *s)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err ignored;
	int rc = 0;
	memset(s, 0, sizeof(*s));
	if (perfdb_file_read_all(path, &sb, &ignored) == 0)
		rc = perfdb_status_parse(sb.buf ? sb.buf : "", sb.len, s);
	perfdb_strbuf_release(&sb);
	return rc;
}

int perfdb_status_parse(const char *data, size_t len, struct perfdb_status *s)
{
	memset(s, 0, sizeof(*s));
	json_error_t je;
	json_t *root = json_loadb(data, len, 0, &je);
	if (!root)
		return 0;
	int ok = json_is_object(root) &&
		 read_names(json_object_get(root, "success"), &s->success, &s->nsuccess) == 0 &&
		 read_names(json_object_get(root, "skipped"), &s->skipped, &s->nskipped) == 0;
	if (ok)
		ok = read_failures(json_object_get(root, "failed"), &s->failed, &s->nfailed) == 0 &&
		     read_failures(json_object_get(root, "contended"), &s->contended, &s->ncontended) == 0;
	json_decref(root);
	if (!ok) {
		perfdb_status_release(s);
		return 0;
	}
	return 1;
}

json_t *perfdb_status_rows_json(const struct perfdb_status *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "measured", (json_int_t)s->rows_measured,
			 "failed", (json_int_t)s->rows_failed, "contended", (json_int_t)s->rows_contended,
			 "skipped", (json_int_t)s->rows_skipped, "measured_again", (json_int_t)s->rows_again,
			 "measured_again_written", (json_int_t)s->rows_again_written);
}

int perfdb_status_write(const char *path, const struct perfdb_status *s, struct perfdb_err *err)
{
	json_t *root = json_object(), *ok = json_array(), *bad = json_array(), *skip = json_array();
	for (size_t i = 0; i < s->nsuccess; i++)
		json_array_append_new(ok, json_string(s->success[i]));
	for (size_t i = 0; i < s->nfailed; i++)
		json_array_append_new(bad, json_pack("{s:s, s:s}", "op", s->failed[i].op,
						     "reason", s->failed[i].reason));
	for (size_t i = 0; i < s->nskipped; i++)
		json_array_append_new(skip, json_string(s->skipped[i]));
	json_object_set_new(root, "success", ok);
	json_object_set_new(root, "failed", bad);
	json_object_set_new(root, "skipped", skip);
	if (s->ncontended) {
		json_t *cont = json_array();
		for (size_t i = 0; i < s->ncontended; i++)
			json_array_append_new(cont, json_pack("{s:s, s:s}", "op", s->contended[i].op,
							      "reason", s->contended[i].reason));
		json_object_set_new(root, "contended", cont);
	}
	if (s->has_rows)
		json_object_set_new(root, "rows", perfdb_status_rows_json(s));
	if (s->nunreplayed) {
		json_t *un = json_array();
		for (size_t i = 0; i < s->nunreplayed; i++)
			json_array_append_new(un, json_pack("{s:s, s:I, s:s}", "table", s->unreplayed[i].table,
							    "rows", (json_int_t)s->unreplayed[i].rows,
							    "reason", s->unreplayed[i].reason));
		json_object_set_new(root, "not_replayed", un);
	}
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = perfdb_file_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}
