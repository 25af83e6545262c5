/*
 * Devices perfdb met (docs/devices.md "Devices perfdb met"): a device that
 * parse found in a trace, or that a native backend measured, leaves
 * <root>/<device>/perfdb-device.json, a registry file of that one device.
 * Every command that resolves a root reads them, so `--device` accepts
 * every device the root holds a database of, not only the installed ones.
 *
 * One file per device, beside the device's own directories, rather than a
 * root-wide registry: a file is written once, when its device is first met,
 * and never rewritten, so two writers meeting different devices at once
 * need no lock between them, and the root's lock scope (lock.h) is not
 * widened to every parse.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "perfdb/dbpath.h"
#include "perfdb/device.h"
#include "perfdb/dtype.h"
#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"

#define MET_FILE "perfdb-device.json"

/* The met device of <dir>/<name>/perfdb-device.json, if that file exists. */
static int load_one(struct perfdb_device_registry *r, const char *dir, const char *name,
		    struct perfdb_err *err)
{
	char path[4096];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/" MET_FILE, dir, name) >= sizeof(path) ||
	    lstat(path, &st) < 0)
		return 0;
	struct perfdb_device_registry one;
	perfdb_device_registry_init(&one);
	int rc = perfdb_device_registry_load_file(&one, path, err);
	if (rc == 0 && (one.n != 1 || strcmp(one.v[0].name, name) != 0))
		rc = perfdb_err_set(err, PERFDB_EPARSE,
				    "%s: must define exactly one device, named '%s' as its directory", path, name);
	/* installed and $PERFDB_DEVICES definitions win: a met device only fills a gap */
	if (rc == 0 && !perfdb_device_find(r, one.v[0].name))
		rc = perfdb_device_registry_add(r, &one.v[0], err);
	perfdb_device_registry_release(&one);
	return rc;
}

int perfdb_device_met_load_db(struct perfdb_device_registry *r, const char *dbdir,
			      struct perfdb_err *err)
{
	/* resolved first: a relative path or one through links still names its device directory */
	char real[4096], devdir[4096];
	const char *name;
	if (!realpath(dbdir, real) || perfdb_db_device_dir(real, devdir, sizeof(devdir), &name) < 0 ||
	    name == devdir)
		return 0;   /* no database yet, or not in the layout */
	devdir[name - devdir - 1] = '\0';   /* the root, and the device's name after it */
	return load_one(r, devdir[0] ? devdir : "/", name, err);
}

int perfdb_device_met_load(struct perfdb_device_registry *r, const char *root,
			   struct perfdb_err *err)
{
	DIR *d = opendir(root);
	if (!d)
		return 0;   /* no root yet: nothing met */
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)))
		if (e->d_name[0] != '.')
			rc = load_one(r, root, e->d_name, err);
	closedir(d);
	return rc;
}

int perfdb_device_met_load_flags(struct perfdb_device_registry *r, const struct perfdb_db_opts *o,
				 struct perfdb_err *err)
{
	if (o->database_path)
		return perfdb_device_met_load_db(r, o->database_path, err);
	struct perfdb_strbuf root = PERFDB_STRBUF_INIT;
	const char *src;
	struct perfdb_err ignored;
	int rc = 0;
	if (perfdb_db_root(o, &root, &src, &ignored) == 0 && root.len)
		rc = perfdb_device_met_load(r, root.buf, err);
	perfdb_strbuf_release(&root);
	return rc;
}

/* <device_dir>/perfdb-device.json into path[4096]; -1 when it does not fit. */
static int met_path(const char *device_dir, char *path, size_t cap)
{
	return (size_t)snprintf(path, cap, "%s/" MET_FILE, device_dir) >= cap ? -1 : 0;
}

/* The file's one device object (borrowed from *doc, which the caller frees), or NULL. */
static json_t *met_device(const char *path, json_t **doc)
{
	json_error_t je;
	*doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	return *doc ? json_array_get(json_object_get(*doc, "devices"), 0) : NULL;
}

/* doc (owned, may be NULL after a failed pack) written atomically to path, a newline after it. */
static int write_doc(const char *path, json_t *doc, int digits, struct perfdb_err *err)
{
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(digits)) : NULL;
	json_decref(doc);
	if (!text)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	int rc = perfdb_strbuf_addf(&b, "%s\n", text) < 0 ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory")
							    : perfdb_file_write_atomic(path, b.buf, b.len, err);
	free(text);
	perfdb_strbuf_release(&b);
	return rc;
}

int perfdb_device_met_note(const char *device_dir, const struct perfdb_device *dev,
			   struct perfdb_err *err)
{
	char path[4096];
	struct stat st;
	if (met_path(device_dir, path, sizeof(path)) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "path too long: %s", device_dir);
	if (lstat(path, &st) == 0)
		return 0;   /* met before: its file stands as written */
	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "name", dev->name, "kind", dev->kind,
			      "vendor", dev->vendor ? dev->vendor : "",
			      "description", dev->description ? dev->description : "");
	if (o && dev->memory_bytes > 0)
		json_object_set_new(o, "memory_gib", json_real(dev->memory_bytes / (1024.0 * 1024 * 1024)));
	if (o && dev->memory_bandwidth > 0)
		json_object_set_new(o, "memory_bandwidth_gbps", json_real(dev->memory_bandwidth / 1e9));
	json_t *doc = o ? json_pack("{s:s, s:[o]}", "format", "perfdb-devices/1", "devices", o) : NULL;
	return write_doc(path, doc, 10, err);
}

const struct perfdb_device *perfdb_device_of_dir(const struct perfdb_device_registry *r,
						 const char *dir)
{
	const struct perfdb_device *found = NULL;
	const char *p = dir;
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		char comp[256];
		if (n && n < sizeof(comp)) {
			memcpy(comp, p, n);
			comp[n] = '\0';
			const struct perfdb_device *x = perfdb_device_find(r, comp);
			if (x)
				found = x;   /* the deepest one wins */
		}
		p += n;
	}
	return found;
}

int perfdb_device_met_has_peaks(const char *device_dir)
{
	char path[4096];
	if (met_path(device_dir, path, sizeof(path)) < 0)
		return 0;
	json_t *doc;
	json_t *d = met_device(path, &doc);
	int has = d && json_object_get(d, "memory_bandwidth_gbps") && json_object_get(d, "mma_tflops");
	json_decref(doc);
	return has;
}

int perfdb_device_met_add_peaks(const char *device_dir, const struct perfdb_device *dev,
				struct perfdb_err *err)
{
	char path[4096];
	struct stat st;
	if (met_path(device_dir, path, sizeof(path)) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "path too long: %s", device_dir);
	if (lstat(path, &st) < 0)
		PERFDB_TRY(perfdb_device_met_note(device_dir, dev, err));
	json_t *doc;
	json_t *d = met_device(path, &doc);
	if (!json_is_object(d)) {
		json_decref(doc);
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: not a registry file of one device", path);
	}
	/* a figure already there (measured before, or written by hand) stands */
	static const char *const dtn[PERFDB_PEAK_COUNT_] = { "fp32", "fp16", "bf16", "int8", "fp8" };
	if (!json_object_get(d, "memory_bandwidth_gbps") && dev->memory_bandwidth > 0)
		json_object_set_new(d, "memory_bandwidth_gbps", json_real(dev->memory_bandwidth / 1e9));
	const char *key[2] = { "mma_tflops", "vector_tflops" };
	const double *v[2] = { dev->mma_flops, dev->vector_flops };
	for (int k = 0; k < 2; k++) {
		if (json_object_get(d, key[k]))
			continue;
		json_t *o = json_object();
		for (int i = 0; i < PERFDB_PEAK_COUNT_; i++)
			if (v[k][i] > 0)
				json_object_set_new(o, dtn[i], json_real(v[k][i] / 1e12));
		json_object_set_new(d, key[k], o);
	}
	return write_doc(path, doc, 6, err);
}

double perfdb_device_peak_flops(const struct perfdb_device *dev, bool matrix, int dtype)
{
	if (!dev)
		return 0;
	const double *p = matrix ? dev->mma_flops : dev->vector_flops;
	switch ((enum perfdb_dtype)dtype) {
	case PERFDB_DTYPE_FLOAT: return p[PERFDB_PEAK_FP32];
	case PERFDB_DTYPE_FLOAT16: return p[PERFDB_PEAK_FP16];
	case PERFDB_DTYPE_BF16: return p[PERFDB_PEAK_BF16];
	case PERFDB_DTYPE_INT8: return p[PERFDB_PEAK_INT8];
	case PERFDB_DTYPE_FLOAT8_E4M3FN:
	case PERFDB_DTYPE_FLOAT8_E5M2:
	case PERFDB_DTYPE_HIFLOAT8: return p[PERFDB_PEAK_FP8];
	default: return 0;
	}
}
