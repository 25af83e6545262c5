/*
 * The numbers of the database report (include/perfdb/dbreport.h,
 * docs/report.md): per kernel table, coverage counts, duration pairs with
 * hotspots (the 0.8x-1.2x band of docs/spec/replay.md §3) and roofline points
 * from shapes and dtypes; per hcom_*.csv table (docs/spec/comm.md §1), latency
 * and busbw against message size.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/comm.h"
#include "perfdb/dbreport.h"
#include "perfdb/dtype.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/table.h"

enum perfdb_op_family perfdb_op_family_of(const char *op)
{
	return strstr(op, "MatMul") || strstr(op, "Matmul") ? PERFDB_OP_FAMILY_MATMUL
							    : PERFDB_OP_FAMILY_VECTOR;
}

/* Slots of a shape or dtype cell, the cell's literal quotes removed. */
static int cell_slots(const char *cell, struct perfdb_slots *s)
{
	struct perfdb_span sp = { cell, strlen(cell) };
	return perfdb_shape_split_slots(perfdb_shape_unquote(sp), s);
}

/*
 * Add every slot of one shape cell: numel to *elems (of slot 0 to *first),
 * bytes to *bytes; *last_dim0 gets the last dim of slot 0.
 */
static int add_tensors(const char *shapes, const char *dtypes, double *bytes,
		       double *elems, double *first, double *last_dim0,
		       unsigned *bits0)
{
	struct perfdb_slots ss, ds;
	perfdb_slots_init(&ss);
	perfdb_slots_init(&ds);
	int rc = cell_slots(shapes, &ss);
	if (rc == 0)
		rc = cell_slots(dtypes, &ds);
	for (size_t i = 0; rc == 0 && i < ss.n; i++) {
		int64_t dims[PERFDB_SHAPE_MAX_DIMS];
		size_t nd = 0;
		struct perfdb_err err;
		if (perfdb_shape_slot_is_null(ss.v[i]))
			continue;
		if (perfdb_shape_parse_dims(ss.v[i], dims, PERFDB_SHAPE_MAX_DIMS, &nd, &err) < 0) {
			rc = -PERFDB_EPARSE;
			break;
		}
		int64_t n = perfdb_shape_numel(dims, nd);
		if (n < 0) {
			rc = -PERFDB_EPARSE;
			break;
		}
		unsigned b = i < ds.n ? perfdb_dtype_bits(perfdb_dtype_parse(ds.v[i])) : 0;
		if (i == 0) {
			if (first)
				*first = (double)n;
			if (last_dim0)
				*last_dim0 = nd ? (double)dims[nd - 1] : 1;
			if (bits0)
				*bits0 = b;
		}
		*elems += (double)n;
		*bytes += (double)n * (b ? b : 16) / 8.0;
	}
	perfdb_slots_release(&ss);
	perfdb_slots_release(&ds);
	return rc;
}

int perfdb_op_work_of(const char *op, const char *in_shapes, const char *in_dtypes,
		      const char *out_shapes, const char *out_dtypes,
		      struct perfdb_op_work *w)
{
	double in_elems = 0, out_elems = 0, out0 = 0, k = 0, bytes = 0;
	unsigned bits = 0;
	memset(w, 0, sizeof(*w));
	if (add_tensors(in_shapes, in_dtypes, &bytes, &in_elems, NULL, &k, &bits) < 0 ||
	    add_tensors(out_shapes, out_dtypes, &bytes, &out_elems, &out0, NULL, NULL) < 0)
		return -PERFDB_EPARSE;
	w->bytes = bytes;
	w->dtype_bits = bits;
	if (perfdb_op_family_of(op) == PERFDB_OP_FAMILY_MATMUL)
		w->flops = 2.0 * out0 * k;
	else
		w->flops = out_elems;
	return 0;
}

double perfdb_dbreport_peak_flops(const struct perfdb_device *dev,
				  enum perfdb_op_family f, unsigned dtype_bits)
{
	if (!dev)
		return 0;
	const double *p = f == PERFDB_OP_FAMILY_MATMUL ? dev->mma_flops : dev->vector_flops;
	switch (dtype_bits) {
	case 32: return p[PERFDB_PEAK_FP32];
	case 8: return p[PERFDB_PEAK_INT8];
	default: return p[PERFDB_PEAK_BF16];
	}
}

void perfdb_dbreport_init(struct perfdb_dbreport *r)
{
	memset(r, 0, sizeof(*r));
}

void perfdb_dbreport_release(struct perfdb_dbreport *r)
{
	for (size_t i = 0; i < r->nk; i++) {
		free(r->k[i].name);
		free(r->k[i].pts);
	}
	for (size_t i = 0; i < r->nc; i++) {
		free(r->c[i].op);
		free(r->c[i].pts);
	}
	free(r->k);
	free(r->c);
	free(r->dbdir);
	free(r->hccl_dir);
	memset(r, 0, sizeof(*r));
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

static int load_kernel(struct perfdb_dbreport_kernel *k, const char *path,
		       struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_table_load(&t, path, err);
	if (rc < 0)
		goto out;
	k->family = perfdb_op_family_of(k->name);
	k->rows = t.nrows;
	k->pts = calloc(t.nrows ? t.nrows : 1, sizeof(*k->pts));
	if (!k->pts) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	long cmb = perfdb_table_col(&t, PERFDB_COL_MB_DUR);
	long cpr = perfdb_table_col(&t, PERFDB_COL_PROF_AVG);
	long cis = perfdb_table_col(&t, PERFDB_COL_IN_SHAPES);
	long cid = perfdb_table_col(&t, PERFDB_COL_IN_DTYPES);
	long cos = perfdb_table_col(&t, PERFDB_COL_OUT_SHAPES);
	long cod = perfdb_table_col(&t, PERFDB_COL_OUT_DTYPES);
	for (size_t i = 0; i < t.nrows; i++) {
		struct perfdb_dbreport_point *p = &k->pts[i];
		const char *mb = perfdb_table_get(&t, i, cmb), *prof = perfdb_table_get(&t, i, cpr);
		/* a simulator reads finite durations only; invalid ones stay 0 */
		perfdb_schema_duration(mb, true, &p->mb_us);
		perfdb_schema_duration(prof, true, &p->prof_us);
		k->with_mb += p->mb_us > 0;
		k->with_prof += p->prof_us > 0;
		k->theory_only += !perfdb_schema_usable_duration(mb, prof, true, NULL);
		if (p->mb_us > 0 && p->prof_us > 0) {
			double ratio = p->mb_us / p->prof_us;
			k->both++;
			p->hot = !perfdb_schema_in_band(ratio);
			k->hot += p->hot;
		}
		struct perfdb_op_work w;
		if (perfdb_op_work_of(k->name, perfdb_table_get(&t, i, cis),
				      perfdb_table_get(&t, i, cid), perfdb_table_get(&t, i, cos),
				      perfdb_table_get(&t, i, cod), &w) == 0 && w.bytes > 0) {
			double us = p->prof_us > 0 ? p->prof_us : p->mb_us;
			p->ai = w.flops / w.bytes;
			if (us > 0) {
				p->gflops = w.flops / us / 1e3;
				p->gbps = w.bytes / us / 1e3;
			}
			if (i == 0 || !k->dtype_bits)
				k->dtype_bits = w.dtype_bits;
		}
	}
out:
	perfdb_table_release(&t);
	return rc;
}

/* Widen [mtime_min, mtime_max] by the modification time of path. */
static void note_mtime(struct perfdb_dbreport *r, const char *path)
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
static int list_dir(const char *dir, const char *prefix, const char *suffix, bool dirs,
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

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
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
	int rc = perfdb_table_load(&t, path, err);
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
	long cb = perfdb_table_col(&t, PERFDB_COL_MESSAGE_BYTES);
	long cn = perfdb_table_col(&t, PERFDB_COL_NUM_DEVICES);
	long ct = perfdb_table_col(&t, PERFDB_COL_TOPOLOGY_TIER);
	long cd = perfdb_table_col(&t, PERFDB_COL_DURATION);
	long cbus = perfdb_table_col(&t, PERFDB_COL_BUSBW);
	long cbw = perfdb_table_col(&t, PERFDB_COL_BANDWIDTH);
	if (cb < 0 || cn < 0 || cd < 0) {
		rc = perfdb_err_set(err, PERFDB_ESCHEMA,
				    "%s: not a collective table (needs message_bytes, num_devices, "
				    "Duration(us)): '%s'", path, file);
		goto out;
	}
	c->busbw_derived = cbus < 0;
	for (size_t i = 0; i < t.nrows; i++) {
		struct perfdb_dbreport_comm_point p = { 0 };
		p.bytes = pos_num(perfdb_table_get(&t, i, cb));
		p.dur_us = pos_num(perfdb_table_get(&t, i, cd));
		p.ndev = strtol(perfdb_table_get(&t, i, cn), NULL, 10);
		p.tier = ct < 0 ? 0 : strtol(perfdb_table_get(&t, i, ct), NULL, 10);
		if (p.bytes <= 0 || p.dur_us <= 0)
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
	int rc = list_dir(dir, "hcom_", ".csv", false, &files, &n);
	if (rc == -PERFDB_ENOMEM)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOENT,
				      "collectives directory not found: '%s' (check --hccl-dir)", dir);
	r->c = calloc(n ? n : 1, sizeof(*r->c));
	if (!r->c || !(r->hccl_dir = strdup(dir))) {
		free_list(files, n);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		rc = load_comm(&r->c[r->nc++], files[i], path, err);
		note_mtime(r, path);
	}
	free_list(files, n);
	return rc;
}

int perfdb_dbreport_load(struct perfdb_dbreport *r, const char *dbdir,
			 const char *hccl_dir, struct perfdb_err *err)
{
	char **files;
	size_t n;
	if (!perfdb_is_dir(dbdir))
		return perfdb_err_set(err, PERFDB_ENOENT,
				      "database directory not found: '%s' (check --database-path, "
				      "or the device and version flags with 'perfdb path')", dbdir);
	int rc = list_dir(dbdir, "", ".csv", false, &files, &n);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	r->dbdir = strdup(dbdir);
	r->k = calloc(n ? n : 1, sizeof(*r->k));
	if (!r->dbdir || !r->k)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dbdir, files[i]);
		struct perfdb_dbreport_kernel *k = &r->k[r->nk++];
		if (!(k->name = strndup(files[i], strlen(files[i]) - 4)))
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			rc = load_kernel(k, path, err);
		note_mtime(r, path);
	}
	free_list(files, n);
	if (rc < 0)
		return rc;
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
	if (list_dir(base, "", "", true, &vers, &nv) < 0)
		return 0;
	for (size_t i = nv; i-- > 0 && rc == 0 && !r->hccl_dir;) {
		char dir[4096 + 256];
		char **hf;
		size_t nh;
		snprintf(dir, sizeof(dir), "%s/%s", base, vers[i]);
		if (list_dir(dir, "hcom_", ".csv", false, &hf, &nh) == 0 && nh) {
			free_list(hf, nh);
			rc = load_hccl(r, dir, err);
		} else {
			free_list(hf, nh);
		}
	}
	free_list(vers, nv);
	return rc;
}
