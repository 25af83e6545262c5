/*
 * Fuzz target: the PyTorch Chrome-trace reader (src/parse/chrome_trace.c,
 * src/parse/chrome_trace.h).
 *
 * The input is the trace itself (JSON, or gzip when it starts with the
 * magic bytes).  It is read with both sinks per op, then per kernel, then
 * with none.  Invariants checked: a read returns 0, -PERFDB_EPARSE or
 * -PERFDB_ENOMEM (never another code: the sinks accept everything) with a
 * message; every span of every row is readable; Accelerator Core is CPU or
 * GPU; a non-empty shape cell is quoted and its slot count equals those of
 * the dtype and format cells; the counts are consistent and the same
 * whether or not sinks are given.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/chrome_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count_ch(struct perfdb_span s, char c)
{
	size_t n = 0;
	for (size_t i = 0; i < s.len; i++)
		n += s.p[i] == c;
	return n;
}

/* Touch every byte so ASan sees a dangling span. */
static unsigned touch(struct perfdb_span s)
{
	if (s.len && !s.p)
		abort();
	unsigned h = 0;
	for (size_t i = 0; i < s.len; i++)
		h = h * 31 + (unsigned char)s.p[i];
	return h;
}

static volatile unsigned sink_hash;

static int check_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	(void)err;
	size_t *n = ctx;
	(*n)++;
	const struct perfdb_span all[] = {
		row->type, row->name, row->op_state, row->accel_core, row->in_shapes,
		row->in_dtypes, row->in_formats, row->out_shapes, row->out_dtypes,
		row->out_formats, row->duration,
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		sink_hash += touch(all[i]);
	for (size_t i = 0; i < PERFDB_NCOUNTERS; i++)
		if (row->counters[i].len)
			abort();
	if (row->accel_core.len != 3 ||
	    (memcmp(row->accel_core.p, "CPU", 3) != 0 && memcmp(row->accel_core.p, "GPU", 3) != 0))
		abort();
	/* shape cells are always quoted lists: `""` is no slot or one 0-d/scalar slot */
	struct perfdb_span s = row->in_shapes;
	if (s.len < 2 || s.p[0] != '"' || s.p[s.len - 1] != '"')
		abort();
	size_t k = count_ch(s, ';');
	if (count_ch(row->in_dtypes, ';') != k || count_ch(row->in_formats, ';') != k)
		abort();
	s = row->out_shapes;
	if (s.len < 2 || s.p[0] != '"' || s.p[s.len - 1] != '"' || row->op_state.len)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t ncpu = 0, ngpu = 0, nk = 0, nk_cpu = 0;
	struct perfdb_row_sink cpu = { .row = check_row, .ctx = &ncpu }, gpu = { .row = check_row, .ctx = &ngpu };
	struct perfdb_row_sink kcpu = { .row = check_row, .ctx = &nk_cpu }, kgpu = { .row = check_row, .ctx = &nk };
	struct perfdb_chrome_trace_info a, b, k;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	int rc = perfdb_chrome_trace_read_mem("fuzz.json", data, size, NULL, &cpu, &gpu, &a, &err);
	if (rc != 0 && rc != -PERFDB_EPARSE && rc != -PERFDB_ENOMEM)
		abort();
	if (rc != 0 && err.msg[0] == '\0')
		abort();
	if (rc == 0) {
		if (ncpu != a.cpu_rows || ngpu != a.gpu_rows)
			abort();
		/* one row per (call, device): never more rows than activities */
		if (a.cpu_rows + a.cpu_ops_no_shapes != a.cpu_ops || a.gpu_rows > a.activities ||
		    a.activities_linked > a.activities || a.kernels > a.activities ||
		    a.kernels_unmatched != a.activities - a.activities_linked ||
		    a.cpu_ops + a.activities + a.launches + a.legacy_events > a.events ||
		    (a.activities && !a.gpu_rows))
			abort();
		if (memchr(a.gpu_name, '\0', sizeof(a.gpu_name)) == NULL)
			abort();
	}
	struct perfdb_chrome_trace_opts pk = { .per_kernel = 1 };
	int rck = perfdb_chrome_trace_read_mem("fuzz.json", data, size, &pk, &kcpu, &kgpu, &k, &err);
	if (rck != rc)
		abort();
	if (rc == 0 && (nk != a.kernels || nk_cpu != ncpu))
		abort();
	int rc2 = perfdb_chrome_trace_read_mem("fuzz.json", data, size, NULL, NULL, NULL, &b, &err);
	if (rc2 != rc)
		abort();
	if (rc == 0 && memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	(void)perfdb_chrome_trace_read_mem("fuzz.json", data, size, NULL, NULL, NULL, NULL, NULL);
	return 0;
}
