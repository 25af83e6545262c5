/*
 * The MPI transport of perfdb comm (transport.h; docs/comm.md "Transports"):
 * the collectives' MPI calls on the harness's host buffers, each timed with
 * MPI_Wtime around the call alone.  bf16 and fp16 travel as MPI_UINT16_T
 * and are summed by user-defined MPI_Ops (reduce16.h), made by open at the
 * ISA level perfdb_cpu_isa() allows then and freed by release, so nothing
 * outlives the run.
 */
#include "backend/transport.h"

#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "reduce16.h"

struct mpi_ctx {
	MPI_Op sum_bf16, sum_fp16;
	MPI_Comm comm;          /* the group of the last begin */
	void *send, *recv;      /* the harness's host buffers (send NULL: in place) */
};

/* One call's arguments, as MPI takes them. */
struct args {
	MPI_Comm comm;
	MPI_Datatype type;      /* the dtype's MPI type */
	MPI_Op op;              /* the dtype's sum (reductions only) */
	void *send, *recv;
	int count;              /* perfdb_comm_layout.count */
};

static MPI_Datatype mpi_type(enum perfdb_comm_dtype d)
{
	switch (d) {
	case PERFDB_COMM_BF16:
	case PERFDB_COMM_FP16:
		return MPI_UINT16_T;   /* storage only: the sum is ours */
	case PERFDB_COMM_FP32:
		return MPI_FLOAT;
	case PERFDB_COMM_INT8:
	default:
		return MPI_INT8_T;
	}
}

static MPI_Op mpi_sum(const struct mpi_ctx *c, enum perfdb_comm_dtype d)
{
	return d == PERFDB_COMM_BF16 ? c->sum_bf16 : d == PERFDB_COMM_FP16 ? c->sum_fp16 : MPI_SUM;
}

/* ---- the calls, one per collective (the layouts of coll_<name>.c) ---- */

static int all_reduce(const struct args *a)
{
	return MPI_Allreduce(MPI_IN_PLACE, a->recv, a->count, a->type, a->op, a->comm);
}

static int all_gather(const struct args *a)
{
	return MPI_Allgather(a->send, a->count, a->type, a->recv, a->count, a->type, a->comm);
}

static int reduce_scatter(const struct args *a)
{
	return MPI_Reduce_scatter_block(a->send, a->recv, a->count, a->type, a->op, a->comm);
}

static int all_to_all(const struct args *a)
{
	return MPI_Alltoall(a->send, a->count, a->type, a->recv, a->count, a->type, a->comm);
}

static int (*const calls[PERFDB_COMM_NOPS])(const struct args *a) = {
	[PERFDB_COMM_ALL_REDUCE] = all_reduce,
	[PERFDB_COMM_ALL_GATHER] = all_gather,
	[PERFDB_COMM_REDUCE_SCATTER] = reduce_scatter,
	[PERFDB_COMM_ALL_TO_ALL] = all_to_all,
};

/* ---- the slots ------------------------------------------------------- */

static void tr_release(void *ctx)
{
	struct mpi_ctx *c = ctx;
	if (!c)
		return;
	if (c->sum_bf16 != MPI_OP_NULL)
		MPI_Op_free(&c->sum_bf16);
	if (c->sum_fp16 != MPI_OP_NULL)
		MPI_Op_free(&c->sum_fp16);
	free(c);
}

static int tr_open(void **ctx, struct perfdb_err *err)
{
	struct mpi_ctx *c = calloc(1, sizeof(*c));
	*ctx = c;
	if (!c)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->sum_bf16 = c->sum_fp16 = MPI_OP_NULL;
	c->comm = MPI_COMM_NULL;
	enum perfdb_cpu_isa isa = perfdb_cpu_isa();   /* once per run, not per call */
	PERFDB_TRY(perfdb_r16_mpi_op(PERFDB_COMM_BF16, PERFDB_HALF_SUM, isa, &c->sum_bf16, err));
	return perfdb_r16_mpi_op(PERFDB_COMM_FP16, PERFDB_HALF_SUM, isa, &c->sum_fp16, err);
}

static int tr_begin(void *ctx, MPI_Comm comm, void *send, size_t send_bytes, void *recv,
		    size_t recv_bytes, struct perfdb_err *err)
{
	(void)send_bytes, (void)recv_bytes, (void)err;
	struct mpi_ctx *c = ctx;
	c->comm = comm;
	c->send = send;
	c->recv = recv;
	return 0;
}

/* The calls use the host buffers themselves: nothing to copy. */
static int tr_copy(void *ctx, struct perfdb_err *err)
{
	(void)ctx, (void)err;
	return 0;
}

static int tr_call(void *ctx, const struct perfdb_coll *coll, enum perfdb_comm_dtype dt,
		   size_t count, double *seconds, struct perfdb_err *err)
{
	const struct mpi_ctx *c = ctx;
	const struct args a = {
		.comm = c->comm, .type = mpi_type(dt), .op = mpi_sum(c, dt),
		.send = c->send, .recv = c->recv, .count = (int)count,
	};
	int (*run)(const struct args *) = calls[coll->op];
	/* the clock around the MPI call and nothing else */
	double t0 = MPI_Wtime();
	int rc = run(&a);
	*seconds = MPI_Wtime() - t0;
	return rc == MPI_SUCCESS ? 0 : perfdb_mpi_error(err, rc, coll->name);
}

const struct perfdb_comm_transport_i perfdb_comm_transport_mpi = {
	.name = "mpi",
	.label = "MPI",
	.clock = "MPI_Wtime around the MPI call",
	.open = tr_open,
	.begin = tr_begin,
	.upload = tr_copy,
	.download = tr_copy,
	.call = tr_call,
	.describe = NULL,
	.release = tr_release,
};
