/*
 * What a run saw, for prune (replay.h "struct perfdb_wb_seen"): the
 * signatures of every table's rows when a run read them, so that prune
 * deletes only rows the run saw and could not fill, never rows another
 * writer added meanwhile (docs/reliability.md "One serial order").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "perfdb/signature.h"
#include "perfdb/table.h"
#include "replay/replay.h"

/* realpath of the directory + "/" + the file name: one spelling per table */
static char *canon_table(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	char *rd = dir ? realpath(*dir ? dir : "/", NULL) : NULL;
	char *out = NULL;
	const char *base = slash ? slash + 1 : path;
	if (rd && (out = malloc(strlen(rd) + strlen(base) + 2)))
		sprintf(out, "%s/%s", rd, base);
	free(rd);
	free(dir);
	return out;
}

struct seen_walk {
	struct perfdb_wb_seen *s;
	int rc;
};

static int visit_seen(void *ctx, const char *path, const char *name, int is_dir)
{
	struct seen_walk *w = ctx;
	if (is_dir)
		return name[0] != '.' && strcmp(name, "reports") != 0;
	size_t len = strlen(name);
	if (name[0] == '.' || len < 5 || strcmp(name + len - 4, ".csv") != 0)
		return 0;
	struct perfdb_table t;
	perfdb_table_init(&t);
	struct perfdb_err ignored;
	if (perfdb_table_load(&t, path, &ignored) < 0) {
		perfdb_table_release(&t);
		return 0;
	}
	struct perfdb_wb_seen *s = w->s;
	char **np = realloc(s->paths, (s->n + 1) * sizeof(*np));
	if (np)
		s->paths = np;
	struct perfdb_sig_index *nx = np ? realloc(s->ix, (s->n + 1) * sizeof(*nx)) : NULL;
	if (nx)
		s->ix = nx;
	char stem[512];
	snprintf(stem, sizeof(stem), "%.*s", (int)(len - 4), name);
	char *cp = nx ? canon_table(path) : NULL;
	if (!cp) {
		perfdb_table_release(&t);
		return w->rc = -PERFDB_ENOMEM;
	}
	perfdb_sig_index_init(&s->ix[s->n]);
	s->paths[s->n] = cp;
	int rc = perfdb_table_index(&t, stem, &s->ix[s->n], &ignored);
	s->n++;
	perfdb_table_release(&t);
	return rc < 0 ? (w->rc = rc) : 0;
}

int perfdb_wb_seen_take(const char *dbdir, struct perfdb_wb_seen *s, struct perfdb_err *err)
{
	memset(s, 0, sizeof(*s));
	if (!perfdb_is_dir(dbdir))
		return 0;
	struct seen_walk w = { s, 0 };
	int rc = perfdb_dir_walk(dbdir, PERFDB_WALK_NO_LINKS, visit_seen, &w, err);
	if (rc == 0 && w.rc < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc < 0)
		perfdb_wb_seen_release(s);
	return rc;
}

void perfdb_wb_seen_release(struct perfdb_wb_seen *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->paths[i]);
		perfdb_sig_index_release(&s->ix[i]);
	}
	free(s->paths);
	free(s->ix);
	memset(s, 0, sizeof(*s));
}

const struct perfdb_sig_index *perfdb_wb_seen_find(const struct perfdb_wb_seen *s, const char *path)
{
	char *cp = canon_table(path);
	const struct perfdb_sig_index *ix = NULL;
	for (size_t i = 0; cp && i < s->n && !ix; i++)
		if (strcmp(s->paths[i], cp) == 0)
			ix = &s->ix[i];
	free(cp);
	return ix;
}
