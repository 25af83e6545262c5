/*
 * One replay case (docs/spec/replay.md §4 "Building a tensor"): the tensors the
 * engine built from one database row, and the row's other cells.  The
 * operator layer's definitions (opdef.h) and every backend's operators
 * (src/backend/backend.h) read a row only through this.
 */
#ifndef PERFDB_REPLAY_OP_CASE_H
#define PERFDB_REPLAY_OP_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"

struct perfdb_opdef;

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
	/* The op's definition (opdef.h); set by the engine with the tensors. */
	const struct perfdb_opdef *def;
	size_t nin, nout;
	struct perfdb_tensor in[PERFDB_OP_MAX_TENSORS];
	struct perfdb_tensor out[PERFDB_OP_MAX_TENSORS];
	int threads;                          /* --threads (>= 1) */
	void *priv;                           /* set by prepare, freed by release */
	void *backend_ctx;                    /* the backend's context (open); set by the engine */
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
	/*
	 * What the backend ran the row with, when it knows better than "own"
	 * (its own kernel): set by check or prepare, e.g. the CPU GEMMs'
	 * "onednn:brg:avx512_core_bf16"; the engine copies it into the row's
	 * Kernel Used.  Empty: the backend's own kernel.
	 */
	char kernel[64];
	/*
	 * GEMMs lowered from a PyTorch op (aten.h), whose call says how B is
	 * stored where a square B leaves the shapes ambiguous: 1 B is (N,K)
	 * (aten::linear's weight), -1 B is (K,N) (aten::mm), 0 the plan
	 * decides from the shapes (the Ascend tables).
	 */
	int b_nk;
};

/* A row cell by column name: NULL when absent or empty. */
static inline const char *perfdb_case_cell(const struct perfdb_op_case *c, const char *column)
{
	const char *v = c->cell ? c->cell(c->cell_ctx, column) : NULL;
	return v && *v ? v : NULL;
}

/* Whether a and b have the same dims (a shape relation rules and kernels both ask). */
static inline int perfdb_tensor_same_dims(const struct perfdb_tensor *a, const struct perfdb_tensor *b)
{
	if (a->ndims != b->ndims)
		return 0;
	for (size_t i = 0; i < a->ndims; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

#endif
