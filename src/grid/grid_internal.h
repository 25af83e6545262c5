/*
 * Internals of the grid stage (docs/spec/grid.md), shared by the files of src/grid/ and
 * the unit tests.  The public surface is src/grid/grid.h.
 *
 * Flow: a generator (template engine or one of the generator functions)
 * pushes candidate rows (struct grid_cand) into an emit callback, one at a
 * time, in the reference's order; the row builder (rows.c) turns each into
 * a database row of one table: slot padding and clearing, the HBM filter,
 * the shape cells, dedupe by signature; kept rows are sorted by their input
 * shapes and serialized after the table's own rows.
 */
#ifndef PERFDB_GRID_INTERNAL_H
#define PERFDB_GRID_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "grid/grid.h"
#include "perfdb/strbuf.h"
#include "perfdb/op_mapping.h"
#include "perfdb/table.h"
#include "perfdb/yaml_doc.h"

/* ---- expressions (expr.c) -------------------------------------------- */

struct grid_expr;

/*
 * Compile text[0..len) against the variable names vars[0..nvars) (a
 * variable's value is vals[i] at evaluation).  On error returns
 * -PERFDB_EPARSE with a one-line reason in msg (no file/line prefix).
 */
int grid_expr_compile(struct grid_expr **out, const char *text, size_t len,
		      const char *const *vars, size_t nvars, char *msg, size_t msgsz);
void grid_expr_free(struct grid_expr *e);
const char *grid_expr_text(const struct grid_expr *e);
/* Evaluate; on error returns -PERFDB_EINVAL with *why a static reason. */
int grid_expr_eval(const struct grid_expr *e, const int64_t *vals, int64_t *out,
		   const char **why);

/* ---- candidates ------------------------------------------------------ */

#define GRID_MAX_SLOTS 64
#define GRID_MAX_DIMS 8
#define GRID_MAX_EXTRA 24

struct grid_shape {
	uint32_t nd;                 /* 0 = empty slot */
	int64_t d[GRID_MAX_DIMS];
};

/* One generated row before it meets a table (reference TheoryShapeRow). */
struct grid_cand {
	size_t nin, nout;
	struct grid_shape in[GRID_MAX_SLOTS];
	struct grid_shape out[GRID_MAX_SLOTS];
	size_t nextra;               /* columns set by the generator (extra_values) */
	const char *extra_col[GRID_MAX_EXTRA];
	const char *extra_val[GRID_MAX_EXTRA];
};

typedef int (*grid_emit_fn)(void *arg, const struct grid_cand *c, struct perfdb_err *err);

/* ---- configuration (config.c) ---------------------------------------- */

struct grid_axis {                  /* a named or inline grid */
	char *name;                     /* variable name (iterators) or grid name */
	int64_t *v;
	size_t n;
};

struct grid_shape_expr {            /* one slot template: `(M, K)`, `()` */
	size_t nd;
	struct grid_expr **dims;
};

enum grid_kind {
	GRID_KIND_TEMPLATE,
	GRID_KIND_GROUPED_MATMUL,
	GRID_KIND_DFC,
	GRID_KIND_FIA,
	GRID_KIND_SPLIT_QKV,
};

struct grid_scene {                 /* FIA scene grids of one model key */
	char *key;                      /* model key, or "default" */
	struct grid_axis prefill_batches, prefill_seqs, decode_batches, decode_avg_seqs;
};

struct grid_pattern {
	char *name;
	size_t line;                    /* in the configuration file */
	enum grid_kind kind;
	/* template engine */
	struct grid_axis *iters;        /* in YAML order; name = variable */
	size_t niters;
	struct grid_axis *fallback;     /* fallback_iterators (model_nk_pairs) */
	size_t nfallback;
	char **const_names;
	int64_t *const_vals;
	size_t nconsts;
	bool model_nk_pairs;
	struct grid_expr **constraints;
	size_t nconstraints;
	struct grid_shape_expr *inputs, *outputs;
	size_t ninputs, noutputs;
	char *override_col[5];          /* dtype/format overrides (extra values), NULL-ended */
	char *override_val[5];
	size_t noverrides;
	char **vars;                    /* every variable name, value order */
	size_t nvars;
	/* generator functions */
	struct grid_axis tokens;        /* grouped_matmul, dfc, split_qkv */
	struct grid_axis cards;         /* dfc deployment cards */
	int64_t max_experts_per_rank;   /* dfc */
	int64_t max_token_elems;        /* dfc: skip m*h*topk above this */
	int64_t block_size, min_blocks; /* fia */
	int64_t mask[2];                /* fia sparse-mode-3 mask shape */
	struct grid_scene *scenes;      /* fia */
	size_t nscenes;
	bool aten_bnsd;                 /* fia layout: aten (PyTorch sdpa (B,N,S,D) slots 0-2, no Runtime columns) */
};

struct grid_assignment {
	char *kernel;
	char *pattern;                  /* NULL = skip */
	const struct grid_pattern *p;   /* resolved (NULL = skip) */
};

struct perfdb_grid_config {
	char *path;
	struct grid_axis *grids;
	size_t ngrids;
	struct grid_pattern *patterns;
	size_t npatterns;
	struct grid_assignment *assign;
	size_t nassign;
	struct perfdb_grid_model *models;  /* built-in models */
	size_t nmodels;
	char **legacy;                  /* legacy name (normalized) */
	char **legacy_hint;             /* full id to use instead */
	size_t nlegacy;
};

const struct grid_pattern *grid_config_pattern(const struct perfdb_grid_config *c,
					       const char *name);
const struct grid_assignment *grid_config_assignment(const struct perfdb_grid_config *c,
						     const char *kernel);
const struct grid_axis *grid_config_grid(const struct perfdb_grid_config *c,
					 const char *name);

/* ---- models (models.c) ------------------------------------------------- */

/* Lowercase and drop '-', '_', '.', '/' and spaces (reference _normalize_name). */
void grid_normalize_name(const char *s, char *out, size_t outsz);
bool grid_model_is_mla(const struct perfdb_grid_model *m);
bool grid_model_is_moe(const struct perfdb_grid_model *m);

/* ---- generators (gen_*.c) ---------------------------------------------- */

struct grid_gen_ctx {
	const struct perfdb_grid_config *cfg;
	const struct grid_pattern *p;
	const struct perfdb_grid_models *models; /* the models the generators use */
	bool models_given;              /* --target-models / --model-config given */
	const int64_t (*pairs)[2];      /* sorted GEMM (N,K) pairs when models_given */
	size_t npairs;
};

int grid_generate(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		  struct perfdb_err *err);
/*
 * The template engine by combination index (gen_template.c), for sampling
 * a product too large to walk: combinations() is the product of the axes
 * (times the model pairs), before constraints; at(i) runs combination i,
 * emitting it if it passes the constraints, or with emit NULL returns 1
 * when it passes and 0 when not.
 */
struct grid_tmpl;
int grid_tmpl_open(const struct grid_gen_ctx *g, struct grid_tmpl **out, struct perfdb_err *err);
uint64_t grid_tmpl_combinations(const struct grid_tmpl *m, bool *overflow);
int grid_tmpl_at(struct grid_tmpl *m, uint64_t i, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err);
void grid_tmpl_free(struct grid_tmpl *m);

int grid_gen_template(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		      struct perfdb_err *err);
int grid_gen_grouped_matmul(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
			    struct perfdb_err *err);
int grid_gen_dfc(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err);
int grid_gen_split_qkv(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		       struct perfdb_err *err);
int grid_gen_fia(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err);

/* The columns a pattern's generator may set (extra values), NULL-terminated. */
const char *const *grid_pattern_extra_cols(const struct grid_pattern *p);

/* FIA Runtime columns, in the order they are appended to a header. */
#define GRID_FIA_NRUNTIME 15
extern const char *const grid_fia_runtime_cols[GRID_FIA_NRUNTIME];

/* Helpers for generators: set one slot. */
static inline void grid_shape_set(struct grid_shape *s, size_t nd, const int64_t *d)
{
	s->nd = (uint32_t)nd;
	for (size_t i = 0; i < nd; i++)
		s->d[i] = d[i];
}

/* ---- rows (rows.c) ------------------------------------------------------ */

/* Bytes per element of a dtype spelling for the HBM estimate (spec §5). */
unsigned grid_dtype_bytes(const char *p, size_t len);

/* Estimated bytes of one row: sum of numel * bytes over non-empty slots;
 * saturates at UINT64_MAX. */
uint64_t grid_hbm_estimate(const struct grid_shape *in, size_t nin,
			   const struct grid_shape *out, size_t nout,
			   const char *in_dtypes, const char *out_dtypes);

/* `a,b;;c` (empty slots kept) of slots[0..n). */
int grid_shape_text(const struct grid_shape *s, size_t n, struct perfdb_strbuf *out);

/* Reference parse_shape_text: number of slots of a template shape cell. */
size_t grid_template_slots(const char *cell);

struct grid_file;

struct grid_file_stats {
	size_t considered;              /* candidates offered */
	size_t hbm_filtered;
	size_t time_filtered;           /* over the replay budget on the table's device */
	size_t duplicates;              /* of source rows or earlier new rows */
	size_t kept;
};

/*
 * Prepare table t (loaded from a CSV, at least one data row, an `Input
 * Shapes` column) for op (the file stem): add the columns in add_cols the
 * header lacks (at the end, in order), precompute the template row.
 */
struct perfdb_device;
/*
 * Leave out rows whose replay on dev (warm-up and samples: calls calls of
 * the row's roofline time at dev's peaks) would take over max_s seconds;
 * dev NULL or max_s <= 0: no limit.  Rows whose cost or device figure is
 * unknown are kept.
 */
void grid_file_set_time_limit(struct grid_file *f, const struct perfdb_device *dev, double calls, double max_s);

int grid_file_new(struct grid_file **out, struct perfdb_table *t, const char *op,
		  const char *const *add_cols, uint64_t max_hbm_bytes,
		  struct perfdb_err *err);
void grid_file_free(struct grid_file *f);
/* Offer one candidate; updates the stats. */
int grid_file_add(struct grid_file *f, const struct grid_cand *c, struct perfdb_err *err);
const struct grid_file_stats *grid_file_stats(const struct grid_file *f);
/* Columns added to the header by grid_file_new. */
size_t grid_file_added_cols(const struct grid_file *f, const char *const **names);
/*
 * The new file image: the original bytes (orig, unchanged header) or the
 * table re-serialized (header extended), then the kept rows sorted by their
 * input shapes (stable).
 */
int grid_file_image(struct grid_file *f, const char *orig, size_t origlen,
		    struct perfdb_strbuf *out, struct perfdb_err *err);
/* Kept row i (in offer order): its cell for column name (for tests). */
const char *grid_file_row_cell(struct grid_file *f, size_t i, const char *col,
			       struct perfdb_strbuf *scratch);

/* ---- PRNG (prng.c) ------------------------------------------------------- */

struct grid_rng {
	uint64_t s[4];
};

void grid_rng_seed(struct grid_rng *r, uint64_t seed);
uint64_t grid_rng_next(struct grid_rng *r);
/* Uniform in [0, n), n > 0 (Lemire's method with rejection: unbiased). */
uint64_t grid_rng_below(struct grid_rng *r, uint64_t n);
/*
 * Choose k of n indices uniformly (partial Fisher-Yates); sets sel[i] for
 * the chosen ones.  sel has n entries, cleared first.
 */
int grid_rng_sample(struct grid_rng *r, size_t n, size_t k, bool *sel);

#endif
