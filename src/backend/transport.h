/*
 * The transport interface of perfdb comm (nccl-tests' split of harness and
 * collective, ggml's backend vtables; docs/comm.md "Transports"): what runs
 * a collective's call on one group's buffers.  The harness (harness.c)
 * keeps the method — check, warm-up, budget, barrier, the slowest rank's
 * sample — and the collectives (coll.h) keep their facts; a transport only
 * says where the buffers live and what runs the call.
 *
 * Three implement it: MPI on the harness's host buffers (transport_mpi.c, in
 * the base library), HCCL on NPU buffers (transport_hccl.c, in the base
 * library too: it opens CANN with dlopen, so it links nothing) and NCCL on
 * device buffers (src/backend/cuda/nccl.c, in the cuda module, reached
 * through struct perfdb_module so the base library links no CUDA).  All
 * bootstrap over the MPI group the harness passes, and the harness's
 * barrier and max-over-ranks stay MPI's: no transport needs its own.
 *
 * Life of a transport: open once per run (after MPI_Init, on every rank),
 * then per size begin, upload, call..., download, upload, call...; release
 * once at the end.  Every slot is required unless its comment says NULL.
 */
#ifndef PERFDB_BACKEND_TRANSPORT_H
#define PERFDB_BACKEND_TRANSPORT_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "ops/coll.h"
#include "perfdb/err.h"

struct perfdb_comm_transport_i {
	const char *name;    /* "mpi", "hccl", "nccl": the --backend spelling and the table's backend column */
	const char *label;   /* "MPI", "HCCL", "NCCL": how messages name it */
	const char *clock;   /* what times a call, for the report's method
				("MPI_Wtime around the MPI call") */
	/*
	 * The context of a run in *ctx (the dtypes' sums; the device and its
	 * stream).  0, or -PERFDB_E* with err set ("--backend nccl: no CUDA
	 * device found (...)"); release must then still be called with *ctx.
	 */
	int (*open)(void **ctx, struct perfdb_err *err);
	/*
	 * The buffers of one size on a member of comm: the harness's host
	 * buffers send (NULL: the collective runs in place) and recv, of
	 * send_bytes and recv_bytes.  Collective over comm (a transport may set
	 * up the group's communicator); a failure on one member is made every
	 * member's by the harness.  The pointers stay valid until the next begin.
	 */
	int (*begin)(void *ctx, MPI_Comm comm, void *send, size_t send_bytes, void *recv,
		     size_t recv_bytes, struct perfdb_err *err);
	/* The host buffers' contents to the buffers the calls use (after the
	 * harness wrote check data or zeros), and the receive buffer back to the
	 * host's; nothing to do where the calls use the host buffers. */
	int (*upload)(void *ctx, struct perfdb_err *err);
	int (*download)(void *ctx, struct perfdb_err *err);
	/*
	 * One call of coll on dt elements (count as perfdb_comm_layout's) on the
	 * buffers of the last begin; *seconds: its time on this rank, as the
	 * transport measures it (MPI_Wtime around the MPI call; CUDA events
	 * around the NCCL call).  0, or -PERFDB_E* with err set.
	 */
	int (*call)(void *ctx, const struct perfdb_coll *coll, enum perfdb_comm_dtype dt,
		    size_t count, double *seconds, struct perfdb_err *err);
	/* A line for the run's header ("nccl 2.x.y on <GPU>, ..."), or NULL:
	 * the MPI line the harness's environment record gives says it all. */
	void (*describe)(void *ctx, char *out, size_t cap);
	/* Everything open and begin made; ctx may be NULL. */
	void (*release)(void *ctx);
};

/* A transport in use: its table and the context its open made. */
struct perfdb_comm_transport {
	const struct perfdb_comm_transport_i *i;
	void *ctx;
};

/* The MPI transport (transport_mpi.c). */
extern const struct perfdb_comm_transport_i perfdb_comm_transport_mpi;
/* The HCCL transport (transport_hccl.c): CANN opened with dlopen on open. */
extern const struct perfdb_comm_transport_i perfdb_comm_transport_hccl;
/* The NCCL transport: defined in the cuda module only (src/backend/cuda/nccl.c)
 * and handed out as struct perfdb_module's nccl; the base library never names it. */
extern const struct perfdb_comm_transport_i perfdb_nccl_transport;

/*
 * Open transport i into *t (after MPI_Init).  0, or i's error; on failure
 * *t holds what open made, for perfdb_comm_transport_release.
 */
int perfdb_comm_transport_open(struct perfdb_comm_transport *t,
			       const struct perfdb_comm_transport_i *i, struct perfdb_err *err);
/* Release what open made (a zeroed *t is fine); *t is zeroed. */
void perfdb_comm_transport_release(struct perfdb_comm_transport *t);

/* The transport of --backend name: "mpi", "hccl", or "nccl" (the cuda module's). */
int perfdb_comm_transport_get(const char *name, const struct perfdb_comm_transport_i **out,
			      struct perfdb_err *err);

/*
 * Collective over comm: every rank gets and opens the transport name into
 * *t; when any rank fails, all release and fail, and *speaker is true on
 * the lowest rank that failed (the one to say why, once).
 */
int perfdb_comm_transport_start(const char *name, MPI_Comm comm, struct perfdb_comm_transport *t,
				bool *speaker, struct perfdb_err *err);

#endif
