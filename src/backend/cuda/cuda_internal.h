/*
 * The CUDA backend's shared state and helpers (docs/cuda.md).
 *
 * Every CUDA op is a struct cu_op: the engine-facing perfdb_op_impl first
 * (find_op returns it), whose prepare/run/release are the backend's
 * generic ones (cuda.c): prepare copies the row's tensors to device memory
 * allocated once per row and calls the op's setup; run enqueues the op on
 * the backend's stream and waits; the backend's time_run replays a CUDA
 * graph of the op's enqueue between CUDA events.  An op only says how to
 * check a row, set it up and enqueue it.
 */
#ifndef PERFDB_CUDA_INTERNAL_H
#define PERFDB_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "backend/backend.h"
#include "cuda_kernels.h"
#include "backend/kernel_report.h"

/* The backend's state: its context (open), one per process (one device per process). */
struct cu_state {
	int ready;                    /* 1: device set up; -1: failed (err_msg) */
	int pid;                      /* the process that set it up */
	int dev;
	struct cudaDeviceProp prop;
	cudaStream_t stream;
	cublasLtHandle_t lt;
	void *lt_ws;                  /* cuBLASLt workspace, shared by every GEMM */
	size_t lt_ws_bytes;
	void *flush;                  /* written between samples of memory-bound ops */
	size_t flush_bytes;           /* twice the L2 size */
	int want_dev;                 /* the device open asked for; -1: perfdb_pick_gpu's */
	int cupti;                    /* 1: kernel records collected; 0: not (cupti_why) */
	int cupti_tried;              /* CUPTI set up once per process */
	char cupti_why[160];
	struct perfdb_kernel_report kernels;   /* the run's per-kernel rows */
};
extern struct cu_state cu;

struct cu_case;

struct cu_op {
	struct perfdb_op_impl impl;   /* first: the engine sees this */
	const char *kernel;           /* what runs it, recorded per row: "cublasLt", "own" */
	int (*setup)(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err);   /* optional */
	int (*enqueue)(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t s, struct perfdb_err *err);
	void (*teardown)(struct cu_case *k);   /* optional: frees k->state */
};

/* The priv of every CUDA op case. */
struct cu_case {
	const struct cu_op *op;
	void *din[PERFDB_OP_MAX_TENSORS], *dout[PERFDB_OP_MAX_TENSORS];   /* device copies (NULL: absent) */
	void *state;                  /* the op's own */
	cudaGraphExec_t graph;        /* graph_calls enqueues of the op */
	int graph_calls;
	cudaEvent_t ev0, ev1;
	double op_calls;              /* timed calls so far (CUPTI's Calls per op call) */
	bool collecting;              /* CUPTI records being collected for this row */
};

#define CU_OP(n, label, chk, set, enq, down)                                                          \
	{ .impl = { .name = (n), .check = (chk), .prepare = cu_prepare, .run = cu_run,                   \
		    .release = cu_release },                                                              \
	  .kernel = (label), .setup = (set), .enqueue = (enq), .teardown = (down) }

int cu_prepare(struct perfdb_op_case *c, struct perfdb_err *err);
int cu_run(struct perfdb_op_case *c, struct perfdb_err *err);
void cu_release(struct perfdb_op_case *c);

/* Set up the device once (lazy); 0 or -PERFDB_EIO with the reason. */
int cu_ready(struct perfdb_err *err);

/* Error helpers: 0 on success, else -PERFDB_EIO with "<what>: <reason>". */
int cu_check(cudaError_t e, const char *what, struct perfdb_err *err);
int cu_lt_check(cublasStatus_t s, const char *what, struct perfdb_err *err);
#define CU_TRY(err, call) PERFDB_TRY(cu_check((call), #call, (err)))
#define LT_TRY(err, call) PERFDB_TRY(cu_lt_check((call), #call, (err)))

/* Re-upload input i after setup rewrote its host data (index tensors). */
int cu_upload_in(struct perfdb_op_case *c, struct cu_case *k, size_t i, struct perfdb_err *err);

/* The kernels' dtype code of a float dtype, or -1. */
int cu_float_dt(enum perfdb_dtype d);

/* CUPTI (cupti.c): activity records of the kernels launched between begin and end. */
int cu_cupti_init(char *why, size_t whylen);
int cu_cupti_begin(void);
/* Drops the records collected so far (collection goes on). */
void cu_cupti_discard(void);
/* Stops collecting and adds the row's per-kernel rows to cu.kernels. */
int cu_cupti_end(const char *op, size_t line, const char *used, double op_calls, struct perfdb_err *err);

/* The op tables (one per family). */
extern const struct cu_op cu_ops_gemm[];
extern const struct cu_op cu_ops_mem[];
extern const struct cu_op cu_ops_attn[];

#endif
