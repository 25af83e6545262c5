/*
 * Per-kernel device records -> per-row kernel report (backend/kernel_report.h).
 * No CUDA here: the CUDA backend feeds it CUPTI's records, the unit tests
 * feed it recorded dumps.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "backend/kernel_report.h"
#include "perfdb/stats.h"

int perfdb_kernel_recs_add(struct perfdb_kernel_recs *r, const char *name, uint64_t start, uint64_t end)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		void *p = realloc(r->v, cap * sizeof(*r->v));
		if (!p)
			return -PERFDB_ENOMEM;
		r->v = p;
		r->cap = cap;
	}
	char *s = strdup(name ? name : "?");
	if (!s)
		return -PERFDB_ENOMEM;
	r->v[r->n++] = (struct perfdb_kernel_rec){ s, start, end };
	return 0;
}

void perfdb_kernel_recs_release(struct perfdb_kernel_recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int perfdb_kernel_recs_parse(const char *text, struct perfdb_kernel_recs *out, struct perfdb_err *err)
{
	size_t lineno = 0;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		lineno++;
		const char *q = p;
		p = eol ? eol + 1 : p + len;
		while (len && (q[len - 1] == '\r' || q[len - 1] == ' '))
			len--;
		if (len == 0 || q[0] == '#')
			continue;
		char *e1, *e2;
		unsigned long long s = strtoull(q, &e1, 10);
		if (e1 == q || *e1 != '\t')
			return perfdb_err_set(err, PERFDB_EPARSE, "kernel dump line %zu: expected start_ns<TAB>end_ns<TAB>name",
					      lineno);
		unsigned long long e = strtoull(e1 + 1, &e2, 10);
		if (e2 == e1 + 1 || *e2 != '\t' || e < s || (size_t)(e2 + 1 - q) >= len)
			return perfdb_err_set(err, PERFDB_EPARSE, "kernel dump line %zu: bad end time or no name", lineno);
		size_t nlen = len - (size_t)(e2 + 1 - q);
		char *name = strndup(e2 + 1, nlen);
		if (!name)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		int rc = perfdb_kernel_recs_add(out, name, s, e);
		free(name);
		if (rc < 0)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	return 0;
}

void perfdb_kernel_recs_dump(const struct perfdb_kernel_recs *r, struct perfdb_strbuf *out)
{
	for (size_t i = 0; i < r->n; i++) {
		perfdb_strbuf_addf(out, "%llu\t%llu\t", (unsigned long long)r->v[i].start,
				   (unsigned long long)r->v[i].end);
		for (const char *c = r->v[i].name; *c; c++)
			perfdb_strbuf_addch(out, *c == '\n' || *c == '\t' ? ' ' : *c);
		perfdb_strbuf_addch(out, '\n');
	}
}

static int has(const char *lower, const char *s)
{
	return strstr(lower, s) != NULL;
}

/* Family names of the backend's own kernels: cuk_<op>_kernel -> perfdb_<op>. */
static const char *const own[][2] = {
	/* longer names first: cuk_add_rmsnorm is not cuk_add */
	{ "cuk_add_rmsnorm", "perfdb_add_rmsnorm" }, { "cuk_masked_fill", "perfdb_masked_fill" },
	{ "cuk_block_copy", "perfdb_block_copy" },   { "cuk_argmax", "perfdb_argmax" },
	{ "cuk_convert", "perfdb_convert" },
	{ "cuk_add", "perfdb_add" },         { "cuk_rmsnorm", "perfdb_rmsnorm" },
	{ "cuk_swiglu", "perfdb_swiglu" },   { "cuk_softmax", "perfdb_softmax" },
	{ "cuk_gather", "perfdb_gather" },   { "cuk_transpose", "perfdb_transpose" },
	{ "cuk_dequant", "perfdb_dequant" }, { "cuk_attention", "perfdb_attention" },
	{ "cuk_scatter", "perfdb_scatter" }, { "cuk_copy", "perfdb_copy" },
};

const char *perfdb_kernel_family(const char *name)
{
	char lower[512];
	size_t i = 0;
	for (; name && name[i] && i + 1 < sizeof(lower); i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	if (has(lower, "cuk_flush") || has(lower, "cuk_spin"))
		return "timing";
	for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++)
		if (has(lower, own[k][0]))
			return own[k][1];
	if (has(lower, "nccl"))
		return "nccl";
	if (has(lower, "splitkreduce") || has(lower, "splitk_reduce"))
		return "gemm_splitk_reduce";
	if (has(lower, "flash") || has(lower, "fmha") || has(lower, "attention") || has(lower, "attn"))
		return "attention";
	if (has(lower, "gemm") || has(lower, "xmma") || has(lower, "cutlass") || has(lower, "gemv") ||
	    has(lower, "matmul") || has(lower, "sm90_") || has(lower, "nvjet"))
		return "gemm";
	if (has(lower, "memcpy") || has(lower, "memset"))
		return "memcpy";
	if (has(lower, "radixsort") || has(lower, "radix_sort"))   /* CUB's sorts (the cuda backend's Sort) */
		return "sort";
	return "other";
}

static void row_release(struct perfdb_kernel_row *w)
{
	free(w->op);
	free(w->used);
	free(w->name);
}

int perfdb_kernel_report_add(struct perfdb_kernel_report *rep, const char *op, size_t line, const char *used,
			     const struct perfdb_kernel_recs *recs, double op_calls, struct perfdb_err *err)
{
	double *d = malloc((recs->n ? recs->n : 1) * sizeof(double));
	char *done = calloc(recs->n ? recs->n : 1, 1);
	int rc = 0;
	if (!d || !done) {
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < recs->n; i++) {
		const char *name = recs->v[i].name;
		const char *fam = perfdb_kernel_family(name);
		if (done[i] || strcmp(fam, "timing") == 0)
			continue;
		size_t n = 0;
		for (size_t j = i; j < recs->n; j++) {
			if (done[j] || strcmp(recs->v[j].name, name) != 0)
				continue;
			done[j] = 1;
			d[n++] = (double)(recs->v[j].end - recs->v[j].start) * 1e-3;
		}
		if (rep->n == rep->cap) {
			size_t cap = rep->cap ? 2 * rep->cap : 32;
			void *p = realloc(rep->v, cap * sizeof(*rep->v));
			if (!p) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
				goto out;
			}
			rep->v = p;
			rep->cap = cap;
		}
		struct perfdb_kernel_row *w = &rep->v[rep->n];
		memset(w, 0, sizeof(*w));
		struct perfdb_stats st;
		perfdb_stats_compute(d, n, &st);
		w->op = strdup(op);
		w->used = strdup(used ? used : "");
		w->name = strdup(name);
		if (!w->op || !w->used || !w->name) {
			row_release(w);
			rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			goto out;
		}
		w->line = line;
		w->family = fam;
		w->records = n;
		w->calls = op_calls > 0 ? (double)n / op_calls : 0;
		w->median_us = st.median;
		w->mean_us = st.mean;
		w->min_us = st.min;
		rep->n++;
	}
out:
	free(d);
	free(done);
	return rc;
}

void perfdb_kernel_report_release(struct perfdb_kernel_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		row_release(&rep->v[i]);
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}

static void csv_field(struct perfdb_strbuf *b, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		perfdb_strbuf_addstr(b, s);
		return;
	}
	perfdb_strbuf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			perfdb_strbuf_addch(b, '"');
		perfdb_strbuf_addch(b, *s);
	}
	perfdb_strbuf_addch(b, '"');
}

void perfdb_kernel_report_csv(const struct perfdb_kernel_report *rep, struct perfdb_strbuf *out)
{
	perfdb_strbuf_addstr(out, "Operator,Line,Kernel Used,Kernel Name,Kernel Family,Calls,"
				  "Device Duration(us),Mean(us),Min(us)\n");
	for (size_t i = 0; i < rep->n; i++) {
		const struct perfdb_kernel_row *w = &rep->v[i];
		csv_field(out, w->op);
		perfdb_strbuf_addf(out, ",%zu,", w->line);
		csv_field(out, w->used);
		perfdb_strbuf_addch(out, ',');
		csv_field(out, w->name);
		perfdb_strbuf_addf(out, ",%s,%.3f,%.3f,%.3f,%.3f\n", w->family, w->calls, w->median_us, w->mean_us,
				   w->min_us);
	}
}
