/*
 * A transport in use (transport.h): its table and the context its open
 * made, opened and released in one place so every caller does both alike.
 */
#include "backend/transport.h"

#include <stdio.h>
#include <string.h>

#include "backend/module.h"

int perfdb_comm_transport_open(struct perfdb_comm_transport *t,
			       const struct perfdb_comm_transport_i *i, struct perfdb_err *err)
{
	t->i = i;
	t->ctx = NULL;
	return i->open(&t->ctx, err);
}

void perfdb_comm_transport_release(struct perfdb_comm_transport *t)
{
	if (t->i)
		t->i->release(t->ctx);
	memset(t, 0, sizeof(*t));
}

/*
 * The registry of transports (docs/comm.md "Transports"): MPI's and
 * HCCL's are the comm stage's own; NCCL's comes from the cuda module,
 * loaded here on first use, so that a perfdb without it still runs the
 * others.
 */
int perfdb_comm_transport_get(const char *name, const struct perfdb_comm_transport_i **out,
			      struct perfdb_err *err)
{
	if (strcmp(name, "mpi") == 0) {
		*out = &perfdb_comm_transport_mpi;
		return 0;
	}
	if (strcmp(name, "hccl") == 0) {
		*out = &perfdb_comm_transport_hccl;
		return 0;
	}
	if (strcmp(name, "nccl") != 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "--backend %s: no such transport", name);
	const struct perfdb_module *m = NULL;
	int rc = perfdb_module_load("cuda", &m, err);
	if (rc == 0 && !(*out = m->nccl))
		rc = perfdb_err_set(err, PERFDB_EINVAL, "the cuda module has no NCCL transport");
	if (rc < 0) {
		char why[PERFDB_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		perfdb_err_set(err, err->code, "--backend nccl: %s", why);
	}
	return rc;
}

int perfdb_comm_transport_start(const char *name, MPI_Comm comm, struct perfdb_comm_transport *t,
				bool *speaker, struct perfdb_err *err)
{
	const struct perfdb_comm_transport_i *ti = NULL;
	memset(t, 0, sizeof(*t));
	int bad = perfdb_comm_transport_get(name, &ti, err) < 0;
	if (!bad)
		bad = perfdb_comm_transport_open(t, ti, err) < 0;
	/* every rank needs it (and, for HCCL and NCCL, its device): all stop
	 * when one has none, and the lowest rank that failed says why, once */
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int mine = bad ? rank : size, first = size;
	MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
	*speaker = bad && rank == first;
	if (first == size)
		return 0;
	perfdb_comm_transport_release(t);
	if (!bad)
		perfdb_err_set(err, PERFDB_EIO, "rank %d could not open the %s transport", first, name);
	return -(err->code ? err->code : PERFDB_EIO);
}
