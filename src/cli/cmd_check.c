/*
 * perfdb check: validate database tables without changing them.
 *
 * Per table: the CSV must read cleanly (quoting, UTF-8, field counts,
 * unique header names) — otherwise an error; then, as warnings, shape cells
 * that do not parse, duration cells that are not numbers or are negative,
 * NaN or infinite, and rows sharing one signature (docs/spec/replay.md §1b: only
 * the first of them is ever matched by writeback).
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "dbopts.h"
#include "perfdb/fsio.h"
#include "perfdb/schema.h"
#include "perfdb/shape.h"
#include "perfdb/stats.h"
#include "perfdb/table.h"

#define MAX_PRINTED_WARNINGS 20

/* the reference's flags (the database flags every reference tool has): prefixes resolve among them first */
static const char *const reference_flags[] = {
	OPT_REFERENCE_DB, NULL
};

const struct cmd_help cmd_check_help = {
	.name = "check",
	.reference = reference_flags,
	.usage = "perfdb check [--json] [--strict] [database flags] [PATH ...]",
	.summary = "validate database tables (CSV syntax, shapes, durations, duplicates)",
	.description =
		"Reads every table of the database directory (or the files and directories\n"
		"given) and reports malformed CSV as errors, and unparsable shapes, bad\n"
		"durations and duplicate signatures as warnings. Nothing is written.\n"
		"Exit status: 0 when no table has an error, 1 otherwise (--strict: or a warning).",
	.positional = "  PATH        a table (.csv) or a directory searched recursively for *.csv\n"
		      "              (default: the database directory of the database flags)",
	.max_positional = 1024,
};

struct files {
	char **v;
	size_t n, cap;
};

static int files_add(struct files *f, const char *path)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;
		char **nv = realloc(f->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		f->v = nv;
		f->cap = cap;
	}
	f->v[f->n] = strdup(path);
	return f->v[f->n] ? (int)++f->n * 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* *.csv under a directory, sorted; hidden entries and reports/ skipped. */
static int visit_csv(void *ctx, const char *path, const char *name, int is_dir)
{
	if (name[0] == '.')
		return 0;
	if (is_dir)
		return strcmp(name, "reports") != 0;
	if (ends_with(name, ".csv") && files_add(ctx, path) < 0)
		return -PERFDB_ENOMEM;
	return 0;
}

static int collect(const char *dir, struct files *out)
{
	struct perfdb_err err;
	return perfdb_dir_walk(dir, PERFDB_WALK_NO_LINKS, visit_csv, out, &err);
}

struct report {
	json_t *tables;
	size_t errors, warnings;
	bool json;
};

struct table_report {
	const char *path;
	json_t *warnings;   /* array of {"line": n, "message": s} */
	size_t nwarn;
};

static void warn(struct table_report *tr, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(struct table_report *tr, size_t line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(tr->warnings, json_pack("{s:I, s:s}", "line", (json_int_t)line,
						      "message", msg));
	tr->nwarn++;
}

/* Order warnings by line, keeping the order of checks within a line. */
static void sort_warnings(json_t *arr)
{
	size_t n = json_array_size(arr);
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0; j--) {
			json_t *a = json_array_get(arr, j - 1), *b = json_array_get(arr, j);
			if (json_integer_value(json_object_get(a, "line")) <=
			    json_integer_value(json_object_get(b, "line")))
				break;
			json_incref(a);
			json_array_set(arr, j - 1, b);
			json_array_set_new(arr, j, a);
		}
	}
}

static void check_shapes(const struct perfdb_table *t, struct table_report *tr,
			 const char *col)
{
	long c = perfdb_table_col(t, col);
	if (c < 0)
		return;
	struct perfdb_slots slots;
	perfdb_slots_init(&slots);
	for (size_t r = 0; r < t->nrows; r++) {
		const char *cell = perfdb_table_get(t, r, c);
		struct perfdb_span sp = { cell, strlen(cell) };
		if (perfdb_shape_split_slots(sp, &slots) < 0)
			break;
		for (size_t s = 0; s < slots.n; s++) {
			int64_t dims[PERFDB_SHAPE_MAX_DIMS];
			size_t nd;
			struct perfdb_err e;
			perfdb_err_clear(&e);
			if (perfdb_shape_parse_dims(slots.v[s], dims, PERFDB_SHAPE_MAX_DIMS, &nd, &e) < 0) {
				warn(tr, t->rows[r].line, "'%s' slot %zu: %s", col, s, e.msg);
				break;
			}
		}
	}
	perfdb_slots_release(&slots);
}

static size_t check_durations(const struct perfdb_table *t, struct table_report *tr)
{
	static const char *const latency_cols[] = {
		PERFDB_COL_MB_DUR, PERFDB_COL_PROF_AVG, PERFDB_COL_DURATION,
	};
	long lc[3];
	for (int i = 0; i < 3; i++)
		lc[i] = perfdb_table_col(t, latency_cols[i]);
	for (size_t c = 0; c < t->ncols; c++) {
		if (!strstr(t->cols[c], PERFDB_COL_DURATION))
			continue;
		for (size_t r = 0; r < t->nrows; r++) {
			const char *cell = t->rows[r].cells[c];
			double v;
			if (!cell[0])
				continue;
			if (perfdb_stats_parse_double(cell, strlen(cell), &v) < 0)
				warn(tr, t->rows[r].line, "'%s': not a number: '%s'", t->cols[c], cell);
			else if (!isfinite(v) || v < 0)
				warn(tr, t->rows[r].line, "'%s': invalid duration '%s'", t->cols[c], cell);
		}
	}
	/* Rows the simulator can use: the first present latency column with a finite value > 0. */
	size_t usable = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		for (int i = 0; i < 3; i++) {
			if (lc[i] < 0)
				continue;
			const char *cell = perfdb_table_get(t, r, lc[i]);
			double v;
			if (perfdb_stats_parse_double(cell, strlen(cell), &v) == 0 && isfinite(v) && v > 0) {
				usable++;
				break;
			}
		}
	}
	return usable;
}

static size_t check_duplicates(const struct perfdb_table *t, struct table_report *tr,
			       const char *op)
{
	struct perfdb_sig_index ix;
	struct perfdb_err e;
	perfdb_sig_index_init(&ix);
	size_t dups = 0;
	if (perfdb_table_index(t, op, &ix, &e) == 0) {
		for (size_t r = 0; r < t->nrows; r++) {
			struct perfdb_strbuf sig = PERFDB_STRBUF_INIT;
			if (perfdb_table_row_sig(t, r, op, &sig) == 0) {
				const struct perfdb_sig_index_entry *en = perfdb_sig_index_find(&ix, sig.buf);
				if (en && en->row != r) {
					dups++;
					warn(tr, t->rows[r].line,
					     "duplicate signature of line %zu (writeback only updates the first): %s",
					     t->rows[en->row].line, sig.buf);
				}
			}
			perfdb_strbuf_release(&sig);
		}
	}
	perfdb_sig_index_release(&ix);
	return dups;
}

static void check_one(const char *path, struct report *rep)
{
	struct perfdb_table t;
	struct perfdb_err err;
	perfdb_table_init(&t);
	perfdb_err_clear(&err);
	json_t *jt = json_object();
	json_object_set_new(jt, "path", json_string(path));
	if (perfdb_table_load(&t, path, &err) < 0) {
		rep->errors++;
		json_object_set_new(jt, "error", json_string(err.msg));
		if (!rep->json)
			printf("%s: error: %s\n", path, err.msg);
		json_array_append_new(rep->tables, jt);
		perfdb_table_release(&t);
		return;
	}
	struct table_report tr = { .path = path, .warnings = json_array() };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char op[512];
	snprintf(op, sizeof(op), "%.*s", (int)(strlen(base) - 4), base);

	size_t dups = 0;
	int is_comm = strncmp(op, "hcom_", 5) == 0;
	if (is_comm) {
		const char *need[] = { PERFDB_COL_MESSAGE_BYTES, PERFDB_COL_NUM_DEVICES };
		for (int i = 0; i < 2; i++)
			if (perfdb_table_col(&t, need[i]) < 0)
				warn(&tr, 1, "missing column '%s' (the simulator skips this table)", need[i]);
	} else {
		const char *need[] = { PERFDB_COL_IN_SHAPES, PERFDB_COL_OUT_SHAPES };
		for (int i = 0; i < 2; i++)
			if (perfdb_table_col(&t, need[i]) < 0)
				warn(&tr, 1, "missing column '%s'", need[i]);
		check_shapes(&t, &tr, PERFDB_COL_IN_SHAPES);
		check_shapes(&t, &tr, PERFDB_COL_OUT_SHAPES);
		dups = check_duplicates(&t, &tr, op);
	}
	size_t usable = check_durations(&t, &tr);
	sort_warnings(tr.warnings);
	rep->warnings += tr.nwarn;
	json_object_set_new(jt, "rows", json_integer((json_int_t)t.nrows));
	json_object_set_new(jt, "columns", json_integer((json_int_t)t.ncols));
	json_object_set_new(jt, "with_duration", json_integer((json_int_t)usable));
	json_object_set_new(jt, "duplicate_rows", json_integer((json_int_t)dups));
	json_object_set_new(jt, "warnings", tr.warnings);
	if (!rep->json) {
		printf("%s: %zu rows, %zu columns, %zu with a duration, %zu duplicate rows\n",
		       path, t.nrows, t.ncols, usable, dups);
		for (size_t i = 0; i < tr.nwarn && i < MAX_PRINTED_WARNINGS; i++) {
			json_t *w = json_array_get(tr.warnings, i);
			printf("%s:%lld: warning: %s\n", path,
			       (long long)json_integer_value(json_object_get(w, "line")),
			       json_string_value(json_object_get(w, "message")));
		}
		if (tr.nwarn > MAX_PRINTED_WARNINGS)
			printf("%s: ... %zu more warnings (--json lists all)\n", path,
			       tr.nwarn - MAX_PRINTED_WARNINGS);
	}
	json_array_append_new(rep->tables, jt);
	perfdb_table_release(&t);
}

int cmd_check(int argc, char **argv)
{
	struct perfdb_db_opts o = { 0 };
	bool json = false, strict = false;
	struct opt opts[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print one JSON object: tables[] (path, rows, columns, with_duration, "
			  "duplicate_rows, warnings[] of {line, message}, or error), errors, warnings" },
		{ .type = OPT_FLAG, .name = "strict", .dest = &strict,
		  .help = "exit 1 on warnings too" },
		DB_OPTIONS(&o),
		{ .type = OPT_END },
	};
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (!pos)
		return 1;
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_check_help, pos, &npos);
	if (rc) {
		free(pos);
		return rc == 1 ? 0 : rc;
	}
	struct perfdb_device_registry reg;
	perfdb_device_registry_init(&reg);
	struct files files = { 0 };
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_strbuf dir = PERFDB_STRBUF_INIT;

	if ((rc = db_opts_finish(&o, &reg, &cmd_check_help)))
		goto out;
	if (npos == 0) {
		if (perfdb_db_resolve(&o, &dir, &err) < 0) {
			rc = cli_error("check", &err);
			goto out;
		}
		if (!perfdb_is_dir(dir.buf)) {
			perfdb_err_set(&err, PERFDB_ENOENT, "database directory not found: '%s'", dir.buf);
			rc = cli_error("check", &err);
			goto out;
		}
		pos[npos++] = dir.buf;
	}
	for (size_t i = 0; i < npos; i++) {
		struct stat st;
		if (stat(pos[i], &st) < 0) {
			perfdb_err_set(&err, PERFDB_ENOENT, "no such file or directory: '%s'", pos[i]);
			rc = cli_error("check", &err);
			goto out;
		}
		if (S_ISDIR(st.st_mode) ? collect(pos[i], &files) < 0 : files_add(&files, pos[i]) < 0) {
			perfdb_err_set(&err, PERFDB_EIO, "cannot list '%s'", pos[i]);
			rc = cli_error("check", &err);
			goto out;
		}
	}
	struct report rep = { .tables = json_array(), .json = json };
	for (size_t i = 0; i < files.n; i++)
		check_one(files.v[i], &rep);
	if (json) {
		json_t *j = json_pack("{s:o, s:I, s:I}", "tables", rep.tables,
				      "errors", (json_int_t)rep.errors,
				      "warnings", (json_int_t)rep.warnings);
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
	} else {
		json_decref(rep.tables);
		printf("checked %zu table%s: %zu error%s, %zu warning%s\n", files.n,
		       files.n == 1 ? "" : "s", rep.errors, rep.errors == 1 ? "" : "s",
		       rep.warnings, rep.warnings == 1 ? "" : "s");
	}
	rc = (rep.errors || (strict && rep.warnings)) ? 1 : 0;
out:
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	free(pos);
	perfdb_strbuf_release(&dir);
	perfdb_device_registry_release(&reg);
	return rc;
}
