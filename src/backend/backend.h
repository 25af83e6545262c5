/*
 * The replay backend interface (docs/style.md rule 3, docs/spec/replay.md §4 and
 * Decision 1), after ggml's backend interface: a backend is a table of
 * function pointers, its operators are one table of struct perfdb_op_impl.
 *
 * The engine (src/replay/engine.c, case.c, timing.c) owns the method: it
 * parses a row into tensors, asks supports_op first (an unsupported row is
 * reported and skipped), allocates and fills the buffers, then applies the
 * op's definition (src/ops/opdef.h) and calls the backend op's
 * check, prepare, run (timed) and release.  A backend never times, prints or
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
#include "ops/opdef.h"

/* 2: the device level, contexts (open/free), ops without properties (opdef.h) */
#define PERFDB_BACKEND_API_VERSION 2
/*
 * One operator of one backend: how it runs the op whose definition
 * (memory-bound, collective, in place, skip rule, shared row rules) is the
 * operator layer's (src/ops/opdef.h).
 */
struct perfdb_op_impl {
	const char *name;                     /* OP Type = table stem */
	/*
	 * Whether the case's shapes and dtypes are ones this backend's kernel
	 * can take (its limits, after the definition's own check).
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
	/*
	 * 1: the op keeps cold itself what a model finds cold (ops_matmul.c
	 * rotates its weight through copies, leaving the activations warm as
	 * the previous op leaves them), so the engine does not flush the
	 * caches before its samples; 0: the engine does, below 64 MiB
	 * (timing_flushes).
	 */
	int cold_itself;
};

/*
 * Whether a backend takes a row: the definition's rules (def->check), then
 * the backend's own limits (impl->check), as the engine runs them.  def or
 * either check NULL: that step passes.  0 or -PERFDB_EINVAL with the
 * first refusal's reason in err.  Everything that checks a row outside
 * the engine (unit tests, benches) calls this, never impl->check alone.
 */
int perfdb_case_check(const struct perfdb_opdef *def, const struct perfdb_op_impl *impl,
		      const struct perfdb_op_case *c, struct perfdb_err *err);

/*
 * The device level: one device a backend can measure, as the driver reports
 * it, read without setting the backend up (no stream, no library handle,
 * no workspace), so naming a device costs what a property query costs.
 */
struct perfdb_backend_device {
	int index;                            /* 0 .. device_count - 1 */
	char model[256];                      /* the driver's name, e.g. "NVIDIA H200" */
	char description[512];                /* one line for the device registry */
	double memory_bytes;
	double memory_bandwidth;              /* bytes/s, from the memory clock and bus; 0: unknown */
};

/*
 * The interface has three levels, after ggml's backend interface: the
 * registry finds a backend by name (registry.c); the device level says
 * which devices it sees and what they are (device_count, device_get); the
 * backend level is a context (open ... free) on one of them, handed to
 * every op through perfdb_op_case.backend_ctx, so no op reads process-wide
 * state of its backend.
 */
struct perfdb_backend_i {
	unsigned api_version;                 /* PERFDB_BACKEND_API_VERSION */
	const char *name;                     /* --backend value, e.g. "cpu" */
	const char *device_kind;              /* devices.json kind it measures: "cpu", "gpu" */
	/* ---- device level ---- */
	/* Optional (NULL: one device, the host).  The devices this backend sees (>= 1), or an error. */
	int (*device_count)(struct perfdb_err *err);
	/* Optional (NULL: the host CPU, perfdb_device_detect_host_cpu).  Device index's properties. */
	int (*device_get)(int index, struct perfdb_backend_device *out, struct perfdb_err *err);
	/* ---- backend level ---- */
	/*
	 * A context on device `device` (perfdb_pick_gpu's choice for a GPU
	 * backend, 0 for the host) with `threads` host threads (>= 1).  *ctx
	 * goes to every op of the run (backend_ctx), to describe and
	 * write_reports, and to free.
	 */
	int (*open)(int threads, int device, void **ctx, struct perfdb_err *err);
	/* Frees what open made (NULL ctx: nothing). */
	void (*free)(void *ctx);
	/* Asked first, for every row: does this backend implement the op at all? */
	bool (*supports_op)(const char *op);
	/* The op's implementation (NULL only when supports_op is false). */
	const struct perfdb_op_impl *(*find_op)(const char *op);
	/*
	 * Optional (NULL: no environment to record).  Appends `key=value`
	 * lines; ctx NULL: what is known before open (library versions).
	 */
	void (*describe)(void *ctx, struct perfdb_strbuf *out);
	/*
	 * Optional (NULL: the host CPU, perfdb_device_detect_host_cpu).  Adds
	 * the device this backend would measure (device level only: no
	 * context needed) to the registry, unless a device of that name
	 * exists, and names it; fails when there is no such device.
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
	int (*write_reports)(void *ctx, const char *reports_dir, const char *ts, char **path_out,
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

/*
 * The device a backend context should use: under mpirun or srun the local
 * rank's (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID) modulo
 * count, else 0: perfdb_pick_local_device (include/perfdb/local_rank.h),
 * the one rule every device-using path follows (replay, NCCL, HCCL).
 */
int perfdb_pick_gpu(int count);
extern const struct perfdb_backend_i *const perfdb_backends[];

/* The CPU backend (src/backend/cpu/). */
extern const struct perfdb_backend_i perfdb_backend_cpu;
#ifdef PERFDB_HAVE_CUDA
/* The CUDA backend (src/backend/cuda/, docs/cuda.md), in the cuda module. */
extern const struct perfdb_backend_i perfdb_backend_cuda;
#endif

#endif
