/*
 * perfdb validate (docs/spec/comm.md §5, Decision 6): each measured latency of
 * the four collective tables against an alpha-beta prediction on the
 * device's links.
 *
 * Differences from validate_comm_alignment.py, all deliberate:
 *   - bandwidth, latency and efficiency per tier come from the device
 *     registry (data/devices.json; A3 by default, whose numbers are the
 *     reference's hard-coded ones);
 *   - reduce_scatter's message_bytes is the per-rank output, as the bench
 *     writes it, so the bandwidth term is (n-1)*m/bw (the reference divides
 *     by n once more, treating m as the whole input);
 *   - a tier the device does not have skips the row with a warning (the
 *     reference stops with a KeyError).
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "perfdb/table.h"
#include "perfdb/schema.h"

const char *perfdb_comm_status_name(enum perfdb_comm_status s)
{
	return s == PERFDB_COMM_PASS ? "PASS" : s == PERFDB_COMM_WARN ? "WARN" : "FAIL";
}

double perfdb_comm_predict_us(enum perfdb_comm_op op, double m, long n,
			      const struct perfdb_comm_tier *t)
{
	if (n <= 1)
		return 0.0;
	double bw = t->bandwidth * t->efficiency, lat = t->latency;
	double nn = (double)n, steps = fmin((nn - 1) * lat, log2(nn) * lat);
	switch (op) {
	case PERFDB_COMM_ALL_REDUCE: {
		double ring = 2 * (nn - 1) * lat + 2 * (nn - 1) * m / nn / bw;
		double tree = 2 * log2(nn) * lat + 2 * m / bw;
		return fmin(ring, tree) * 1e6;
	}
	case PERFDB_COMM_ALL_GATHER:
		return (steps + (nn - 1) * m / bw) * 1e6;
	case PERFDB_COMM_REDUCE_SCATTER:
		/* m = per-rank output = input / n: (n-1) * (n*m)/n / bw */
		return (steps + (nn - 1) * m / bw) * 1e6;
	case PERFDB_COMM_ALL_TO_ALL:
	default:
		return (steps + m / bw) * 1e6;
	}
}

enum perfdb_comm_status perfdb_comm_status_of(double r, double tol)
{
	if (1.0 / tol <= r && r <= tol)
		return PERFDB_COMM_PASS;
	if (1.0 / (tol * 2) <= r && r <= tol * 2)
		return PERFDB_COMM_WARN;
	return PERFDB_COMM_FAIL;
}

int perfdb_comm_parse_pyint(const char *s, long long *out)
{
	while (isspace((unsigned char)*s))
		s++;
	int neg = 0;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return -1;
	long long v = 0;
	while (isdigit((unsigned char)*s) || (*s == '_' && isdigit((unsigned char)s[1]))) {
		if (*s != '_') {
			if (v > (LLONG_MAX - 9) / 10)
				return -1;
			v = v * 10 + (*s - '0');
		}
		s++;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

void perfdb_comm_validation_init(struct perfdb_comm_validation *v)
{
	memset(v, 0, sizeof(*v));
}

void perfdb_comm_validation_release(struct perfdb_comm_validation *v)
{
	for (size_t i = 0; i < PERFDB_COMM_NOPS; i++)
		free(v->op[i].rows);
	perfdb_comm_validation_init(v);
}

static int add_row(struct perfdb_comm_vreport *r, const struct perfdb_comm_vrow *row,
		   struct perfdb_err *err)
{
	if (r->nrows == r->caprows) {
		size_t cap = r->caprows ? r->caprows * 2 : 32;
		struct perfdb_comm_vrow *nv = realloc(r->rows, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		r->rows = nv;
		r->caprows = cap;
	}
	r->rows[r->nrows++] = *row;
	return 0;
}

static int validate_file(const char *path, enum perfdb_comm_op op,
			 const struct perfdb_device *dev, double tol,
			 struct perfdb_comm_vreport *r, perfdb_comm_warn_fn warn, void *ctx,
			 struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_table_load(&t, path, err);
	if (rc < 0)
		goto out;
	long c_bytes = perfdb_table_col(&t, PERFDB_COL_MESSAGE_BYTES);
	long c_n = perfdb_table_col(&t, PERFDB_COL_NUM_DEVICES);
	long c_tier = perfdb_table_col(&t, PERFDB_COL_TOPOLOGY_TIER);
	long c_lat = perfdb_table_col(&t, "Average Duration(us)");
	if (c_lat < 0)
		c_lat = perfdb_table_col(&t, PERFDB_COL_DURATION);
	for (size_t i = 0; i < t.nrows; i++) {
		struct perfdb_comm_vrow row = { .line = t.rows[i].line };
		long long b, n, tier = 1;
		double us;
		const char *lat = perfdb_table_get(&t, i, c_lat);
		/* the reference drops a row on KeyError/ValueError, silently */
		if (c_bytes < 0 || c_n < 0 || c_lat < 0 ||
		    perfdb_comm_parse_pyint(perfdb_table_get(&t, i, c_bytes), &b) < 0 ||
		    perfdb_comm_parse_pyint(perfdb_table_get(&t, i, c_n), &n) < 0 ||
		    (c_tier >= 0 && perfdb_comm_parse_pyint(perfdb_table_get(&t, i, c_tier), &tier) < 0) ||
		    perfdb_stats_parse_double(lat, strlen(lat), &us) < 0)
			continue;
		if (tier < 0 || tier >= (long long)dev->grid_ndim) {
			char msg[PERFDB_ERR_MSG_MAX];
			snprintf(msg, sizeof(msg), "%s:%zu: topology_tier %lld is not a tier of %s "
				 "(0..%zu); row skipped", path, row.line, tier, dev->name,
				 dev->grid_ndim ? dev->grid_ndim - 1 : 0);
			if (warn)
				warn(ctx, msg);
			r->skipped_rows++;
			continue;
		}
		row.message_bytes = b;
		row.num_devices = (long)n;
		row.tier = (long)tier;
		row.measured_us = us;
		row.predicted_us = perfdb_comm_predict_us(op, (double)b, (long)n, &dev->tiers[tier]);
		row.ratio = row.predicted_us == 0 ? INFINITY : row.measured_us / row.predicted_us;
		row.status = perfdb_comm_status_of(row.ratio, tol);
		r->count[row.status]++;
		rc = add_row(r, &row, err);
		if (rc < 0)
			goto out;
	}
	/* mean, min, max as Python's sum()/len(), min(), max() */
	r->mean = r->min = r->max = NAN;
	if (r->nrows) {
		double sum = 0;
		r->min = r->max = r->rows[0].ratio;
		for (size_t i = 0; i < r->nrows; i++) {
			double x = r->rows[i].ratio;
			sum += x;
			if (x < r->min)
				r->min = x;
			if (x > r->max)
				r->max = x;
		}
		r->mean = sum / (double)r->nrows;
	}
out:
	perfdb_table_release(&t);
	return rc < 0 ? rc : 0;
}

int perfdb_comm_validate_dir(const char *dir, const struct perfdb_device *device,
			     double tolerance, struct perfdb_comm_validation *v,
			     perfdb_comm_warn_fn warn, void *ctx, struct perfdb_err *err)
{
	if (!perfdb_is_dir(dir))
		return perfdb_err_set(err, PERFDB_ENOENT, "'%s' is not a directory", dir);
	if (!device->grid_ndim)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "device '%s' has no communication tiers (see docs/devices.md)",
				      device->name);
	v->tolerance = tolerance;
	v->device = device;
	v->ok = true;
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		struct perfdb_comm_vreport *r = &v->op[op];
		r->mean = r->min = r->max = NAN;
		size_t len = strlen(dir);
		snprintf(r->path, sizeof(r->path), "%s%s%s", dir,
			 len && dir[len - 1] == '/' ? "" : "/", perfdb_comm_op_file((enum perfdb_comm_op)op));
		FILE *f = fopen(r->path, "rb");
		if (!f)
			continue;
		fclose(f);
		r->present = true;
		PERFDB_TRY(validate_file(r->path, (enum perfdb_comm_op)op, device, tolerance, r,
					 warn, ctx, err));
		for (int s = 0; s < 3; s++)
			v->total[s] += r->count[s];
		v->rows += r->nrows;
		if (r->count[PERFDB_COMM_FAIL])
			v->ok = false;
	}
	return 0;
}
