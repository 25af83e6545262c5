/*
 * Reporting for perfdb comm, kept apart from measuring (docs/style.md rule 8):
 * the numbers of a row, its cells, appending rows to the collective tables,
 * non-monotonic flags and the JSON report of a run.
 *
 * Table format (docs/spec/comm.md §1 and Decision 3): the reference's columns
 *   message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps
 * then ours
 *   busbw_gbps,Min Duration(us),Max Duration(us),Std Duration(us),Samples,Backend
 * CRLF, minimal quoting, floats as Python's repr(round(x, 2)); rows are
 * appended, the header is written only when the file is new.  An existing
 * table keeps its columns and rows; columns it lacks are added at the end
 * (empty in the old rows).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/json_out.h"
#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "perfdb/lock.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"
#include "backend/transport.h"

const char *const perfdb_comm_columns[PERFDB_COMM_NCOLS] = {
	PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES, PERFDB_COL_DTYPE, PERFDB_COL_TOPOLOGY_TIER,
	PERFDB_COL_DURATION, PERFDB_COL_BANDWIDTH, PERFDB_COL_BUSBW, PERFDB_COL_MIN_DURATION,
	PERFDB_COL_MAX_DURATION, PERFDB_COL_STD_DURATION, PERFDB_COL_SAMPLES, PERFDB_COL_BACKEND,
};

double perfdb_comm_round2(double x)
{
	if (!isfinite(x))
		return x;
	char buf[400];
	snprintf(buf, sizeof(buf), "%.2f", x);  /* correctly rounded, as Python's round */
	return strtod(buf, NULL);
}

/* GB/s for bytes moved in us microseconds: bytes / (us * 1e-6) / 1e9 (spec §1). */
static double gbps(double bytes, double us)
{
	return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0.0;
}

void perfdb_comm_row_compute(const struct perfdb_comm_case *c, struct perfdb_comm_row *r)
{
	double factor = perfdb_comm_busbw_factor(c->op, c->num_devices);
	double med = c->st.median;
	if (c->overhead_us != 0) {
		double dur = perfdb_comm_round2(perfdb_comm_round2(med) + c->overhead_us);
		r->duration_us = dur;
		r->bandwidth_gbps = perfdb_comm_round2(gbps((double)c->message_bytes, dur));
		r->busbw_gbps = perfdb_comm_round2(gbps(c->bus_bytes, dur) * factor);
		r->min_us = perfdb_comm_round2(c->st.min + c->overhead_us);
		r->max_us = perfdb_comm_round2(c->st.max + c->overhead_us);
	} else {
		r->duration_us = perfdb_comm_round2(med);
		r->bandwidth_gbps = perfdb_comm_round2(gbps((double)c->message_bytes, med));
		r->busbw_gbps = perfdb_comm_round2(gbps(c->bus_bytes, med) * factor);
		r->min_us = perfdb_comm_round2(c->st.min);
		r->max_us = perfdb_comm_round2(c->st.max);
	}
	r->std_us = perfdb_comm_round2(c->st.std);
	r->samples = c->st.n;
}

void perfdb_comm_row_cells(const struct perfdb_comm_case *c, const char *backend,
			   char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX])
{
	struct perfdb_comm_row r;
	perfdb_comm_row_compute(c, &r);
	snprintf(cells[0], PERFDB_COMM_CELL_MAX, "%lld", c->message_bytes);
	snprintf(cells[1], PERFDB_COMM_CELL_MAX, "%ld", c->num_devices);
	snprintf(cells[2], PERFDB_COMM_CELL_MAX, "%s", perfdb_comm_dtype(c->dtype)->label);
	snprintf(cells[3], PERFDB_COMM_CELL_MAX, "%ld", c->tier);
	perfdb_stats_format_round2(r.duration_us, cells[4], PERFDB_COMM_CELL_MAX);
	perfdb_stats_format_round2(r.bandwidth_gbps, cells[5], PERFDB_COMM_CELL_MAX);
	perfdb_stats_format_round2(r.busbw_gbps, cells[6], PERFDB_COMM_CELL_MAX);
	perfdb_stats_format_round2(r.min_us, cells[7], PERFDB_COMM_CELL_MAX);
	perfdb_stats_format_round2(r.max_us, cells[8], PERFDB_COMM_CELL_MAX);
	perfdb_stats_format_round2(r.std_us, cells[9], PERFDB_COMM_CELL_MAX);
	snprintf(cells[10], PERFDB_COMM_CELL_MAX, "%zu", r.samples);
	snprintf(cells[11], PERFDB_COMM_CELL_MAX, "%s", backend);
}

/* ---- tables ---------------------------------------------------------- */

/* 1: the file exists and is not empty, 0: absent or empty, <0: error. */
static int table_exists(const char *path, struct perfdb_err *err)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return perfdb_err_errno(err, errno, "cannot read '%s'", path);
	}
	if (S_ISDIR(st.st_mode))
		return perfdb_err_set(err, PERFDB_EIO, "cannot write '%s': it is a directory", path);
	return st.st_size > 0;
}

/*
 * The reference's columns but topology_tier: a table perfdb parse made from a
 * profile has none (a profile does not say a group's tier, docs/parse.md
 * "Comm tables from profiles"); appending adds it, empty in the profiled rows.
 */
static int load_checked(struct perfdb_table *t, const char *path, struct perfdb_err *err)
{
	static const char *const need[] = {
		PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES, PERFDB_COL_DTYPE,
		PERFDB_COL_DURATION, PERFDB_COL_BANDWIDTH,
	};
	return perfdb_table_load_cols(t, path, "a collective table", need, sizeof(need) / sizeof(need[0]),
				      NULL, NULL, err);
}

int perfdb_comm_table_check(const char *path, struct perfdb_err *err)
{
	int ex = table_exists(path, err);
	if (ex <= 0)
		return ex;
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = load_checked(&t, path, err);
	perfdb_table_release(&t);
	return rc;
}

int perfdb_comm_table_append(const char *path, const char *lockdir,
			     char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX],
			     struct perfdb_err *err)
{
	struct perfdb_lock lk = PERFDB_LOCK_INIT;
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_lock_acquire(&lk, lockdir, -1, err);
	if (rc < 0)
		goto out;
	rc = table_exists(path, err);
	if (rc < 0)
		goto out;
	if (rc > 0) {
		rc = load_checked(&t, path, err);
		if (rc < 0)
			goto out;
	} else {
		rc = perfdb_table_set_header(&t, perfdb_comm_columns, PERFDB_COMM_NCOLS, err);
		if (rc < 0)
			goto out;
	}
	long col[PERFDB_COMM_NCOLS];
	for (size_t i = 0; i < PERFDB_COMM_NCOLS; i++) {
		col[i] = perfdb_table_col(&t, perfdb_comm_columns[i]);
		if (col[i] < 0) {
			col[i] = perfdb_table_insert_col(&t, perfdb_comm_columns[i], t.ncols, err);
			if (col[i] < 0) {
				rc = (int)col[i];
				goto out;
			}
		}
	}
	long row = perfdb_table_append_row(&t, err);
	if (row < 0) {
		rc = (int)row;
		goto out;
	}
	for (size_t i = 0; i < PERFDB_COMM_NCOLS; i++) {
		rc = perfdb_table_set(&t, (size_t)row, (size_t)col[i], cells[i], strlen(cells[i]), err);
		if (rc < 0)
			goto out;
	}
	rc = perfdb_table_save(&t, path, &lk, err);
out:
	perfdb_table_release(&t);
	perfdb_lock_release(&lk);
	return rc < 0 ? rc : 0;
}

/* ---- non-monotonic sizes --------------------------------------------- */

size_t perfdb_comm_flag_nonmonotonic(struct perfdb_comm_case *c, size_t n, double tolerance)
{
	size_t flagged = 0;
	for (size_t i = 0; i < n; i++) {
		c[i].nonmonotonic = false;
		if (c[i].st.n == 0)
			continue;
		/* the fastest strictly larger size */
		long best = -1;
		for (size_t j = 0; j < n; j++)
			if (c[j].st.n && c[j].message_bytes > c[i].message_bytes &&
			    (best < 0 || c[j].st.median < c[best].st.median))
				best = (long)j;
		if (best >= 0 && c[i].st.median > c[best].st.median * (1.0 + tolerance)) {
			c[i].nonmonotonic = true;
			c[i].mono_bytes = c[best].message_bytes;
			c[i].mono_us = c[best].st.median;
			flagged++;
		}
	}
	return flagged;
}

/* ---- the run report ------------------------------------------------- */

void perfdb_comm_report_init(struct perfdb_comm_report *r)
{
	memset(r, 0, sizeof(*r));
	r->output = "(no output)";
}

void perfdb_comm_report_release(struct perfdb_comm_report *r)
{
	free(r->cases);
	free(r->skips);
	perfdb_comm_report_init(r);
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(perfdb_comm_round2(v)) : json_null();
}

static json_t *case_json(const struct perfdb_comm_case *c)
{
	struct perfdb_comm_row r;
	perfdb_comm_row_compute(c, &r);
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:s}",
			      "op", perfdb_comm_op_name(c->op),
			      "num_devices", (json_int_t)c->num_devices,
			      "topology_tier", (json_int_t)c->tier,
			      "message_bytes", (json_int_t)c->message_bytes,
			      "dtype", perfdb_comm_dtype(c->dtype)->label);
	json_object_set_new(o, "duration_us", num(r.duration_us));
	json_object_set_new(o, "median_us", num(c->st.median));
	json_object_set_new(o, "mean_us", num(c->st.mean));
	json_object_set_new(o, "min_us", num(c->st.min));
	json_object_set_new(o, "max_us", num(c->st.max));
	json_object_set_new(o, "std_us", num(c->st.std));
	json_object_set_new(o, "samples", json_integer((json_int_t)c->st.n));
	json_object_set_new(o, "warmup", json_integer((json_int_t)c->warmup));
	json_object_set_new(o, "bandwidth_gbps", num(r.bandwidth_gbps));
	json_object_set_new(o, "busbw_gbps", num(r.busbw_gbps));
	json_object_set_new(o, "bus_bytes", json_integer((json_int_t)c->bus_bytes));
	json_object_set_new(o, "overhead_us", num(c->overhead_us));
	json_object_set_new(o, "check", json_string(c->check > 0 ? "ok" : c->check < 0 ? "failed" : "not run"));
	if (c->check < 0) {
		json_object_set_new(o, "bad_elements", json_integer((json_int_t)c->bad_elems));
		json_object_set_new(o, "bad_rank", json_integer(c->bad_rank));
	}
	json_object_set_new(o, "other_cpu", c->other_cpu >= 0 ? json_real(round(c->other_cpu * 1000) / 1000)
							    : json_null());
	json_object_set_new(o, "contended", json_boolean(c->contended));
	json_object_set_new(o, "rounds", json_integer((json_int_t)c->rounds));
	json_object_set_new(o, "rounds_contended", json_integer((json_int_t)c->rounds_bad));
	json_object_set_new(o, "judged", json_boolean(c->judged));
	json_object_set_new(o, "unclean", json_boolean(c->unclean));
	json_object_set_new(o, "attempts", json_integer(c->attempts));
	json_object_set_new(o, "nonmonotonic", json_boolean(c->nonmonotonic));
	if (c->nonmonotonic) {
		json_object_set_new(o, "larger_bytes", json_integer((json_int_t)c->mono_bytes));
		json_object_set_new(o, "larger_us", num(c->mono_us));
	}
	json_object_set_new(o, "written", json_boolean(c->written));
	return o;
}

int perfdb_comm_report_json(const struct perfdb_comm_report *r,
			    const struct perfdb_comm_opts *o, struct perfdb_strbuf *out)
{
	const struct perfdb_comm_context *x = &r->ctx;
	json_t *ctx = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:s}",
				"time_utc", x->time_utc, "perfdb", x->perfdb_version,
				"mpi_library", x->mpi_library, "mpi_standard", x->mpi_standard,
				"glibc", x->glibc, "cpu", x->cpu_model, "world_size", x->world_size,
				"hosts", x->nhosts, "ranks_per_host", x->hosts,
				"malloc", x->malloc_settings, "mca_env", x->mca_env,
				"shm_single_copy", x->shm_copy, "cpus", x->affinity);
	json_object_set_new(ctx, "loadavg_1min", json_real(round(x->loadavg1 * 100) / 100));
	json_object_set_new(ctx, "contention_measured", json_boolean(x->contention_known));

	char repr[256];
	perfdb_comm_grid_repr(&o->grid, repr, sizeof(repr));
	json_t *ops = json_array(), *nd = json_array(), *tiers = json_array(), *bytes = json_array();
	for (size_t i = 0; i < o->nops; i++)
		json_array_append_new(ops, json_string(perfdb_comm_op_name(o->ops[i])));
	for (size_t i = 0; i < o->nnum_devices; i++)
		json_array_append_new(nd, json_integer(o->num_devices[i]));
	for (size_t i = 0; i < o->ntiers; i++)
		json_array_append_new(tiers, json_integer(o->tiers[i]));
	for (size_t i = 0; i < o->nbytes; i++)
		json_array_append_new(bytes, json_integer((json_int_t)o->bytes[i]));
	json_t *opts = json_pack("{s:o, s:o, s:o, s:s, s:s, s:o, s:I, s:I, s:I, s:f, s:I, s:f, s:b}",
				 "ops", ops, "num_devices", nd,
				 "topology_tier", o->tiers ? tiers : json_null(),
				 "grid_shape", repr, "dtype", perfdb_comm_dtype(o->dtype)->name,
				 "bytes_grid", bytes, "warmup", (json_int_t)o->warmup,
				 "iters", (json_int_t)o->iters, "min_iters", (json_int_t)o->min_iters,
				 "time_budget_s", o->time_budget, "repeats", (json_int_t)o->repeats,
				 "contention_threshold", o->contention, "malloc_tune", o->malloc_tune);
	if (!o->tiers)
		json_decref(tiers);
	json_object_set_new(opts, "overhead_table",
			    o->overhead && o->overhead->path ? json_string(o->overhead->path) : json_null());
	json_object_set_new(opts, "command_line",
			    o->command_line ? json_string(o->command_line) : json_null());
	const struct perfdb_comm_transport_i *ti = r->transport ? r->transport
							    : &perfdb_comm_transport_mpi;
	char method[512];
	snprintf(method, sizeof(method),
		 "per size: one untimed checked run; warm-up; each timed iteration is a barrier, "
		 "then the collective timed on every rank (%s); an iteration's time is the max "
		 "over ranks; Duration(us) is the median of the iterations", ti->clock);
	json_object_set_new(opts, "method", json_string(method));

	json_t *cases = json_array();
	for (size_t i = 0; i < r->ncases; i++)
		json_array_append_new(cases, case_json(&r->cases[i]));
	json_t *skips = json_array();
	for (size_t i = 0; i < r->nskips; i++) {
		const struct perfdb_comm_skip *s = &r->skips[i];
		json_t *j = json_pack("{s:s, s:I, s:I, s:s}", "op", perfdb_comm_op_name(s->op),
				      "num_devices", (json_int_t)s->num_devices,
				      "topology_tier", (json_int_t)s->tier, "reason", s->reason);
		json_object_set_new(j, "message_bytes", s->message_bytes < 0
				    ? json_null() : json_integer((json_int_t)s->message_bytes));
		json_array_append_new(skips, j);
	}
	json_t *root = json_pack("{s:s, s:o, s:o, s:o, s:o, s:s}",
				 "backend", ti->name, "context", ctx, "options", opts,
				 "cases", cases, "skipped", skips, "output", r->output);
	json_object_set_new(root, "completed", json_integer((json_int_t)r->written));
	json_object_set_new(root, "contended", json_integer((json_int_t)r->contended));
	json_object_set_new(root, "unclean", json_integer((json_int_t)r->unclean));
	if (r->preflight_ran)
		json_object_set_new(root, "preflight", json_pack("{s:b, s:f, s:i, s:f, s:f, s:f, s:s}",
			"quiet", r->pf.quiet, "other_cpus", round(r->pf.other_cpus * 100) / 100, "cpus", r->pf.ncpus,
			"steal", round(r->pf.steal * 10000) / 10000, "probe_gbs", round(r->pf.probe_gbs * 10) / 10,
			"quiet_gbs", round(r->pf.quiet_gbs * 10) / 10, "why", r->pf.why));
	json_object_set_new(root, "nonmonotonic", json_integer((json_int_t)r->nonmonotonic));
	json_object_set_new(root, "check_failed", json_integer((json_int_t)r->check_failed));
	json_object_set_new(root, "seconds", json_real(round(r->seconds * 1000) / 1000));
	json_object_set_new(root, "report", r->report_path[0] ? json_string(r->report_path) : json_null());
	return perfdb_json_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12),
				out);
}
