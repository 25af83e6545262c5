/*
 * Writing a database's op_mapping.yaml (include/perfdb/op_mapping.h;
 * the rules are docs/database.md "op_mapping.yaml", "Writing rules").
 *
 * A file perfdb did not write, or wrote and someone edited since, belongs
 * to the user: it is never replaced.  perfdb recognises its own file by the
 * marker line, whose hash covers everything after it, so an edit anywhere
 * in the body makes the file the user's.
 */
#include "perfdb/op_mapping.h"
#include "perfdb/yaml_doc.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/device.h"
#include "perfdb/fsio.h"
#include "perfdb/op_mapping.h"

void perfdb_opmap_opts_parse(const char *arg, struct perfdb_opmap_opts *o)
{
	o->path = NULL;
	if (!arg || strcmp(arg, "auto") == 0) {
		o->mode = PERFDB_OPMAP_AUTO;
	} else if (strcmp(arg, "none") == 0) {
		o->mode = PERFDB_OPMAP_NONE;
	} else {
		o->mode = PERFDB_OPMAP_PATH;
		o->path = arg;
	}
}

int perfdb_opmap_opts_check(const struct perfdb_opmap_opts *o, struct perfdb_err *err)
{
	if (o->mode != PERFDB_OPMAP_PATH)
		return 0;
	if (!o->path[0] || perfdb_is_dir(o->path))
		return perfdb_err_set(err, PERFDB_EINVAL, "--op-mapping '%s': not a file name (auto, "
				      "none, or the path of the file to write)", o->path);
	const char *slash = strrchr(o->path, '/');
	if (!slash)
		return 0;
	char *dir = strndup(o->path, slash == o->path ? 1 : (size_t)(slash - o->path));
	if (!dir)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int ok = perfdb_is_dir(dir);
	free(dir);
	if (!ok)
		return perfdb_err_set(err, PERFDB_EINVAL, "--op-mapping '%s': its directory does not "
				      "exist", o->path);
	return 0;
}

struct stems {
	char **v;
	size_t n, cap;
};

static void stems_release(struct stems *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* The tables of dir: its regular top-level *.csv files (what the consumer opens). */
static int list_tables(const char *dir, struct stems *s, struct perfdb_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return perfdb_err_errno(err, PERFDB_EIO, "cannot list '%s'", dir);
	int rc = 0;
	struct perfdb_strbuf p = PERFDB_STRBUF_INIT;
	for (struct dirent *de; rc == 0 && (de = readdir(d));) {
		size_t n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n <= 4 || strcmp(de->d_name + n - 4, ".csv") != 0)
			continue;
		perfdb_strbuf_reset(&p);
		struct stat st;
		if (perfdb_strbuf_addf(&p, "%s/%s", dir, de->d_name) < 0) {
			rc = -PERFDB_ENOMEM;
			break;
		}
		if (lstat(p.buf, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 32;
			char **v = realloc(s->v, cap * sizeof(*v));
			if (!v) {
				rc = -PERFDB_ENOMEM;
				break;
			}
			s->v = v;
			s->cap = cap;
		}
		if (!(s->v[s->n] = strndup(de->d_name, n - 4)))
			rc = -PERFDB_ENOMEM;
		else
			s->n++;
	}
	closedir(d);
	perfdb_strbuf_release(&p);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}

/* Generate the mapping for dir's tables; *empty when dir has none. */
static int generate_for(const char *dir, struct perfdb_strbuf *out, int *empty,
			struct perfdb_err *err)
{
	struct stems s = { 0 };
	int rc = list_tables(dir, &s, err);
	*empty = rc == 0 && s.n == 0;
	if (rc < 0 || *empty) {
		stems_release(&s);
		return rc;
	}
	char *up = perfdb_data_path(PERFDB_OPMAP_UPSTREAM);
	struct perfdb_strbuf text = PERFDB_STRBUF_INIT;
	if (!up)
		rc = perfdb_err_set(err, PERFDB_ENOENT,
				    "the upstream mapping '%s' is not installed (set PERFDB_DATA_DIR to "
				    "the directory that holds it)", PERFDB_OPMAP_UPSTREAM);
	else
		rc = perfdb_file_read_all(up, &text, err);
	if (rc == 0)
		rc = perfdb_opmap_generate(PERFDB_OPMAP_UPSTREAM, text.buf, text.len,
					   (const char *const *)s.v, s.n, out, err);
	free(up);
	perfdb_strbuf_release(&text);
	stems_release(&s);
	return rc;
}

/*
 * The user's file is kept: say so when it misses tables perfdb's mapping
 * names (what the simulator then cannot reach through it).
 */
static void warn_kept(const struct perfdb_opmap_opts *o, const char *path, const char *dir,
		      const struct perfdb_strbuf *have, const struct perfdb_strbuf *gen)
{
	if (!o->warn)
		return;
	struct perfdb_opmap *mine = NULL, *theirs = NULL;
	struct perfdb_err e;
	perfdb_err_clear(&e);
	struct perfdb_strbuf msg = PERFDB_STRBUF_INIT, p = PERFDB_STRBUF_INIT;
	if (perfdb_opmap_load_mem(&mine, "generated", gen->buf, gen->len, &e) < 0)
		goto out;
	if (perfdb_opmap_load_mem(&theirs, path, have->buf, have->len, &e) < 0) {
		perfdb_strbuf_addf(&msg, "%s is not perfdb's and does not read as a mapping (%s): kept "
				   "as is; --op-mapping PATH writes perfdb's mapping to PATH", path, e.msg);
		o->warn(o->ctx, msg.buf);
		goto out;
	}
	size_t nmiss = 0;
	struct perfdb_strbuf names = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < mine->n; i++) {
		const char *k = mine->v[i].kernel;
		perfdb_strbuf_reset(&p);
		perfdb_strbuf_addf(&p, "%s/%s.csv", dir, k);
		struct stat st;
		if (perfdb_opmap_find(theirs, k) || stat(p.buf, &st) != 0)
			continue;
		if (nmiss++ < 3)
			perfdb_strbuf_addf(&names, "%s%s", nmiss > 1 ? ", " : "", k);
	}
	if (nmiss) {
		perfdb_strbuf_addf(&msg, "%s is not perfdb's and has no entry for %zu table(s) (%s%s): "
				   "kept as is; --op-mapping PATH writes perfdb's mapping to PATH",
				   path, nmiss, names.buf ? names.buf : "", nmiss > 3 ? ", ..." : "");
		o->warn(o->ctx, msg.buf);
	}
	perfdb_strbuf_release(&names);
out:
	perfdb_opmap_free(mine);
	perfdb_opmap_free(theirs);
	perfdb_strbuf_release(&msg);
	perfdb_strbuf_release(&p);
}

int perfdb_opmap_update(const char *dbdir, const struct perfdb_opmap_opts *o,
			enum perfdb_opmap_outcome *outcome, struct perfdb_err *err)
{
	enum perfdb_opmap_outcome dummy;
	if (!outcome)
		outcome = &dummy;
	*outcome = PERFDB_OPMAP_NOTHING;
	if (o->mode == PERFDB_OPMAP_NONE)
		return 0;
	struct perfdb_strbuf gen = PERFDB_STRBUF_INIT, have = PERFDB_STRBUF_INIT,
			     path = PERFDB_STRBUF_INIT;
	int empty = 0;
	int rc = generate_for(dbdir, &gen, &empty, err);
	if (rc < 0 || empty)
		goto out;
	if (o->mode == PERFDB_OPMAP_PATH) {
		rc = perfdb_file_write_atomic(o->path, gen.buf, gen.len, err);
		if (rc == 0)
			*outcome = PERFDB_OPMAP_WROTE_PATH;
		goto out;
	}
	if ((rc = perfdb_strbuf_addf(&path, "%s/%s", dbdir, PERFDB_OPMAP_FILE)) < 0) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	struct stat st;
	if (lstat(path.buf, &st) != 0) {
		rc = perfdb_file_write_atomic(path.buf, gen.buf, gen.len, err);
		if (rc == 0)
			*outcome = PERFDB_OPMAP_CREATED;
		goto out;
	}
	/* a link or a FIFO there is the user's too: never followed, never replaced */
	if (S_ISREG(st.st_mode)) {
		rc = perfdb_file_read_all(path.buf, &have, err);
		if (rc < 0)
			goto out;
		if (perfdb_opmap_is_own(have.buf, have.len)) {
			int same = have.len == gen.len && memcmp(have.buf, gen.buf, gen.len) == 0;
			rc = same ? 0 : perfdb_file_write_atomic(path.buf, gen.buf, gen.len, err);
			if (rc == 0)
				*outcome = same ? PERFDB_OPMAP_UNCHANGED : PERFDB_OPMAP_REGENERATED;
			goto out;
		}
	} else {
		/* a link to a shared mapping: read through it for the warning only */
		struct perfdb_err ignored;
		if (perfdb_file_read_all(path.buf, &have, &ignored) < 0)
			perfdb_strbuf_reset(&have);
	}
	*outcome = PERFDB_OPMAP_KEPT;
	warn_kept(o, path.buf, dbdir, &have, &gen);
out:
	perfdb_strbuf_release(&gen);
	perfdb_strbuf_release(&have);
	perfdb_strbuf_release(&path);
	return rc;
}
