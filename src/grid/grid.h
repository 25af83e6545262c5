/*
 * The grid stage: theory shape rows from model configs (docs/spec/grid.md and
 * its Decisions; replaces generate_shape_grid.py, grid_generator/ and
 * memory_estimator.py).  docs/grid.md describes the behaviour and the data
 * files.
 *
 * Inputs, all validated before the first table is written:
 *   - the grid configuration (data/grid.yaml: axis grids, built-in models,
 *     patterns, generator parameters, kernel assignments);
 *   - optionally the database's op_mapping.yaml (routing flags);
 *   - the models: built-in ids and local HuggingFace config.json files;
 *   - every routed table of the database.
 * Output: each routed `<Kernel>.csv` gets its new rows appended, sorted by
 * input shapes, and is replaced atomically under the database lock.
 */
#ifndef PERFDB_GRID_H
#define PERFDB_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* ---- configuration ------------------------------------------------------ */

struct perfdb_grid_config;

/* Load a grid configuration; errors name file:line:col. */
int perfdb_grid_config_load(struct perfdb_grid_config **out, const char *path,
			    struct perfdb_err *err);
int perfdb_grid_config_load_mem(struct perfdb_grid_config **out, const char *name,
				const char *data, size_t len, struct perfdb_err *err);
void perfdb_grid_config_free(struct perfdb_grid_config *c);

struct perfdb_opmap;   /* perfdb/op_mapping.h */

/* ---- models ----------------------------------------------------------------- */

#define PERFDB_GRID_MAX_PAR 8

/* Architectural parameters of one model (spec §2). */
struct perfdb_grid_model {
	char *id;            /* e.g. deepseek-ai/DeepSeek-V3, or a config path */
	char *key;           /* scene key, e.g. deepseekv3 */
	char *source;        /* "built-in" or the config.json path */
	int64_t hidden, inter, heads, kv_heads, head_dim;
	int64_t q_lora, kv_lora, nope, rope;
	int64_t experts, experts_per_card, expert_inter, topk;
	int64_t tp[PERFDB_GRID_MAX_PAR];
	size_t ntp;
	int64_t ep[PERFDB_GRID_MAX_PAR];
	size_t nep;
};

struct perfdb_grid_models {
	struct perfdb_grid_model *v;
	size_t n, cap;
};

void perfdb_grid_models_init(struct perfdb_grid_models *m);
void perfdb_grid_models_release(struct perfdb_grid_models *m);

/*
 * Read HuggingFace config.json files (spec §2 field fallbacks, Decision 6):
 * path is a config file, a directory holding config.json, or a directory
 * whose subdirectories hold config.json (sorted).  Each becomes a model whose
 * id is its directory (or the file path); tp is (1,2,4,8,16) and ep is
 * (1, then 2, 4, 8 up to the expert count).
 */
int perfdb_grid_models_load_hf(struct perfdb_grid_models *out, const char *path,
			       const struct perfdb_grid_config *cfg, struct perfdb_err *err);
/* One config.json from memory; name is used for messages, id names the model. */
int perfdb_grid_model_parse_hf(struct perfdb_grid_models *out, const char *name,
			       const char *id, const char *json, size_t len,
			       const struct perfdb_grid_config *cfg, struct perfdb_err *err);

/*
 * Resolve --target-models ids (normalised: lowercase, '-', '_', '.', '/'
 * and spaces dropped): a loaded config whose id matches, else a built-in.
 * A legacy short name or an unknown id is -PERFDB_EINVAL with a message
 * listing the known ids.  ids == NULL (nids 0): every loaded config if
 * any, else every built-in model.
 */
int perfdb_grid_models_resolve(const struct perfdb_grid_config *cfg,
			       const struct perfdb_grid_models *loaded,
			       const char *const *ids, size_t nids,
			       struct perfdb_grid_models *out, struct perfdb_err *err);

/*
 * GEMM (N,K) pairs of the models (spec §2), unioned and sorted; *pairs is
 * malloc'd (n x 2).
 */
int perfdb_grid_nk_pairs(const struct perfdb_grid_models *m, int64_t (**pairs)[2],
			 size_t *n, struct perfdb_err *err);

/* ---- routing ------------------------------------------------------------------ */

enum perfdb_grid_route {
	PERFDB_GRID_ROUTE_PATTERN,      /* a pattern generates rows */
	PERFDB_GRID_ROUTE_FLAGGED,      /* op_mapping: zero_cost, composite or communication */
	PERFDB_GRID_ROUTE_UNASSIGNED,   /* no assignment, parent or elementwise mode */
	PERFDB_GRID_ROUTE_SKIP,         /* assigned to `skip` */
};

/*
 * Route a kernel type (spec §1): *pattern gets the pattern name for
 * PERFDB_GRID_ROUTE_PATTERN.
 */
enum perfdb_grid_route perfdb_grid_route(const struct perfdb_grid_config *cfg,
					 const struct perfdb_opmap *opmap,
					 const char *kernel, const char **pattern);

/* ---- the stage ------------------------------------------------------------------ */

enum perfdb_grid_file_status {
	PERFDB_GRID_FILE_APPENDED,      /* rows appended */
	PERFDB_GRID_FILE_NO_GENERATOR,  /* routing found no generator */
	PERFDB_GRID_FILE_NO_TEMPLATE,   /* no data row or no `Input Shapes` column */
	PERFDB_GRID_FILE_NO_NEW_ROWS,   /* a generator ran, 0 new rows */
};

struct perfdb_grid_file {
	char *path;
	char *kernel;
	const char *pattern;         /* NULL without a generator */
	enum perfdb_grid_file_status status;
	size_t candidates;           /* rows the generator produced */
	size_t sampled;              /* after the --rows cap */
	size_t hbm_filtered;
	size_t time_filtered;        /* over --max-row-seconds on the table's device */
	size_t duplicates;
	size_t appended;
	char **cols_added;
	size_t ncols_added;
	bool written;
};

struct perfdb_grid_result {
	struct perfdb_grid_file *files;
	size_t nfiles;
	size_t appended;
	size_t written;
};

void perfdb_grid_result_release(struct perfdb_grid_result *r);

struct perfdb_grid_opts {
	const char *db_dir;
	const struct perfdb_grid_config *cfg;
	const struct perfdb_opmap *opmap;     /* NULL: none */
	const struct perfdb_grid_models *models;   /* the resolved models */
	bool models_given;           /* GEMM (N,K) from the models, not the full grid */
	size_t rows;                 /* cap per CSV, 0 = none */
	bool use_rng;                /* sample with seed (else: the first rows) */
	uint64_t seed;
	uint64_t max_hbm_bytes;      /* 0 disables the filter */
	/*
	 * Rows whose replay (the warm-up and microbench's default 30 samples,
	 * 32 calls of the row's roofline time) on the table's device would
	 * exceed max_row_s are left out; the device is the deepest component
	 * of the table's path that reg knows, and one without the peaks the
	 * row needs limits nothing.  reg NULL or max_row_s <= 0: no limit.
	 */
	const struct perfdb_device_registry *reg;
	double max_row_s;
	bool dry_run;                /* nothing is written, no lock */
	double lock_timeout;         /* < 0: default */
	/* optional callbacks */
	void (*start)(void *ctx);   /* the CSVs are listed: work begins */
	void (*progress)(void *ctx, size_t done, size_t total);   /* bytes of tables */
	void (*memory)(void *ctx, const char *file, size_t filtered, size_t total);
	/* rows left out by max_row_s, with the device they were judged on */
	void (*slow)(void *ctx, const char *file, const char *device, size_t filtered, size_t total);
	void *ctx;
};

/*
 * List the CSVs of o->db_dir (recursive, sorted, skipping hidden entries,
 * reports/ and `*.tmp.csv`), build every routed table's new rows in memory,
 * then write the changed tables atomically under the database lock.  Any
 * error before the writes leaves every table as it was.
 */
int perfdb_grid_run(const struct perfdb_grid_opts *o, struct perfdb_grid_result *res,
		    struct perfdb_err *err);

/* Byte budget of --max-hbm-gb: int(gb * 2^30); 0 for gb <= 0. */
uint64_t perfdb_grid_hbm_budget(double gb);

/* ---- one run from its request (session.c) ------------------------------- */

struct perfdb_grid_request {
	const char *db_dir;                  /* resolved */
	const char *grid_config;             /* NULL: the installed grid.yaml */
	const char *const *model_configs;    /* --model-config paths */
	size_t nmodel_configs;
	const char *targets;                 /* --target-models, comma-separated; NULL: none */
	const char *op_mapping;              /* NULL: <db_dir>/op_mapping.yaml when present */
	bool seed_given;                     /* else a seed is drawn when rows are sampled */
	/* rows, seed, max_hbm_bytes, dry_run, lock_timeout and the callbacks;
	 * the rest is filled from what the session loads */
	struct perfdb_grid_opts base;
};

struct perfdb_grid_session {
	struct perfdb_grid_config *cfg;
	char *cfg_path;
	struct perfdb_grid_models loaded;    /* from model_configs */
	struct perfdb_grid_models models;    /* resolved */
	char **ids;                          /* --target-models split */
	size_t nids;
	struct perfdb_opmap *opmap;          /* NULL: none */
	char *opmap_file;
	bool seed_chosen;                    /* the seed was drawn */
	bool bad_targets;                    /* the error is --target-models' */
	struct perfdb_grid_opts go;          /* what perfdb_grid_run got */
	struct perfdb_grid_result res;
};

/*
 * Load what rq names, then perfdb_grid_run.  s is the caller's to release,
 * also after an error (its res says which tables were already replaced).
 */
int perfdb_grid_session_run(const struct perfdb_grid_request *rq, struct perfdb_grid_session *s,
			    struct perfdb_err *err);
void perfdb_grid_session_release(struct perfdb_grid_session *s);
/*
 * The run for people (grid_text.c): the header the reference prints once
 * the tables are found (rows: --rows, 0 or less for none; gb: --max-hbm-gb),
 * and the closing summary of what was (or, dry, would be) appended.
 */
int perfdb_grid_session_header(const struct perfdb_grid_session *s, long rows, double gb,
			       struct perfdb_strbuf *out);
int perfdb_grid_session_text(const struct perfdb_grid_session *s, const char *db,
			     struct perfdb_strbuf *out);
/* "[MEMORY] <file>: filtered N/M rows exceeding <budget> HBM budget" (the
 * budget as memory_estimator.py's format_bytes writes it) and "[TIME] ...",
 * each a line. */
int perfdb_grid_memory_text(const char *file, size_t filtered, size_t total, uint64_t budget,
			    struct perfdb_strbuf *out);
int perfdb_grid_slow_text(const char *file, const char *device, size_t filtered, size_t total,
			  double max_row_s, struct perfdb_strbuf *out);
/* The run as JSON (grid_json.c; keys in docs/grid.md), a newline after it. */
int perfdb_grid_session_json(const struct perfdb_grid_session *s, const char *db,
			     struct perfdb_strbuf *out);

#endif
