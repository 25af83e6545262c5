/*
 * all_to_all (docs/spec/comm.md §1): every rank sends max(1, E/n) elements to
 * each peer, as the reference's list API; message_bytes ~ the per-rank send
 * buffer (exact when E is a multiple of n).  Kernel type hcom_alltoallv_.
 * busbw factor (n-1)/n of the send buffer (nccl-tests).
 */
#include "ops/coll.h"

static double busbw_factor(long n)
{
	return n > 0 ? (double)(n - 1) / (double)n : 0.0;
}

static void layout(size_t elems, long n, struct perfdb_comm_layout *l)
{
	size_t per = elems / (size_t)n;
	if (per < 1)
		per = 1;
	l->count = per;
	l->send_elems = per * (size_t)n;
	l->recv_elems = per * (size_t)n;
}

/* Element i of the block from rank `from` to rank `to`. */
static int value(size_t from, size_t to, size_t i)
{
	return (int)((from * 5 + to * 3 + i) % 15) - 7;
}

/* Send index j is element j%count of the block for peer j/count. */
static int send_value(long rank, long n, size_t j, size_t count)
{
	(void)n;
	return value((size_t)rank, j / count, j % count);
}

/* Receive index j is element j%count of the block from peer j/count. */
static int expected(long rank, long n, size_t j, size_t count)
{
	(void)n;
	return value(j / count, (size_t)rank, j % count);
}

const struct perfdb_coll perfdb_coll_all_to_all = {
	.op = PERFDB_COMM_ALL_TO_ALL,
	.name = "all_to_all",
	.prefix = "hcom_alltoallv_",
	.file = "hcom_alltoallv_.csv",
	.bytes_meaning = "per-rank send buffer (n blocks of max(1, E/n) elements)",
	.reduces = false,
	.busbw_factor = busbw_factor,
	.layout = layout,
	.send_value = send_value,
	.expected = expected,
};
