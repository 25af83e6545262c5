/*
 * Measured dispatch overheads (docs/spec/comm.md Decision 4).  The reference
 * adds a hard-coded table (vLLM 0.18 / CANN 8.5) to every row it writes;
 * perfdb adds nothing unless --overhead-table names a CSV:
 *
 *   op,num_devices,overhead_us
 *   all_reduce,16,7.7
 *
 * op as --ops spells it, num_devices an integer, overhead_us a number of
 * microseconds.  Keyed by (op, num_devices), as the reference's table; a
 * repeated key is an error.  data/comm_overhead_vllm0.18_cann8.5.csv holds
 * the reference's values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "perfdb/table.h"

void perfdb_comm_overhead_init(struct perfdb_comm_overhead *o)
{
	o->v = NULL;
	o->n = 0;
	o->path = NULL;
}

void perfdb_comm_overhead_release(struct perfdb_comm_overhead *o)
{
	free(o->v);
	free(o->path);
	perfdb_comm_overhead_init(o);
}

int perfdb_comm_overhead_load(struct perfdb_comm_overhead *o, const char *path,
			      struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	static const char *const need[] = { "op", "num_devices", "overhead_us" };
	long col[3];
	int rc = perfdb_table_load_cols(&t, path, "an overhead table", need, 3, col,
					"expected op,num_devices,overhead_us", err);
	if (rc < 0)
		goto out;
	o->v = calloc(t.nrows ? t.nrows : 1, sizeof(*o->v));
	o->path = strdup(path);
	if (!o->v || !o->path) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t r = 0; r < t.nrows; r++) {
		const char *op = perfdb_table_get(&t, r, col[0]);
		const char *nd = perfdb_table_get(&t, r, col[1]);
		const char *us = perfdb_table_get(&t, r, col[2]);
		size_t line = t.rows[r].line;
		int k = perfdb_comm_op_from_name(op);
		long long n;
		double v;
		if (k < 0) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, path, line, 0,
					   "unknown op '%s' (one of all_reduce, all_gather, "
					   "reduce_scatter, all_to_all)", op);
			goto out;
		}
		if (perfdb_comm_parse_pyint(nd, &n) < 0 || n < 1) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, path, line, 0,
					   "num_devices is not a positive integer: '%s'", nd);
			goto out;
		}
		if (perfdb_stats_parse_double(us, strlen(us), &v) < 0 || !isfinite(v)) {
			rc = perfdb_err_at(err, PERFDB_EPARSE, path, line, 0,
					   "overhead_us is not a number: '%s'", us);
			goto out;
		}
		for (size_t j = 0; j < o->n; j++)
			if (o->v[j].op == (enum perfdb_comm_op)k && o->v[j].num_devices == n) {
				rc = perfdb_err_at(err, PERFDB_EPARSE, path, line, 0,
						   "(%s, %lld) is listed twice", op, n);
				goto out;
			}
		o->v[o->n++] = (struct perfdb_comm_overhead_entry){
			.op = (enum perfdb_comm_op)k, .num_devices = (long)n, .us = v };
	}
out:
	perfdb_table_release(&t);
	return rc < 0 ? rc : 0;
}

double perfdb_comm_overhead_lookup(const struct perfdb_comm_overhead *o,
				   enum perfdb_comm_op op, long n)
{
	if (!o)
		return 0;
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].op == op && o->v[i].num_devices == n)
			return o->v[i].us;
	return 0;
}
