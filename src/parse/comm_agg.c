/*
 * Collective calls grouped by what their comm-table row says
 * (src/parse/comm_agg.h; docs/parse.md "Comm tables from profiles").
 */
#include "comm_agg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *perfdb_comm_obs_dtype(enum perfdb_dtype t)
{
	/* the labels `perfdb comm` writes, so that a profiled row and a
	 * benchmarked one of the same dtype read alike */
	switch (t) {
	case PERFDB_DTYPE_BF16: return perfdb_comm_dtype(PERFDB_COMM_BF16)->label;
	case PERFDB_DTYPE_FLOAT16: return perfdb_comm_dtype(PERFDB_COMM_FP16)->label;
	case PERFDB_DTYPE_FLOAT: return perfdb_comm_dtype(PERFDB_COMM_FP32)->label;
	case PERFDB_DTYPE_INT8: return perfdb_comm_dtype(PERFDB_COMM_INT8)->label;
	default: return perfdb_dtype_name(t);
	}
}

/*
 * The process group and the profilers spell one collective several ways:
 * `all_reduce` (nccl: annotations), `allreduce` and `_allgather_base`
 * (record_param_comms' "Collective name"), `reduce_scatter_tensor_coalesced`,
 * `hcom_allReduce_` (Ascend).  Without underscores and case, each starts
 * with the op's name; the tail (`base`, `coalesced`, `v`) does not change
 * what one call moves per rank.
 */
int perfdb_comm_obs_op(const char *name, size_t len)
{
	static const struct {
		const char *stem;
		enum perfdb_comm_op op;
	} stems[] = {
		{ "allreduce", PERFDB_COMM_ALL_REDUCE },
		{ "allgather", PERFDB_COMM_ALL_GATHER },
		{ "reducescatter", PERFDB_COMM_REDUCE_SCATTER },
		{ "alltoall", PERFDB_COMM_ALL_TO_ALL },
	};
	char buf[64];
	size_t n = 0;
	if (len >= 5 && memcmp(name, "hcom_", 5) == 0) {
		name += 5;
		len -= 5;
	}
	for (size_t i = 0; i < len && n < sizeof(buf) - 1; i++)
		if (name[i] != '_')
			buf[n++] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	buf[n] = 0;
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++)
		if (strncmp(buf, stems[i].stem, strlen(stems[i].stem)) == 0)
			return (int)stems[i].op;
	return -1;
}

struct group {
	enum perfdb_comm_op op;
	long long bytes;
	long n;
	char dtype[24];
	char backend[40];
	double *s;
	size_t ns, cap;
};

struct perfdb_comm_agg {
	struct group *g;
	size_t n, cap;
	size_t last;   /* the group hit last: calls of one size come in runs */
};

int perfdb_comm_agg_new(struct perfdb_comm_agg **out, struct perfdb_err *err)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

void perfdb_comm_agg_free(struct perfdb_comm_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->g[i].s);
	free(a->g);
	free(a);
}

size_t perfdb_comm_agg_ngroups(const struct perfdb_comm_agg *a)
{
	return a ? a->n : 0;
}

static int same(const struct group *g, const struct perfdb_comm_obs *o)
{
	return g->op == o->op && g->bytes == o->message_bytes && g->n == o->num_devices &&
	       strcmp(g->dtype, o->dtype) == 0 && strcmp(g->backend, o->backend) == 0;
}

static int add_samples(struct perfdb_comm_agg *a, const struct perfdb_comm_obs *o,
		       const double *s, size_t ns, struct perfdb_err *err)
{
	size_t i = a->last < a->n && same(&a->g[a->last], o) ? a->last : 0;
	if (!(i < a->n && same(&a->g[i], o)))
		for (i = 0; i < a->n && !same(&a->g[i], o); i++)
			;
	if (i == a->n) {
		if (a->n == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 16;
			struct group *ng = realloc(a->g, cap * sizeof(*ng));
			if (!ng)
				return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			a->g = ng;
			a->cap = cap;
		}
		struct group *g = &a->g[a->n++];
		memset(g, 0, sizeof(*g));
		g->op = o->op;
		g->bytes = o->message_bytes;
		g->n = o->num_devices;
		snprintf(g->dtype, sizeof(g->dtype), "%s", o->dtype);
		snprintf(g->backend, sizeof(g->backend), "%s", o->backend);
	}
	a->last = i;
	struct group *g = &a->g[i];
	if (g->ns + ns > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		while (cap < g->ns + ns)
			cap *= 2;
		double *v = realloc(g->s, cap * sizeof(*v));
		if (!v)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		g->s = v;
		g->cap = cap;
	}
	memcpy(g->s + g->ns, s, ns * sizeof(*s));
	g->ns += ns;
	return 0;
}

int perfdb_comm_agg_add(struct perfdb_comm_agg *a, const struct perfdb_comm_obs *o,
			struct perfdb_err *err)
{
	return add_samples(a, o, &o->dur_us, 1, err);
}

int perfdb_comm_agg_merge(struct perfdb_comm_agg *into, const struct perfdb_comm_agg *from,
			  struct perfdb_err *err)
{
	for (size_t i = 0; from && i < from->n; i++) {
		const struct group *g = &from->g[i];
		struct perfdb_comm_obs o = { g->op, g->bytes, g->n, g->dtype, g->backend, 0 };
		PERFDB_TRY(add_samples(into, &o, g->s, g->ns, err));
	}
	return 0;
}

size_t perfdb_comm_agg_group(const struct perfdb_comm_agg *a, size_t i, struct perfdb_comm_obs *o,
			     double **samples)
{
	const struct group *g = &a->g[i];
	*o = (struct perfdb_comm_obs){ g->op, g->bytes, g->n, g->dtype, g->backend, 0 };
	*samples = g->s;
	return g->ns;
}
