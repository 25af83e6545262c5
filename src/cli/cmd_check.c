/*
 * perfdb check: validate database tables without changing them.
 *
 * The command finds the tables (the database directory, or the files and
 * directories given), has each checked by the check stage
 * (src/report/check.h: a table that does not read is an error, the
 * rules' findings are warnings) and prints the results as text or JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "dbopts.h"
#include "report/check.h"
#include "perfdb/fsio.h"

#define MAX_PRINTED_WARNINGS 20

/* the reference's flags (the database flags every reference tool has): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_check_help = {
	.name = "check",
	.reference = reference_flags,
	.usage = "perfdb check [--json] [--strict] [database flags] [PATH ...]",
	.summary = "validate database tables (CSV syntax, shapes, durations, duplicates)",
	.description =
		"Reads every table of the database directory (or the files and directories\n"
		"given) and reports malformed CSV as errors, and unparsable shapes, bad\n"
		"durations and duplicate signatures as warnings. Nothing is written.\n"
		"Exit status: 0 when no table has an error, 1 otherwise (--strict: or a warning).",
	.positional = "  PATH        a table (.csv) or a directory searched recursively for *.csv\n"
		      "              (default: the database directory of the database flags)",
	.max_positional = 1024,
};

struct report {
	json_t *tables;
	size_t errors, warnings;
	bool json;
};

static void check_one(const char *path, struct report *rep)
{
	struct perfdb_check_result res = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	json_t *jt = json_object();
	json_object_set_new(jt, "path", json_string(path));
	if (perfdb_check_file(path, &res, &err) < 0) {
		rep->errors++;
		json_object_set_new(jt, "error", json_string(err.msg));
		if (!rep->json)
			printf("%s: error: %s\n", path, err.msg);
		json_array_append_new(rep->tables, jt);
		perfdb_check_result_release(&res);
		return;
	}
	json_t *warnings = json_array();
	for (size_t i = 0; i < res.nproblems; i++)
		json_array_append_new(warnings,
				      json_pack("{s:I, s:s}", "line", (json_int_t)res.problems[i].line,
						"message", res.problems[i].msg));
	rep->warnings += res.nproblems;
	json_object_set_new(jt, "rows", json_integer((json_int_t)res.rows));
	json_object_set_new(jt, "columns", json_integer((json_int_t)res.columns));
	json_object_set_new(jt, "with_duration", json_integer((json_int_t)res.with_duration));
	json_object_set_new(jt, "duplicate_rows", json_integer((json_int_t)res.duplicates));
	json_object_set_new(jt, "warnings", warnings);
	if (!rep->json) {
		printf("%s: %zu rows, %zu columns, %zu with a duration, %zu duplicate rows\n",
		       path, res.rows, res.columns, res.with_duration, res.duplicates);
		for (size_t i = 0; i < res.nproblems && i < MAX_PRINTED_WARNINGS; i++)
			printf("%s:%zu: warning: %s\n", path, res.problems[i].line,
			       res.problems[i].msg);
		if (res.nproblems > MAX_PRINTED_WARNINGS)
			printf("%s: ... %zu more warnings (--json lists all)\n", path,
			       res.nproblems - MAX_PRINTED_WARNINGS);
	}
	json_array_append_new(rep->tables, jt);
	perfdb_check_result_release(&res);
}

int cmd_check(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	bool json = false, strict = false;
	struct opt opts[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print one JSON object: tables[] (path, rows, columns, with_duration, "
			  "duplicate_rows, warnings[] of {line, message}, or error), errors, warnings" },
		{ .type = OPT_FLAG, .name = "strict", .dest = &strict,
		  .help = "exit 1 on warnings too" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (!pos)
		return 1;
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_check_help, pos, &npos);
	if (rc) {
		free(pos);
		return rc == 1 ? 0 : rc;
	}
	struct perfdb_check_paths files = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;

	if ((rc = db_opts_finish(db, &cmd_check_help)))
		goto out;
	if (npos == 0) {
		if (perfdb_db_resolve(o, &dir, &err) < 0) {
			rc = cli_error("check", &err);
			goto out;
		}
		if (!perfdb_is_dir(dir.buf)) {
			perfdb_err_set(&err, PERFDB_ENOENT, "database directory not found: '%s'", dir.buf);
			rc = cli_error("check", &err);
			goto out;
		}
		pos[npos++] = dir.buf;
	}
	if (perfdb_check_paths_collect(pos, npos, &files, &err) < 0) {
		rc = cli_error("check", &err);
		goto out;
	}
	struct report rep = { .tables = json_array(), .json = json };
	for (size_t i = 0; i < files.n; i++)
		check_one(files.v[i], &rep);
	if (json) {
		json_t *j = json_pack("{s:o, s:I, s:I}", "tables", rep.tables,
				      "errors", (json_int_t)rep.errors,
				      "warnings", (json_int_t)rep.warnings);
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
	} else {
		json_decref(rep.tables);
		printf("checked %zu table%s: %zu error%s, %zu warning%s\n", files.n,
		       files.n == 1 ? "" : "s", rep.errors, rep.errors == 1 ? "" : "s",
		       rep.warnings, rep.warnings == 1 ? "" : "s");
	}
	rc = (rep.errors || (strict && rep.warnings)) ? 1 : 0;
out:
	perfdb_check_paths_release(&files);
	free(pos);
	perfdb_strbuf_release(&dir);
	return rc;
}
