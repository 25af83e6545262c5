/*
 * A stand-in libhccl.so for the tests of perfdb comm --backend hccl
 * (tests/hccl/hccl.sh): HCCL's root-info bootstrap and the four
 * collectives, carried out over MPI on the stand-in ACL's host "device"
 * memory (fake_ascendcl.c), inside the call.  Buffers that are not
 * aclrtMalloc'd, a missing aclrtSetDevice and counts that do not fit are
 * refused, as HCCL would.  Signatures follow CANN's public HCCL reference;
 * switches: fake_ascend.h.
 */
#include "fake_ascend.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

enum { OK = 0, E_PARA = 1, E_PTR = 2, E_MEMORY = 3, E_INTERNAL = 4 };
enum { T_INT8 = 0, T_FP16 = 3, T_FP32 = 4, T_BF16 = 11 };
#define ROOT_INFO_BYTES 4108

struct root {            /* what the stand-in keeps in HcclRootInfo's 4108 bytes */
	char magic[16];
	int world;           /* the world rank of the group's rank 0 */
	int tag;             /* this root info's bootstrap messages */
};

struct comm {
	MPI_Comm c;
	MPI_Op sum_bf16, sum_fp16;
	int n;
};

/* ---- 16-bit sums: widen to float, add, round to nearest even ---- */

static float bf16_f(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}

static uint16_t f_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if (isnan(f))
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float fp16_f(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
							  : ldexpf((float)(m | 0x400), e - 25);
	return h & 0x8000 ? -v : v;
}

static uint16_t f_fp16(float f)
{
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	float a = fabsf(f);
	if (isnan(f))
		return sign | 0x7e00;
	if (a < ldexpf(1, -14))   /* subnormal: steps of 2^-24 */
		return sign | (uint16_t)nearbyintf(a * 16777216.0f);
	int e;
	float m = nearbyintf(ldexpf(frexpf(a, &e), 11));   /* 11 significant bits */
	if (m == 2048) {
		m = 1024;
		e++;
	}
	int be = e + 14;
	if (be >= 31)
		return sign | 0x7c00;
	return sign | (uint16_t)(be << 10) | (uint16_t)((int)m - 1024);
}

static void sum_bf16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const uint16_t *a = in;
	uint16_t *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = f_bf16(bf16_f(a[i]) + bf16_f(b[i]));
}

static void sum_fp16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const uint16_t *a = in;
	uint16_t *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = f_fp16(fp16_f(a[i]) + fp16_f(b[i]));
}

/* ---- the API ---- */

const char *HcclGetErrorString(int code)
{
	return code == OK ? "no error" : code == E_PTR ? "invalid pointer" : "stand-in failure";
}

int HcclGetRootInfo(void *info)
{
	static int seq;
	if (fake_ascend_enter("HcclGetRootInfo", "%s", ""))
		return E_INTERNAL;
	if (fake_ascend_device() < 0)
		return E_PARA;
	struct root r = { .magic = "perfdb-fake-hccl", .tag = 1000 + 2 * (seq++ % 4000) };
	MPI_Comm_rank(MPI_COMM_WORLD, &r.world);
	memset(info, 0, ROOT_INFO_BYTES);
	memcpy(info, &r, sizeof(r));
	return OK;
}

/* The group's world ranks, by HCCL rank: each member tells the root its
 * world rank on the world communicator; the root answers with them all. */
static int gather_members(const struct root *r, uint32_t n, uint32_t rank, int *members)
{
	int me;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (rank == 0) {
		if (me != r->world)
			return E_PARA;   /* HcclGetRootInfo was called elsewhere */
		members[0] = me;
		for (uint32_t i = 1; i < n; i++) {
			int msg[2];
			MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, r->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (msg[0] <= 0 || (uint32_t)msg[0] >= n)
				return E_PARA;
			members[msg[0]] = msg[1];
		}
		for (uint32_t i = 1; i < n; i++)
			MPI_Send(members, (int)n, MPI_INT, members[i], r->tag + 1, MPI_COMM_WORLD);
		return OK;
	}
	int msg[2] = { (int)rank, me };
	MPI_Send(msg, 2, MPI_INT, r->world, r->tag, MPI_COMM_WORLD);
	MPI_Recv(members, (int)n, MPI_INT, r->world, r->tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return OK;
}

int HcclCommInitRootInfo(uint32_t n, const void *info, uint32_t rank, void **out)
{
	*out = NULL;
	if (fake_ascend_enter("HcclCommInitRootInfo", "%u %u", n, rank))
		return E_INTERNAL;
	struct root r;
	memcpy(&r, info, sizeof(r));
	if (memcmp(r.magic, "perfdb-fake-hccl", 16) != 0 || n == 0 || rank >= n || n > 1u << 20)
		return E_PARA;
	if (fake_ascend_device() < 0)
		return E_PARA;   /* HCCL needs aclrtSetDevice first */
	int *members = malloc(n * sizeof(int));
	struct comm *c = calloc(1, sizeof(*c));
	if (!members || !c) {
		free(members);
		free(c);
		return E_MEMORY;
	}
	int rc = gather_members(&r, n, rank, members);
	MPI_Group world, g;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, (int)n, members, &g);
	if (rc == OK && MPI_Comm_create_group(MPI_COMM_WORLD, g, r.tag, &c->c) != MPI_SUCCESS)
		rc = E_INTERNAL;
	MPI_Group_free(&g);
	MPI_Group_free(&world);
	free(members);
	int got = -1;
	if (rc == OK)
		MPI_Comm_rank(c->c, &got);
	if (rc != OK || got != (int)rank) {
		free(c);
		return rc != OK ? rc : E_INTERNAL;
	}
	c->n = (int)n;
	MPI_Op_create(sum_bf16, 1, &c->sum_bf16);
	MPI_Op_create(sum_fp16, 1, &c->sum_fp16);
	*out = c;
	return OK;
}

int HcclCommDestroy(void *comm)
{
	struct comm *c = comm;
	fake_ascend_enter("HcclCommDestroy", "%s", "");
	if (!c)
		return E_PARA;
	MPI_Op_free(&c->sum_bf16);
	MPI_Op_free(&c->sum_fp16);
	MPI_Comm_free(&c->c);
	free(c);
	return OK;
}

/* dt's MPI type and size; 0 for a type the stand-in does not carry */
static size_t type_of(int dt, MPI_Datatype *t)
{
	switch (dt) {
	case T_INT8: *t = MPI_INT8_T; return 1;
	case T_FP32: *t = MPI_FLOAT; return 4;
	case T_FP16:
	case T_BF16: *t = MPI_UINT16_T; return 2;
	default: return 0;
	}
}

/* The checks every collective makes: a communicator, a stream, a type, a
 * count MPI can carry, and device buffers of the sizes the call implies. */
static int args_ok(const struct comm *c, const void *stream, int dt, uint64_t count,
		   const void *send, size_t send_elems, const void *recv, size_t recv_elems,
		   MPI_Datatype *t, int *n)
{
	size_t esz = type_of(dt, t);
	if (!c || !stream || !esz || count > INT_MAX)
		return E_PARA;
	if (!fake_ascend_is_device(send, send_elems * esz) || !fake_ascend_is_device(recv, recv_elems * esz))
		return E_PTR;
	*n = (int)count;
	return OK;
}

static MPI_Op sum_of(const struct comm *c, int dt)
{
	return dt == T_BF16 ? c->sum_bf16 : dt == T_FP16 ? c->sum_fp16 : MPI_SUM;
}

int HcclAllReduce(void *send, void *recv, uint64_t count, int dt, int op, void *comm, void *stream)
{
	struct comm *c = comm;
	if (fake_ascend_enter("HcclAllReduce", "%llu %d", (unsigned long long)count, dt))
		return E_INTERNAL;
	MPI_Datatype t;
	int n, rc = args_ok(c, stream, dt, count, send, count, recv, count, &t, &n);
	if (rc != OK || op != 0)
		return rc != OK ? rc : E_PARA;
	return MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, n, t, sum_of(c, dt), c->c)
	       == MPI_SUCCESS ? OK : E_INTERNAL;
}

int HcclAllGather(void *send, void *recv, uint64_t count, int dt, void *comm, void *stream)
{
	struct comm *c = comm;
	if (fake_ascend_enter("HcclAllGather", "%llu %d", (unsigned long long)count, dt))
		return E_INTERNAL;
	MPI_Datatype t;
	int n, rc = args_ok(c, stream, dt, count, send, count, recv, c ? count * (size_t)c->n : 0, &t, &n);
	if (rc != OK)
		return rc;
	return MPI_Allgather(send, n, t, recv, n, t, c->c) == MPI_SUCCESS ? OK : E_INTERNAL;
}

int HcclReduceScatter(void *send, void *recv, uint64_t count, int dt, int op, void *comm, void *stream)
{
	struct comm *c = comm;
	if (fake_ascend_enter("HcclReduceScatter", "%llu %d", (unsigned long long)count, dt))
		return E_INTERNAL;
	MPI_Datatype t;
	int n, rc = args_ok(c, stream, dt, count, send, c ? count * (size_t)c->n : 0, recv, count, &t, &n);
	if (rc != OK || op != 0)
		return rc != OK ? rc : E_PARA;
	return MPI_Reduce_scatter_block(send, recv, n, t, sum_of(c, dt), c->c) == MPI_SUCCESS
	       ? OK : E_INTERNAL;
}

int HcclAlltoAll(const void *send, uint64_t send_count, int send_type, const void *recv,
		 uint64_t recv_count, int recv_type, void *comm, void *stream)
{
	struct comm *c = comm;
	if (fake_ascend_enter("HcclAlltoAll", "%llu %d", (unsigned long long)send_count, send_type))
		return E_INTERNAL;
	if (send_count != recv_count || send_type != recv_type)
		return E_PARA;
	MPI_Datatype t;
	size_t all = c ? send_count * (size_t)c->n : 0;
	int n, rc = args_ok(c, stream, send_type, send_count, send, all, recv, all, &t, &n);
	if (rc != OK)
		return rc;
	return MPI_Alltoall(send, n, t, (void *)recv, n, t, c->c) == MPI_SUCCESS ? OK : E_INTERNAL;
}
