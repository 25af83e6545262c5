/*
 * The process's MPI world (mpi_world.h): start-up without surprises, and
 * errors returned rather than fatal.
 */
#include "mpi_world.h"

#include <limits.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int perfdb_mpi_launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atoi(v);
	}
	return -1;
}

int perfdb_mpi_error(struct perfdb_err *err, int rc, const char *what)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		snprintf(s, sizeof(s), "MPI error %d", rc);
	char call[128];
	snprintf(call, sizeof(call), "%.*s", (int)strcspn(what, "("), what);
	return perfdb_err_set(err, PERFDB_EIO, "%s failed: %s", call, s);
}

int perfdb_mpi_init(int *argc, char ***argv, bool malloc_tune, struct perfdb_mpi_world *w,
		    struct perfdb_err *err)
{
	if (malloc_tune) {
		/* Fixed thresholds stop glibc from returning Open MPI's per-call
		 * scratch buffers to the kernel after every call (docs/comm.md). */
		mallopt(M_MMAP_MAX, 0);
		mallopt(M_TRIM_THRESHOLD, INT_MAX);
		mallopt(M_TOP_PAD, 64 << 20);
	}
	if (perfdb_mpi_launcher_rank() < 0) {
		/*
		 * A singleton (no launcher: a world of one).  Open MPI 4 would
		 * start a helper daemon for MPI_Comm_spawn, which perfdb never
		 * calls (0.15 s here), and try the cm PML, whose MTLs load
		 * libpsm2 and libinfinipath: their constructors calibrate timers
		 * in 125 us sleeps for 0.2 s, on every host with the packages and
		 * none of the fabrics.  With no peer to reach, ob1 (self) is the
		 * PML a world of one ends up with anyway.  The user's own
		 * settings win (no overwrite); other MPIs ignore the variables.
		 */
		setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
		setenv("OMPI_MCA_pml", "ob1", 0);
	}
	int rc = MPI_Init(argc, argv);
	if (rc != MPI_SUCCESS)
		return perfdb_mpi_error(err, rc, "MPI_Init");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &w->rank)) != MPI_SUCCESS)
		return perfdb_mpi_error(err, rc, "MPI_Comm_rank");
	if ((rc = MPI_Comm_size(MPI_COMM_WORLD, &w->size)) != MPI_SUCCESS)
		return perfdb_mpi_error(err, rc, "MPI_Comm_size");
	return 0;
}

void perfdb_mpi_finalize(void)
{
	MPI_Finalize();
}

void perfdb_mpi_abort(int code)
{
	MPI_Abort(MPI_COMM_WORLD, code);
}

int perfdb_mpi_share_status(int status)
{
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return status;
}
