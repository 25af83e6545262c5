/*
 * all_reduce (docs/spec/comm.md §1): one in-place buffer of E elements summed
 * over the group; message_bytes = the buffer's size.  Kernel type
 * hcom_allReduce_.  busbw factor 2(n-1)/n (nccl-tests).
 */
#include "ops/coll.h"

static double busbw_factor(long n)
{
	return n > 0 ? 2.0 * (double)(n - 1) / (double)n : 0.0;
}

static void layout(size_t elems, long n, struct perfdb_comm_layout *l)
{
	(void)n;
	l->count = elems;
	l->send_elems = 0;   /* in place, as the reference's tensor all_reduce */
	l->recv_elems = elems;
}

/* Element i gets i%3+1 from rank i%n and 1 from rank (i+1)%n: a sum that a
 * missing, doubled or max-instead-of-sum contribution cannot produce. */
static int send_value(long rank, long n, size_t i, size_t count)
{
	(void)count;
	size_t r = (size_t)rank, m = (size_t)n;
	return (r == i % m ? (int)(i % 3) + 1 : 0) + (r == (i + 1) % m ? 1 : 0);
}

static int expected(long rank, long n, size_t i, size_t count)
{
	(void)rank, (void)n, (void)count;
	return (int)(i % 3) + 2;
}

const struct perfdb_coll perfdb_coll_all_reduce = {
	.op = PERFDB_COMM_ALL_REDUCE,
	.name = "all_reduce",
	.prefix = "hcom_allReduce_",
	.file = "hcom_allReduce_.csv",
	.bytes_meaning = "size of the (in-place) tensor",
	.reduces = true,
	.busbw_factor = busbw_factor,
	.layout = layout,
	.send_value = send_value,
	.expected = expected,
};
