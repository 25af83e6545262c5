/*
 * Finding and recognising profiler files (docs/spec/parse.md §1 "Inputs",
 * Decision 6: the kind of a file comes from its header, not its name).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/csv.h"
#include "perfdb/fsio.h"
#include "parse/parse.h"
#include "perfdb/schema.h"
#include "trace_source.h"

void perfdb_inputs_init(struct perfdb_inputs *in)
{
	memset(in, 0, sizeof(*in));
}

void perfdb_inputs_release(struct perfdb_inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->v[i].path);
	for (size_t i = 0; i < in->nops; i++)
		free(in->operator_details[i]);
	free(in->v);
	free(in->operator_details);
	perfdb_inputs_init(in);
}

static int header_has(const struct perfdb_csv_row *h, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < h->n; i++)
		if (h->f[i].len == n && memcmp(h->f[i].p, name, n) == 0)
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

int perfdb_parse_classify(const char *path, enum perfdb_input_kind *kind,
			  struct perfdb_err *err)
{
	int fd = perfdb_open_regular(path, err);
	if (fd < 0)
		return fd;
	char head[4096];
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	if (n < 0)
		return perfdb_err_errno(err, errno, "cannot read '%s'", path);
	size_t i = 0;
	/* SQLite (msprof --type=db, torch_npu export_type db): its schema is checked when read */
	if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0) {
		*kind = PERFDB_INPUT_ASCEND_DB;
		return 0;
	}
	if (ends_with(path, ".db"))
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: not an SQLite database (no 'SQLite "
				      "format 3' header at byte 0)", path);
	/* gzip (tensorboard_trace_handler(use_gzip=True)): only traces are */
	if (n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b) {
		*kind = PERFDB_INPUT_CHROME_TRACE;
		return 0;
	}
	if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < (size_t)n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i < (size_t)n && (head[i] == '{' || head[i] == '[')) {
		*kind = PERFDB_INPUT_CHROME_TRACE;
		return 0;
	}
	struct perfdb_csv_reader *r;
	PERFDB_TRY(perfdb_csv_open(&r, path, PERFDB_CSV_TRIM, err));
	struct perfdb_csv_row row;
	int rc = perfdb_csv_next(r, &row, err);
	if (rc > 0) {
		if (header_has(&row, PERFDB_COL_OPS_TYPE) &&
		    header_has(&row, PERFDB_COL_OPS_TASK_DUR))
			*kind = PERFDB_INPUT_OP_SUMMARY;
		else if (header_has(&row, PERFDB_COL_KD_TYPE) ||
			 header_has(&row, PERFDB_COL_DURATION) ||
			 header_has(&row, PERFDB_COL_IN_SHAPES))
			*kind = PERFDB_INPUT_KERNEL_DETAILS;
		else
			rc = perfdb_err_set(err, PERFDB_EPARSE,
				"%s: not a profiler table (expected a kernel_details header with "
				"'Type' and 'Duration(us)', or an op_summary header with 'OP Type' "
				"and 'Task Duration(us)')", path);
	} else if (rc == 0) {
		rc = perfdb_err_set(err, PERFDB_EPARSE, "%s: empty file", path);
	}
	perfdb_csv_close(r);
	return rc < 0 ? rc : 0;
}

static int add_input(struct perfdb_inputs *in, const char *path, enum perfdb_input_kind k)
{
	if (in->n == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 16;
		struct perfdb_input *nv = realloc(in->v, cap * sizeof(*nv));
		if (!nv)
			return -PERFDB_ENOMEM;
		in->v = nv;
		in->cap = cap;
	}
	in->v[in->n].path = strdup(path);
	if (!in->v[in->n].path)
		return -PERFDB_ENOMEM;
	in->v[in->n++].kind = k;
	return 0;
}

static int add_opdetails(struct perfdb_inputs *in, const char *path)
{
	if (in->nops == in->capops) {
		size_t cap = in->capops ? in->capops * 2 : 8;
		char **nv = realloc(in->operator_details, cap * sizeof(*nv));
		if (!nv)
			return -PERFDB_ENOMEM;
		in->operator_details = nv;
		in->capops = cap;
	}
	in->operator_details[in->nops] = strdup(path);
	return in->operator_details[in->nops++] ? 0 : -PERFDB_ENOMEM;
}

/* A JSON file whose first 64 KiB (after gunzip) name "traceEvents" or
 * Kineto's "schemaVersion": other JSON (configs, reports) is not input. */
static int looks_like_trace(const char *path)
{
	struct perfdb_err e;
	struct perfdb_tsrc src;
	int found = 0;
	if (perfdb_tsrc_open(&src, path, &e) == 0) {
		static const size_t cap = 65536;
		unsigned char *buf = malloc(cap + 1);
		size_t len = 0;
		long n = 1;
		while (buf && len < cap && (n = perfdb_tsrc_read(&src, buf + len, cap - len, &e)) > 0)
			len += (size_t)n;
		if (buf) {
			buf[len] = '\0';
			size_t i = 0;
			while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
				i++;
			found = i < len && (buf[i] == '{' || buf[i] == '[') &&
				(memmem(buf, len, "\"traceEvents\"", 13) || memmem(buf, len, "\"schemaVersion\"", 15));
		}
		free(buf);
	}
	perfdb_tsrc_release(&src);
	return found;
}

struct walk_ctx {
	struct perfdb_inputs *in, *summaries, *dbs;
	struct perfdb_err *err;
};

static int visit(void *vctx, const char *p, const char *nm, int is_dir)
{
	struct walk_ctx *w = vctx;
	int rc = 0;
	if (is_dir)
		return 1;
	if (strcmp(nm, "operator_details.csv") == 0) {
		rc = add_opdetails(w->in, p);
	} else if (ends_with(nm, ".csv")) {
		enum perfdb_input_kind k;
		struct perfdb_err ignore;
		/* unrecognised CSVs (reports, our own tables) are not inputs */
		if (perfdb_parse_classify(p, &k, &ignore) == 0 && k != PERFDB_INPUT_CHROME_TRACE)
			rc = add_input(k == PERFDB_INPUT_OP_SUMMARY ? w->summaries : w->in, p, k);
	} else if (ends_with(nm, ".db") && (strncmp(nm, "msprof_", 7) == 0 ||
					     strncmp(nm, "ascend_pytorch_profiler", 23) == 0)) {
		/* the profile's own exports; analysis.db and others hold no kernels */
		enum perfdb_input_kind k;
		struct perfdb_err ignore;
		if (perfdb_parse_classify(p, &k, &ignore) == 0 && k == PERFDB_INPUT_ASCEND_DB)
			rc = add_input(w->dbs, p, k);
	} else if (ends_with(nm, ".pt.trace.json") || ends_with(nm, ".pt.trace.json.gz")) {
		rc = add_input(w->in, p, PERFDB_INPUT_CHROME_TRACE);
	} else if ((ends_with(nm, ".json") || ends_with(nm, ".json.gz")) && looks_like_trace(p)) {
		/* per-rank traces named otherwise (rank-0.json.gz) */
		rc = add_input(w->in, p, PERFDB_INPUT_CHROME_TRACE);
	}
	return rc < 0 ? perfdb_err_set(w->err, PERFDB_ENOMEM, "out of memory") : 0;
}

int perfdb_parse_find_inputs(const char *path, struct perfdb_inputs *out,
			     struct perfdb_err *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return perfdb_err_set(err, PERFDB_ENOENT, "kernel_details source path not found: %s", path);
	if (!S_ISDIR(st.st_mode)) {
		enum perfdb_input_kind k;
		PERFDB_TRY(perfdb_parse_classify(path, &k, err));
		if (add_input(out, path, k) < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		return 0;
	}
	struct perfdb_inputs summaries, dbs;
	perfdb_inputs_init(&summaries);
	perfdb_inputs_init(&dbs);
	struct walk_ctx w = { out, &summaries, &dbs, err };
	int rc = perfdb_dir_walk(path, 0, visit, &w, err);
	if (rc == 0) {
		size_t kd = 0;
		for (size_t i = 0; i < out->n; i++)
			if (out->v[i].kind == PERFDB_INPUT_KERNEL_DETAILS)
				kd++;
		if (kd) {
			out->ignored_op_summary = summaries.n;
		} else {
			for (size_t i = 0; i < summaries.n && rc == 0; i++)
				if (add_input(out, summaries.v[i].path, summaries.v[i].kind) < 0)
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
		/* a profile exported both ways is read once, from its CSVs (what the reference reads) */
		if (kd || summaries.n) {
			out->ignored_db = dbs.n;
		} else {
			for (size_t i = 0; i < dbs.n && rc == 0; i++)
				if (add_input(out, dbs.v[i].path, dbs.v[i].kind) < 0)
					rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		}
		if (rc == 0 && out->n == 0)
			rc = perfdb_err_set(err, PERFDB_ENOENT,
				"No CSV files with 'kernel_details' in the filename found under: %s "
				"(nor op_summary tables, msprof_*.db / ascend_pytorch_profiler*.db "
				"profiles or *.pt.trace.json traces)", path);
	}
	perfdb_inputs_release(&summaries);
	perfdb_inputs_release(&dbs);
	return rc;
}
