/*
 * The process's MPI world: its start-up and end, shared by the two stages
 * that run under a launcher (perfdb comm's collectives, and microbench's
 * scale-out in the replay stage).  It sits in the backend layer, beside
 * the transports that bootstrap over it, because both stages lie above it
 * and neither may call the other.  Every other command runs without MPI.
 */
#ifndef PERFDB_BACKEND_MPI_WORLD_H
#define PERFDB_BACKEND_MPI_WORLD_H

#include <stdbool.h>

#include "perfdb/err.h"

struct perfdb_mpi_world {
	int rank;
	int size;
};

/*
 * World rank a launcher gave this process before MPI starts
 * ($OMPI_COMM_WORLD_RANK, $PMIX_RANK, $PMI_RANK), or -1 when not launched by
 * one.  Lets every rank parse its arguments but only one print usage errors.
 */
int perfdb_mpi_launcher_rank(void);

/*
 * MPI_Init (malloc_tune: glibc's thresholds fixed first, see perfdb comm
 * --malloc-tune), errors returned instead of aborting from then on.
 * Without a launcher (perfdb_mpi_launcher_rank() < 0) it first sets the
 * Open MPI singleton variables the user has not set (docs/comm.md
 * "Start-up without a launcher").
 */
int perfdb_mpi_init(int *argc, char ***argv, bool malloc_tune, struct perfdb_mpi_world *w,
		    struct perfdb_err *err);
void perfdb_mpi_finalize(void);
/* Stop every rank (after a failure the others cannot know about). */
void perfdb_mpi_abort(int code);
/* World rank 0's status, on every rank (collective). */
int perfdb_mpi_share_status(int status);

/* An MPI call's failure as err ("MPI_Allreduce failed: <MPI's words>"); returns -PERFDB_EIO. */
int perfdb_mpi_error(struct perfdb_err *err, int rc, const char *what);

#endif
