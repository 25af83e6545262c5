/*
 * The native run's MPI world (native_run.h, docs/replay.md "Scale-out"):
 * under a launcher every rank replays its shard and rank 0 writes; the
 * ranks must first agree on how many threads a row is measured with.
 */
#include "replay/native_run.h"

#include "backend/mpi_world.h"

int perfdb_native_world_open(struct perfdb_native_opts *o, struct perfdb_native_world *w,
			     struct perfdb_err *err)
{
	w->started = 0;
	w->comm = MPI_COMM_WORLD;
	perfdb_native_set_threads_env(o->backend, o->threads);
	o->rank = 0;
	o->nranks = 1;
	o->comm = NULL;
	if (perfdb_mpi_launcher_rank() < 0)
		return 0;
	struct perfdb_mpi_world mw;
	int rc = perfdb_mpi_init(NULL, NULL, false, &mw, err);
	w->started = 1;   /* MPI_Init was called: close ends it even after a failure */
	if (rc < 0)
		return rc;
	o->comm = mw.size > 1 ? &w->comm : NULL;
	o->rank = mw.rank;
	o->nranks = mw.size;
	if (mw.size == 1)
		return 0;
	/* one thread count per run: ranks whose defaults differ (affinity masks of other sizes) would mix them */
	long lo = o->threads, hi = o->threads;
	if ((rc = MPI_Allreduce(&o->threads, &lo, 1, MPI_LONG, MPI_MIN, w->comm)) != MPI_SUCCESS ||
	    (rc = MPI_Allreduce(&o->threads, &hi, 1, MPI_LONG, MPI_MAX, w->comm)) != MPI_SUCCESS)
		return perfdb_mpi_error(err, rc, "MPI_Allreduce");
	if (lo != hi)
		return perfdb_err_set(err, PERFDB_EINVAL, "the ranks would measure with %ld to %ld threads "
				      "(their affinity masks or cgroup quotas differ): give every rank as "
				      "many cores, or --threads", lo, hi);
	return 0;
}

void perfdb_native_world_close(struct perfdb_native_world *w)
{
	/* the exit status is the worst of the ranks: mpirun reports the first non-zero one */
	if (w->started)
		perfdb_mpi_finalize();
	w->started = 0;
}
