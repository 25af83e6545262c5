/*
 * The device registry: what perfdb knows about each target device (kind,
 * memory, peak rates, communication grid and per-tier links).
 *
 * Devices are data, not code: data/devices.json is installed with the
 * program and users add or override devices by pointing $PERFDB_DEVICES at
 * more files (colon-separated) without recompiling.  Backends add the
 * devices they detect at run time (the host CPU here; GPUs in the CUDA
 * backend).  Format: docs/devices.md.
 */
#ifndef PERFDB_DEVICE_H
#define PERFDB_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/err.h"

#define PERFDB_COMM_MAX_TIERS 8

struct perfdb_comm_tier {
	char name[32];          /* e.g. "inter_pod" */
	double bandwidth;       /* bytes/s, unidirectional */
	double latency;         /* seconds */
	double efficiency;      /* achievable fraction of bandwidth */
};

enum perfdb_peak {
	PERFDB_PEAK_FP32, PERFDB_PEAK_FP16, PERFDB_PEAK_BF16, PERFDB_PEAK_INT8,
	PERFDB_PEAK_FP8, PERFDB_PEAK_COUNT_
};

struct perfdb_device {
	char *name;             /* directory name in the database, e.g. ATLAS_800_A3_752T_128G_DIE */
	char *kind;             /* "npu", "gpu", "cpu" or "test" */
	char *vendor;
	char *description;
	char *source;           /* file it came from, or "detected" */
	double memory_bytes;    /* device memory (HBM), 0 = unknown */
	double memory_bandwidth;/* bytes/s, 0 = unknown */
	double mma_flops[PERFDB_PEAK_COUNT_]; /* matrix-unit peaks, FLOP/s (0 = unknown) */
	double vector_flops[PERFDB_PEAK_COUNT_]; /* vector-unit peaks */
	int grid[PERFDB_COMM_MAX_TIERS];      /* comm grid, outer -> inner */
	size_t grid_ndim;
	struct perfdb_comm_tier tiers[PERFDB_COMM_MAX_TIERS]; /* tiers[i] spans grid[i:] */
};

struct perfdb_device_registry {
	struct perfdb_device *v;
	size_t n, cap;
	char *default_name;
	char *files;            /* ':'-joined list of files loaded (for --version/devices) */
};

void perfdb_device_registry_init(struct perfdb_device_registry *r);
void perfdb_device_registry_release(struct perfdb_device_registry *r);

/*
 * Load the installed registry (perfdb_data_path("devices.json")), then each
 * file of $PERFDB_DEVICES.  A later definition of a name replaces the
 * earlier one.  Errors name the file and the offending entry.
 */
int perfdb_device_registry_load(struct perfdb_device_registry *r,
				struct perfdb_err *err);

/* Load one registry file (same format). */
int perfdb_device_registry_load_file(struct perfdb_device_registry *r,
				     const char *path, struct perfdb_err *err);

/* The same from len bytes at data; path names them in errors. */
int perfdb_device_registry_parse(struct perfdb_device_registry *r, const char *path,
				 const char *data, size_t len, struct perfdb_err *err);

/* Device by exact name, or NULL. */
const struct perfdb_device *
perfdb_device_find(const struct perfdb_device_registry *r, const char *name);

/*
 * Add the host CPU (name CPU_<MODEL>, kind "cpu", memory from the OS) unless
 * a device of that name exists.  Sets *name_out to the registry's copy.
 */
int perfdb_device_detect_host_cpu(struct perfdb_device_registry *r,
				  const char **name_out, struct perfdb_err *err);

/*
 * The registry name of a GPU (the CUDA backend's detected device): the
 * model upper-cased, runs of other characters as one `_`, then its memory
 * in GiB rounded up: ("NVIDIA H200", 140.4 GiB) -> NVIDIA_H200_141G, the
 * memory as sold.
 */
void perfdb_device_gpu_name(const char *model, double bytes, char *out, size_t cap);

/*
 * Add (or replace by name) a copy of d: its strings are copied.  For the
 * devices backends detect at run time (the CUDA backend's GPU).
 */
int perfdb_device_registry_add(struct perfdb_device_registry *r, const struct perfdb_device *d,
			       struct perfdb_err *err);

/*
 * Topology tier of the group of ranks [0..n-1] on the device's grid
 * (docs/spec/comm.md §2): index of the outermost dimension where the ranks'
 * coordinates differ; all identical -> ndim-1.  Returns -1 without a grid.
 */
int perfdb_device_tier_of_group(const struct perfdb_device *d, long n);

/*
 * Locate an installed data file: $PERFDB_DATA_DIR/<name>, else
 * <dir of the executable>/../share/perfdb/<name>, else the source tree's
 * data/<name>.  Returns a malloc'd path or NULL if none exists.
 */
char *perfdb_data_path(const char *name);

/*
 * Devices perfdb met (device_met.c): add the device of each
 * <root>/<dir>/perfdb-device.json whose name is not defined yet (a file
 * must define one device, named as its directory).  A missing root is no
 * error; a malformed file is, naming it.
 */
int perfdb_device_met_load(struct perfdb_device_registry *r, const char *root,
			   struct perfdb_err *err);

/* The same for the one device a database directory <root>/<device>/<layout>/<version> is in. */
int perfdb_device_met_load_db(struct perfdb_device_registry *r, const char *dbdir,
			      struct perfdb_err *err);

struct perfdb_db_opts;
/*
 * The devices met where the database flags point: with --database-path the
 * one device that database is in, else every one under the root (no root
 * yet: none; the command says why when it needs one).
 */
int perfdb_device_met_load_flags(struct perfdb_device_registry *r, const struct perfdb_db_opts *o,
				 struct perfdb_err *err);

/*
 * Record dev as met: write <device_dir>/perfdb-device.json (its name, kind,
 * vendor, description and known figures) unless that file exists.  Atomic;
 * device_dir must exist.
 */
int perfdb_device_met_note(const char *device_dir, const struct perfdb_device *dev,
			   struct perfdb_err *err);

/*
 * The device's peak FLOP/s for an operand dtype (enum perfdb_dtype) on its
 * matrix unit or its vector unit; 0 when unknown or dev is NULL.
 */
double perfdb_device_peak_flops(const struct perfdb_device *dev, bool matrix, int dtype);

/* Whether <device_dir>/perfdb-device.json has a memory bandwidth and matrix peaks. */
int perfdb_device_met_has_peaks(const char *device_dir);

/*
 * Add dev's measured figures (memory_bandwidth, mma_flops, vector_flops;
 * 0 = unknown, left out) to <device_dir>/perfdb-device.json, creating it as
 * perfdb_device_met_note does when absent.  A figure the file already has
 * (measured before, or written by hand) is kept.  Atomic.
 */
int perfdb_device_met_add_peaks(const char *device_dir, const struct perfdb_device *dev,
				struct perfdb_err *err);

/*
 * The registry device named by a component of dir (the deepest wins), or
 * NULL: the device a database directory belongs to (<root>/<device>/...).
 */
const struct perfdb_device *perfdb_device_of_dir(const struct perfdb_device_registry *r,
						 const char *dir);

struct perfdb_strbuf;

/* The registry as JSON (device_json.c; keys in docs/devices.md), a newline after it. */
int perfdb_device_registry_json(const struct perfdb_device_registry *reg, struct perfdb_strbuf *out);

#endif
