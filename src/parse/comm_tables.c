/*
 * Profiled collectives merged into hcom_<op>_.csv (src/parse/comm_agg.h;
 * the format is docs/comm.md "The table", the rules docs/parse.md "Comm
 * tables from profiles").
 *
 * A table parse creates has perfdb comm's columns except topology_tier: a
 * profile does not say which tier of the machine a group spanned, and the
 * simulator filters by tier only when the column exists, so a row without
 * one answers a query for any tier.  In a table that has the column (one
 * `perfdb comm` wrote), profiled rows leave it empty.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm_agg.h"
#include "perfdb/schema.h"
#include "perfdb/stats.h"
#include "perfdb/strbuf.h"

enum { C_BYTES, C_NDEV, C_DTYPE, C_DUR, C_BW, C_BUSBW, C_MIN, C_MAX, C_STD, C_SAMPLES, C_BACKEND, NC };

static const char *const cols[NC] = {
	PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES, PERFDB_COL_DTYPE, PERFDB_COL_DURATION,
	PERFDB_COL_BANDWIDTH, PERFDB_COL_BUSBW, PERFDB_COL_MIN_DURATION, PERFDB_COL_MAX_DURATION,
	PERFDB_COL_STD_DURATION, PERFDB_COL_SAMPLES, PERFDB_COL_BACKEND,
};

/* The statistic cells of one group, as perfdb comm computes a size's
 * (src/comm/run_report.c): the median, and the bandwidths from it unrounded. */
static int row_cells(const struct perfdb_comm_obs *o, double *s, size_t ns, char v[NC][48])
{
	struct perfdb_stats st;
	perfdb_stats_compute(s, ns, &st);
	/* the dtype column reads back (DT_FP16, DT_BF16, DT_INT64, ...) */
	size_t esz = perfdb_dtype_bytes(perfdb_dtype_parse((struct perfdb_span){ o->dtype, strlen(o->dtype) }), 1);
	double med = st.median;
	double bw = med > 0 ? (double)o->message_bytes / med / 1e3 : 0;
	double bus = esz && med > 0 ?
		perfdb_comm_bus_bytes(o->op, (size_t)o->message_bytes / esz, o->num_devices, esz) / med / 1e3 *
		perfdb_comm_busbw_factor(o->op, o->num_devices) : 0;
	snprintf(v[C_BYTES], 48, "%lld", o->message_bytes);
	snprintf(v[C_NDEV], 48, "%ld", o->num_devices);
	snprintf(v[C_DTYPE], 48, "%s", o->dtype);
	int rc = 0;
	rc |= perfdb_stats_format_round2(med, v[C_DUR], 48);
	rc |= perfdb_stats_format_round2(bw, v[C_BW], 48);
	rc |= perfdb_stats_format_round2(bus, v[C_BUSBW], 48);
	rc |= perfdb_stats_format_round2(st.min, v[C_MIN], 48);
	rc |= perfdb_stats_format_round2(st.max, v[C_MAX], 48);
	rc |= perfdb_stats_format_round2(st.std, v[C_STD], 48);
	snprintf(v[C_SAMPLES], 48, "%zu", st.n);
	snprintf(v[C_BACKEND], 48, "%s", o->backend);
	return rc < 0 ? -1 : 0;
}

struct ord {
	size_t g;
	struct perfdb_comm_obs o;
};

/* Rows by group, dtype, transport, then size: a table reads as a sweep. */
static int cmp_ord(const void *pa, const void *pb)
{
	const struct perfdb_comm_obs *a = &((const struct ord *)pa)->o, *b = &((const struct ord *)pb)->o;
	if (a->num_devices != b->num_devices)
		return a->num_devices < b->num_devices ? -1 : 1;
	int c = strcmp(a->dtype, b->dtype);
	if (!c)
		c = strcmp(a->backend, b->backend);
	if (c)
		return c;
	if (a->message_bytes != b->message_bytes)
		return a->message_bytes < b->message_bytes ? -1 : 1;
	return 0;
}

static int start_table(struct perfdb_comm_out *out, const char *path, struct perfdb_err *err)
{
	struct stat st;
	out->exists = lstat(path, &st) == 0;
	if (!out->exists) {
		PERFDB_TRY(perfdb_table_set_header(&out->t, cols, NC, err));
		out->t.name = strdup(path);
		return out->t.name ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	PERFDB_TRY(perfdb_table_load(&out->t, path, err));
	/* an Ascend profile's hcom_* kernel table (kernel_details rows): not ours to turn */
	out->raw = perfdb_table_col(&out->t, PERFDB_COL_MESSAGE_BYTES) < 0 ||
		   perfdb_table_col(&out->t, PERFDB_COL_NUM_DEVICES) < 0;
	return 0;
}

static int merge_op(const struct perfdb_comm_agg *a, enum perfdb_comm_op op, const char *outdir,
		    struct perfdb_comm_out *out, struct ord *ord, struct perfdb_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < perfdb_comm_agg_ngroups(a); i++) {
		double *s;
		struct perfdb_comm_obs o;
		perfdb_comm_agg_group(a, i, &o, &s);
		if (o.op == op)
			ord[n++] = (struct ord){ i, o };
	}
	if (!n)
		return 0;
	out->used = 1;
	out->groups = n;
	qsort(ord, n, sizeof(*ord), cmp_ord);
	struct perfdb_strbuf path = PERFDB_STRBUF_INIT;
	int rc = perfdb_strbuf_addf(&path, "%s/%s", outdir, perfdb_comm_op_file(op)) < 0 ?
		perfdb_err_set(err, PERFDB_ENOMEM, "out of memory") : 0;
	if (rc == 0)
		rc = start_table(out, path.buf, err);
	perfdb_strbuf_release(&path);
	if (rc < 0 || out->raw)
		return rc;
	long ci[NC];
	for (size_t c = 0; c < NC; c++) {
		ci[c] = perfdb_table_col(&out->t, cols[c]);
		if (ci[c] < 0 && (ci[c] = perfdb_table_insert_col(&out->t, cols[c], out->t.ncols, err)) < 0)
			return (int)ci[c];
	}
	long tier = perfdb_table_col(&out->t, PERFDB_COL_TOPOLOGY_TIER);
	for (size_t k = 0; k < n; k++) {
		double *s;
		struct perfdb_comm_obs o;
		size_t ns = perfdb_comm_agg_group(a, ord[k].g, &o, &s);
		char v[NC][48];
		if (row_cells(&o, s, ns, v) < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		/* the row of this key: same size, group, dtype and transport, no tier */
		size_t r = out->t.nrows;
		for (size_t i = 0; i < out->t.nrows && r == out->t.nrows; i++) {
			if (tier >= 0 && perfdb_table_get(&out->t, i, (size_t)tier)[0])
				continue;
			if (!strcmp(perfdb_table_get(&out->t, i, (size_t)ci[C_BYTES]), v[C_BYTES]) &&
			    !strcmp(perfdb_table_get(&out->t, i, (size_t)ci[C_NDEV]), v[C_NDEV]) &&
			    !strcmp(perfdb_table_get(&out->t, i, (size_t)ci[C_DTYPE]), v[C_DTYPE]) &&
			    !strcmp(perfdb_table_get(&out->t, i, (size_t)ci[C_BACKEND]), v[C_BACKEND]))
				r = i;
		}
		int fresh = r == out->t.nrows, changed = 0;
		if (fresh) {
			long nr = perfdb_table_append_row(&out->t, err);
			if (nr < 0)
				return (int)nr;
			r = (size_t)nr;
		}
		for (size_t c = 0; c < NC; c++)
			if (strcmp(perfdb_table_get(&out->t, r, (size_t)ci[c]), v[c]) != 0) {
				PERFDB_TRY(perfdb_table_set(&out->t, r, (size_t)ci[c], v[c], strlen(v[c]), err));
				changed = 1;
			}
		out->added += fresh;
		out->updated += !fresh && changed;
	}
	return 0;
}

int perfdb_comm_tables_merge(const struct perfdb_comm_agg *a, const char *outdir,
			     struct perfdb_comm_out out[PERFDB_COMM_NOPS], struct perfdb_err *err)
{
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		memset(&out[op], 0, sizeof(out[op]));
		perfdb_table_init(&out[op].t);
	}
	size_t ng = perfdb_comm_agg_ngroups(a);
	if (!ng)
		return 0;
	struct ord *ord = malloc(ng * sizeof(*ord));
	if (!ord)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = 0;
	for (int op = 0; op < PERFDB_COMM_NOPS && rc == 0; op++)
		rc = merge_op(a, (enum perfdb_comm_op)op, outdir, &out[op], ord, err);
	free(ord);
	return rc;
}

void perfdb_comm_tables_release(struct perfdb_comm_out out[PERFDB_COMM_NOPS])
{
	for (int op = 0; op < PERFDB_COMM_NOPS; op++)
		perfdb_table_release(&out[op].t);
}
