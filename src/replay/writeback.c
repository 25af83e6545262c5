/*
 * Writeback of measurements into database tables (docs/spec/replay.md §2, with
 * Decisions 2-6).
 *
 * Files: with --ops, every `<op>.csv` below the database (keyed by stem,
 * the last found wins); otherwise the top-level tables of replay operators;
 * when none exists, `<db>/<OP Type>.csv` is created per measured operator.
 * Each table is merged as it streams (writeback_merge.c: the header
 * migrated, the first row of a signature taking its measurements, the
 * matmul aliases' measurements only matching, rows pruned on request) into
 * an unnamed spill file, so memory does not grow with the table.  Every
 * table is merged before the first is replaced; a table is replaced only
 * when its rows changed, atomically, under the database lock.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "replay/replay.h"
#include "replay/writeback_int.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"

int perfdb_wb_valid(const char *cell)
{
	return perfdb_schema_duration(cell, false, NULL);
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void perfdb_wb_result_release(struct perfdb_wb_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		struct perfdb_wb_file *f = &r->files[i];
		free(f->path);
		free(f->stem);
		strv_free(f->missing, f->nmissing);
		strv_free(f->deleted, f->ndeleted);
		for (size_t d = 0; d < f->ndups; d++)
			free(f->dups[d].sig);
		free(f->dups);
	}
	for (size_t i = 0; i < r->ngaps; i++) {
		free(r->gaps[i].op);
		free(r->gaps[i].csv_name);
		free(r->gaps[i].shape);
	}
	strv_free(r->warnings, r->nwarnings);
	free(r->files);
	free(r->gaps);
	memset(r, 0, sizeof(*r));
}

/* ---- which tables -------------------------------------------------------- */

struct target {
	char *stem, *path;
};

static int add_target(struct target **t, size_t *n, const char *stem, const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*t)[i].stem, stem) == 0) {   /* keyed by stem: the last wins */
			char *p = strdup(path);
			if (!p)
				return -PERFDB_ENOMEM;
			free((*t)[i].path);
			(*t)[i].path = p;
			return 0;
		}
	struct target *nt = realloc(*t, (*n + 1) * sizeof(**t));
	if (!nt)
		return -PERFDB_ENOMEM;
	*t = nt;
	nt[*n].stem = strdup(stem);
	nt[*n].path = strdup(path);
	if (!nt[*n].stem || !nt[*n].path)
		return -PERFDB_ENOMEM;
	(*n)++;
	return 0;
}

struct named {
	const char *file, *stem;
	struct target **t;
	size_t *n;
};

/* rglob("<op>.csv"), sorted */
static int visit_named(void *ctx, const char *path, const char *name, int is_dir)
{
	struct named *x = ctx;
	if (is_dir)
		return 1;
	if (strcmp(name, x->file) == 0 && add_target(x->t, x->n, x->stem, path) < 0)
		return -PERFDB_ENOMEM;
	return 0;
}

int perfdb_replay_table_path(const char *dbdir, const char *op, int search_subdirs,
			     struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	if (search_subdirs && perfdb_is_dir(dbdir)) {
		struct target *t = NULL;
		size_t n = 0;
		char file[512];
		snprintf(file, sizeof(file), "%s.csv", op);
		struct named x = { file, op, &t, &n };
		struct perfdb_err ignore;
		int rc = perfdb_dir_walk(dbdir, PERFDB_WALK_NO_LINKS, visit_named, &x, &ignore);
		if (rc == 0 && n > 0)
			perfdb_strbuf_addstr(out, t[0].path);
		for (size_t i = 0; i < n; i++) {
			free(t[i].stem);
			free(t[i].path);
		}
		free(t);
		if (rc < 0)
			return rc;
		if (n > 0)
			return out->buf ? 1 : -PERFDB_ENOMEM;
	}
	perfdb_strbuf_addf(out, "%s/%s.csv", dbdir, op);
	if (!out->buf)
		return -PERFDB_ENOMEM;
	return access(out->buf, F_OK) == 0 && !perfdb_is_dir(out->buf);
}

static int cmp_target(const void *a, const void *b)
{
	return strcmp(((const struct target *)a)->stem, ((const struct target *)b)->stem);
}

static int find_targets(const struct perfdb_wb_opts *o, const struct perfdb_measures *m,
			struct target **t, size_t *n)
{
	int rc = 0;
	if (o->ops) {
		for (size_t i = 0; i < o->nops && rc == 0; i++) {
			char file[512];
			snprintf(file, sizeof(file), "%s.csv", o->ops[i]);
			struct named x = { file, o->ops[i], t, n };
			struct perfdb_err ignore;
			/* a database that does not exist yet simply holds no table */
			if (perfdb_is_dir(o->dbdir))
				rc = perfdb_dir_walk(o->dbdir, PERFDB_WALK_NO_LINKS, visit_named, &x, &ignore);
		}
	} else {
		struct dirent **names;
		int k = scandir(o->dbdir, &names, NULL, alphasort);
		for (int i = 0; i < k; i++) {
			const char *nm = names[i]->d_name;
			size_t len = strlen(nm);
			if (rc == 0 && len > 4 && strcmp(nm + len - 4, ".csv") == 0) {
				char stem[512];
				snprintf(stem, sizeof(stem), "%.*s", (int)(len - 4), nm);
				char p[4096];
				snprintf(p, sizeof(p), "%s/%s", o->dbdir, nm);
				/* not a link to a table elsewhere; a FIFO or device is
				 * kept, for the load to refuse it by name */
				struct stat ls;
				if ((perfdb_replay_op_known(stem) || (o->aten && perfdb_replay_aten_target(stem))) && lstat(p, &ls) == 0 &&
				    !S_ISDIR(ls.st_mode) && !S_ISLNK(ls.st_mode))
					rc = add_target(t, n, stem, p);
			}
			free(names[i]);
		}
		if (k >= 0)
			free(names);
	}
	if (rc == 0 && *n == 0) {
		/* nothing found: one new table per measured operator */
		for (size_t i = 0; i < m->n && rc == 0; i++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s.csv", o->dbdir, m->v[i].op);
			rc = add_target(t, n, m->v[i].op, p);
		}
	}
	if (*n > 1)
		qsort(*t, *n, sizeof(**t), cmp_target);
	return rc;
}

int perfdb_writeback(const struct perfdb_wb_opts *o, const struct perfdb_measures *m,
		     struct perfdb_wb_result *res, struct perfdb_err *err)
{
	memset(res, 0, sizeof(*res));
	struct target *tg = NULL;
	size_t ntg = 0;
	off_t *off = NULL;
	size_t *len = NULL;
	int *wr = NULL;
	struct perfdb_wb_spill sp = { -1, 0 };
	struct perfdb_lock lock = PERFDB_LOCK_INIT;
	int rc = perfdb_mkdir_p(o->dbdir, err);
	if (rc == 0)
		rc = perfdb_lock_acquire(&lock, o->dbdir, o->lock_timeout, err);
	if (rc == 0 && find_targets(o, m, &tg, &ntg) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0) {
		off = calloc(ntg ? ntg : 1, sizeof(*off));
		len = calloc(ntg ? ntg : 1, sizeof(*len));
		wr = calloc(ntg ? ntg : 1, sizeof(*wr));
		res->files = calloc(ntg ? ntg : 1, sizeof(*res->files));
		if (!off || !len || !wr || !res->files)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	/* the merged tables wait in an unnamed file beside them, not in memory */
	if (rc == 0 && ntg > 0 && (sp.fd = perfdb_spill_file(o->dbdir, "writeback", "writeback", err)) < 0)
		rc = sp.fd;
	/* phase 1: every table merged before the first one is replaced */
	for (size_t i = 0; i < ntg && rc == 0; i++) {
		struct perfdb_wb_file *fr = &res->files[res->nfiles++];
		fr->path = strdup(tg[i].path);
		fr->stem = strdup(tg[i].stem);
		if (!fr->path || !fr->stem)
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			rc = perfdb_wb_merge(o, tg[i].stem, tg[i].path, m, &sp, &off[i], &len[i], &wr[i],
					     fr, res, err);
	}
	/* phase 2: atomic replacement of what changed */
	for (size_t i = 0; i < ntg && rc == 0; i++) {
		if (!wr[i])
			continue;
		char *dir = strdup(tg[i].path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash)
			*slash = '\0';
		rc = dir ? perfdb_mkdir_p(dir, err) : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		free(dir);
		if (rc == 0)
			rc = perfdb_file_write_atomic_from(tg[i].path, sp.fd, off[i], len[i], err);
		if (rc == 0)
			res->files[i].written = 1;
	}
	/* the simulator's routing for the tables now there (docs/database.md "op_mapping.yaml") */
	if (rc == 0 && o->op_mapping)
		rc = perfdb_opmap_update(o->dbdir, o->op_mapping, NULL, err);
	perfdb_lock_release(&lock);
	if (sp.fd >= 0)
		close(sp.fd);
	for (size_t i = 0; i < ntg; i++) {
		free(tg[i].stem);
		free(tg[i].path);
	}
	free(off);
	free(len);
	free(wr);
	free(tg);
	return rc;
}
