/*
 * The replay backend interface (docs/style.md rule 3, docs/spec/replay.md §4 and
 * Decision 1), after ggml's backend interface: a backend is a table of
 * function pointers, its operators are one table of struct perfdb_op_impl.
 *
 * The engine (src/replay/engine.c) owns the method: it parses a row into
 * tensors, asks supports_op first (an unsupported row is reported and
 * skipped), allocates and fills the buffers, then calls the op's check,
 * prepare, run (timed) and release.  A backend never times, prints or
 * allocates tensor buffers itself.
 */
#ifndef PERFDB_BACKEND_H
#define PERFDB_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/device.h"
#include "perfdb/dtype.h"
#include "perfdb/err.h"
#include "perfdb/shape.h"
#include "perfdb/strbuf.h"

#define PERFDB_BACKEND_API_VERSION 1
#define PERFDB_OP_MAX_TENSORS 32

/* One tensor of a case, as the engine built it from a row (spec §4). */
struct perfdb_tensor {
	bool present;                         /* false: an empty slot */
	enum perfdb_dtype dtype;              /* missing dtype: DT_FLOAT */
	enum perfdb_format format;            /* missing format: ND */
	size_t ndims;
	int64_t dims[PERFDB_SHAPE_MAX_DIMS];  /* logical dims (FRACTAL_NZ already turned into 2-D) */
	int64_t numel;
	void *data;                           /* engine-owned, 64-byte aligned, pre-faulted */
	size_t bytes;
	/* Outputs only: 1 + the input slot whose buffer this output is (an
	 * in-place op, impl->inplace); 0: a buffer of its own. */
	int alias_in;
};

/* One replay case: the tensors of one row, plus the op's private state. */
struct perfdb_op_case {
	const char *op;
	size_t nin, nout;
	struct perfdb_tensor in[PERFDB_OP_MAX_TENSORS];
	struct perfdb_tensor out[PERFDB_OP_MAX_TENSORS];
	int threads;                          /* --threads (>= 1) */
	void *priv;                           /* set by prepare, freed by release */
	/*
	 * The row's other cells by column name (FIA's `Runtime ...` columns,
	 * `EP Size`): cell(cell_ctx, "Runtime sparse_mode") is the cell's text,
	 * or NULL when the table has no such column.  Set by the engine before
	 * check; NULL cell means no row (unit tests), use perfdb_case_cell().
	 */
	const char *(*cell)(const void *cell_ctx, const char *column);
	const void *cell_ctx;
	/*
	 * Collective ops (impl->collective) under mpirun: comm points to the
	 * run's MPI_Comm (every rank replays the row together), rank/nranks
	 * are this process's place in it.  Outside MPI: comm NULL, 0 of 1.
	 */
	void *comm;
	int rank, nranks;
	/* --dispatch-ffn-combine-ep-size of the run (the reference's --ep-size; 16 by default). */
	int ep_size;
	/* The row's line in its table (1-based, header = 1; 0 outside a table): backends' own reports. */
	size_t line;
};

/* A row cell by column name: NULL when absent or empty. */
static inline const char *perfdb_case_cell(const struct perfdb_op_case *c, const char *column)
{
	const char *v = c->cell ? c->cell(c->cell_ctx, column) : NULL;
	return v && *v ? v : NULL;
}

/*
 * GroupedMatmul's group list (docs/spec/replay.md §4: the tokens split evenly
 * over the E groups, cumulative): the end of group g's rows when t tokens
 * are split, the remainder going to the first groups.  Every backend splits
 * the same way, so a row's groups do not depend on the backend.
 */
static inline int64_t perfdb_even_group_end(int64_t t, int64_t e, int64_t g)
{
	int64_t base = t / e, rem = t % e;
	return base * (g + 1) + (g + 1 < rem ? g + 1 : rem);
}

/* One operator of one backend. */
struct perfdb_op_impl {
	const char *name;                     /* OP Type = table stem */
	/*
	 * Whether the case's shapes and dtypes are ones this op can take.
	 * Returns 0 or -PERFDB_EINVAL with the reason in err (recorded as the
	 * row's failure).  Called before any buffer is allocated.
	 */
	int (*check)(const struct perfdb_op_case *c, struct perfdb_err *err);
	/*
	 * Optional (NULL: nothing to prepare).  One-time work outside the
	 * timed loop: primitive creation, weight reorder.  Buffers are filled.
	 */
	int (*prepare)(struct perfdb_op_case *c, struct perfdb_err *err);
	/* The timed call; must be synchronous (the result complete on return). */
	int (*run)(struct perfdb_op_case *c, struct perfdb_err *err);
	/* Optional (NULL: priv is not used).  Frees priv. */
	void (*release)(struct perfdb_op_case *c);
	/* Memory-bound: the engine rotates/flushes caches between samples. */
	bool memory_bound;
	/*
	 * Optional (NULL: every row is replayed).  A row the op keeps without
	 * replay (the reference's skip hook, e.g. DFC rows whose `EP Size`
	 * differs from the run's): returns 1 and writes why, else 0.  Called
	 * before check; its answer must be the same on every MPI rank.
	 */
	int (*skip)(const struct perfdb_op_case *c, char *why, size_t whylen);
	/*
	 * Optional (NULL: no output is in place).  The input slot whose buffer
	 * output slot `out` is (the op updates it in place, as KV-cache writes
	 * do on the device), or -1.  The engine then allocates no buffer for
	 * that output and does not count it against the row's memory.
	 */
	int (*inplace)(const struct perfdb_op_case *c, size_t out);
	/*
	 * Collective: under mpirun every rank replays each row of this op
	 * together (the engine barriers before every sample and takes the
	 * slowest rank's time, as nccl-tests does); other ops' rows are sharded
	 * across the ranks.  run() may communicate over c->comm.
	 */
	bool collective;
};

struct perfdb_backend_i {
	unsigned api_version;                 /* PERFDB_BACKEND_API_VERSION */
	const char *name;                     /* --backend value, e.g. "cpu" */
	const char *device_kind;              /* devices.json kind it measures: "cpu", "gpu" */
	/* Optional (NULL: nothing to set up).  Threads to use (>= 1). */
	int (*init)(int threads, struct perfdb_err *err);
	/* Asked first, for every row: does this backend implement the op at all? */
	bool (*supports_op)(const char *op);
	/* The op's implementation (NULL only when supports_op is false). */
	const struct perfdb_op_impl *(*find_op)(const char *op);
	/* Optional (NULL: no environment to record).  Appends `key=value` lines. */
	void (*describe)(struct perfdb_strbuf *out);
	/*
	 * The describe() key whose major.minor version names the stack level of
	 * the native layout <root>/<device>/<backend>/<stack><major.minor>/
	 * ("onednn" for cpu, "cuda" for cuda).
	 */
	const char *stack;
	/*
	 * Optional (NULL: the host CPU, perfdb_device_detect_host_cpu).  Adds
	 * the device this backend measures to the registry (unless a device of
	 * that name exists) and names it; fails when there is no such device.
	 */
	int (*detect_device)(struct perfdb_device_registry *reg, const char **name_out,
			     struct perfdb_err *err);
	/*
	 * Optional (NULL: the engine times run() with the host clock around
	 * each call).  Device backends time on the device: one sample is the
	 * device time of one call of impl on c, in us; flush: the op is memory
	 * bound and its data is evicted from the device caches before the
	 * call.  Called once per sample, after the engine's warm-up calls of run().
	 */
	int (*time_run)(const struct perfdb_op_impl *impl, struct perfdb_op_case *c, bool flush,
			double *us, struct perfdb_err *err);
	/*
	 * Optional (NULL: none).  Writes the backend's own reports of the run
	 * into reports_dir, their names ending in _<ts> (CUDA: per-kernel device
	 * durations); *path_out (malloc'd, or NULL when nothing was written).
	 */
	int (*write_reports)(const char *reports_dir, const char *ts, char **path_out,
			     struct perfdb_err *err);
};

/*
 * The registry (registry.c): the compiled-in backends (perfdb_backends[],
 * the CPU), then those of modules (cuda), loaded on first use.  0 and *out,
 * or an error saying why: -PERFDB_EINVAL when this perfdb has no such
 * backend (a usage error), else the module's load error (a runtime one).
 * perfdb_backend_find is the same without the reason.
 */
int perfdb_backend_get(const char *name, const struct perfdb_backend_i **out,
		       struct perfdb_err *err);
const struct perfdb_backend_i *perfdb_backend_find(const char *name);
extern const struct perfdb_backend_i *const perfdb_backends[];

/* The CPU backend (src/backend/cpu/). */
extern const struct perfdb_backend_i perfdb_backend_cpu;
#ifdef PERFDB_HAVE_CUDA
/* The CUDA backend (src/backend/cuda/, docs/cuda.md), in the cuda module. */
extern const struct perfdb_backend_i perfdb_backend_cuda;
#endif

#endif
