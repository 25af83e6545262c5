/*
 * A database row as a perfdb_op_case (docs/spec/replay.md §4 "Parsing",
 * "Building a tensor"; docs/replay.md "Tensors"): the tensors from the
 * operator layer's builder (opdef/case_build.c, which the report shares),
 * the run's context, outputs updated in place, and the memory cap that
 * fails a row too large for the machine.  No buffer is allocated here
 * (pool.c).
 */
#include <string.h>
#include <unistd.h>

#include "perfdb/dtype.h"
#include "perfdb/shape.h"
#include "replay/engine_internal.h"
#include "perfdb/schema.h"

int perfdb_engine_build_case(const char *op, const char *in_shapes, const char *in_dtypes,
			     const char *in_formats, const char *out_shapes, const char *out_dtypes,
			     const char *out_formats, struct perfdb_op_case *c, struct perfdb_err *err)
{
	return perfdb_case_build(op, in_shapes, in_dtypes, in_formats, out_shapes, out_dtypes, out_formats, c, err);
}

size_t perfdb_engine_case_bytes(const struct perfdb_op_case *c)
{
	size_t total = 0;
	for (size_t i = 0; i < c->nin; i++)
		total += c->in[i].present ? c->in[i].bytes : 0;
	for (size_t i = 0; i < c->nout; i++)
		total += c->out[i].present && !c->out[i].alias_in ? c->out[i].bytes : 0;
	return total;
}

/*
 * The most tensor memory one row may take: 60 % of the machine's physical
 * memory (a row needing more is failed, not attempted: the machine would
 * swap or the OOM killer end the run).
 */
static size_t row_max_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
	if (pages <= 0 || psz <= 0)
		return (size_t)8 << 30;
	return (size_t)((double)pages * (double)psz * 0.6);
}

static const char *row_cell(const void *ctx, const char *column)
{
	const struct case_cells *cc = ctx;
	long c = perfdb_table_col(cc->t, column);
	return c < 0 ? NULL : perfdb_table_get(cc->t, cc->r, c);
}

static void case_context(const struct perfdb_engine_opts *o, const struct case_cells *cc,
			 struct perfdb_op_case *c)
{
	c->threads = o->threads;
	c->backend_ctx = o->backend_ctx;
	c->cell = row_cell;
	c->cell_ctx = cc;
	c->ep_size = o->ep_size;
	c->comm = o->comm;
	c->rank = o->comm ? o->rank : 0;
	c->nranks = o->comm ? o->nranks : 1;
}

int case_skipped(const struct perfdb_engine_opts *o, const struct perfdb_op_impl *impl,
		 const struct perfdb_table *t, size_t r, char *why, size_t whylen)
{
	const struct perfdb_opdef *def = perfdb_opdef_get(impl->name);
	if (!def->skip)
		return 0;
	struct perfdb_op_case c;
	struct case_cells cc = { t, r };
	memset(&c, 0, sizeof(c));
	c.op = impl->name;
	c.def = def;
	case_context(o, &cc, &c);
	return def->skip(&c, why, whylen) > 0;
}

int case_build_row(const char *op, const struct perfdb_table *t, size_t r, struct perfdb_op_case *c,
		   struct perfdb_err *err)
{
#define CELL(name) perfdb_table_get(t, r, perfdb_table_col(t, name))
	return perfdb_engine_build_case(op, CELL(PERFDB_COL_IN_SHAPES), CELL(PERFDB_COL_IN_DTYPES),
					CELL(PERFDB_COL_IN_FORMATS), CELL(PERFDB_COL_OUT_SHAPES),
					CELL(PERFDB_COL_OUT_DTYPES), CELL(PERFDB_COL_OUT_FORMATS), c, err);
#undef CELL
}

int case_from_row(const struct perfdb_engine_opts *o, const char *op, const struct perfdb_op_impl *impl,
		  const struct perfdb_table *t, size_t r, size_t line, struct case_cells *cc,
		  struct perfdb_op_case *c, struct perfdb_err *err)
{
	cc->t = t;
	cc->r = r;
	PERFDB_TRY(case_build_row(op, t, r, c, err));
	if (strcmp(c->op, impl->name) != 0)   /* an aten row lowers to the impl's op (engine_run_table) */
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the row lowers to %s, not %s", op, c->op, impl->name);
	case_context(o, cc, c);
	c->line = line;
	if (c->def->inplace)
		for (size_t i = 0; i < c->nout; i++) {
			int a = c->def->inplace(c, i);
			c->out[i].alias_in = a >= 0 && (size_t)a < c->nin && c->in[a].bytes >= c->out[i].bytes ? a + 1 : 0;
		}
	size_t need = perfdb_engine_case_bytes(c), limit = o->row_max_bytes ? o->row_max_bytes : row_max_bytes();
	if (need > limit)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the row needs %.1f GiB of tensors (limit %.1f GiB, "
				      "60 %% of this machine's memory)", impl->name, (double)need / (1 << 30),
				      (double)limit / (1 << 30));
	return 0;
}
