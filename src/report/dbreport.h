/*
 * The database report (perfdb report, docs/report.md): what a database
 * holds, read back from its tables, as numbers (coverage, hotspots,
 * roofline points, collective curves), a markdown summary and one
 * self-contained HTML page with inline SVG charts.
 *
 * The module only reads; it never writes a table.  Rendering fills strbufs
 * and the CLI decides where they go.
 */
#ifndef PERFDB_DBREPORT_H
#define PERFDB_DBREPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/device.h"
#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* Per-type charts are drawn for kernel types with at least this many points (docs/report.md). */
#define PERFDB_DBREPORT_MIN_POINTS 8
/*
 * Durations the report compares and plots (docs/report.md "Out of range"):
 * a finite duration outside [1e-9, 1e15] us (a femtosecond, 31 years) is
 * no measurement, and its ratios and rates could overflow to inf.  Such a
 * duration still counts as usable (a simulator reads it), but is neither
 * compared, plotted nor put under a roof: it is counted as out of range.
 * Inside the range every figure stays finite: FLOPs and bytes of a row are
 * below 1e18, so rates stay below 1e30 and ratios below 1e24.
 */
#define PERFDB_DBREPORT_MIN_US 1e-9
#define PERFDB_DBREPORT_MAX_US 1e15
/* A row whose kept samples' std / mean is above this is noisy (docs/report.md). */
#define PERFDB_DBREPORT_NOISY 0.10
/* The worst microbench/profiling gaps the summary lists (never a contended row). */
#define PERFDB_DBREPORT_TOP_GAPS 10

/* One row of a kernel table. */
struct perfdb_dbreport_point {
	size_t line;               /* in its table (header = 1) */
	double mb_us;              /* `Average Duration(us)`, 0: none */
	double prof_us;            /* `Profiling Average Duration(us)`, 0: none */
	bool hot;                  /* both durations and ratio outside the band */
	bool failed, contended;    /* what the newest run record of the row says */
	double noise;              /* its Noise (std / mean), -1: unknown */
	bool noisy;                /* noise above PERFDB_DBREPORT_NOISY */
	/* The roofline (src/report/model.c): the operator layer's cost of the row. */
	bool costed;               /* the row has a cost (perfdb_op_cost) */
	bool matrix;               /* its FLOPs are the matrix unit's */
	double flops, bytes;
	/* The device that measured the duration plotted, NULL when unknown:
	 * profiling durations the database's device, microbench durations the
	 * host= of the newest run record naming the row. */
	const struct perfdb_device *dev;
	const char *dev_name;      /* that device's name, or the record's host= (NULL: none; not owned) */
	bool roof;                 /* plotted: a cost, a duration and the device's peaks */
	bool from_prof;            /* plotted with the profiling duration, else the microbench one */
	double ai;                 /* FLOP per byte */
	double gflops, gbps;       /* achieved */
	double peak_gflops, bw_gbps; /* the roof: dev's peak for the op's unit and dtype, its memory bandwidth */
	double roof_frac;          /* achieved over the roof at its intensity; above 1: above the roof */
	bool above;                /* roof_frac > 1: a model error or a mislabelled measurement */
};

struct perfdb_dbreport_kernel {
	char *name;                /* table stem, e.g. "MatMulV2" (owned) */
	const char *family;        /* the operator layer's ("matmul", "norm", ...), "other" without a definition */
	size_t rows;
	size_t with_prof;          /* rows with a profiling duration > 0 */
	size_t with_mb;            /* rows with a microbench duration > 0 */
	size_t theory_only;        /* rows with neither */
	size_t both, hot;          /* rows with both; of them, hotspots */
	size_t failed, contended;  /* rows the run records flag */
	size_t noisy;              /* rows whose newest record's noise is above PERFDB_DBREPORT_NOISY */
	size_t out_of_range;       /* rows with a duration outside [PERFDB_DBREPORT_MIN_US, _MAX_US] */
	size_t roof, above;        /* roofline points; of them, above the roof */
	size_t no_cost;            /* rows with a duration but no cost */
	size_t no_device;          /* rows with a cost and a duration but no roof: the measuring device, or its peak for the dtype, unknown */
	bool movement;             /* every costed row has 0 FLOPs: a bandwidth chart, not a roofline */
	char *no_cost_why;         /* the first row's reason for no cost (owned, NULL) */
	struct perfdb_dbreport_point *pts; /* one per row (owned) */
};

struct perfdb_dbreport_comm_point {
	double bytes, dur_us, busbw_gbps;
	long ndev, tier;
};

struct perfdb_dbreport_comm {
	char *op;                  /* "all_reduce", or the file stem (owned) */
	struct perfdb_dbreport_comm_point *pts; /* sorted by group, tier, bytes */
	size_t n;
	bool busbw_derived;        /* no busbw_gbps column: bandwidth x factor */
};

struct perfdb_dbreport {
	char *dbdir, *hccl_dir;    /* owned; hccl_dir NULL when none found */
	struct perfdb_dbreport_kernel *k;
	size_t nk;
	struct perfdb_dbreport_comm *c;
	size_t nc;
	long long mtime_min, mtime_max; /* table modification times, s since epoch (0: none) */
	const struct perfdb_device *dev; /* the database's device (NULL: not in the registry) */
	size_t nruns;              /* run records read (<dbdir>/reports/microbench_env_<ts>.txt) */
	char **run_hosts;          /* each record's host= (owned; points' dev_name point here) */
};

void perfdb_dbreport_init(struct perfdb_dbreport *r);
void perfdb_dbreport_release(struct perfdb_dbreport *r);

/*
 * Read every <Kernel>.csv of dbdir (sorted by name), the run records of
 * <dbdir>/reports/ and the hcom_*.csv of hccl_dir.  When hccl_dir is NULL
 * the newest (last by name) directory of <dbdir>/../../hccl/ holding
 * hcom_*.csv is used, if any.  Devices are looked up in reg (may be
 * NULL); device is the database's (may be NULL: unknown).  A missing
 * dbdir is -PERFDB_ENOENT; a table that cannot be read is an error naming
 * it.
 */
int perfdb_dbreport_load(struct perfdb_dbreport *r, const char *dbdir, const char *hccl_dir,
			 const struct perfdb_device_registry *reg, const char *device,
			 struct perfdb_err *err);

/* One microbench/profiling gap: the row r->k[k].pts[p]. */
struct perfdb_dbreport_gap {
	size_t k, p;
	double ratio;              /* microbench / profiling */
};

/* The headline figures the page opens with (perfdb_dbreport_summary). */
struct perfdb_dbreport_summary {
	size_t rows;               /* every kernel row */
	size_t usable;             /* with a usable duration (rows - theory-only) */
	size_t profiled;           /* with a profiling duration (measured on the device) */
	size_t mb_only;            /* a microbench duration only */
	size_t theory_only;        /* no duration */
	size_t both, hot;          /* with both durations; of them outside the band */
	struct perfdb_dbreport_gap gaps[PERFDB_DBREPORT_TOP_GAPS]; /* the worst |log(ratio)| first */
	size_t ngaps;
	size_t failed, contended;  /* rows the run records flag */
	size_t noisy;              /* rows whose newest record's noise is above PERFDB_DBREPORT_NOISY */
	size_t out_of_range;       /* rows with a duration outside [PERFDB_DBREPORT_MIN_US, _MAX_US] */
	size_t roof, above;        /* roofline points; of them above the roof */
	size_t no_cost, no_device; /* rows with a duration not plotted, by cause */
	size_t comm_tables, comm_series, comm_points; /* collectives: tables, (group, tier) curves, sizes */
	size_t comm_ops;           /* of the four standard collectives, how many have a table */
};

void perfdb_dbreport_summary(const struct perfdb_dbreport *r, struct perfdb_dbreport_summary *s);

/* Run context printed with the report. */
struct perfdb_dbreport_ctx {
	const struct perfdb_device *dev;   /* may be NULL */
	const char *generated;             /* date text */
	const char *version;               /* perfdb version text */
	const char *libraries;             /* library versions, may be NULL */
};

/* Markdown summary (coverage, roofline, collectives tables). */
int perfdb_dbreport_markdown(const struct perfdb_dbreport *r,
			     const struct perfdb_dbreport_ctx *ctx,
			     struct perfdb_strbuf *out);

/*
 * The HTML page: no script, no external asset.  Every chart is
 * `<svg class="chart" data-points="N">` holding exactly N
 * `<circle class="pt…">` data points, N > 0 (no chart is drawn without
 * points); each summary figure is an element with
 * `data-figure="<name>"` holding the number (the Chromium test reads
 * both).
 */
int perfdb_dbreport_html(const struct perfdb_dbreport *r,
			 const struct perfdb_dbreport_ctx *ctx,
			 struct perfdb_strbuf *out);

/* ---- the whole command (page.c) ---------------------------------------- */

struct perfdb_dbreport_request {
	const char *dbdir;                 /* resolved */
	const char *hccl_dir;              /* NULL: the newest hccl/<ver>/ of the device */
	const struct perfdb_device_registry *reg;
	const char *device;                /* whose peaks the roofline uses */
	const char *html_path;             /* NULL: <dbdir>/reports/perfdb_report_<ts>.html */
};

struct perfdb_dbreport_page {
	struct perfdb_dbreport r;          /* the numbers */
	struct perfdb_strbuf md;           /* the markdown summary */
	struct perfdb_strbuf path;         /* where the HTML page went */
};

/* Load, render and write the page into p (initialised); released by the caller, also after an error. */
int perfdb_dbreport_page_write(const struct perfdb_dbreport_request *rq,
			       struct perfdb_dbreport_page *p, struct perfdb_err *err);
void perfdb_dbreport_page_init(struct perfdb_dbreport_page *p);
void perfdb_dbreport_page_release(struct perfdb_dbreport_page *p);

/* The report as JSON (report_json.c; keys in docs/cli.md), a newline after it. */
int perfdb_dbreport_json(const struct perfdb_dbreport *r, const char *device, const char *html,
			 struct perfdb_strbuf *out);

#endif
