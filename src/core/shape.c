/*
 * Shape cells, slots and dims: see include/perfdb/shape.h.
 *
 * Follows docs/spec/parse.md §2 (cell syntax: ';' separates slots, ',' separates
 * dims, empty slots kept), §6 (fia_common acceptance cases) and
 * docs/spec/replay.md §1b (slot cleaning of signature_utils) and §4 (FRACTAL_NZ
 * to the logical 2-D shape).
 *
 * The cleaning steps mirror the Python reference exactly, because two rows
 * only match when both sides clean their cells the same way:
 *   - a cell:  strip whitespace, then balanced outer '"' pairs, repeatedly;
 *   - a slot:  part.strip().strip('"'): whitespace, then every leading and
 *              trailing '"' (not necessarily balanced);
 *   - dims:    strip, strip '"', strip, one pair of parens, then split on
 *              runs of ',' and whitespace, dropping empty pieces.
 */
#include "perfdb/shape.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/err.h"

/* Longest piece of a slot quoted in an error message (keeps it one line). */
#define MSG_SNIP 200

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

struct perfdb_span perfdb_span_trim(struct perfdb_span s)
{
	if (!s.p)
		return (struct perfdb_span){ "", 0 };
	while (s.len && is_space(s.p[0])) {
		s.p++;
		s.len--;
	}
	while (s.len && is_space(s.p[s.len - 1]))
		s.len--;
	return s;
}

/* Python's s.strip('"'): every leading and trailing quote, balanced or not. */
static struct perfdb_span strip_quotes(struct perfdb_span s)
{
	while (s.len && s.p[0] == '"') {
		s.p++;
		s.len--;
	}
	while (s.len && s.p[s.len - 1] == '"')
		s.len--;
	return s;
}

struct perfdb_span perfdb_shape_unquote(struct perfdb_span s)
{
	s = perfdb_span_trim(s);
	/* Legacy writers over-quote (`"""4,8"""`), so peel pairs until none. */
	while (s.len >= 2 && s.p[0] == '"' && s.p[s.len - 1] == '"') {
		s.p++;
		s.len -= 2;
		s = perfdb_span_trim(s);
	}
	return s;
}

void perfdb_slots_init(struct perfdb_slots *s)
{
	s->v = NULL;
	s->n = 0;
	s->cap = 0;
}

void perfdb_slots_release(struct perfdb_slots *s)
{
	free(s->v);
	perfdb_slots_init(s);
}

/* Make room for need views; on failure the list is unchanged. */
static int slots_reserve(struct perfdb_slots *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 8;
	while (cap < need) {
		if (cap > (size_t)-1 / 2 / sizeof(*s->v))
			return -PERFDB_ENOMEM;
		cap *= 2;
	}
	struct perfdb_span *v = realloc(s->v, cap * sizeof(*v));
	if (!v)
		return -PERFDB_ENOMEM;
	s->v = v;
	s->cap = cap;
	return 0;
}

/*
 * The list is reset first (its array is reused).  Slot count is known
 * before any view is stored, so the array grows at most once per call.
 */
int perfdb_shape_split_slots(struct perfdb_span cell, struct perfdb_slots *out)
{
	out->n = 0;
	cell = perfdb_shape_unquote(cell);
	if (!cell.len)
		return 0;

	size_t nslots = 1;
	for (size_t i = 0; i < cell.len; i++)
		nslots += cell.p[i] == ';';
	PERFDB_TRY(slots_reserve(out, nslots));

	const char *p = cell.p;
	const char *end = cell.p + cell.len;
	for (;;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;
		struct perfdb_span part = { p, (size_t)(stop - p) };
		out->v[out->n++] = strip_quotes(perfdb_span_trim(part));
		if (!semi)
			break;
		p = semi + 1;
	}
	assert(out->n == nslots);
	return 0;
}

static int span_eq(struct perfdb_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static int span_eq_nocase(struct perfdb_span s, const char *lit)
{
	size_t n = strlen(lit);
	if (s.len != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char a = s.p[i], b = lit[i];
		if (a >= 'a' && a <= 'z')
			a = (char)(a - 'a' + 'A');
		if (b >= 'a' && b <= 'z')
			b = (char)(b - 'a' + 'A');
		if (a != b)
			return 0;
	}
	return 1;
}

/* The slot cleaning of signature_utils._normalize_shape_slot. */
static struct perfdb_span clean_slot(struct perfdb_span slot)
{
	return perfdb_span_trim(strip_quotes(perfdb_span_trim(slot)));
}

/* Null test on an already cleaned slot (cleaning twice is not idempotent
 * for oddities like `" "x`, so it is done exactly once). */
static bool cleaned_is_null(struct perfdb_span s, int na_any_case)
{
	/* `N/A` in any case for shapes because the parser's N/A filter is
	 * case-blind (docs/spec/parse.md §2); the signature takes it as get_sig
	 * does, and the other spellings are exact in both. */
	return s.len == 0 || span_eq(s, "()") ||
	       (na_any_case ? span_eq_nocase(s, "N/A") : span_eq(s, "N/A")) ||
	       span_eq(s, "NA") || span_eq(s, "NULL") || span_eq(s, "None") ||
	       span_eq(s, "none");
}

bool perfdb_shape_slot_is_null(struct perfdb_span slot)
{
	return cleaned_is_null(clean_slot(slot), 1);
}

int perfdb_shape_slot_body(struct perfdb_span slot, int na_any_case, struct perfdb_span *body)
{
	struct perfdb_span s = clean_slot(slot);
	if (cleaned_is_null(s, na_any_case))
		return 0;
	if (s.len >= 2 && s.p[0] == '(' && s.p[s.len - 1] == ')') {
		s.p++;
		s.len -= 2;
	}
	*body = s;
	return 1;
}

int perfdb_shape_next_dim(struct perfdb_span *rest, struct perfdb_span *tok)
{
	size_t i = 0;
	while (i < rest->len && (rest->p[i] == ',' || is_space(rest->p[i])))
		i++;
	if (i == rest->len) {
		rest->p += i;
		rest->len = 0;
		return 0;
	}
	size_t start = i;
	while (i < rest->len && rest->p[i] != ',' && !is_space(rest->p[i]))
		i++;
	*tok = (struct perfdb_span){ rest->p + start, i - start };
	rest->p += i;
	rest->len -= i;
	return 1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int dim_error(struct perfdb_err *err, const char *what,
		     struct perfdb_span tok, struct perfdb_span slot)
{
	int tl = tok.len > MSG_SNIP ? MSG_SNIP : (int)tok.len;
	int sl = slot.len > MSG_SNIP ? MSG_SNIP : (int)slot.len;
	return perfdb_err_set(err, PERFDB_EPARSE, "%s '%.*s' in shape slot '%.*s'",
			      what, tl, tok.p, sl, slot.p);
}

/*
 * One dim as Python's int() reads it: optional sign, decimal digits with
 * single '_' between digits.  Returns 0, or 1 (not an integer), 2
 * (negative) or 3 (above INT64_MAX).
 */
static int parse_dim(struct perfdb_span tok, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < tok.len && (tok.p[i] == '+' || tok.p[i] == '-'))
		neg = tok.p[i++] == '-';
	if (i >= tok.len || !is_digit(tok.p[i]))
		return 1;
	uint64_t v = 0;
	int big = 0;
	for (; i < tok.len; i++) {
		char c = tok.p[i];
		if (c == '_') {
			if (i + 1 >= tok.len || !is_digit(tok.p[i + 1]))
				return 1;
			continue;
		}
		if (!is_digit(c))
			return 1;
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(c - '0')) / 10)
			big = 1;
		else
			v = v * 10 + (uint64_t)(c - '0');
	}
	/* `-0` is int 0 in Python, so only a non-zero value is negative. */
	if (neg && (v || big))
		return 2;
	if (big)
		return 3;
	*out = (int64_t)v;
	return 0;
}

int perfdb_shape_parse_dims(struct perfdb_span slot, int64_t *dims, size_t max,
			    size_t *ndims, struct perfdb_err *err)
{
	struct perfdb_span orig = perfdb_span_trim(slot);
	struct perfdb_span s, tok;
	*ndims = 0;
	if (!perfdb_shape_slot_body(slot, 1, &s))
		return 0;
	size_t n = 0;
	while (perfdb_shape_next_dim(&s, &tok)) {
		int64_t v;
		switch (parse_dim(tok, &v)) {
		case 0:
			break;
		case 2:
			return dim_error(err, "negative dim", tok, orig);
		case 3:
			return dim_error(err, "dim out of range", tok, orig);
		default:
			return dim_error(err, "invalid dim", tok, orig);
		}
		if (n >= max) {
			int sl = orig.len > MSG_SNIP ? MSG_SNIP : (int)orig.len;
			return perfdb_err_set(err, PERFDB_EPARSE,
					      "too many dims in shape slot '%.*s' (max %zu)",
					      sl, orig.p, max);
		}
		dims[n++] = v;
	}
	*ndims = n;
	return 0;
}

int64_t perfdb_shape_numel(const int64_t *dims, size_t ndims)
{
	/* A zero anywhere makes the product 0 even if a prefix overflows,
	 * which is what Python's unbounded ints give. */
	for (size_t i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] == 0)
			return 0;
	}
	int64_t p = 1;
	for (size_t i = 0; i < ndims; i++) {
		if (p > INT64_MAX / dims[i])
			return -1;
		p *= dims[i];
	}
	return p;
}

static int mul_ok(int64_t a, int64_t b, int64_t *out)
{
	if (a < 0 || b < 0 || (a && b > INT64_MAX / a))
		return 0;
	*out = a * b;
	return 1;
}

/* out may alias dims: the result is computed before anything is stored. */
int perfdb_shape_nz_to_nd(const int64_t *dims, size_t ndims, int64_t *out,
			  size_t *out_ndims)
{
	if (ndims != 4) {
		if (ndims && out != dims)
			memmove(out, dims, ndims * sizeof(*out));
		*out_ndims = ndims;
		return 0;
	}
	int64_t rows, cols;
	if (!mul_ok(dims[1], dims[2], &rows) || !mul_ok(dims[0], dims[3], &cols))
		return -PERFDB_EINVAL;
	out[0] = rows;
	out[1] = cols;
	*out_ndims = 2;
	return 0;
}
