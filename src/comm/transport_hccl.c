/*
 * perfdb comm --backend hccl (docs/comm.md "HCCL"): the HCCL transport of
 * transport.h — the harness's collectives on NPU buffers, one rank per NPU
 * (the local rank's, perfdb_pick_local_device), each call timed with ACL
 * events on the transport's stream.  CANN is opened at run time
 * (hccl_api.c), so this lives in the base library beside the MPI
 * transport: unlike NCCL, which the cuda module links, nothing here needs
 * CANN to build.
 *
 * One HCCL communicator per MPI group, made on the group's first begin
 * (HcclGetRootInfo on the group's rank 0, MPI_Bcast of the root info,
 * HcclCommInitRootInfo on every member) and kept until release; device
 * buffers grow as sizes do.
 */
#include "backend/transport.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hccl_api.h"
#include "perfdb/local_rank.h"

#define MAX_GROUPS 64

struct hccl_ctx {
	struct perfdb_hccl_api api;
	bool acl_up, dev_up;         /* aclInit, aclrtSetDevice done */
	int dev;
	uint32_t ndev;
	aclrtStream stream;
	aclrtEvent ev0, ev1;
	struct {
		MPI_Comm mpi;
		HcclComm hccl;
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

/* A call of CANN's fn with args; a failure's message names fn alone. */
#define ACL_TRY(c, err, fn, args)                                               \
	do {                                                                    \
		aclError e_ = (c)->api.fn args;                                 \
		if (e_ != ACL_SUCCESS)                                          \
			return perfdb_acl_fail(&(c)->api, e_, #fn, (err));      \
	} while (0)
#define HCCL_TRY(c, err, fn, args)                                              \
	do {                                                                    \
		HcclResult r_ = (c)->api.fn args;                               \
		if (r_ != HCCL_SUCCESS)                                         \
			return perfdb_hccl_fail(&(c)->api, r_, #fn, (err));     \
	} while (0)

/* CANN, the local rank's NPU, its stream and events. */
static int device_init(struct hccl_ctx *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_hccl_api_open(&c->api, err));
	ACL_TRY(c, err, aclInit, (NULL));
	c->acl_up = true;
	ACL_TRY(c, err, aclrtGetDeviceCount, (&c->ndev));
	if (c->ndev == 0)
		return perfdb_err_set(err, PERFDB_EIO, "no NPU found (aclrtGetDeviceCount: 0 devices)");
	/* one rank per NPU: the local rank's, the rule NCCL and replay follow */
	c->dev = perfdb_pick_local_device((int)c->ndev);
	ACL_TRY(c, err, aclrtSetDevice, (c->dev));
	c->dev_up = true;
	ACL_TRY(c, err, aclrtCreateStream, (&c->stream));
	ACL_TRY(c, err, aclrtCreateEvent, (&c->ev0));
	ACL_TRY(c, err, aclrtCreateEvent, (&c->ev1));
	return 0;
}

static int tr_open(void **ctx, struct perfdb_err *err)
{
	struct hccl_ctx *c = calloc(1, sizeof(*c));
	*ctx = c;
	if (!c)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = device_init(c, err);
	if (rc < 0) {
		char why[PERFDB_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		perfdb_err_set(err, err->code, "--backend hccl: %s", why);
	}
	return rc;
}

static int group_of(struct hccl_ctx *c, MPI_Comm comm, struct perfdb_err *err)
{
	for (int i = 0; i < c->ng; i++) {
		int same = MPI_UNEQUAL;
		MPI_Comm_compare(c->g[i].mpi, comm, &same);
		if (same == MPI_IDENT) {
			c->cur = i;
			return 0;
		}
	}
	if (c->ng == MAX_GROUPS)
		return perfdb_err_set(err, PERFDB_EINVAL, "more than %d HCCL groups", MAX_GROUPS);
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	HcclRootInfo *root = calloc(1, sizeof(*root));
	int ok = root != NULL;
	HcclResult r = HCCL_SUCCESS;
	if (ok && rank == 0)
		ok = (r = c->api.HcclGetRootInfo(root)) == HCCL_SUCCESS;
	/* every member learns whether rank 0 got the root info before waiting in the init */
	int all = ok;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	int rc = 0;
	if (!all)
		rc = !root ? perfdb_err_set(err, PERFDB_ENOMEM, "out of memory")
		     : r != HCCL_SUCCESS ? perfdb_hccl_fail(&c->api, r, "HcclGetRootInfo", err)
					 : perfdb_err_set(err, PERFDB_EIO, "HcclGetRootInfo failed on rank 0");
	else if (MPI_Bcast(root, (int)sizeof(*root), MPI_BYTE, 0, comm) != MPI_SUCCESS)
		rc = perfdb_err_set(err, PERFDB_EIO, "MPI_Bcast of the HCCL root info failed");
	HcclComm h = NULL;
	if (rc == 0 && (r = c->api.HcclCommInitRootInfo((uint32_t)size, root, (uint32_t)rank, &h)) != HCCL_SUCCESS)
		rc = perfdb_hccl_fail(&c->api, r, "HcclCommInitRootInfo", err);
	free(root);
	if (rc < 0)
		return rc;
	c->g[c->ng].mpi = comm;
	c->g[c->ng].hccl = h;
	c->g[c->ng].size = size;
	c->g[c->ng].rank = rank;
	c->cur = c->ng++;
	return 0;
}

static int grow(struct hccl_ctx *c, void **p, size_t *cap, size_t need, struct perfdb_err *err)
{
	if (need <= *cap)
		return 0;
	if (*p)
		c->api.aclrtFree(*p);
	*p = NULL;
	*cap = 0;
	ACL_TRY(c, err, aclrtMalloc, (p, need, ACL_MEM_MALLOC_HUGE_FIRST));
	*cap = need;
	return 0;
}

static int tr_begin(void *ctx, MPI_Comm comm, void *send, size_t send_bytes, void *recv,
		    size_t recv_bytes, struct perfdb_err *err)
{
	struct hccl_ctx *c = ctx;
	PERFDB_TRY(group_of(c, comm, err));
	c->in_place = send_bytes == 0;
	c->host_send = send;
	c->host_recv = recv;
	c->send_bytes = send_bytes;
	c->recv_bytes = recv_bytes;
	if (send_bytes)
		PERFDB_TRY(grow(c, &c->send, &c->send_cap, send_bytes, err));
	return grow(c, &c->recv, &c->recv_cap, recv_bytes ? recv_bytes : 64, err);
}

static int tr_upload(void *ctx, struct perfdb_err *err)
{
	const struct hccl_ctx *c = ctx;
	if (c->host_send && c->send_bytes)
		ACL_TRY(c, err, aclrtMemcpy, (c->send, c->send_cap, c->host_send, c->send_bytes,
					     ACL_MEMCPY_HOST_TO_DEVICE));
	if (c->host_recv && c->recv_bytes)
		ACL_TRY(c, err, aclrtMemcpy, (c->recv, c->recv_cap, c->host_recv, c->recv_bytes,
					     ACL_MEMCPY_HOST_TO_DEVICE));
	return 0;
}

static int tr_download(void *ctx, struct perfdb_err *err)
{
	const struct hccl_ctx *c = ctx;
	if (c->recv_bytes)
		ACL_TRY(c, err, aclrtMemcpy, (c->host_recv, c->recv_bytes, c->recv, c->recv_bytes,
					     ACL_MEMCPY_DEVICE_TO_HOST));
	return 0;
}

static HcclDataType hccl_type(enum perfdb_comm_dtype d)
{
	switch (d) {
	case PERFDB_COMM_BF16:
		return HCCL_DATA_TYPE_BFP16;
	case PERFDB_COMM_FP16:
		return HCCL_DATA_TYPE_FP16;
	case PERFDB_COMM_FP32:
		return HCCL_DATA_TYPE_FP32;
	default:
		return HCCL_DATA_TYPE_INT8;
	}
}

/* The HCCL call of op; count as perfdb_comm_layout's, which is HCCL's own
 * count for each (AllReduce: the tensor; AllGather: per-rank input;
 * ReduceScatter: per-rank output; AlltoAll: per peer). */
static int enqueue(const struct hccl_ctx *c, enum perfdb_comm_op op, HcclDataType t, uint64_t count,
		   struct perfdb_err *err)
{
	HcclComm h = c->g[c->cur].hccl;
	void *send = c->in_place ? c->recv : c->send;
	switch (op) {
	case PERFDB_COMM_ALL_REDUCE:
		HCCL_TRY(c, err, HcclAllReduce, (send, c->recv, count, t, HCCL_REDUCE_SUM, h, c->stream));
		break;
	case PERFDB_COMM_ALL_GATHER:
		HCCL_TRY(c, err, HcclAllGather, (send, c->recv, count, t, h, c->stream));
		break;
	case PERFDB_COMM_REDUCE_SCATTER:
		HCCL_TRY(c, err, HcclReduceScatter, (send, c->recv, count, t, HCCL_REDUCE_SUM, h, c->stream));
		break;
	case PERFDB_COMM_ALL_TO_ALL:
		HCCL_TRY(c, err, HcclAlltoAll, (send, count, t, c->recv, count, t, h, c->stream));
		break;
	default:
		return perfdb_err_set(err, PERFDB_EINVAL, "collective %d not supported on hccl", (int)op);
	}
	return 0;
}

static int tr_call(void *ctx, const struct perfdb_coll *coll, enum perfdb_comm_dtype dt,
		   size_t count, double *seconds, struct perfdb_err *err)
{
	const struct hccl_ctx *c = ctx;
	/* the device's clock around the call and nothing else (CANN's order:
	 * record, record, synchronize the stream, then the elapsed time) */
	ACL_TRY(c, err, aclrtRecordEvent, (c->ev0, c->stream));
	PERFDB_TRY(enqueue(c, coll->op, hccl_type(dt), count, err));
	ACL_TRY(c, err, aclrtRecordEvent, (c->ev1, c->stream));
	ACL_TRY(c, err, aclrtSynchronizeStream, (c->stream));
	float ms = 0;
	ACL_TRY(c, err, aclrtEventElapsedTime, (&ms, c->ev0, c->ev1));
	*seconds = (double)ms * 1e-3;
	return 0;
}

static void tr_release(void *ctx)
{
	struct hccl_ctx *c = ctx;
	if (!c)
		return;
	for (int i = 0; i < c->ng; i++)
		c->api.HcclCommDestroy(c->g[i].hccl);
	if (c->dev_up) {
		if (c->send)
			c->api.aclrtFree(c->send);
		if (c->recv)
			c->api.aclrtFree(c->recv);
		if (c->ev0)
			c->api.aclrtDestroyEvent(c->ev0);
		if (c->ev1)
			c->api.aclrtDestroyEvent(c->ev1);
		if (c->stream)
			c->api.aclrtDestroyStream(c->stream);
		c->api.aclrtResetDevice(c->dev);
	}
	if (c->acl_up)
		c->api.aclFinalize();
	perfdb_hccl_api_close(&c->api);
	free(c);
}

static void tr_describe(void *ctx, char *out, size_t cap)
{
	const struct hccl_ctx *c = ctx;
	const char *soc = c && c->api.aclrtGetSocName ? c->api.aclrtGetSocName() : NULL;
	snprintf(out, cap, "hccl (%s) on %s, NPU %d of %u on rank 0's host, one rank per NPU; "
		 "time = ACL events around each call", c ? c->api.hccl_path : "?",
		 soc && *soc ? soc : "an unnamed NPU", c ? c->dev : -1, c ? c->ndev : 0);
}

const struct perfdb_comm_transport_i perfdb_comm_transport_hccl = {
	.name = "hccl",
	.label = "HCCL",
	.clock = "ACL events around the HCCL call on the transport's stream",
	.open = tr_open,
	.begin = tr_begin,
	.upload = tr_upload,
	.download = tr_download,
	.call = tr_call,
	.describe = tr_describe,
	.release = tr_release,
};
