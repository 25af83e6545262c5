/*
 * The run's ETA from the rows still to come (docs/replay.md "Progress"):
 * each row's cost from the operator layer (docs/ops.md "Costs") at the best
 * rates this run measured, its warm-up and samples as the engine takes
 * them, and a row whose cost says it will be refused (row_over_timeout) as
 * costing nothing.  A row of unknown cost, or before its unit has a rate,
 * costs what the run's rows took on average.  Without this, the rate of
 * the rows done said "ETA 4s" just before a row of two minutes.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "perfdb/schema.h"

/* A row's cost: flops, bytes, unit; flops < 0: unknown; skip: missing-only will not run it. */
struct eta_row {
	double flops, bytes;
	unsigned char unit, skip;
};

int eta_init(struct engine_eta *e, const struct perfdb_engine_opts *o, const struct perfdb_table *tabs,
	     const char *const *names, size_t ntab)
{
	memset(e, 0, sizeof(*e));
	size_t n = 0;
	for (size_t t = 0; t < ntab; t++)
		n += tabs[t].nrows;
	e->rows = calloc(n ? n : 1, sizeof(*e->rows));
	if (!e->rows)
		return -PERFDB_ENOMEM;
	e->n = n;
	size_t k = 0;
	for (size_t t = 0; t < ntab; t++) {
		long cmb = perfdb_table_col(&tabs[t], PERFDB_COL_MB_DUR);
		long cprof = perfdb_table_col(&tabs[t], PERFDB_COL_PROF_AVG);
		for (size_t r = 0; r < tabs[t].nrows; r++, k++) {
			struct eta_row *x = &e->rows[k];
			x->flops = -1;
			if (o->missing_only &&
			    perfdb_schema_usable_duration(perfdb_table_get(&tabs[t], r, cmb),
							  perfdb_table_get(&tabs[t], r, cprof), false, NULL)) {
				x->skip = 1;
				continue;
			}
			struct perfdb_op_case c;
			struct perfdb_op_cost w;
			struct perfdb_err ignored;
			if (case_build_row(names[t], &tabs[t], r, &c, &ignored) == 0 &&
			    perfdb_op_cost(&c, &w, &ignored) == 0) {
				x->flops = w.flops;
				x->bytes = w.bytes;
				x->unit = w.unit == PERFDB_OP_UNIT_MATRIX;
			}
		}
	}
	return 0;
}

void eta_release(struct engine_eta *e)
{
	free(e->rows);
	memset(e, 0, sizeof(*e));
}

void eta_row_done(struct engine_eta *e, double wall_s)
{
	e->wall_sum += wall_s;
	e->wall_n++;
}

double eta_call_s(const double *rates, int matrix, double flops, double bytes, int *known)
{
	double fr = rates[matrix ? 1 : 0], call = 0;
	*known = (flops == 0 || fr > 0) && (bytes == 0 || rates[2] > 0);
	if (flops > 0 && fr > 0)
		call = flops / fr;
	if (bytes > 0 && rates[2] > 0 && bytes / rates[2] > call)
		call = bytes / rates[2];
	return call;
}

double eta_estimate(const struct engine_eta *e, const struct perfdb_engine_opts *o, const double *rates,
		    size_t next, size_t share)
{
	if (!e->rows || !e->wall_n)
		return -1;   /* nothing measured yet: no estimate */
	double avg = e->wall_sum / (double)e->wall_n, calls = 2.0 + (double)o->repeat, sum = 0;
	for (size_t i = next; i < e->n; i++) {
		const struct eta_row *x = &e->rows[i];
		if (x->skip)
			continue;
		int known = 0;
		double call = x->flops >= 0 ? eta_call_s(rates, x->unit, x->flops, x->bytes, &known) : 0;
		if (!known) {
			sum += avg;
			continue;
		}
		double t = call * calls;
		if (t > o->timeout_s)
			continue;   /* refused before it starts */
		sum += t > avg ? t : avg;
	}
	/* under mpirun each rank runs its share of the rows */
	return share > 1 ? sum / (double)share : sum;
}
