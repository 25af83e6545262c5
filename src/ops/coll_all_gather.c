/*
 * all_gather (docs/spec/comm.md §1): every rank's E elements gathered into n*E
 * on every rank; message_bytes = the per-rank input.  Kernel type
 * hcom_allGather_.  busbw factor (n-1)/n of the gathered size (nccl-tests).
 */
#include "ops/coll.h"

static double busbw_factor(long n)
{
	return n > 0 ? (double)(n - 1) / (double)n : 0.0;
}

static void layout(size_t elems, long n, struct perfdb_comm_layout *l)
{
	l->count = elems;
	l->send_elems = elems;
	l->recv_elems = elems * (size_t)n;
}

static int value(size_t rank, size_t i)
{
	return (int)((rank * 7 + i) % 15) - 7;
}

static int send_value(long rank, long n, size_t i, size_t count)
{
	(void)n, (void)count;
	return value((size_t)rank, i);
}

/* Receive index i holds element i%count of rank i/count. */
static int expected(long rank, long n, size_t i, size_t count)
{
	(void)rank, (void)n;
	return value(i / count, i % count);
}

const struct perfdb_coll perfdb_coll_all_gather = {
	.op = PERFDB_COMM_ALL_GATHER,
	.name = "all_gather",
	.prefix = "hcom_allGather_",
	.file = "hcom_allGather_.csv",
	.bytes_meaning = "per-rank input (the output is n times larger)",
	.reduces = false,
	.busbw_factor = busbw_factor,
	.layout = layout,
	.send_value = send_value,
	.expected = expected,
};
