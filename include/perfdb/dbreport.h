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

enum perfdb_op_family {
	PERFDB_OP_FAMILY_MATMUL,   /* 2*M*N*K FLOPs on the matrix unit */
	PERFDB_OP_FAMILY_VECTOR,   /* one FLOP per output element */
};

/* One row's work, from its shapes and dtypes. */
struct perfdb_op_work {
	double flops;              /* floating-point operations */
	double bytes;              /* bytes of every input and output tensor */
	unsigned dtype_bits;       /* of the first input (0: unknown) */
};

/*
 * FLOPs and bytes of one row of kernel type op, from the cells of
 * `Input Shapes`, `Input Data Types`, `Output Shapes`, `Output Data Types`
 * (literal quotes allowed).  MatMul family (perfdb_op_family_of): FLOPs =
 * 2 * numel(output 0) * K, K the last dim of input 0.  Vector family: FLOPs
 * = numel of every output.  Bytes = sum over non-empty slots of numel x
 * dtype size; a slot without a known dtype counts 2 bytes per element.
 * Returns 0, or -PERFDB_EPARSE when a shape cannot be read (w zeroed).
 */
int perfdb_op_work_of(const char *op, const char *in_shapes, const char *in_dtypes,
		      const char *out_shapes, const char *out_dtypes,
		      struct perfdb_op_work *w);

/* MatMul family: names containing "MatMul" or "Matmul" (any GEMM kernel). */
enum perfdb_op_family perfdb_op_family_of(const char *op);

struct perfdb_dbreport_point {
	double mb_us;              /* `Average Duration(us)`, 0: none */
	double prof_us;            /* `Profiling Average Duration(us)`, 0: none */
	double ai;                 /* FLOP per byte, 0: unknown */
	double gflops;             /* achieved, from the profiling duration else mb */
	double gbps;               /* achieved bytes / duration, GB/s */
	bool hot;                  /* both durations and ratio outside the band */
};

struct perfdb_dbreport_kernel {
	char *name;                /* table stem, e.g. "MatMulV2" (owned) */
	enum perfdb_op_family family;
	size_t rows;
	size_t with_prof;          /* rows with a profiling duration > 0 */
	size_t with_mb;            /* rows with a microbench duration > 0 */
	size_t theory_only;        /* rows with neither */
	size_t both, hot;          /* rows with both; of them, hotspots */
	unsigned dtype_bits;       /* of the first row's first input */
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
};

void perfdb_dbreport_init(struct perfdb_dbreport *r);
void perfdb_dbreport_release(struct perfdb_dbreport *r);

/*
 * Read every <Kernel>.csv of dbdir (sorted by name) and the hcom_*.csv of hccl_dir.  When
 * hccl_dir is NULL the newest (last by name) directory of
 * <dbdir>/../../hccl/ holding hcom_*.csv is used, if any.  A missing dbdir
 * is -PERFDB_ENOENT; a table that cannot be read is an error naming it.
 */
int perfdb_dbreport_load(struct perfdb_dbreport *r, const char *dbdir,
			 const char *hccl_dir, struct perfdb_err *err);

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
 * `<circle class="pt…">` data points (the Chromium test counts them).
 */
int perfdb_dbreport_html(const struct perfdb_dbreport *r,
			 const struct perfdb_dbreport_ctx *ctx,
			 struct perfdb_strbuf *out);

/* The device peak FLOP/s for a dtype width (mma_flops; 0: unknown). */
double perfdb_dbreport_peak_flops(const struct perfdb_device *dev,
				  enum perfdb_op_family f, unsigned dtype_bits);

#endif
