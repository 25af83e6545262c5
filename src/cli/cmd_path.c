/*
 * perfdb path: print the database directory the other commands would use,
 * resolved from the shared database flags (docs/spec/parse.md §4, Decision 9).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/fsio.h"

/* the reference's flags (the database flags every reference tool has): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_path_help = {
	.name = "path",
	.reference = reference_flags,
	.usage = "perfdb path [--json] [database flags]",
	.summary = "print the database directory the database flags resolve to",
	.description =
		"Resolves --database-path, or <root>/<device>/vllm_ascend/vllm<V>_torch<T>_cann<C>\n"
		"from the root search and the version flags (<root>/<device>/torch/torch<T> for a\n"
		"native device: this machine's CPU, a registry device of kind cpu or gpu),\n"
		"exactly as every stage does, and prints it. Nothing is created.",
};

int cmd_path(int argc, char **argv, struct cmd_db *db)
{
	struct perfdb_db_opts *o = &db->o;   /* filled by DB_OPTIONS, finished below */
	bool json = false;
	struct opt opts[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON object (database, root, root_source, device, version_dir, exists)" },
		DB_OPTIONS(o),
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_path_help, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;

	if ((rc = db_opts_finish(db, &cmd_path_help))) {
		return rc;
	}
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT, root = PERFDB_STRBUF_INIT,
			     ver = PERFDB_STRBUF_INIT;
	const char *root_src = "";
	rc = perfdb_db_resolve(o, &dir, &err);
	if (rc == 0 && !o->database_path) {
		rc = perfdb_db_root(o, &root, &root_src, &err);
		/* a native device's version directory is torch<T> (perfdb_db_native_dir) */
		if (rc == 0 && o->native)
			rc = perfdb_strbuf_addstr(&ver, strrchr(dir.buf, '/') + 1);
		else if (rc == 0)
			rc = perfdb_db_version_dir(o, &ver, &err);
	}
	if (rc < 0) {
		rc = cli_error("path", &err);
	} else if (json) {
		json_t *j = json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:b}",
			"database", dir.buf,
			"root", o->database_path ? NULL : root.buf,
			"root_source", o->database_path ? "--database-path" : root_src,
			"device", o->database_path ? NULL : o->device,
			"version_dir", o->database_path ? NULL : ver.buf,
			"exists", perfdb_is_dir(dir.buf));
		char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		rc = s ? 0 : 1;
	} else {
		printf("%s\n", dir.buf);
	}
	perfdb_strbuf_release(&dir);
	perfdb_strbuf_release(&root);
	perfdb_strbuf_release(&ver);
	return rc;
}
