/*
 * The kernel numbers of the database report (src/report/dbreport.h,
 * docs/report.md): per kernel table, coverage counts, duration pairs with
 * hotspots (the 0.8x-1.2x band of docs/spec/replay.md §3), the run
 * records' flags, and roofline points.  A point's FLOPs and bytes are the
 * operator layer's cost of the row (ops, docs/ops.md "Costs"),
 * the engine's own reading of the row's cells; it is placed under the
 * roof of the device that measured its duration, and not placed at all
 * when that device or its peaks are unknown.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ops/coll.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"
#include "ops/opdef.h"

void perfdb_dbreport_init(struct perfdb_dbreport *r)
{
	memset(r, 0, sizeof(*r));
}

void perfdb_dbreport_release(struct perfdb_dbreport *r)
{
	for (size_t i = 0; i < r->nk; i++) {
		free(r->k[i].name);
		free(r->k[i].pts);
		free(r->k[i].no_cost_why);
	}
	for (size_t i = 0; i < r->nc; i++) {
		free(r->c[i].op);
		free(r->c[i].pts);
	}
	for (size_t i = 0; r->run_hosts && i < r->nruns; i++)
		free(r->run_hosts[i]);
	free(r->run_hosts);
	free(r->k);
	free(r->c);
	free(r->dbdir);
	free(r->hccl_dir);
	memset(r, 0, sizeof(*r));
}

/* A row's cells by column name, for the operator layer's plans (Runtime cells). */
struct row_cells {
	const struct perfdb_table *t;
	size_t r;
};

static const char *row_cell(const void *ctx, const char *column)
{
	const struct row_cells *rc = ctx;
	long c = perfdb_table_col(rc->t, column);
	return c < 0 ? NULL : perfdb_table_get(rc->t, rc->r, c);
}

/* The row's cost from the operator layer; false with the reason in err. */
static bool row_cost(const char *op, const struct perfdb_table *t, size_t i, struct perfdb_op_cost *w,
		     struct perfdb_err *err)
{
#define CELL(col) perfdb_table_get(t, i, perfdb_table_col(t, col))
	struct perfdb_op_case c;
	if (perfdb_case_build(op, CELL(PERFDB_COL_IN_SHAPES), CELL(PERFDB_COL_IN_DTYPES), CELL(PERFDB_COL_IN_FORMATS),
			      CELL(PERFDB_COL_OUT_SHAPES), CELL(PERFDB_COL_OUT_DTYPES), CELL(PERFDB_COL_OUT_FORMATS), &c,
			      err) < 0)
		return false;
#undef CELL
	struct row_cells cells = { t, i };
	c.cell = row_cell;
	c.cell_ctx = &cells;
	c.nranks = 1;
	return perfdb_op_cost(&c, w, err) == 0;
}

/* A duration outside the report's range is set aside (0: none to compare or plot); true if it was. */
static bool out_of_range(double *us)
{
	if (!(*us > 0) || (*us >= PERFDB_DBREPORT_MIN_US && *us <= PERFDB_DBREPORT_MAX_US))
		return false;
	*us = 0;
	return true;
}

/* Place p under the roof of p->dev: the op's peak for its unit and dtype, the memory bandwidth. */
static void place(struct perfdb_dbreport_point *p, const struct perfdb_op_cost *w)
{
	double us = p->from_prof ? p->prof_us : p->mb_us;
	double peak = perfdb_device_peak_flops(p->dev, p->matrix, (int)w->dtype) / 1e9;
	double bw = p->dev ? p->dev->memory_bandwidth / 1e9 : 0;
	if (!(bw > 0) || (w->flops > 0 && !(peak > 0)))
		return;
	p->roof = true;
	p->peak_gflops = peak;
	p->bw_gbps = bw;
	p->gflops = w->flops / us / 1e3;
	p->gbps = w->bytes / us / 1e3;
	p->ai = w->flops / w->bytes;
	/* above min(peak, ai x bw) <=> above the peak or above the bandwidth */
	p->roof_frac = fmax(w->flops > 0 ? p->gflops / peak : 0, p->gbps / bw);
	p->above = p->roof_frac > 1 + 1e-9;
}

static int load_kernel(struct perfdb_dbreport *r, struct perfdb_dbreport_kernel *k, const char *path,
		       const struct report_runs *runs, const struct perfdb_device_registry *reg,
		       struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_table_load(&t, path, err);
	if (rc < 0)
		goto out;
	const struct perfdb_opdef *def = perfdb_opdef_find(k->name);
	k->family = def ? def->family : "other";
	k->rows = t.nrows;
	k->pts = calloc(t.nrows ? t.nrows : 1, sizeof(*k->pts));
	if (!k->pts) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	long cmb = perfdb_table_col(&t, PERFDB_COL_MB_DUR);
	long cpr = perfdb_table_col(&t, PERFDB_COL_PROF_AVG);
	size_t costed = 0, moving = 0;
	for (size_t i = 0; i < t.nrows; i++) {
		struct perfdb_dbreport_point *p = &k->pts[i];
		const char *mb = perfdb_table_get(&t, i, cmb), *prof = perfdb_table_get(&t, i, cpr);
		p->line = i + 2;
		/* a simulator reads finite durations only; invalid ones stay 0 */
		perfdb_schema_duration(mb, true, &p->mb_us);
		perfdb_schema_duration(prof, true, &p->prof_us);
		k->with_mb += p->mb_us > 0;
		k->with_prof += p->prof_us > 0;
		k->theory_only += !perfdb_schema_usable_duration(mb, prof, true, NULL);
		/* usable, but not compared nor plotted: see PERFDB_DBREPORT_MIN_US */
		/* both: each zeroes its own duration when out of range */
		bool far_mb = out_of_range(&p->mb_us), far_prof = out_of_range(&p->prof_us);
		bool far = far_mb || far_prof;
		k->out_of_range += far;
		if (p->mb_us > 0 && p->prof_us > 0) {
			k->both++;
			p->hot = !perfdb_schema_in_band(p->mb_us / p->prof_us);
			k->hot += p->hot;
		}
		const struct report_run_row *rec = report_runs_find(runs, k->name, p->line);
		p->failed = rec && rec->failed;
		p->contended = rec && rec->contended;
		p->noise = rec ? rec->noise : -1;
		p->noisy = p->noise > PERFDB_DBREPORT_NOISY;
		k->failed += p->failed;
		k->contended += p->contended;
		k->noisy += p->noisy;
		if (!(p->mb_us > 0) && !(p->prof_us > 0))
			continue;
		struct perfdb_op_cost w;
		struct perfdb_err why;
		perfdb_err_clear(&why);
		if (!row_cost(k->name, &t, i, &w, &why) || !(w.bytes > 0)) {
			k->no_cost++;
			if (!k->no_cost_why && !(k->no_cost_why = strdup(why.msg[0] ? why.msg : "no bytes")))
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			continue;
		}
		p->costed = true;
		p->matrix = w.unit == PERFDB_OP_UNIT_MATRIX;
		p->flops = w.flops;
		p->bytes = w.bytes;
		costed++;
		moving += w.flops == 0;
		/* the profile was taken on the database's device; a microbench duration on its record's host */
		p->from_prof = p->prof_us > 0;
		if (p->from_prof) {
			p->dev = r->dev;
		} else if (rec && !rec->failed && rec->host) {
			p->dev_name = rec->host;
			p->dev = reg ? perfdb_device_find(reg, rec->host) : NULL;
		}
		if (p->dev)
			p->dev_name = p->dev->name;
		place(p, &w);
		k->roof += p->roof;
		k->above += p->above;
		k->no_device += !p->roof;
	}
	k->movement = costed && moving == costed;
out:
	perfdb_table_release(&t);
	return rc;
}

int perfdb_dbreport_load(struct perfdb_dbreport *r, const char *dbdir, const char *hccl_dir,
			 const struct perfdb_device_registry *reg, const char *device,
			 struct perfdb_err *err)
{
	char **files;
	size_t n;
	if (!perfdb_is_dir(dbdir))
		return perfdb_err_set(err, PERFDB_ENOENT,
				      "database directory not found: '%s' (check --database-path, "
				      "or the device and version flags with 'perfdb path')", dbdir);
	r->dev = reg && device ? perfdb_device_find(reg, device) : NULL;
	struct report_runs runs;
	int rc = report_runs_load(&runs, dbdir, err);
	if (rc < 0) {
		report_runs_release(&runs);
		return rc;
	}
	r->nruns = runs.nruns;
	rc = report_list_dir(dbdir, "", ".csv", false, &files, &n);
	if (rc < 0) {
		report_runs_release(&runs);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	r->dbdir = strdup(dbdir);
	r->k = calloc(n ? n : 1, sizeof(*r->k));
	if (!r->dbdir || !r->k)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dbdir, files[i]);
		struct perfdb_dbreport_kernel *k = &r->k[r->nk++];
		if (!(k->name = strndup(files[i], strlen(files[i]) - 4)))
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		else
			rc = load_kernel(r, k, path, &runs, reg, err);
		report_note_mtime(r, path);
	}
	report_free_list(files, n);
	/* the points' dev_name outlive the records */
	r->run_hosts = runs.hosts;
	runs.hosts = NULL;
	runs.nruns = 0;
	report_runs_release(&runs);
	if (rc < 0)
		return rc;
	return report_load_hccl_near(r, dbdir, hccl_dir, err);
}

/* ---- the summary ------------------------------------------------------------------ */

static double gap_of(const struct perfdb_dbreport_point *p)
{
	return fabs(log(p->mb_us / p->prof_us));
}

void perfdb_dbreport_summary(const struct perfdb_dbreport *r, struct perfdb_dbreport_summary *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->nk; i++) {
		const struct perfdb_dbreport_kernel *k = &r->k[i];
		s->rows += k->rows;
		s->theory_only += k->theory_only;
		s->both += k->both;
		s->hot += k->hot;
		s->failed += k->failed;
		s->contended += k->contended;
		s->noisy += k->noisy;
		s->out_of_range += k->out_of_range;
		s->roof += k->roof;
		s->above += k->above;
		s->no_cost += k->no_cost;
		s->no_device += k->no_device;
		for (size_t j = 0; j < k->rows; j++) {
			const struct perfdb_dbreport_point *p = &k->pts[j];
			s->profiled += p->prof_us > 0;
			s->mb_only += p->mb_us > 0 && !(p->prof_us > 0);
			/* a row measured under contention never headlines the gaps */
			if (!(p->mb_us > 0 && p->prof_us > 0) || p->contended)
				continue;
			/* insertion into the worst-first list; equal gaps keep table order */
			struct perfdb_dbreport_gap g = { i, j, p->mb_us / p->prof_us };
			size_t at = s->ngaps;
			while (at > 0 && gap_of(&r->k[s->gaps[at - 1].k].pts[s->gaps[at - 1].p]) < gap_of(p))
				at--;
			if (at >= PERFDB_DBREPORT_TOP_GAPS)
				continue;
			size_t last = s->ngaps < PERFDB_DBREPORT_TOP_GAPS ? s->ngaps : PERFDB_DBREPORT_TOP_GAPS - 1;
			memmove(&s->gaps[at + 1], &s->gaps[at], (last - at) * sizeof(g));
			s->gaps[at] = g;
			if (s->ngaps < PERFDB_DBREPORT_TOP_GAPS)
				s->ngaps++;
		}
	}
	s->usable = s->rows - s->theory_only;
	bool seen[PERFDB_COMM_NOPS] = { false };
	for (size_t i = 0; i < r->nc; i++) {
		const struct perfdb_dbreport_comm *c = &r->c[i];
		s->comm_tables++;
		s->comm_points += c->n;
		for (size_t j = 0; j < c->n; j++)
			s->comm_series += j == 0 || c->pts[j].ndev != c->pts[j - 1].ndev ||
					  c->pts[j].tier != c->pts[j - 1].tier;
		for (int o = 0; o < PERFDB_COMM_NOPS; o++)
			if (!strcmp(c->op, perfdb_comm_op_name((enum perfdb_comm_op)o)) && !seen[o]) {
				seen[o] = true;
				s->comm_ops++;
			}
	}
}
