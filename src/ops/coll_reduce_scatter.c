/*
 * reduce_scatter (docs/spec/comm.md §1): n*E elements summed over the group,
 * rank r keeping block r of E; message_bytes = the per-rank output.
 * Kernel type hcom_reduceScatter_.  busbw factor (n-1)/n of the input size
 * (nccl-tests).
 */
#include "ops/coll.h"

static double busbw_factor(long n)
{
	return n > 0 ? (double)(n - 1) / (double)n : 0.0;
}

static void layout(size_t elems, long n, struct perfdb_comm_layout *l)
{
	l->count = elems;
	l->send_elems = elems * (size_t)n;
	l->recv_elems = elems;
}

/* As all_reduce over the n*E input: element j gets j%3+1 from rank j%n and
 * 1 from rank (j+1)%n. */
static int send_value(long rank, long n, size_t j, size_t count)
{
	(void)count;
	size_t r = (size_t)rank, m = (size_t)n;
	return (r == j % m ? (int)(j % 3) + 1 : 0) + (r == (j + 1) % m ? 1 : 0);
}

/* Rank r keeps input elements r*count .. r*count+count-1. */
static int expected(long rank, long n, size_t i, size_t count)
{
	(void)n;
	return (int)(((size_t)rank * count + i) % 3) + 2;
}

const struct perfdb_coll perfdb_coll_reduce_scatter = {
	.op = PERFDB_COMM_REDUCE_SCATTER,
	.name = "reduce_scatter",
	.prefix = "hcom_reduceScatter_",
	.file = "hcom_reduceScatter_.csv",
	.bytes_meaning = "per-rank output (the input is n times larger)",
	.reduces = true,
	.busbw_factor = busbw_factor,
	.layout = layout,
	.send_value = send_value,
	.expected = expected,
};
