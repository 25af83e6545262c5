/*
 * What the GPU-only programs (tests/device/, bench/microbench_cuda.c) use
 * of the CUDA backend beyond its perfdb_backend_i.
 */
#ifndef PERFDB_CUDA_H
#define PERFDB_CUDA_H

#include "backend/backend.h"

/* Copy a prepared case's device outputs into its host buffers (c->out[i].data). */
int perfdb_cuda_download(struct perfdb_op_case *c, struct perfdb_err *err);

/* The label of what ran the case's op ("cublasLt", "own", ...), or NULL. */
const char *perfdb_cuda_kernel_used(const char *op);

#endif
