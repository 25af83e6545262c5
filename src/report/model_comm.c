/*
 * The collectives' numbers of the database report (src/report/dbreport.h,
 * docs/report.md): per hcom_*.csv table (docs/spec/comm.md §1), latency and
 * busbw against message size, found next to the kernel tables; and the
 * directory helpers the kernel side shares (model.h).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"
#include "ops/coll.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"

/* Widen [mtime_min, mtime_max] by the modification time of path. */
void report_note_mtime(struct perfdb_dbreport *r, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return;
	long long t = (long long)st.st_mtime;
	if (!r->mtime_min || t < r->mtime_min)
		r->mtime_min = t;
	if (t > r->mtime_max)
		r->mtime_max = t;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries that end with suffix (and start with prefix). */
int report_list_dir(const char *dir, const char *prefix, const char *suffix, bool dirs,
		    char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	*out = NULL;
	*n = 0;
	if (!d)
		return -PERFDB_ENOENT;
	size_t cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), sl = strlen(suffix);
		if (e->d_name[0] == '.' || len < sl || strcmp(e->d_name + len - sl, suffix) ||
		    strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (perfdb_is_dir(path) != dirs)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			char **v = realloc(*out, cap * sizeof(*v));
			if (!v) {
				rc = -PERFDB_ENOMEM;
				break;
			}
			*out = v;
		}
		if (!((*out)[*n] = strdup(e->d_name))) {
			rc = -PERFDB_ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_str);
	return rc;
}

void report_free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A positive finite number, else 0. */
static double pos_num(const char *s)
{
	char *end;
	if (!*s)
		return 0;
	double v = strtod(s, &end);
	while (*end == ' ')
		end++;
	return *end || !isfinite(v) || v <= 0 ? 0 : v;
}

static int cmp_comm_pt(const void *a, const void *b)
{
	const struct perfdb_dbreport_comm_point *x = a, *y = b;
	if (x->ndev != y->ndev)
		return x->ndev < y->ndev ? -1 : 1;
	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int load_comm(struct perfdb_dbreport_comm *c, const char *file, const char *path,
		     struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	/* the columns the roofline needs; bandwidths and the tier are optional */
	static const char *const need[] = {
		PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES, PERFDB_COL_DURATION,
	};
	long col[3];
	int rc = perfdb_table_load_cols(&t, path, "a collective table", need, 3, col, NULL, err);
	if (rc < 0)
		goto out;
	int op = -1;
	for (int i = 0; i < PERFDB_COMM_NOPS; i++)
		if (!strcmp(file, perfdb_comm_op_file((enum perfdb_comm_op)i)))
			op = i;
	size_t stem = strlen(file) - 4;
	c->op = op >= 0 ? strdup(perfdb_comm_op_name((enum perfdb_comm_op)op))
			: strndup(file, stem);
	c->pts = calloc(t.nrows ? t.nrows : 1, sizeof(*c->pts));
	if (!c->op || !c->pts) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	long cb = col[0], cn = col[1], cd = col[2];
	long ct = perfdb_table_col(&t, PERFDB_COL_TOPOLOGY_TIER);
	long cbus = perfdb_table_col(&t, PERFDB_COL_BUSBW);
	long cbw = perfdb_table_col(&t, PERFDB_COL_BANDWIDTH);
	c->busbw_derived = cbus < 0;
	for (size_t i = 0; i < t.nrows; i++) {
		struct perfdb_dbreport_comm_point p = { 0 };
		p.bytes = pos_num(perfdb_table_get(&t, i, cb));
		p.dur_us = pos_num(perfdb_table_get(&t, i, cd));
		p.ndev = strtol(perfdb_table_get(&t, i, cn), NULL, 10);
		p.tier = ct < 0 ? 0 : strtol(perfdb_table_get(&t, i, ct), NULL, 10);
		/* a size or time no figure can be drawn from stays off the charts (dbreport.h) */
		if (p.bytes <= 0 || p.dur_us < PERFDB_DBREPORT_MIN_US || p.dur_us > PERFDB_DBREPORT_MAX_US ||
		    p.bytes > 1e18)
			continue;
		if (cbus >= 0)
			p.busbw_gbps = pos_num(perfdb_table_get(&t, i, cbus));
		else if (op >= 0)
			p.busbw_gbps = (cbw >= 0 ? pos_num(perfdb_table_get(&t, i, cbw))
						 : p.bytes / p.dur_us / 1e3) *
				       perfdb_comm_busbw_factor((enum perfdb_comm_op)op, p.ndev);
		c->pts[c->n++] = p;
	}
	if (c->n)
		qsort(c->pts, c->n, sizeof(*c->pts), cmp_comm_pt);
out:
	perfdb_table_release(&t);
	return rc;
}

static int load_hccl(struct perfdb_dbreport *r, const char *dir, struct perfdb_err *err)
{
	char **files;
	size_t n;
	int rc = report_list_dir(dir, "hcom_", ".csv", false, &files, &n);
	if (rc == -PERFDB_ENOMEM)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOENT,
				      "collectives directory not found: '%s' (check --hccl-dir)", dir);
	r->c = calloc(n ? n : 1, sizeof(*r->c));
	if (!r->c || !(r->hccl_dir = strdup(dir))) {
		report_free_list(files, n);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		rc = load_comm(&r->c[r->nc++], files[i], path, err);
		report_note_mtime(r, path);
	}
	report_free_list(files, n);
	return rc;
}

int report_load_hccl_near(struct perfdb_dbreport *r, const char *dbdir, const char *hccl_dir,
			  struct perfdb_err *err)
{
	int rc = 0;
	if (hccl_dir)
		return load_hccl(r, hccl_dir, err);
	/* <root>/<device>/vllm_ascend/<ver> -> <root>/<device>/hccl/<newest> */
	char base[4096];
	const char *end = dbdir + strlen(dbdir);
	while (end > dbdir && end[-1] == '/')
		end--;
	int up = 0;
	const char *cut = end;
	while (cut > dbdir && up < 2)
		if (*--cut == '/')
			up++;
	if (up == 2)
		snprintf(base, sizeof(base), "%.*s/hccl", (int)(cut - dbdir), dbdir);
	else
		snprintf(base, sizeof(base), "%s/../../hccl", dbdir);
	char **vers;
	size_t nv;
	if (report_list_dir(base, "", "", true, &vers, &nv) < 0)
		return 0;
	for (size_t i = nv; i-- > 0 && rc == 0 && !r->hccl_dir;) {
		char dir[4096 + 256];
		char **hf;
		size_t nh;
		snprintf(dir, sizeof(dir), "%s/%s", base, vers[i]);
		if (report_list_dir(dir, "hcom_", ".csv", false, &hf, &nh) == 0 && nh) {
			report_free_list(hf, nh);
			rc = load_hccl(r, dir, err);
		} else {
			report_free_list(hf, nh);
		}
	}
	report_free_list(vers, nv);
	return rc;
}
