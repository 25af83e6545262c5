/* Shared replay ingest for the writeback and microbench commands. */
#include "replay_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "perfdb/signature.h"

int replay_ops_normalize(struct opt_list *ops, int aten_ok, const struct cmd_help *h)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT, bad = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < ops->n; i++) {
		/* comma lists are accepted too: --ops MatMulV2,RmsNorm */
		perfdb_sig_normalize_op(ops->v[i], &sb);
		/* the profiler's name (aten::mm) as parse names its table (aten.mm) */
		if (aten_ok && sb.buf && strstr(sb.buf, "::")) {
			struct perfdb_strbuf stem = PERFDB_STRBUF_INIT;
			if (perfdb_parse_op_table_name(sb.buf, sb.len, &stem) == 0 && stem.buf) {
				perfdb_strbuf_reset(&sb);
				perfdb_strbuf_add(&sb, stem.buf, stem.len);
			}
			perfdb_strbuf_release(&stem);
		}
		if (!perfdb_replay_op_known(sb.buf) && !(aten_ok && perfdb_replay_aten_target(sb.buf)))
			perfdb_strbuf_addf(&bad, "%s%s", bad.len ? ", " : "", sb.buf);
		ops->v[i] = strdup(sb.buf);   /* freed by replay_ops_release */
	}
	int rc = 0;
	if (bad.len) {
		struct perfdb_strbuf avail = PERFDB_STRBUF_INIT;
		for (size_t i = 0; i < perfdb_replay_nops; i++)
			perfdb_strbuf_addf(&avail, "%s%s", i ? ", " : "", perfdb_replay_ops[i]);
		if (aten_ok)
			perfdb_strbuf_addstr(&avail, "; with --backend cpu|cuda also the PyTorch op tables of docs/ops.md "
					     "(aten.mm or aten::mm, ...)");
		rc = opt_usage_error(h, "Unsupported --ops: %s. Available: %s", bad.buf, avail.buf);
		perfdb_strbuf_release(&avail);
	}
	perfdb_strbuf_release(&sb);
	perfdb_strbuf_release(&bad);
	return rc;
}

void replay_ops_release(struct opt_list *ops)
{
	for (size_t i = 0; i < ops->n; i++)
		free((char *)ops->v[i]);
	free(ops->v);
	ops->v = NULL;
	ops->n = 0;
}

static const char *wb_replaced(const void *ctx, size_t i)
{
	const struct perfdb_wb_result *r = ctx;
	return r->files[i].written ? r->files[i].path : NULL;
}

static struct perfdb_finish_opts finish_opts(const struct ingest_opts *o)
{
	return (struct perfdb_finish_opts){
		.dbdir = o->dbdir, .ops = o->ops->n ? o->ops->v : NULL, .nops = o->ops->n,
		.missing_only = o->missing_only, .prune = o->prune, .ep = o->ep,
		.status = o->status, .ts = o->ts, .seen = o->seen, .op_mapping = o->op_mapping,
		.aten = o->aten,
	};
}

/* What a finished run prints: writeback's warnings, then the report or the error. */
int replay_print_finish(const struct ingest_opts *o, int rc, const struct perfdb_finish_result *r,
			const struct perfdb_err *err)
{
	if (r->written_back)
		for (size_t i = 0; i < r->wb.nwarnings; i++)
			printf("%s\n", r->wb.warnings[i]);
	if (rc < 0) {
		rc = cli_error(o->cmd, err);
		cli_replaced(o->cmd, wb_replaced, &r->wb, r->wb.nfiles);
	} else if (o->json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		if (perfdb_finish_result_json(r, o->status, &js) < 0)
			rc = cli_oom(o->cmd);
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
	} else {
		printf("%s\n", r->md.buf);
		printf("\n[REPORT] %s\n[REPORT] %s\n", r->md_path, r->csv_path);
	}
	return rc < 0 ? 1 : rc;
}

int replay_ingest(const struct ingest_opts *o, char *const *files, size_t nfiles)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_finish_opts fo = finish_opts(o);
	struct perfdb_finish_result r;
	int rc = perfdb_replay_ingest(&fo, files, nfiles, &r, &err);
	rc = replay_print_finish(o, rc, &r, &err);
	perfdb_finish_result_release(&r);
	return rc;
}

int replay_finish(const struct ingest_opts *o, struct perfdb_measures *m)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_finish_opts fo = finish_opts(o);
	struct perfdb_finish_result r;
	int rc = perfdb_replay_finish(&fo, m, &r, &err);
	rc = replay_print_finish(o, rc, &r, &err);
	perfdb_finish_result_release(&r);
	return rc;
}
