/*
 * Database locations: the option group shared by every stage
 * (docs/spec/parse.md §4 "Database path" and Decision 9).
 *
 *   --database-path P   used verbatim; device and version flags ignored
 *   a native device     <root>/<device>/torch/torch<T>   (kind cpu or gpu:
 *                       where parse of its traces, grid and replay meet)
 *   otherwise           <root>/<device>/vllm_ascend/vllm<V>_torch<T>_cann<C>
 *   root                --database-root, else $PERFDB_DATA_ROOT, else the
 *                       nearest tensor_cast/performance_model/
 *                       profiling_database/data above the current
 *                       directory, else ./profiling_database/data
 */
#ifndef PERFDB_DBPATH_H
#define PERFDB_DBPATH_H

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

#define PERFDB_DEFAULT_DEVICE "ATLAS_800_A3_752T_128G_DIE"
#define PERFDB_TENSORCAST_DATA "tensor_cast/performance_model/profiling_database/data"

struct perfdb_db_opts {
	const char *database_path;
	const char *database_root;
	const char *device;        /* NULL: PERFDB_DEFAULT_DEVICE */
	const char *vllm_version;
	const char *torch_version;
	const char *cann_version;
	/*
	 * The device is a native one (registry kind cpu or gpu, or a device a
	 * PyTorch trace names): its database is <root>/<device>/torch/torch<T>/
	 * (perfdb_db_native_dir).  Set by the CLI from the registry.
	 */
	int native;
	int device_given;          /* --device was on the command line */
};

/*
 * Check a version flag value: trimmed, it must match
 * ^[0-9A-Za-z]+([._+-][0-9A-Za-z]+)*$.  Otherwise -PERFDB_EINVAL with the
 * reference message "Invalid version value: '<v>'. Expected something like
 * 0.9.2, 2.9.0, 8.5, or vllm0.13.0_torch2.8.0_cann8.3."
 */
int perfdb_db_check_version(const char *v, struct perfdb_err *err);

/*
 * The version directory name (reference rules): a lone --vllm-version that
 * already reads vllm…_torch…_cann… is used as is; otherwise each part is
 * trimmed and loses a leading vllm/torch/cann (any case), vllm also a
 * leading 'v', torch everything from '+'.  A missing CANN version is read
 * from $ASCEND_HOME_PATH/…/version.info when present.  Still missing parts
 * give the reference's "Could not detect runtime stack version(s): …" error.
 */
int perfdb_db_version_dir(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
			  struct perfdb_err *err);

/* The database root (see above); out is reset first.  *source names the rule used. */
int perfdb_db_root(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
		   const char **source, struct perfdb_err *err);

/*
 * A native device's database, <root>/<device>/torch/torch<T>: T is
 * --torch-version (trimmed, without a leading "torch" or anything from
 * '+'), else the one torch<T> directory already under <root>/<device>/torch/.
 * None or several: -PERFDB_EINVAL saying so and asking for --torch-version.
 */
int perfdb_db_native_dir(const struct perfdb_db_opts *o, const char *device,
			 struct perfdb_strbuf *out, struct perfdb_err *err);

/*
 * The device directory of a database in the layout,
 * <root>/<device>/<torch|vllm_ascend|hccl>/<version>: dbdir with its last two
 * components dropped, into out; *name points at its last component (the
 * device's name) inside out.  -1 when dbdir has too few components or out
 * is too small.
 */
int perfdb_db_device_dir(const char *dbdir, char *out, size_t cap, const char **name);

/* The database directory for o (does not create it). */
int perfdb_db_resolve(const struct perfdb_db_opts *o, struct perfdb_strbuf *out,
		      struct perfdb_err *err);

/*
 * str(pathlib.Path(p)) of Python, as the reference prints paths: no empty
 * or "." components, no trailing slash ("." for an empty path).
 */
void perfdb_py_path(const char *p, char *out, size_t cap);

#endif
