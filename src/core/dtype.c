/*
 * Dtype and format spellings: see include/perfdb/dtype.h.
 *
 * Follows docs/spec/replay.md Decision 5 (signatures normalise dtype spelling)
 * and §4 (the replay dtype map).  The spelling table is a superset of the
 * reference signature_utils._DTYPE_CANONICAL map:
 *   BF16, BFLOAT16, DT_BFLOAT16 -> DT_BF16;  FP16, FLOAT16, HALF -> DT_FLOAT16;
 *   FLOAT, FP32, FLOAT32 -> DT_FLOAT;  FLOAT64, FP64, DOUBLE -> DT_FLOAT64;
 *   INT4/INT8/UINT8/INT16/INT32/INT64/BOOL -> DT_<same>;  UNDEFINED.
 * We also accept every canonical `DT_*` name in any case, DT_DOUBLE (the
 * replay scripts' spelling of fp64), the other integer widths, fp8,
 * HIFLOAT8, COMPLEX64, and `torch.<name>` forms.  The C-style torch
 * aliases `int`, `long`, `short`, `cfloat` are recognised only after
 * `torch.`, so a bare opaque token such as `INT` stays verbatim.
 */
#include "perfdb/dtype.h"

#include <stdint.h>
#include <string.h>

#include "perfdb/err.h"

struct alias {
	const char *spelling; /* upper case, without `DT_` / `torch.` */
	enum perfdb_dtype type;
	int torch_only;       /* 1: only valid after `torch.` */
};

static const struct alias aliases[] = {
	{ "FLOAT", PERFDB_DTYPE_FLOAT, 0 },
	{ "FP32", PERFDB_DTYPE_FLOAT, 0 },
	{ "FLOAT32", PERFDB_DTYPE_FLOAT, 0 },
	{ "FLOAT16", PERFDB_DTYPE_FLOAT16, 0 },
	{ "FP16", PERFDB_DTYPE_FLOAT16, 0 },
	{ "HALF", PERFDB_DTYPE_FLOAT16, 0 },
	{ "BF16", PERFDB_DTYPE_BF16, 0 },
	{ "BFLOAT16", PERFDB_DTYPE_BF16, 0 },
	{ "FLOAT64", PERFDB_DTYPE_FLOAT64, 0 },
	{ "FP64", PERFDB_DTYPE_FLOAT64, 0 },
	{ "DOUBLE", PERFDB_DTYPE_FLOAT64, 0 },
	{ "INT4", PERFDB_DTYPE_INT4, 0 },
	{ "INT8", PERFDB_DTYPE_INT8, 0 },
	{ "UINT8", PERFDB_DTYPE_UINT8, 0 },
	{ "INT16", PERFDB_DTYPE_INT16, 0 },
	{ "UINT16", PERFDB_DTYPE_UINT16, 0 },
	{ "INT32", PERFDB_DTYPE_INT32, 0 },
	{ "UINT32", PERFDB_DTYPE_UINT32, 0 },
	{ "INT64", PERFDB_DTYPE_INT64, 0 },
	{ "UINT64", PERFDB_DTYPE_UINT64, 0 },
	{ "BOOL", PERFDB_DTYPE_BOOL, 0 },
	{ "FLOAT8_E4M3FN", PERFDB_DTYPE_FLOAT8_E4M3FN, 0 },
	{ "FLOAT8_E5M2", PERFDB_DTYPE_FLOAT8_E5M2, 0 },
	{ "HIFLOAT8", PERFDB_DTYPE_HIFLOAT8, 0 },
	{ "COMPLEX64", PERFDB_DTYPE_COMPLEX64, 0 },
	{ "UNDEFINED", PERFDB_DTYPE_UNDEFINED, 0 },
	{ "INT", PERFDB_DTYPE_INT32, 1 },
	{ "LONG", PERFDB_DTYPE_INT64, 1 },
	{ "SHORT", PERFDB_DTYPE_INT16, 1 },
	{ "CFLOAT", PERFDB_DTYPE_COMPLEX64, 1 },
};

/* Indexed by enum perfdb_dtype; bits 0 means "no storage size". */
static const struct {
	const char *name;
	unsigned bits;
} dtypes[PERFDB_DTYPE_COUNT_] = {
	[PERFDB_DTYPE_UNKNOWN] = { "UNKNOWN", 0 },
	[PERFDB_DTYPE_UNDEFINED] = { "DT_UNDEFINED", 0 },
	[PERFDB_DTYPE_FLOAT] = { "DT_FLOAT", 32 },
	[PERFDB_DTYPE_FLOAT16] = { "DT_FLOAT16", 16 },
	[PERFDB_DTYPE_BF16] = { "DT_BF16", 16 },
	[PERFDB_DTYPE_FLOAT64] = { "DT_FLOAT64", 64 },
	[PERFDB_DTYPE_INT4] = { "DT_INT4", 4 },
	[PERFDB_DTYPE_INT8] = { "DT_INT8", 8 },
	[PERFDB_DTYPE_UINT8] = { "DT_UINT8", 8 },
	[PERFDB_DTYPE_INT16] = { "DT_INT16", 16 },
	[PERFDB_DTYPE_UINT16] = { "DT_UINT16", 16 },
	[PERFDB_DTYPE_INT32] = { "DT_INT32", 32 },
	[PERFDB_DTYPE_UINT32] = { "DT_UINT32", 32 },
	[PERFDB_DTYPE_INT64] = { "DT_INT64", 64 },
	[PERFDB_DTYPE_UINT64] = { "DT_UINT64", 64 },
	[PERFDB_DTYPE_BOOL] = { "DT_BOOL", 8 },
	[PERFDB_DTYPE_FLOAT8_E4M3FN] = { "DT_FLOAT8_E4M3FN", 8 },
	[PERFDB_DTYPE_FLOAT8_E5M2] = { "DT_FLOAT8_E5M2", 8 },
	[PERFDB_DTYPE_HIFLOAT8] = { "DT_HIFLOAT8", 8 },
	[PERFDB_DTYPE_COMPLEX64] = { "DT_COMPLEX64", 64 },
};

static const char *const formats[] = {
	[PERFDB_FORMAT_UNKNOWN] = "UNKNOWN",
	[PERFDB_FORMAT_ND] = "ND",
	[PERFDB_FORMAT_NCHW] = "NCHW",
	[PERFDB_FORMAT_NHWC] = "NHWC",
	[PERFDB_FORMAT_NC1HWC0] = "NC1HWC0",
	[PERFDB_FORMAT_FRACTAL_Z] = "FRACTAL_Z",
	[PERFDB_FORMAT_FRACTAL_NZ] = "FRACTAL_NZ",
	[PERFDB_FORMAT_NULL] = "NULL",
};

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Case-blind equality of a span and an upper-case literal. */
static int eq_upper(struct perfdb_span s, const char *lit)
{
	size_t n = strlen(lit);
	if (s.len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (upper(s.p[i]) != lit[i])
			return 0;
	return 1;
}

/* Drop an upper-case prefix, case-blind; returns 1 if it was there. */
static int drop_prefix(struct perfdb_span *s, const char *lit)
{
	size_t n = strlen(lit);
	if (s->len < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (upper(s->p[i]) != lit[i])
			return 0;
	s->p += n;
	s->len -= n;
	return 1;
}

/* Trim whitespace and any surrounding quotes, as cells arrive quoted. */
static struct perfdb_span clean(struct perfdb_span s)
{
	s = perfdb_span_trim(s);
	while (s.len && s.p[0] == '"') {
		s.p++;
		s.len--;
	}
	while (s.len && s.p[s.len - 1] == '"')
		s.len--;
	return perfdb_span_trim(s);
}

enum perfdb_dtype perfdb_dtype_parse(struct perfdb_span s)
{
	s = clean(s);
	int torch = drop_prefix(&s, "TORCH.");
	if (!torch)
		drop_prefix(&s, "DT_");
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (aliases[i].torch_only && !torch)
			continue;
		if (eq_upper(s, aliases[i].spelling))
			return aliases[i].type;
	}
	return PERFDB_DTYPE_UNKNOWN;
}

const char *perfdb_dtype_name(enum perfdb_dtype t)
{
	if ((unsigned)t >= PERFDB_DTYPE_COUNT_)
		t = PERFDB_DTYPE_UNKNOWN;
	return dtypes[t].name;
}

const char *perfdb_dtype_profiler_name(enum perfdb_dtype t)
{
	/* GE's type-to-string: DT_ dropped except for bf16, which CANN 8 writes DT_BF16 */
	if ((unsigned)t >= PERFDB_DTYPE_COUNT_)
		t = PERFDB_DTYPE_UNKNOWN;
	if (t == PERFDB_DTYPE_FLOAT64)
		return "DOUBLE";
	const char *n = dtypes[t].name;
	return t == PERFDB_DTYPE_BF16 || strncmp(n, "DT_", 3) != 0 ? n : n + 3;
}

unsigned perfdb_dtype_bits(enum perfdb_dtype t)
{
	if ((unsigned)t >= PERFDB_DTYPE_COUNT_)
		return 0;
	return dtypes[t].bits;
}

/* Saturates at SIZE_MAX instead of wrapping: a caller that allocates the
 * result then fails cleanly rather than under-allocating. */
int perfdb_dtype_is_float(enum perfdb_dtype t)
{
	return t == PERFDB_DTYPE_FLOAT || t == PERFDB_DTYPE_BF16 || t == PERFDB_DTYPE_FLOAT16;
}

size_t perfdb_dtype_bytes(enum perfdb_dtype t, size_t n)
{
	size_t bits = perfdb_dtype_bits(t);
	if (!bits)
		return 0;
	/* n = 8q + r: 8q elements take exactly q*bits bytes. */
	size_t q = n / 8, r = n % 8;
	if (q > SIZE_MAX / bits)
		return SIZE_MAX;
	size_t whole = q * bits;
	size_t rest = (r * bits + 7) / 8;
	if (whole > SIZE_MAX - rest)
		return SIZE_MAX;
	return whole + rest;
}

int perfdb_dtype_canonical(struct perfdb_span token, struct perfdb_strbuf *out)
{
	token = perfdb_span_trim(token);
	if (!token.len)
		return 0;
	enum perfdb_dtype t = perfdb_dtype_parse(token);
	if (t == PERFDB_DTYPE_UNKNOWN)
		return perfdb_strbuf_add(out, token.p, token.len);
	return perfdb_strbuf_addstr(out, perfdb_dtype_name(t));
}

enum perfdb_format perfdb_format_parse(struct perfdb_span s)
{
	s = clean(s);
	drop_prefix(&s, "FORMAT_");
	for (size_t f = PERFDB_FORMAT_ND; f < sizeof(formats) / sizeof(formats[0]); f++)
		if (eq_upper(s, formats[f]))
			return (enum perfdb_format)f;
	return PERFDB_FORMAT_UNKNOWN;
}

const char *perfdb_format_name(enum perfdb_format f)
{
	if ((unsigned)f >= sizeof(formats) / sizeof(formats[0]))
		f = PERFDB_FORMAT_UNKNOWN;
	return formats[f];
}
