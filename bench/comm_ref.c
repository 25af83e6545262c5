/*
 * comm_ref: the plainest MPI timing loop of one collective, the reference
 * bench/comm.sh puts beside `perfdb comm` (docs/measuring.md).  Same
 * buffers, same method — per iteration MPI_Barrier, then MPI_Wtime around
 * the call; the slowest rank's time per iteration; the median — with
 * nothing else: no harness, no checks, no tables.
 *
 *   mpirun -np 2 comm_ref [--iters N] [--warmup N] [--malloc-tune] OPS BYTES...
 *
 * OPS is a comma-separated list of all_reduce (in place), all_gather,
 * reduce_scatter and all_to_all, run in that order, each over every size,
 * as `perfdb comm` does; BYTES has perfdb's meaning per op; the data are
 * fp32 zeros summed with MPI_SUM; buffers are page-aligned, touched
 * before use and allocated in the harness's order (receive, send, times);
 * the collectives run on a communicator split from the world one, as
 * perfdb's groups are (measured against MPI_COMM_WORLD in interleaved
 * launches, no difference beyond the spread: docs/measuring.md).
 * --malloc-tune sets glibc's thresholds as perfdb's option of that name
 * does.  Prints "OP BYTES MEDIAN_US" per case on rank 0.
 */
#include <limits.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void *page_buf(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, n ? n : 64) != 0)
		return NULL;
	memset(p, 0, n ? n : 64);
	return p;
}

static double run(MPI_Comm comm, const char *op, size_t bytes, int n, int warmup, int iters)
{
	size_t e = bytes / sizeof(float), sendn, recvn, count = e;
	if (strcmp(op, "all_gather") == 0) {
		sendn = e;
		recvn = e * (size_t)n;
	} else if (strcmp(op, "reduce_scatter") == 0) {
		sendn = e * (size_t)n;
		recvn = e;
	} else if (strcmp(op, "all_to_all") == 0) {
		count = e / (size_t)n ? e / (size_t)n : 1;
		sendn = recvn = count * (size_t)n;
	} else {
		sendn = 0;
		recvn = e;
	}
	/* perfdb's harness order: receive buffer, send buffer, then the times.
	 * Placement alone moves all_gather at 64 KiB by 10 % here
	 * (docs/measuring.md "perfdb vs comm_ref at 16 MiB"). */
	float *r = page_buf(recvn * sizeof(float));
	float *s = sendn ? page_buf(sendn * sizeof(float)) : NULL;
	double *t = malloc(((size_t)(iters > warmup ? iters : warmup) + 1) * sizeof(double));
	for (int i = -warmup; i < iters; i++) {
		MPI_Barrier(comm);
		double t0 = MPI_Wtime();
		if (strcmp(op, "all_gather") == 0)
			MPI_Allgather(s, (int)count, MPI_FLOAT, r, (int)count, MPI_FLOAT, comm);
		else if (strcmp(op, "reduce_scatter") == 0)
			MPI_Reduce_scatter_block(s, r, (int)count, MPI_FLOAT, MPI_SUM, comm);
		else if (strcmp(op, "all_to_all") == 0)
			MPI_Alltoall(s, (int)count, MPI_FLOAT, r, (int)count, MPI_FLOAT, comm);
		else
			MPI_Allreduce(MPI_IN_PLACE, r, (int)count, MPI_FLOAT, MPI_SUM, comm);
		double dt = MPI_Wtime() - t0;
		if (i >= 0)
			t[i] = dt;
	}
	MPI_Allreduce(MPI_IN_PLACE, t, iters, MPI_DOUBLE, MPI_MAX, comm);
	qsort(t, (size_t)iters, sizeof(double), cmp);
	double med = (iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2) * 1e6;
	free(t);
	free(s);
	free(r);
	return med;
}

int main(int argc, char **argv)
{
	int iters = 100, warmup = 20, a = 1, tune = 0;
	for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
		if (strcmp(argv[a], "--malloc-tune") == 0)
			tune = 1;
		else if (strcmp(argv[a], "--iters") == 0 && a + 1 < argc)
			iters = atoi(argv[++a]);
		else if (strcmp(argv[a], "--warmup") == 0 && a + 1 < argc)
			warmup = atoi(argv[++a]);
	}
	if (tune) {   /* what perfdb comm --malloc-tune does, before MPI starts */
		mallopt(M_MMAP_MAX, 0);
		mallopt(M_TRIM_THRESHOLD, INT_MAX);
		mallopt(M_TOP_PAD, 64 << 20);
	}
	MPI_Init(&argc, &argv);
	int rank, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	/* perfdb comm's group of all ranks (src/comm/comm_run.c): color 0, key rank */
	MPI_Comm comm;
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
	if (a + 1 >= argc || iters < 1 || warmup < 0) {
		if (rank == 0)
			fprintf(stderr, "usage: comm_ref [--iters N] [--warmup N] [--malloc-tune] OPS BYTES...\n");
		MPI_Comm_free(&comm);
		MPI_Finalize();
		return 2;
	}
	char *ops = strdup(argv[a++]);
	for (char *op = strtok(ops, ","); op; op = strtok(NULL, ",")) {
		for (int b = a; b < argc; b++) {
			double med = run(comm, op, (size_t)atoll(argv[b]), n, warmup, iters);
			if (rank == 0)
				printf("%s %s %.4f\n", op, argv[b], med);
		}
	}
	free(ops);
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
}
