/*
 * A database's op_mapping.yaml: the file TensorCast's ProfilingDataSource
 * reads to route a simulator op (`aten.mm.default`) to a table
 * (`MatMulV2.csv`, `aten.mm.csv`).  perfdb writes one for the databases
 * that parse (PyTorch traces) and microbench --backend cpu|cuda produce
 * (docs/database.md "op_mapping.yaml": the format, the generator's rules
 * and the writing rules).
 *
 * The generator starts from the upstream mapping perfdb ships as data
 * (data/op_mapping/, provenance beside it) and keeps what the tables of
 * the directory can answer: upstream entries copied verbatim for the
 * Ascend kernel tables present, entries keyed by the simulator's op for
 * the PyTorch op tables present.
 */
#ifndef PERFDB_OP_MAPPING_H
#define PERFDB_OP_MAPPING_H

#include <stdbool.h>
#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/* The shipped upstream mapping, for perfdb_data_path(). */
#define PERFDB_OPMAP_UPSTREAM "op_mapping/vllm0.18.0_torch2.9.0_cann8.5.yaml"
/* The file the simulator reads in a database directory. */
#define PERFDB_OPMAP_FILE "op_mapping.yaml"
/* Start of the line that marks perfdb's own file; the hash of the body after it follows. */
#define PERFDB_OPMAP_MARKER "# perfdb-op-mapping fnv1a64:"

/*
 * The op_mapping.yaml text for a directory holding the tables
 * stems[0..nstems) (file names without ".csv", any order, duplicates
 * ignored), from the upstream mapping text up[0..uplen) (named upname in
 * the file's header and in messages).  The output is a function of its
 * inputs only (no date, no path): the same tables give the same bytes.
 * out is reset first.  -PERFDB_EPARSE (upname:line:col) when the upstream
 * text is not a mapping perfdb can copy from.
 */
int perfdb_opmap_generate(const char *upname, const char *up, size_t uplen,
			  const char *const *stems, size_t nstems, struct perfdb_strbuf *out,
			  struct perfdb_err *err);

/*
 * The PyTorch op of a table stem (docs/chrome_trace.md "Table names",
 * inverted): `aten.mm` -> ns "aten", op "mm", no overload;
 * `aten.add%2ETensor` -> "aten", "add", "Tensor".  Writes
 * "<ns>.<op>" into base and the overload ("" for none) into ovl.  Returns
 * 1 for an op name (identifiers only), 0 for any other stem.
 */
int perfdb_opmap_torch_stem(const char *stem, struct perfdb_strbuf *base,
			    struct perfdb_strbuf *ovl);

/* 1 when text is perfdb's own op_mapping.yaml, unedited (its marker's hash matches). */
int perfdb_opmap_is_own(const char *text, size_t len);

/* --op-mapping: what a command does with the database's mapping. */
enum perfdb_opmap_mode {
	PERFDB_OPMAP_AUTO = 0,   /* write <db>/op_mapping.yaml unless the user has one */
	PERFDB_OPMAP_NONE,       /* write nothing */
	PERFDB_OPMAP_PATH,       /* write the mapping to path; the database's file is left alone */
};

struct perfdb_opmap_opts {
	enum perfdb_opmap_mode mode;
	const char *path;                              /* PERFDB_OPMAP_PATH */
	void (*warn)(void *ctx, const char *msg);      /* the kept-file warning (may be NULL) */
	void *ctx;
};

/* "auto", "none", or anything else: a path. */
void perfdb_opmap_opts_parse(const char *arg, struct perfdb_opmap_opts *o);

/*
 * Before anything is written: a PATH must name a file that can be created
 * (not empty, not a directory, its directory existing).  -PERFDB_EINVAL
 * naming --op-mapping otherwise.
 */
int perfdb_opmap_opts_check(const struct perfdb_opmap_opts *o, struct perfdb_err *err);

enum perfdb_opmap_outcome {
	PERFDB_OPMAP_NOTHING = 0,  /* none, or a directory without tables */
	PERFDB_OPMAP_CREATED,      /* <db>/op_mapping.yaml written where there was none */
	PERFDB_OPMAP_REGENERATED,  /* perfdb's own unedited file rewritten (its tables changed) */
	PERFDB_OPMAP_UNCHANGED,    /* perfdb's own file, already up to date */
	PERFDB_OPMAP_KEPT,         /* the user's file, left as it is */
	PERFDB_OPMAP_WROTE_PATH,   /* written to opts->path */
};

/*
 * Apply opts to database directory dbdir, whose lock the caller holds:
 * generate the mapping for its tables (top-level *.csv) from the shipped
 * upstream file and write it atomically where opts says.  A user's file
 * (not perfdb's, or edited) is never changed; when it lacks entries for
 * tables the generated mapping names, warn() gets one line naming the
 * file, the first such tables and the --op-mapping PATH way out.
 * *outcome (may be NULL) tells what happened.
 */
int perfdb_opmap_update(const char *dbdir, const struct perfdb_opmap_opts *opts,
			enum perfdb_opmap_outcome *outcome, struct perfdb_err *err);

/* ---- reading an op_mapping.yaml (op_mapping.c) ------------------------- */

/* One kernel type's metadata. */
struct perfdb_opmap_kernel {
	char *kernel;
	bool zero_cost, composite, communication;
	char *query_mode;               /* NULL if absent */
	char *alternates_of;            /* parent kernel_type, NULL for a primary */
};

struct perfdb_opmap {
	char *path;
	struct perfdb_opmap_kernel *v;
	size_t n, cap;
};

/* Load an op_mapping.yaml (reference config.load_op_mapping_metadata). */
int perfdb_opmap_load(struct perfdb_opmap **out, const char *path,
			   struct perfdb_err *err);
int perfdb_opmap_load_mem(struct perfdb_opmap **out, const char *name,
			       const char *data, size_t len, struct perfdb_err *err);
void perfdb_opmap_free(struct perfdb_opmap *m);
/* Kernel types with metadata (the reference prints `op_mapping: True` when > 0). */
size_t perfdb_opmap_count(const struct perfdb_opmap *m);

/* The metadata of kernel, or NULL. */
const struct perfdb_opmap_kernel *perfdb_opmap_find(const struct perfdb_opmap *m,
						    const char *kernel);

#endif
