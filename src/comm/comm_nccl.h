/*
 * perfdb comm --backend nccl (docs/cuda.md): the harness's collectives on
 * device buffers through NCCL, one rank per GPU (the local MPI rank's GPU),
 * each call timed with CUDA events.  The harness (harness.c) keeps its
 * method (check, warm-up, budget, slowest rank's sample); only where the
 * buffers live and what runs the call change.
 *
 * One NCCL communicator per MPI group, created on first use
 * (ncclGetUniqueId on the group's rank 0, MPI_Bcast, ncclCommInitRank) and
 * kept until perfdb_nccl_release; device buffers grow as sizes do.
 */
#ifndef PERFDB_COMM_NCCL_H
#define PERFDB_COMM_NCCL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "perfdb/comm.h"
#include "perfdb/err.h"

/*
 * The NCCL transport, as the cuda module provides it (src/backend/module.h;
 * implemented in src/backend/cuda/nccl.c).  The harness calls it through
 * this table only, so the base library links no CUDA.
 */
struct perfdb_nccl_i {
	/* The device (fails with "no CUDA device found (...)" without one). */
	int (*init)(struct perfdb_err *err);
	/* The group's communicator and device buffers for send_bytes / recv_bytes (0 send: in place). */
	int (*begin)(MPI_Comm comm, size_t send_bytes, size_t recv_bytes, struct perfdb_err *err);
	/* Host data to the device buffers (send may be NULL), and the receive buffer back. */
	int (*upload)(const void *send, size_t send_bytes, const void *recv, size_t recv_bytes,
		      struct perfdb_err *err);
	int (*download)(void *recv, size_t recv_bytes, struct perfdb_err *err);
	/* One collective (count as perfdb_comm_layout's) on the device buffers; *seconds: its device time. */
	int (*call)(enum perfdb_comm_op op, enum perfdb_comm_dtype dt, size_t count, double *seconds,
		    struct perfdb_err *err);
	/* Communicators, buffers and the stream. */
	void (*release)(void);
	/* "nccl=2.x.y" and the GPU, for the environment record. */
	void (*describe)(char *out, size_t cap);
};

/* The table itself, defined in the cuda module (src/backend/cuda/nccl.c). */
extern const struct perfdb_nccl_i perfdb_nccl_transport;

#endif
