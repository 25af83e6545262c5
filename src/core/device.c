/*
 * Device registry (include/perfdb/device.h; file format in docs/devices.md).
 *
 * The registry file is JSON: {"format": "perfdb-devices/1", "default":
 * NAME, "devices": [ {...}, ... ]}.  Rates are given in the units people
 * read on datasheets (GiB, GB/s, TFLOP/s, microseconds) and converted here
 * to bytes, bytes/s, FLOP/s and seconds.
 */
#include "perfdb/device.h"

#include <ctype.h>
#include <math.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"

#define FORMAT_TAG "perfdb-devices/1"

void perfdb_device_registry_init(struct perfdb_device_registry *r)
{
	memset(r, 0, sizeof(*r));
}

static void device_release(struct perfdb_device *d)
{
	free(d->name);
	free(d->kind);
	free(d->vendor);
	free(d->description);
	free(d->source);
	memset(d, 0, sizeof(*d));
}

void perfdb_device_registry_release(struct perfdb_device_registry *r)
{
	for (size_t i = 0; i < r->n; i++)
		device_release(&r->v[i]);
	free(r->v);
	free(r->default_name);
	free(r->files);
	perfdb_device_registry_init(r);
}

const struct perfdb_device *
perfdb_device_find(const struct perfdb_device_registry *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

/* Insert or replace by name; takes ownership of d's strings. */
static int registry_put(struct perfdb_device_registry *r, struct perfdb_device *d)
{
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].name, d->name) == 0) {
			device_release(&r->v[i]);
			r->v[i] = *d;
			return 0;
		}
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct perfdb_device *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			return -PERFDB_ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n++] = *d;
	return 0;
}

int perfdb_device_registry_add(struct perfdb_device_registry *r, const struct perfdb_device *d,
			       struct perfdb_err *err)
{
	struct perfdb_device x = *d;
	x.name = strdup(d->name ? d->name : "");
	x.kind = strdup(d->kind ? d->kind : "");
	x.vendor = strdup(d->vendor ? d->vendor : "");
	x.description = strdup(d->description ? d->description : "");
	x.source = strdup(d->source ? d->source : "detected");
	if (!x.name || !x.kind || !x.vendor || !x.description || !x.source || registry_put(r, &x) < 0) {
		device_release(&x);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/*
 * A number times its unit's scale, or -1 when it is negative or the
 * product is not finite (1e300 GiB would be inf bytes, printed as "inf" in
 * every report that divides by it).
 */
static int scaled(json_t *v, double scale, double *out)
{
	if (!json_is_number(v) || json_number_value(v) < 0 || !isfinite(json_number_value(v) * scale))
		return -1;
	*out = json_number_value(v) * scale;
	return 0;
}

/* Optional number field; returns 0, or -1 if present but not a number, negative or inf once scaled. */
static int get_num(json_t *obj, const char *key, double scale, double *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 0;
	return scaled(v, scale, out);
}

static const char *const peak_keys[PERFDB_PEAK_COUNT_] = {
	[PERFDB_PEAK_FP32] = "fp32", [PERFDB_PEAK_FP16] = "fp16",
	[PERFDB_PEAK_BF16] = "bf16", [PERFDB_PEAK_INT8] = "int8",
	[PERFDB_PEAK_FP8] = "fp8",
};

static int parse_peaks(json_t *obj, const char *key, double *out, const char **bad)
{
	json_t *p = json_object_get(obj, key);
	if (!p)
		return 0;
	if (!json_is_object(p)) {
		*bad = key;
		return -1;
	}
	const char *k;
	json_t *v;
	json_object_foreach(p, k, v) {
		int found = 0;
		for (int i = 0; i < PERFDB_PEAK_COUNT_; i++) {
			if (strcmp(k, peak_keys[i]) == 0) {
				if (scaled(v, 1e12, &out[i]) < 0) {
					*bad = key;
					return -1;
				}
				found = 1;
			}
		}
		if (!found) {
			*bad = key;
			return -1;
		}
	}
	return 0;
}

static int parse_device(json_t *e, size_t idx, const char *path,
			struct perfdb_device *d, struct perfdb_err *err)
{
	memset(d, 0, sizeof(*d));
	json_t *name = json_object_get(e, "name");
	if (!json_is_object(e) || !json_is_string(name) || !json_string_value(name)[0])
		return perfdb_err_set(err, PERFDB_EPARSE,
			"%s: devices[%zu]: each device needs a non-empty \"name\"", path, idx);
	const char *nm = json_string_value(name);
	for (const char *c = nm; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
			return perfdb_err_set(err, PERFDB_EPARSE,
				"%s: device '%s': name may hold only letters, digits, '_', '-', '.'",
				path, nm);
	json_t *kind = json_object_get(e, "kind");
	if (!json_is_string(kind))
		return perfdb_err_set(err, PERFDB_EPARSE,
			"%s: device '%s': missing \"kind\" (npu, gpu, cpu or test)", path, nm);
	const char *k = json_string_value(kind);
	if (strcmp(k, "npu") && strcmp(k, "gpu") && strcmp(k, "cpu") && strcmp(k, "test"))
		return perfdb_err_set(err, PERFDB_EPARSE,
			"%s: device '%s': unknown kind '%s' (npu, gpu, cpu or test)", path, nm, k);

	const char *bad = NULL;
	if (get_num(e, "memory_gib", 1024.0 * 1024 * 1024, &d->memory_bytes) < 0)
		bad = "memory_gib";
	else if (get_num(e, "memory_bandwidth_gbps", 1e9, &d->memory_bandwidth) < 0)
		bad = "memory_bandwidth_gbps";
	else if (parse_peaks(e, "mma_tflops", d->mma_flops, &bad) == 0)
		(void)parse_peaks(e, "vector_tflops", d->vector_flops, &bad);
	if (bad)
		return perfdb_err_set(err, PERFDB_EPARSE,
			"%s: device '%s': bad value for \"%s\"", path, nm, bad);

	json_t *comm = json_object_get(e, "comm");
	if (comm) {
		json_t *grid = json_object_get(comm, "grid");
		json_t *tiers = json_object_get(comm, "tiers");
		if (!json_is_array(grid) || !json_is_array(tiers) ||
		    json_array_size(grid) == 0 ||
		    json_array_size(grid) > PERFDB_COMM_MAX_TIERS ||
		    json_array_size(grid) != json_array_size(tiers))
			return perfdb_err_set(err, PERFDB_EPARSE,
				"%s: device '%s': \"comm\" needs \"grid\" and \"tiers\" arrays of "
				"equal length (1..%d)", path, nm, PERFDB_COMM_MAX_TIERS);
		d->grid_ndim = json_array_size(grid);
		for (size_t i = 0; i < d->grid_ndim; i++) {
			json_t *g = json_array_get(grid, i);
			json_t *t = json_array_get(tiers, i);
			if (!json_is_integer(g) || json_integer_value(g) < 1 ||
			    json_integer_value(g) > 1 << 20)
				return perfdb_err_set(err, PERFDB_EPARSE,
					"%s: device '%s': comm.grid[%zu] must be a positive integer",
					path, nm, i);
			d->grid[i] = (int)json_integer_value(g);
			struct perfdb_comm_tier *ct = &d->tiers[i];
			json_t *tn = json_object_get(t, "name");
			snprintf(ct->name, sizeof(ct->name), "%s",
				 json_is_string(tn) ? json_string_value(tn) : "");
			ct->efficiency = 1.0;
			double bw = -1, lat = -1;
			if (!json_is_object(t) || get_num(t, "bandwidth_gbps", 1e9, &bw) < 0 ||
			    get_num(t, "latency_us", 1e-6, &lat) < 0 || bw < 0 || lat < 0 ||
			    get_num(t, "efficiency", 1.0, &ct->efficiency) < 0)
				return perfdb_err_set(err, PERFDB_EPARSE,
					"%s: device '%s': comm.tiers[%zu] needs numbers "
					"\"bandwidth_gbps\" and \"latency_us\"", path, nm, i);
			ct->bandwidth = bw;
			ct->latency = lat;
		}
	}
	json_t *vendor = json_object_get(e, "vendor");
	json_t *desc = json_object_get(e, "description");
	d->name = strdup(nm);
	d->kind = strdup(k);
	d->vendor = dup_or_null(json_is_string(vendor) ? json_string_value(vendor) : "");
	d->description = dup_or_null(json_is_string(desc) ? json_string_value(desc) : "");
	d->source = strdup(path);
	if (!d->name || !d->kind || !d->vendor || !d->description || !d->source) {
		device_release(d);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	return 0;
}

static int append_file(struct perfdb_device_registry *r, const char *path)
{
	size_t old = r->files ? strlen(r->files) : 0;
	char *nf = realloc(r->files, old + strlen(path) + 2);
	if (!nf)
		return -PERFDB_ENOMEM;
	if (old)
		nf[old++] = ':';
	strcpy(nf + old, path);
	r->files = nf;
	return 0;
}

int perfdb_device_registry_load_file(struct perfdb_device_registry *r,
				     const char *path, struct perfdb_err *err)
{
	/* read through perfdb_open_regular: a FIFO given as the file is refused */
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all(path, &sb, err);
	if (rc == 0)
		rc = perfdb_device_registry_parse(r, path, sb.buf ? sb.buf : "", sb.len, err);
	perfdb_strbuf_release(&sb);
	return rc;
}

int perfdb_device_registry_parse(struct perfdb_device_registry *r, const char *path,
				 const char *data, size_t len, struct perfdb_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (je.line <= 0)
			return perfdb_err_set(err, PERFDB_EIO, "%s: %s", path, je.text);
		return perfdb_err_at(err, PERFDB_EPARSE, path, (size_t)je.line,
				     (size_t)(je.column > 0 ? je.column : 0), "%s", je.text);
	}
	int rc = 0;
	json_t *fmt = json_object_get(root, "format");
	json_t *devs = json_object_get(root, "devices");
	if (!json_is_object(root) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), FORMAT_TAG) != 0) {
		rc = perfdb_err_set(err, PERFDB_EPARSE,
			"%s: not a device registry (expected \"format\": \"%s\")", path, FORMAT_TAG);
		goto out;
	}
	if (!json_is_array(devs)) {
		rc = perfdb_err_set(err, PERFDB_EPARSE, "%s: \"devices\" must be an array", path);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(devs); i++) {
		struct perfdb_device d;
		rc = parse_device(json_array_get(devs, i), i, path, &d, err);
		if (rc < 0)
			goto out;
		if (registry_put(r, &d) < 0) {
			device_release(&d);
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto out;
		}
	}
	json_t *def = json_object_get(root, "default");
	if (json_is_string(def)) {
		char *nd = strdup(json_string_value(def));
		if (!nd) {
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto out;
		}
		free(r->default_name);
		r->default_name = nd;
	}
	if (append_file(r, path) < 0)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0 && r->default_name && !perfdb_device_find(r, r->default_name))
		rc = perfdb_err_set(err, PERFDB_EPARSE,
			"%s: default device '%s' is not defined", path, r->default_name);
out:
	json_decref(root);
	return rc;
}

char *perfdb_data_path(const char *name)
{
	char buf[PATH_MAX + 64];
	const char *env = getenv("PERFDB_DATA_DIR");
	if (env && *env) {   /* searched first; what it lacks comes from the install */
		snprintf(buf, sizeof(buf), "%s/%s", env, name);
		if (access(buf, R_OK) == 0)
			return strdup(buf);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, sizeof(buf), "%s/../share/perfdb/%s", exe, name);
			if (access(buf, R_OK) == 0)
				return strdup(buf);
		}
	}
#ifdef PERFDB_SOURCE_DATADIR
	snprintf(buf, sizeof(buf), "%s/%s", PERFDB_SOURCE_DATADIR, name);
	if (access(buf, R_OK) == 0)
		return strdup(buf);
#endif
	return NULL;
}

int perfdb_device_registry_load(struct perfdb_device_registry *r,
				struct perfdb_err *err)
{
	char *path = perfdb_data_path("devices.json");
	if (!path)
		return perfdb_err_set(err, PERFDB_ENOENT,
			"device registry 'devices.json' not found (set PERFDB_DATA_DIR to the "
			"directory that holds it)");
	int rc = perfdb_device_registry_load_file(r, path, err);
	free(path);
	if (rc < 0)
		return rc;
	const char *extra = getenv("PERFDB_DEVICES");
	if (extra && *extra) {
		char *list = strdup(extra), *save = NULL;
		if (!list)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save)) {
			rc = perfdb_device_registry_load_file(r, f, err);
			if (rc < 0)
				break;
		}
		free(list);
	}
	return rc;
}

/* "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz" -> "INTEL_XEON_PLATINUM_8480" */
static void cpu_name(const char *model, char *out, size_t cap)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s", model);
	char *at = strchr(tmp, '@');
	if (at)
		*at = '\0';
	const char *drop[] = { "(R)", "(r)", "(TM)", "(tm)", " CPU", " Processor" };
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
		char *p;
		while ((p = strstr(tmp, drop[i])))
			memmove(p, p + strlen(drop[i]), strlen(p + strlen(drop[i])) + 1);
	}
	size_t w = snprintf(out, cap, "CPU_");
	int us = 1;
	for (const char *c = tmp; *c && w + 1 < cap; c++) {
		if (isalnum((unsigned char)*c)) {
			out[w++] = (char)toupper((unsigned char)*c);
			us = 0;
		} else if (!us) {
			out[w++] = '_';
			us = 1;
		}
	}
	while (w > 4 && out[w - 1] == '_')
		w--;
	out[w] = '\0';
	if (w == 4)
		snprintf(out, cap, "CPU_HOST");
}

void perfdb_device_gpu_name(const char *model, double bytes, char *out, size_t cap)
{
	size_t w = 0;
	int us = 1;
	for (const char *c = model ? model : ""; *c && w + 1 < cap; c++) {
		if (isalnum((unsigned char)*c)) {
			out[w++] = (char)toupper((unsigned char)*c);
			us = 0;
		} else if (!us) {
			out[w++] = '_';
			us = 1;
		}
	}
	while (w > 0 && out[w - 1] == '_')
		w--;
	out[w] = '\0';
	if (w == 0)
		snprintf(out, cap, "NVIDIA_GPU");
	size_t l = strlen(out);
	/* the memory as sold: 140.4 GiB of an H200 is its 141 GB; 1e-3 absorbs rounding of exact sizes */
	snprintf(out + l, cap - l, "_%.0fG", ceil(bytes / 1073741824.0 - 1e-3));
}

int perfdb_device_detect_host_cpu(struct perfdb_device_registry *r,
				  const char **name_out, struct perfdb_err *err)
{
	char model[256] = "";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "model name", 10) == 0) {
				char *c = strchr(line, ':');
				if (c) {
					c++;
					while (*c == ' ' || *c == '\t')
						c++;
					c[strcspn(c, "\n")] = '\0';
					snprintf(model, sizeof(model), "%s", c);
				}
				break;
			}
		}
		fclose(f);
	}
	char name[128];
	cpu_name(model, name, sizeof(name));
	const struct perfdb_device *have = perfdb_device_find(r, name);
	if (have) {
		*name_out = have->name;
		return 0;
	}
	struct perfdb_device d;
	memset(&d, 0, sizeof(d));
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		d.memory_bytes = (double)pages * (double)psize;
	char desc[320];
	snprintf(desc, sizeof(desc), "%s, %ld logical CPUs", model[0] ? model : "host CPU",
		 sysconf(_SC_NPROCESSORS_ONLN));
	d.name = strdup(name);
	d.kind = strdup("cpu");
	d.vendor = strdup("");
	d.description = strdup(desc);
	d.source = strdup("detected");
	if (!d.name || !d.kind || !d.vendor || !d.description || !d.source ||
	    registry_put(r, &d) < 0) {
		device_release(&d);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	*name_out = r->v[r->n - 1].name;
	return 0;
}

int perfdb_device_tier_of_group(const struct perfdb_device *d, long n)
{
	if (!d->grid_ndim)
		return -1;
	int ndim = (int)d->grid_ndim;
	long c0[PERFDB_COMM_MAX_TIERS];
	int tier = ndim - 1;
	for (long rank = 0; rank < n; rank++) {
		long rem = rank;
		for (int i = ndim - 1; i >= 0; i--) {
			long coord = rem % d->grid[i];
			rem /= d->grid[i];
			if (rank == 0)
				c0[i] = coord;
			else if (coord != c0[i] && i < tier)
				tier = i;
		}
		if (tier == 0)
			break;
	}
	return tier;
}
