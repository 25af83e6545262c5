/*
 * Streaming CSV tokenizer (include/perfdb/csv.h; dialect in docs/spec/parse.md §1).
 *
 * Buffer layout: buf[0..len) holds unread input starting at a record
 * boundary; buf has PAD zero bytes past len so the 64-byte block scans never
 * read past the allocation.  A record is tokenized in one pass; when it runs
 * into the end of the buffer before the end of input, the partial record is
 * moved to the front, more input is read, and the record is tokenized again
 * from its start.  Field values are decoded in place only once the whole
 * record is in the buffer, so a restart always sees the original bytes.
 *
 * Speed: the scan looks for the five structural bytes (, " CR LF NUL) 64 at
 * a time with SSE2 compares and walks the resulting bit mask, so the cost is
 * per field, not per byte (bench/csv.sh measures it).
 */
#include "perfdb/fsio.h"
#include "perfdb/csv.h"
#include "perfdb/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define PAD 64
#define CHUNK ((size_t)1 << 20)
#define DEFAULT_MAX_RECORD ((size_t)256 << 20)

enum field_kind {
	FIELD_PLAIN = 0,   /* value is the raw span */
	FIELD_QUOTED_ESC,  /* quoted, contains "" escapes: decode in place */
	FIELD_MESSY,       /* quoted then more text: decode the Python way */
};

struct field_raw {
	size_t start;      /* offsets from buf, so a refill can rebase them */
	size_t len;
	int kind;
};

struct perfdb_csv_reader {
	char *name;
	const char *mem;       /* memory source (copied into buf as it is read) */
	size_t mem_len, mem_off, mem_chunk;
	int fd;
	int own_fd;
	unsigned flags;
	int eof;               /* no more input to read */
	int started;           /* BOM check done */
	char *buf;
	size_t cap;            /* allocated minus PAD */
	size_t len;            /* valid bytes in buf */
	size_t pos;            /* start of the next record */
	size_t max_record;
	size_t line;           /* line of buf[pos] */
	unsigned long long consumed; /* bytes before buf[0] */
	size_t rec_start;      /* current row, for field_col */
	struct field_raw *raw;
	size_t nraw, capraw;
	struct perfdb_csv_field *out;
	size_t capout;
};

/* ---- structural masks ---------------------------------------------- */

#ifdef __SSE2__
static inline uint64_t mask16(const char *p, __m128i comma, __m128i quote,
			      __m128i cr, __m128i lf, __m128i zero)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i m = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, quote)),
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)),
			     _mm_cmpeq_epi8(v, zero)));
	return (uint64_t)(unsigned)_mm_movemask_epi8(m);
}

/* Bit i set when p[i] is one of , " CR LF NUL (i < 64). */
static inline uint64_t struct_mask(const char *p)
{
	const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"');
	const __m128i cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n');
	const __m128i zero = _mm_setzero_si128();
	return mask16(p, comma, quote, cr, lf, zero) |
	       mask16(p + 16, comma, quote, cr, lf, zero) << 16 |
	       mask16(p + 32, comma, quote, cr, lf, zero) << 32 |
	       mask16(p + 48, comma, quote, cr, lf, zero) << 48;
}
#else
static inline uint64_t struct_mask(const char *p)
{
	uint64_t m = 0;
	for (int i = 0; i < 64; i++) {
		char c = p[i];
		if (c == ',' || c == '"' || c == '\r' || c == '\n' || c == '\0')
			m |= (uint64_t)1 << i;
	}
	return m;
}
#endif

/* A cursor over the structural bytes of [p, end). */
struct scan {
	const char *base;  /* block start */
	uint64_t mask;     /* unconsumed structural bits of the block */
	const char *end;
};

static inline void scan_at(struct scan *s, const char *p)
{
	s->base = p;
	s->mask = struct_mask(p);
	size_t avail = (size_t)(s->end - p);
	if (avail < 64)
		s->mask &= ((uint64_t)1 << avail) - 1;
}

/* Next structural byte at or after p, or end. */
static inline __attribute__((always_inline)) const char *scan_next(struct scan *s, const char *p)
{
	for (;;) {
		if (p >= s->end)
			return s->end;
		size_t off;
		if (!s->base || p < s->base || (off = (size_t)(p - s->base)) >= 64) {
			scan_at(s, p);
			off = 0;
		}
		uint64_t m = s->mask & (~(uint64_t)0 << off);
		if (m)
			return s->base + __builtin_ctzll(m);
		p = s->base + 64;
	}
}

/* ---- reader lifecycle ---------------------------------------------- */

static int reader_new(struct perfdb_csv_reader **out, const char *name,
		      unsigned flags, size_t cap, struct perfdb_err *err)
{
	struct perfdb_csv_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
	r->name = strdup(name);
	r->cap = cap;
	r->buf = malloc(r->cap + PAD);
	if (!r->name || !r->buf) {
		free(r->name);
		free(r->buf);
		free(r);
		return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", name);
	}
	memset(r->buf, 0, PAD);
	r->fd = -1;
	r->flags = flags;
	r->line = 1;
	r->max_record = DEFAULT_MAX_RECORD;
	*out = r;
	return 0;
}

int perfdb_csv_open_fd(struct perfdb_csv_reader **out, const char *name,
		       int fd, unsigned flags, struct perfdb_err *err)
{
	PERFDB_TRY(reader_new(out, name, flags, CHUNK, err));
	(*out)->fd = fd;
	return 0;
}

int perfdb_csv_open(struct perfdb_csv_reader **out, const char *path,
		    unsigned flags, struct perfdb_err *err)
{
	int fd = perfdb_open_regular(path, err);
	if (fd < 0)
		return fd;
#ifdef POSIX_FADV_SEQUENTIAL
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	int rc = perfdb_csv_open_fd(out, path, fd, flags, err);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	(*out)->own_fd = 1;
	return 0;
}

int perfdb_csv_open_mem_chunked(struct perfdb_csv_reader **out, const char *name,
				const void *data, size_t len, size_t chunk,
				unsigned flags, struct perfdb_err *err)
{
	/* small inputs get a small buffer: it grows on demand like any other */
	size_t cap = len < 256 ? 256 : len < CHUNK ? len : CHUNK;
	PERFDB_TRY(reader_new(out, name, flags, cap, err));
	struct perfdb_csv_reader *r = *out;
	r->mem = data;
	r->mem_len = len;
	r->mem_chunk = chunk ? chunk : len;
	return 0;
}

int perfdb_csv_open_mem(struct perfdb_csv_reader **out, const char *name,
			const void *data, size_t len, unsigned flags,
			struct perfdb_err *err)
{
	return perfdb_csv_open_mem_chunked(out, name, data, len, 0, flags, err);
}

void perfdb_csv_close(struct perfdb_csv_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->raw);
	free(r->out);
	free(r);
}

void perfdb_csv_set_max_record(struct perfdb_csv_reader *r, size_t bytes)
{
	r->max_record = bytes;
}

unsigned long long perfdb_csv_offset(const struct perfdb_csv_reader *r)
{
	return r->consumed + r->pos;
}

const char *perfdb_csv_name(const struct perfdb_csv_reader *r)
{
	return r->name;
}

/* ---- buffer refill ------------------------------------------------- */

/* Move the unread tail to the front and read more.  Returns 0 or <0. */
static int refill(struct perfdb_csv_reader *r, struct perfdb_err *err)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->consumed += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->cap - r->len < CHUNK / 2 && r->cap - r->len < r->cap / 2 + 1) {
		if (r->len >= r->max_record)
			return perfdb_err_at(err, PERFDB_EPARSE, r->name, r->line, 1,
					     "record longer than %zu bytes", r->max_record);
		size_t ncap = r->cap * 2;
		char *nb = realloc(r->buf, ncap + PAD);
		if (!nb)
			return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", r->name);
		r->buf = nb;
		r->cap = ncap;
	}
	if (r->mem) {
		size_t n = r->mem_len - r->mem_off;
		if (n > r->mem_chunk)
			n = r->mem_chunk;
		if (n > r->cap - r->len)
			n = r->cap - r->len;
		memcpy(r->buf + r->len, r->mem + r->mem_off, n);
		r->mem_off += n;
		r->len += n;
		if (r->mem_off == r->mem_len)
			r->eof = 1;
		memset(r->buf + r->len, 0, PAD);
		return 0;
	}
	for (;;) {
		ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return perfdb_err_errno(err, errno, "%s: read failed", r->name);
		}
		if (n == 0)
			r->eof = 1;
		r->len += (size_t)n;
		break;
	}
	memset(r->buf + r->len, 0, PAD);
	return 0;
}

/* ---- field decoding ------------------------------------------------- */

/* `a""b` -> `a"b`, in place; returns the new length. */
static size_t unescape_quotes(char *p, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++) {
		p[w++] = p[i];
		if (p[i] == '"' && i + 1 < len && p[i + 1] == '"')
			i++;
	}
	return w;
}

/*
 * A field that opened with a quote and had text after its closing quote:
 * Python's csv keeps the quoted part decoded and appends the rest verbatim
 * (a '"' in the rest is literal).  raw starts at the opening quote.
 */
static size_t decode_messy(char *p, size_t len)
{
	size_t w = 0, i = 1;
	while (i < len) {
		if (p[i] == '"') {
			if (i + 1 < len && p[i + 1] == '"') {
				p[w++] = '"';
				i += 2;
				continue;
			}
			i++;
			break;
		}
		p[w++] = p[i++];
	}
	while (i < len)
		p[w++] = p[i++];
	return w;
}

static inline int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* ---- validation ----------------------------------------------------- */


/* Line and column of buf offset `at`, counting from the record start. */
static void locate(const struct perfdb_csv_reader *r, size_t rec, size_t line,
		   size_t at, size_t *oline, size_t *ocol)
{
	size_t ls = rec;
	for (size_t i = rec; i < at; i++) {
		if (r->buf[i] == '\n' || (r->buf[i] == '\r' && r->buf[i + 1] != '\n')) {
			line++;
			ls = i + 1;
		}
	}
	*oline = line;
	*ocol = at - ls + 1;
}

size_t perfdb_csv_field_col(const struct perfdb_csv_reader *r,
			    const struct perfdb_csv_row *row, size_t i)
{
	if (i >= row->n)
		return 0;
	size_t at = (size_t)(row->f[i].p - r->buf), line, col;
	locate(r, r->rec_start, row->line, at, &line, &col);
	return col;
}

/* ---- the tokenizer -------------------------------------------------- */

enum { TOK_RECORD = 1, TOK_EOF = 0, TOK_MORE = 2 };

static int grow_raw(struct perfdb_csv_reader *r)
{
	size_t n = r->capraw ? r->capraw * 2 : 64;
	struct field_raw *nr = realloc(r->raw, n * sizeof(*nr));
	if (!nr)
		return -PERFDB_ENOMEM;
	r->raw = nr;
	r->capraw = n;
	return 0;
}

static inline __attribute__((always_inline)) int
push_field(struct perfdb_csv_reader *r, size_t start, size_t len, int kind)
{
	if (__builtin_expect(r->nraw == r->capraw, 0) && grow_raw(r) < 0)
		return -PERFDB_ENOMEM;
	r->raw[r->nraw].start = start;
	r->raw[r->nraw].len = len;
	r->raw[r->nraw].kind = kind;
	r->nraw++;
	return 0;
}

/*
 * Tokenize one record at r->pos.  Returns TOK_RECORD (r->raw filled,
 * *next = offset after the terminator, *lines = physical lines consumed),
 * TOK_EOF, TOK_MORE (record incomplete: refill and retry) or <0.
 */
static int tokenize(struct perfdb_csv_reader *r, size_t *next, size_t *lines,
		    struct perfdb_err *err)
{
	char *buf = r->buf;
	const char *end = buf + r->len;
	const char *p = buf + r->pos;
	struct scan s = { .base = NULL, .mask = 0, .end = end };
	size_t nl = 0;
	int final = r->eof;

	r->nraw = 0;
	for (;;) {
		/* skip blank lines: a terminator right at the record start */
		if (p < end && (*p == '\n' || *p == '\r')) {
			if (*p == '\r') {
				if (p + 1 == end && !final)
					return TOK_MORE;
				p += (p + 1 < end && p[1] == '\n') ? 2 : 1;
			} else {
				p++;
			}
			r->pos = (size_t)(p - buf);
			r->line += 1;
			continue;
		}
		break;
	}
	if (p == end)
		return final ? TOK_EOF : TOK_MORE;

	for (;;) {
		const char *fs = p;
		int kind = FIELD_PLAIN;
		const char *q;
		if (p < end && *p == '"') {
			const char *open = p;
			p++;
			for (;;) {
				q = scan_next(&s, p);
				if (q == end) {
					if (!final)
						return TOK_MORE;
					size_t line, col;
					locate(r, r->pos, r->line, (size_t)(open - buf), &line, &col);
					return perfdb_err_at(err, PERFDB_EPARSE, r->name, line, col,
						"end of file inside a quoted field (unbalanced '\"')");
				}
				if (*q == '"') {
					if (q + 1 == end && !final)
						return TOK_MORE;
					if (q + 1 < end && q[1] == '"') {
						kind = FIELD_QUOTED_ESC;
						p = q + 2;
						continue;
					}
					p = q + 1;
					break;
				}
				if (*q == '\0')
					goto nul;
				if (*q == '\n' || (*q == '\r' && q[1] != '\n'))
					nl++;
				p = q + 1;
			}
			/* after the closing quote */
			if (p < end && *p != ',' && *p != '\n' && *p != '\r') {
				kind = FIELD_MESSY;
			} else {
				if (push_field(r, (size_t)(fs + 1 - buf), (size_t)(q - fs - 1), kind))
					return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", r->name);
				goto delim;
			}
		}
		/* unquoted (or the tail of a messy field): '"' is literal here */
		for (;;) {
			q = scan_next(&s, p);
			if (q == end || *q != '"')
				break;
			p = q + 1;
		}
		if (q < end && *q == '\0')
			goto nul;
		if (push_field(r, (size_t)(fs - buf), (size_t)(q - fs), kind))
			return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", r->name);
		p = q;
	delim:
		if (p == end) {
			if (!final)
				return TOK_MORE;
			*next = r->len;
			*lines = nl;
			return TOK_RECORD;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n') {
			*next = (size_t)(p + 1 - buf);
			*lines = nl + 1;
			return TOK_RECORD;
		}
		/* '\r' */
		if (p + 1 == end && !final)
			return TOK_MORE;
		*next = (size_t)(p + ((p + 1 < end && p[1] == '\n') ? 2 : 1) - buf);
		*lines = nl + 1;
		return TOK_RECORD;
	}
nul:
	{
		const char *z = memchr(buf + r->pos, '\0', r->len - r->pos);
		size_t line, col;
		locate(r, r->pos, r->line, (size_t)(z - buf), &line, &col);
		return perfdb_err_at(err, PERFDB_EPARSE, r->name, line, col,
				     "NUL byte in CSV (binary file?)");
	}
}

int perfdb_csv_next(struct perfdb_csv_reader *r, struct perfdb_csv_row *row,
		    struct perfdb_err *err)
{
	size_t next = 0, lines = 0;
	int rc;

	if (!r->started) {
		while (!r->eof && r->len < 3)
			PERFDB_TRY(refill(r, err));
		if (r->len >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0)
			r->pos = 3;
		r->started = 1;
	}
	for (;;) {
		rc = tokenize(r, &next, &lines, err);
		if (rc < 0)
			return rc;
		if (rc != TOK_MORE)
			break;
		if (r->len - r->pos > r->max_record)
			return perfdb_err_at(err, PERFDB_EPARSE, r->name, r->line, 1,
					     "record longer than %zu bytes", r->max_record);
		PERFDB_TRY(refill(r, err));
	}
	if (rc == TOK_EOF)
		return 0;

	size_t rec = r->pos;
	if (r->flags & PERFDB_CSV_UTF8) {
		size_t bad = perfdb_utf8_check(r->buf + rec, next - rec);
		if (bad < next - rec) {
			size_t line, col;
			locate(r, rec, r->line, rec + bad, &line, &col);
			return perfdb_err_at(err, PERFDB_EPARSE, r->name, line, col,
					     "invalid UTF-8 byte 0x%02x",
					     (unsigned char)r->buf[rec + bad]);
		}
	}
	if (r->nraw > r->capout) {
		struct perfdb_csv_field *no = realloc(r->out, r->nraw * sizeof(*no));
		if (!no)
			return perfdb_err_set(err, PERFDB_ENOMEM, "%s: out of memory", r->name);
		r->out = no;
		r->capout = r->nraw;
	}
	for (size_t i = 0; i < r->nraw; i++) {
		char *p = r->buf + r->raw[i].start;
		size_t len = r->raw[i].len;
		if (r->raw[i].kind == FIELD_QUOTED_ESC)
			len = unescape_quotes(p, len);
		else if (r->raw[i].kind == FIELD_MESSY)
			len = decode_messy(p, len);
		if (r->flags & PERFDB_CSV_TRIM) {
			while (len && is_space(*p)) {
				p++;
				len--;
			}
			while (len && is_space(p[len - 1]))
				len--;
		}
		r->out[i].p = p;
		r->out[i].len = len;
	}
	row->f = r->out;
	row->n = r->nraw;
	row->line = r->line;
	r->rec_start = rec;
	r->line += lines;
	r->pos = next;
	return 1;
}
