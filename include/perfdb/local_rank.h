/*
 * The rank of this process among those a launcher started on its host:
 * the one rule by which every device-using path picks its device (replay's
 * GPU, comm's NCCL GPU and HCCL NPU): the local rank modulo the devices.
 */
#ifndef PERFDB_LOCAL_RANK_H
#define PERFDB_LOCAL_RANK_H

/*
 * The local rank mpirun or srun gave (OMPI_COMM_WORLD_LOCAL_RANK,
 * MPI_LOCALRANKID, SLURM_LOCALID, the first one set to a number >= 0),
 * else -1 (no launcher, or one that says nothing).
 */
int perfdb_local_rank(void);

/* The device of count this process uses: the local rank modulo count, else 0. */
int perfdb_pick_local_device(int count);

#endif
