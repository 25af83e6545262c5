/*
 * The registry of collectives and dtypes (docs/spec/comm.md §1): the public
 * accessors of src/comm/comm.h read the struct perfdb_coll of each
 * coll_<name>.c, so a collective's facts live in exactly one file.
 */
#include <string.h>

#include "ops/coll.h"

static const struct perfdb_coll *const colls[PERFDB_COMM_NOPS] = {
	[PERFDB_COMM_ALL_REDUCE] = &perfdb_coll_all_reduce,
	[PERFDB_COMM_ALL_GATHER] = &perfdb_coll_all_gather,
	[PERFDB_COMM_REDUCE_SCATTER] = &perfdb_coll_reduce_scatter,
	[PERFDB_COMM_ALL_TO_ALL] = &perfdb_coll_all_to_all,
};

const char *const perfdb_comm_op_names[PERFDB_COMM_NOPS + 1] = {
	"all_reduce", "all_gather", "reduce_scatter", "all_to_all", NULL,
};

const struct perfdb_coll *perfdb_coll_get(enum perfdb_comm_op op)
{
	return (unsigned)op < PERFDB_COMM_NOPS ? colls[op] : NULL;
}

const char *perfdb_comm_op_name(enum perfdb_comm_op op)
{
	return perfdb_coll_get(op)->name;
}

const char *perfdb_comm_op_prefix(enum perfdb_comm_op op)
{
	return perfdb_coll_get(op)->prefix;
}

const char *perfdb_comm_op_file(enum perfdb_comm_op op)
{
	return perfdb_coll_get(op)->file;
}

const char *perfdb_comm_op_bytes_meaning(enum perfdb_comm_op op)
{
	return perfdb_coll_get(op)->bytes_meaning;
}

int perfdb_comm_op_from_name(const char *name)
{
	for (int i = 0; i < PERFDB_COMM_NOPS; i++)
		if (strcmp(colls[i]->name, name) == 0)
			return i;
	return -1;
}

double perfdb_comm_busbw_factor(enum perfdb_comm_op op, long n)
{
	return perfdb_coll_get(op)->busbw_factor(n);
}

void perfdb_comm_layout_of(enum perfdb_comm_op op, size_t elems, long n,
			   struct perfdb_comm_layout *l)
{
	perfdb_coll_get(op)->layout(elems, n, l);
}

double perfdb_comm_bus_bytes(enum perfdb_comm_op op, size_t elems, long n, size_t elem_size)
{
	struct perfdb_comm_layout l;
	perfdb_comm_layout_of(op, elems, n, &l);
	size_t big = l.send_elems > l.recv_elems ? l.send_elems : l.recv_elems;
	return (double)big * (double)elem_size;
}

/* ---- dtypes ---------------------------------------------------------- */

static const struct perfdb_comm_dtype_info dtypes[PERFDB_COMM_NDTYPES] = {
	[PERFDB_COMM_BF16] = { "torch.bfloat16", "DT_BF16", 2 },
	[PERFDB_COMM_FP16] = { "torch.float16", "DT_FP16", 2 },
	[PERFDB_COMM_FP32] = { "torch.float32", "DT_FLOAT", 4 },
	[PERFDB_COMM_INT8] = { "torch.int8", "DT_INT8", 1 },
};

const char *const perfdb_comm_dtype_names[PERFDB_COMM_NDTYPES + 1] = {
	"torch.bfloat16", "torch.float16", "torch.float32", "torch.int8", NULL,
};

const struct perfdb_comm_dtype_info *perfdb_comm_dtype(enum perfdb_comm_dtype d)
{
	return (unsigned)d < PERFDB_COMM_NDTYPES ? &dtypes[d] : NULL;
}

int perfdb_comm_dtype_from_name(const char *name)
{
	for (int i = 0; i < PERFDB_COMM_NDTYPES; i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return i;
	return -1;
}

/* spec §1: "The help text's 'powers-of-4' is wrong" — these are powers of two. */
const long long perfdb_comm_default_bytes[PERFDB_COMM_DEFAULT_NBYTES] = {
	1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
	1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864,
	134217728, 268435456, 536870912,
};
