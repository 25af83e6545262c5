/*
 * The tables `perfdb check` reads (docs/cli.md "check"): each path a table,
 * or a directory searched for *.csv (sorted; hidden entries, reports/ and
 * linked directories skipped).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/fsio.h"
#include "report/check.h"

void perfdb_check_paths_release(struct perfdb_check_paths *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static int add(struct perfdb_check_paths *f, const char *path)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;
		char **nv = realloc(f->v, cap * sizeof(*nv));
		if (!nv)
			return -PERFDB_ENOMEM;
		f->v = nv;
		f->cap = cap;
	}
	f->v[f->n] = strdup(path);
	if (!f->v[f->n])
		return -PERFDB_ENOMEM;
	f->n++;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int visit_csv(void *ctx, const char *path, const char *name, int is_dir)
{
	if (name[0] == '.')
		return 0;
	if (is_dir)
		return strcmp(name, "reports") != 0;
	return ends_with(name, ".csv") ? add(ctx, path) : 0;
}

int perfdb_check_paths_collect(const char *const *paths, size_t n, struct perfdb_check_paths *out,
			       struct perfdb_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0)
			return perfdb_err_set(err, PERFDB_ENOENT, "no such file or directory: '%s'",
					      paths[i]);
		struct perfdb_err walk;
		int rc = S_ISDIR(st.st_mode)
				 ? perfdb_dir_walk(paths[i], PERFDB_WALK_NO_LINKS, visit_csv, out, &walk)
				 : add(out, paths[i]);
		if (rc < 0)
			return perfdb_err_set(err, PERFDB_EIO, "cannot list '%s'", paths[i]);
	}
	return 0;
}
