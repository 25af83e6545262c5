/*
 * Database directory resolution (include/perfdb/dbpath.h; docs/spec/parse.md §4
 * "Database path", Decision 9).  No version is guessed from Python
 * packages: versions come from flags, or CANN from version.info.
 */
#include "perfdb/dbpath.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/fsio.h"

/* Trimmed copy into a fixed buffer; returns 0 or -1 if too long. */
static int trim_copy(const char *v, char *buf, size_t cap)
{
	while (isspace((unsigned char)*v))
		v++;
	size_t n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= cap)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

static int is_alnum_run_ok(const char *s)
{
	/* ^[0-9A-Za-z]+([._+-][0-9A-Za-z]+)*$ */
	int need_alnum = 1;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (isalnum((unsigned char)*s)) {
			need_alnum = 0;
		} else if (strchr("._+-", *s)) {
			if (need_alnum)
				return 0;
			need_alnum = 1;
		} else {
			return 0;
		}
	}
	return !need_alnum;
}

int perfdb_db_check_version(const char *v, struct perfdb_err *err)
{
	char buf[256];
	if (trim_copy(v, buf, sizeof(buf)) < 0 || !is_alnum_run_ok(buf))
		return perfdb_err_set(err, PERFDB_EINVAL,
			"Invalid version value: '%s'. Expected something like 0.9.2, 2.9.0, "
			"8.5, or vllm0.13.0_torch2.8.0_cann8.3.", v);
	return 0;
}

/* ^vllm.+_torch.+_cann.+$ */
static int is_full_version_dir(const char *s)
{
	if (strncmp(s, "vllm", 4) != 0 || !s[4])
		return 0;
	const char *t = strstr(s + 5, "_torch");
	while (t) {
		if (t[6]) {
			const char *c = strstr(t + 7, "_cann");
			while (c) {
				if (c[5])
					return 1;
				c = strstr(c + 1, "_cann");
			}
		}
		t = strstr(t + 1, "_torch");
	}
	return 0;
}

static void strip_prefix_ci(char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncasecmp(s, prefix, n) == 0)
		memmove(s, s + n, strlen(s + n) + 1);
}

/* Depth-limited search for a version.info file with a `version=` line. */
static int find_cann_version(const char *dir, int depth, char *out, size_t cap)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/version.info", dir);
	struct perfdb_err ignored;
	int fd = perfdb_open_regular(path, &ignored);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f && fd >= 0)
		close(fd);
	if (f) {
		char line[512];
		int found = 0;
		while (!found && fgets(line, sizeof(line), f)) {
			if (strncasecmp(line, "version=", 8) == 0) {
				char *v = line + 8;
				v[strcspn(v, "\r\n")] = '\0';
				if (trim_copy(v, out, cap) == 0 && out[0])
					found = 1;
			}
		}
		fclose(f);
		if (found)
			return 1;
	}
	if (depth == 0)
		return 0;
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return 0;
	int found = 0;
	for (int i = 0; i < n; i++) {
		if (!found && names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			if (perfdb_is_dir(path))
				found = find_cann_version(path, depth - 1, out, cap);
		}
		free(names[i]);
	}
	free(names);
	return found;
}

/*
 * --torch-version as a directory part: trimmed, without a leading "torch"
 * (any case) or anything from '+' ("" when not given).  -PERFDB_EINVAL
 * with the reference message for a value that is not a version.
 */
static int torch_part(const struct perfdb_db_opts *o, char *t, size_t cap, struct perfdb_err *err)
{
	t[0] = '\0';
	if (o->torch_version && trim_copy(o->torch_version, t, cap) < 0)
		return perfdb_db_check_version(o->torch_version, err);
	strip_prefix_ci(t, "torch");
	t[strcspn(t, "+")] = '\0';
	return 0;
}

int perfdb_db_version_dir(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
			  struct perfdb_err *err)
{
	char v[256] = "", t[256] = "", c[256] = "";
	perfdb_strbuf_reset(out);
	if (o->vllm_version && trim_copy(o->vllm_version, v, sizeof(v)) < 0)
		return perfdb_db_check_version(o->vllm_version, err);
	PERFDB_TRY(torch_part(o, t, sizeof(t), err));
	if (o->cann_version && trim_copy(o->cann_version, c, sizeof(c)) < 0)
		return perfdb_db_check_version(o->cann_version, err);

	if (v[0] && !o->torch_version && !o->cann_version && is_full_version_dir(v))
		return perfdb_strbuf_addstr(out, v);

	strip_prefix_ci(v, "vllm");
	if (v[0] == 'v' || v[0] == 'V')
		memmove(v, v + 1, strlen(v));
	strip_prefix_ci(c, "cann");

	if (!c[0]) {
		const char *home = getenv("ASCEND_HOME_PATH");
		if (home && *home)
			find_cann_version(home, 4, c, sizeof(c));
	}
	if (!v[0] || !t[0] || !c[0]) {
		char missing[64] = "";
		if (!v[0])
			strcat(missing, "vLLM-Ascend");
		if (!t[0])
			strcat(strcat(missing, missing[0] ? ", " : ""), "PyTorch");
		if (!c[0])
			strcat(strcat(missing, missing[0] ? ", " : ""), "CANN");
		return perfdb_err_set(err, PERFDB_EINVAL,
			"Could not detect runtime stack version(s): %s. Specify --database-path "
			"or pass --vllm-version/--torch-version/--cann-version explicitly.",
			missing);
	}
	return perfdb_strbuf_addf(out, "vllm%s_torch%s_cann%s", v, t, c);
}

int perfdb_db_root(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
		   const char **source, struct perfdb_err *err)
{
	perfdb_strbuf_reset(out);
	if (o->database_root && *o->database_root) {
		*source = "--database-root";
		return perfdb_strbuf_addstr(out, o->database_root);
	}
	const char *env = getenv("PERFDB_DATA_ROOT");
	if (env && *env) {
		*source = "$PERFDB_DATA_ROOT";
		return perfdb_strbuf_addstr(out, env);
	}
	char dir[PATH_MAX];
	if (!getcwd(dir, sizeof(dir)))
		return perfdb_err_errno(err, errno, "cannot get the current directory");
	/* Walk up: running inside a TensorCast checkout writes where its tools do. */
	char probe[PATH_MAX + sizeof(PERFDB_TENSORCAST_DATA) + 2];
	for (;;) {
		int at_root = strcmp(dir, "/") == 0;
		snprintf(probe, sizeof(probe), "%s/%s", at_root ? "" : dir,
			 PERFDB_TENSORCAST_DATA);
		if (perfdb_is_dir(probe)) {
			*source = "TensorCast checkout";
			return perfdb_strbuf_addstr(out, probe);
		}
		if (at_root)
			break;
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	*source = "default";
	return perfdb_strbuf_addstr(out, "./profiling_database/data");
}

/* The torch<T> directories under dir: their count, the first name in first. */
static int torch_dirs(const char *dir, char *first, size_t cap, struct perfdb_strbuf *all)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), found = 0;
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, d);
		if (strncmp(d, "torch", 5) == 0 && d[5] && perfdb_is_dir(path)) {
			if (!found++)
				snprintf(first, cap, "%s", d + 5);
			perfdb_strbuf_addf(all, "%s%s", found > 1 ? ", " : "", d);
		}
		free(names[i]);
	}
	free(names);
	return found;
}

int perfdb_db_native_dir(const struct perfdb_db_opts *o, const char *device,
			 struct perfdb_strbuf *out, struct perfdb_err *err)
{
	char t[256];
	PERFDB_TRY(torch_part(o, t, sizeof(t), err));
	const char *src;
	PERFDB_TRY(perfdb_db_root(o, out, &src, err));
	PERFDB_TRY(perfdb_strbuf_addf(out, "/%s/torch", device));
	if (!t[0]) {
		struct perfdb_strbuf all = PERFDB_STRBUF_INIT;
		int n = torch_dirs(out->buf, t, sizeof(t), &all);
		int rc = 0;
		if (n == 0)
			rc = perfdb_err_set(err, PERFDB_EINVAL,
				"Could not detect runtime stack version(s): PyTorch (no database of %s under %s "
				"yet). Specify --database-path or pass --torch-version explicitly.", device,
				out->buf);
		else if (n > 1)
			rc = perfdb_err_set(err, PERFDB_EINVAL,
				"%s holds several databases (%s): pass --torch-version to choose one",
				out->buf, all.buf);
		perfdb_strbuf_release(&all);
		if (rc < 0)
			return rc;
	}
	return perfdb_strbuf_addf(out, "/torch%s", t);
}

int perfdb_db_resolve(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
		      struct perfdb_err *err)
{
	perfdb_strbuf_reset(out);
	if (o->database_path && *o->database_path)
		return perfdb_strbuf_addstr(out, o->database_path);
	if (o->native && o->device)
		return perfdb_db_native_dir(o, o->device, out, err);
	struct perfdb_strbuf ver = PERFDB_STRBUF_INIT;
	int rc = perfdb_db_version_dir(o, &ver, err);
	if (rc == 0) {
		const char *src;
		rc = perfdb_db_root(o, out, &src, err);
		if (rc == 0)
			rc = perfdb_strbuf_addf(out, "/%s/vllm_ascend/%s",
						o->device ? o->device : PERFDB_DEFAULT_DEVICE,
						ver.buf);
	}
	perfdb_strbuf_release(&ver);
	return rc;
}

/* str(pathlib.Path(p)): no empty or "." components, no trailing slash. */
int perfdb_db_device_dir(const char *dbdir, char *out, size_t cap, const char **name)
{
	if ((size_t)snprintf(out, cap, "%s", dbdir) >= cap)
		return -1;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(out, '/');
		if (!slash || slash == out)
			return -1;
		*slash = '\0';
	}
	const char *last = strrchr(out, '/');
	*name = last ? last + 1 : out;
	return **name ? 0 : -1;
}

void perfdb_py_path(const char *p, char *out, size_t cap)
{
	size_t w = 0;
	int lead = 0;
	if (p[0] == '/') {
		lead = p[1] == '/' && p[2] != '/' ? 2 : 1;   /* POSIX keeps exactly "//" */
		for (int i = 0; i < lead && w + 1 < cap; i++)
			out[w++] = '/';
	}
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		const char *e = s;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - s);
		if (len && !(len == 1 && s[0] == '.')) {
			if (w > (size_t)lead && w + 1 < cap)
				out[w++] = '/';
			for (size_t i = 0; i < len && w + 1 < cap; i++)
				out[w++] = s[i];
		}
		s = e;
	}
	if (w == 0 && cap > 1)
		out[w++] = '.';
	out[w < cap ? w : cap - 1] = '\0';
}
