/*
 * perfdb comm --backend nccl (docs/cuda.md): the NCCL transport of
 * src/backend/transport.h — the harness's collectives on device buffers, one
 * rank per GPU (the local MPI rank's GPU), each call timed with CUDA events
 * on the transport's stream.  Part of the cuda module; the harness reaches
 * it through struct perfdb_module's nccl table, so the base library links
 * no CUDA.
 *
 * One NCCL communicator per MPI group, created on the group's first begin
 * (ncclGetUniqueId on the group's rank 0, MPI_Bcast, ncclCommInitRank) and
 * kept until release; device buffers grow as sizes do.
 */
#include "backend/backend.h"
#include "backend/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define MAX_GROUPS 64

struct nccl_ctx {
	int ready, dev;
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	struct {
		MPI_Comm mpi;
		ncclComm_t nccl;
		int size, rank;
	} g[MAX_GROUPS];
	int ng, cur;                 /* cur: the group of the current case */
	void *send, *recv;           /* device buffers */
	size_t send_cap, recv_cap;
	bool in_place;
	const void *host_send;       /* the harness's buffers of the current case */
	void *host_recv;
	size_t send_bytes, recv_bytes;
};

static int cuda_fail(cudaError_t e, const char *what, struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_EIO, "%s: %s", what, cudaGetErrorString(e));
}

static int nccl_fail(ncclResult_t r, const char *what, struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_EIO, "%s failed: %s", what, ncclGetErrorString(r));
}

#define CUDA_TRY(err, call)                                             \
	do {                                                            \
		cudaError_t e_ = (call);                                \
		if (e_ != cudaSuccess)                                  \
			return cuda_fail(e_, #call, (err));             \
	} while (0)
#define NCCL_TRY(err, call)                                             \
	do {                                                            \
		ncclResult_t r_ = (call);                               \
		if (r_ != ncclSuccess)                                  \
			return nccl_fail(r_, #call, (err));             \
	} while (0)

/* The local rank's GPU, its stream and events. */
static int device_init(struct nccl_ctx *nc, struct perfdb_err *err)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return perfdb_err_set(err, PERFDB_EIO, "--backend nccl: no CUDA device found (cudaGetDeviceCount: %s)",
				      cudaGetErrorString(e));
	if (n <= 0)
		return perfdb_err_set(err, PERFDB_EIO, "--backend nccl: no CUDA device found (cudaGetDeviceCount: 0 devices)");
	/* one rank per GPU: the local rank's, by the rule the replay backend follows too */
	nc->dev = perfdb_pick_gpu(n);
	CUDA_TRY(err, cudaSetDevice(nc->dev));
	CUDA_TRY(err, cudaStreamCreateWithFlags(&nc->stream, cudaStreamNonBlocking));
	CUDA_TRY(err, cudaEventCreate(&nc->ev0));
	CUDA_TRY(err, cudaEventCreate(&nc->ev1));
	nc->ready = 1;
	return 0;
}

static int tr_open(void **ctx, struct perfdb_err *err)
{
	struct nccl_ctx *nc = calloc(1, sizeof(*nc));
	*ctx = nc;
	if (!nc)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return device_init(nc, err);
}

static int group_of(struct nccl_ctx *nc, MPI_Comm comm, struct perfdb_err *err)
{
	for (int i = 0; i < nc->ng; i++) {
		int same = MPI_UNEQUAL;
		MPI_Comm_compare(nc->g[i].mpi, comm, &same);
		if (same == MPI_IDENT) {
			nc->cur = i;
			return 0;
		}
	}
	if (nc->ng == MAX_GROUPS)
		return perfdb_err_set(err, PERFDB_EINVAL, "more than %d NCCL groups", MAX_GROUPS);
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	ncclUniqueId id;
	memset(&id, 0, sizeof(id));
	ncclResult_t r = rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
	int ok = r == ncclSuccess;
	/* every member learns whether rank 0 got an id before waiting in the init */
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
	if (!ok)
		return r != ncclSuccess ? nccl_fail(r, "ncclGetUniqueId", err)
					: perfdb_err_set(err, PERFDB_EIO, "ncclGetUniqueId failed on rank 0");
	if (MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, comm) != MPI_SUCCESS)
		return perfdb_err_set(err, PERFDB_EIO, "MPI_Bcast of the NCCL id failed");
	ncclComm_t c;
	NCCL_TRY(err, ncclCommInitRank(&c, size, id, rank));
	nc->g[nc->ng].mpi = comm;
	nc->g[nc->ng].nccl = c;
	nc->g[nc->ng].size = size;
	nc->g[nc->ng].rank = rank;
	nc->cur = nc->ng++;
	return 0;
}

static int grow(void **p, size_t *cap, size_t need, struct perfdb_err *err)
{
	if (need <= *cap)
		return 0;
	cudaFree(*p);
	*p = NULL;
	*cap = 0;
	CUDA_TRY(err, cudaMalloc(p, need));
	*cap = need;
	return 0;
}

static int tr_begin(void *ctx, MPI_Comm comm, void *send, size_t send_bytes, void *recv,
		    size_t recv_bytes, struct perfdb_err *err)
{
	struct nccl_ctx *nc = ctx;
	PERFDB_TRY(group_of(nc, comm, err));
	nc->in_place = send_bytes == 0;
	nc->host_send = send;
	nc->host_recv = recv;
	nc->send_bytes = send_bytes;
	nc->recv_bytes = recv_bytes;
	if (send_bytes)
		PERFDB_TRY(grow(&nc->send, &nc->send_cap, send_bytes, err));
	return grow(&nc->recv, &nc->recv_cap, recv_bytes ? recv_bytes : 64, err);
}

static int tr_upload(void *ctx, struct perfdb_err *err)
{
	const struct nccl_ctx *nc = ctx;
	if (nc->host_send && nc->send_bytes)
		CUDA_TRY(err, cudaMemcpy(nc->send, nc->host_send, nc->send_bytes, cudaMemcpyHostToDevice));
	if (nc->host_recv && nc->recv_bytes)
		CUDA_TRY(err, cudaMemcpy(nc->recv, nc->host_recv, nc->recv_bytes, cudaMemcpyHostToDevice));
	return 0;
}

static int tr_download(void *ctx, struct perfdb_err *err)
{
	const struct nccl_ctx *nc = ctx;
	if (nc->recv_bytes)
		CUDA_TRY(err, cudaMemcpy(nc->host_recv, nc->recv, nc->recv_bytes, cudaMemcpyDeviceToHost));
	return 0;
}

static ncclDataType_t nccl_type(enum perfdb_comm_dtype d)
{
	switch (d) {
	case PERFDB_COMM_BF16:
		return ncclBfloat16;
	case PERFDB_COMM_FP16:
		return ncclFloat16;
	case PERFDB_COMM_FP32:
		return ncclFloat32;
	default:
		return ncclInt8;
	}
}

static int enqueue(const struct nccl_ctx *nc, enum perfdb_comm_op op, ncclDataType_t t, size_t count, size_t esz, struct perfdb_err *err)
{
	ncclComm_t c = nc->g[nc->cur].nccl;
	int n = nc->g[nc->cur].size;
	const void *send = nc->in_place ? nc->recv : nc->send;
	switch (op) {
	case PERFDB_COMM_ALL_REDUCE:
		NCCL_TRY(err, ncclAllReduce(send, nc->recv, count, t, ncclSum, c, nc->stream));
		break;
	case PERFDB_COMM_ALL_GATHER:
		NCCL_TRY(err, ncclAllGather(send, nc->recv, count, t, c, nc->stream));
		break;
	case PERFDB_COMM_REDUCE_SCATTER:
		NCCL_TRY(err, ncclReduceScatter(send, nc->recv, count, t, ncclSum, c, nc->stream));
		break;
	case PERFDB_COMM_ALL_TO_ALL: {
		/* count elements to and from every peer, as nccl-tests' alltoall */
		NCCL_TRY(err, ncclGroupStart());
		ncclResult_t r = ncclSuccess;
		for (int p = 0; p < n && r == ncclSuccess; p++) {
			r = ncclSend((const char *)send + (size_t)p * count * esz, count, t, p, c, nc->stream);
			if (r == ncclSuccess)
				r = ncclRecv((char *)nc->recv + (size_t)p * count * esz, count, t, p, c, nc->stream);
		}
		ncclResult_t r2 = ncclGroupEnd();
		if (r != ncclSuccess)
			return nccl_fail(r, "ncclSend/ncclRecv", err);
		if (r2 != ncclSuccess)
			return nccl_fail(r2, "ncclGroupEnd", err);
		break;
	}
	default:
		return perfdb_err_set(err, PERFDB_EINVAL, "collective %d not supported on nccl", (int)op);
	}
	return 0;
}

static int tr_call(void *ctx, const struct perfdb_coll *coll, enum perfdb_comm_dtype dt,
		   size_t count, double *seconds, struct perfdb_err *err)
{
	const struct nccl_ctx *nc = ctx;
	size_t esz = perfdb_comm_dtype(dt)->size;
	CUDA_TRY(err, cudaEventRecord(nc->ev0, nc->stream));
	PERFDB_TRY(enqueue(nc, coll->op, nccl_type(dt), count, esz, err));
	CUDA_TRY(err, cudaEventRecord(nc->ev1, nc->stream));
	CUDA_TRY(err, cudaEventSynchronize(nc->ev1));
	float ms = 0;
	CUDA_TRY(err, cudaEventElapsedTime(&ms, nc->ev0, nc->ev1));
	*seconds = (double)ms * 1e-3;
	return 0;
}

static void tr_release(void *ctx)
{
	struct nccl_ctx *nc = ctx;
	if (!nc)
		return;
	for (int i = 0; i < nc->ng; i++)
		ncclCommDestroy(nc->g[i].nccl);
	if (nc->ready) {
		cudaFree(nc->send);
		cudaFree(nc->recv);
		cudaEventDestroy(nc->ev0);
		cudaEventDestroy(nc->ev1);
		cudaStreamDestroy(nc->stream);
	}
	free(nc);
}

static void tr_describe(void *ctx, char *out, size_t cap)
{
	const struct nccl_ctx *nc = ctx;
	int v = 0;
	ncclGetVersion(&v);
	struct cudaDeviceProp p;
	memset(&p, 0, sizeof(p));
	if (nc && nc->ready)
		cudaGetDeviceProperties(&p, nc->dev);
	snprintf(out, cap, "nccl %d.%d.%d on %s, one rank per GPU; time = CUDA events around each call",
		 v / 10000, (v / 100) % 100, v % 100, nc && nc->ready ? p.name : "?");
}

const struct perfdb_comm_transport_i perfdb_nccl_transport = {
	.name = "nccl",
	.label = "NCCL",
	.clock = "CUDA events around the NCCL call on the transport's stream",
	.open = tr_open,
	.begin = tr_begin,
	.upload = tr_upload,
	.download = tr_download,
	.call = tr_call,
	.describe = tr_describe,
	.release = tr_release,
};
