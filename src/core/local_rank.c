/*
 * The local rank and the device it picks (include/perfdb/local_rank.h).
 */
#include "perfdb/local_rank.h"

#include <stdlib.h>

int perfdb_local_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r = v && *v ? strtol(v, &end, 10) : -1;
		if (v && *v && *end == '\0' && r >= 0 && r < 1L << 30)
			return (int)r;
	}
	return -1;
}

int perfdb_pick_local_device(int count)
{
	int r = perfdb_local_rank();
	return count > 0 && r >= 0 ? r % count : 0;
}
