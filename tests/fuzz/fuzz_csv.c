/*
 * Fuzz target: the CSV reader (src/core/csv_reader.c), checked against a
 * plain byte-at-a-time reference tokenizer of the same dialect written here
 * from include/perfdb/csv.h.  Both must agree on every record, field and
 * line number, and on whether the input is an error.
 *
 * Input layout: byte 0 selects flags (bit 0 TRIM, bit 1 UTF8), byte 1 the
 * chunk size the data is delivered in (1..256 bytes; 0 = all at once), the
 * rest is the CSV.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/csv.h"

struct ref_field {
	char *p;
	size_t len;
};

struct ref_rec {
	struct ref_field *f;
	size_t n;
	size_t line;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static int utf8_ok(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i], need, min;
		if (c < 0x80) { i++; continue; }
		if ((c & 0xE0) == 0xC0) { need = 1; min = 0x80; c &= 0x1F; }
		else if ((c & 0xF0) == 0xE0) { need = 2; min = 0x800; c &= 0x0F; }
		else if ((c & 0xF8) == 0xF0) { need = 3; min = 0x10000; c &= 0x07; }
		else return 0;
		if (i + need >= n)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return 0;
			c = (c << 6) | (p[i + k] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			return 0;
		i += need + 1;
	}
	return 1;
}

/* Reference tokenizer.  Returns 1 with *rec filled, 0 at end, -1 on error. */
static int ref_next(const char *s, size_t n, size_t *ip, size_t *linep,
		    unsigned flags, struct ref_rec *rec, char *scratch)
{
	size_t i = *ip, line = *linep;
	while (i < n && (s[i] == '\r' || s[i] == '\n')) {
		i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
		line++;
	}
	if (i >= n) {
		*ip = i;
		*linep = line;
		return 0;
	}
	size_t start = i;
	rec->n = 0;
	rec->line = line;
	char *w = scratch;
	for (;;) {
		char *fs = w;
		if (i < n && s[i] == '"') {
			i++;
			for (;;) {
				if (i >= n)
					return -1;
				char c = s[i];
				if (c == '"') {
					if (i + 1 < n && s[i + 1] == '"') {
						*w++ = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				if (c == '\0')
					return -1;
				if (c == '\n' || (c == '\r' && (i + 1 >= n || s[i + 1] != '\n')))
					line++;
				*w++ = c;
				i++;
			}
		}
		while (i < n && s[i] != ',' && s[i] != '\r' && s[i] != '\n') {
			if (s[i] == '\0')
				return -1;
			*w++ = s[i++];
		}
		struct ref_field *f = &rec->f[rec->n++];
		f->p = fs;
		f->len = (size_t)(w - fs);
		if (i >= n)
			break;
		if (s[i] == ',') {
			i++;
			continue;
		}
		i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
		line++;
		break;
	}
	if ((flags & PERFDB_CSV_UTF8) && !utf8_ok((const unsigned char *)s + start, i - start))
		return -1;
	if (flags & PERFDB_CSV_TRIM) {
		for (size_t k = 0; k < rec->n; k++) {
			struct ref_field *f = &rec->f[k];
			while (f->len && is_space(*f->p)) {
				f->p++;
				f->len--;
			}
			while (f->len && is_space(f->p[f->len - 1]))
				f->len--;
		}
	}
	*ip = i;
	*linep = line;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned flags = data[0] & 3;
	size_t chunk = data[1];
	const char *s = (const char *)data + 2;
	size_t n = size - 2;

	/* Both sides skip a leading BOM. */
	size_t i = (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0, line = 1;
	struct ref_rec rec = { 0 };
	rec.f = malloc((n + 1) * sizeof(*rec.f));
	char *scratch = malloc(n + 1);

	struct perfdb_csv_reader *r;
	struct perfdb_err err;
	if (perfdb_csv_open_mem_chunked(&r, "fuzz.csv", s, n, chunk, flags, &err) < 0)
		abort();
	for (;;) {
		struct perfdb_csv_row row;
		int got = perfdb_csv_next(r, &row, &err);
		int want = ref_next(s, n, &i, &line, flags, &rec, scratch);
		if ((got < 0) != (want < 0)) {
			fprintf(stderr, "error mismatch: reader %d (%s), reference %d\n", got,
				got < 0 ? err.msg : "", want);
			abort();
		}
		if (got < 0) {
			/* every error names the input and a position */
			if (strncmp(err.msg, "fuzz.csv:", 9) != 0)
				abort();
			break;
		}
		if (got != want)
			abort();
		if (got == 0)
			break;
		if (row.n != rec.n || row.line != rec.line) {
			fprintf(stderr, "record mismatch at line %zu/%zu: %zu vs %zu fields\n",
				row.line, rec.line, row.n, rec.n);
			abort();
		}
		for (size_t k = 0; k < row.n; k++)
			if (row.f[k].len != rec.f[k].len ||
			    memcmp(row.f[k].p, rec.f[k].p, row.f[k].len) != 0) {
				fprintf(stderr, "field %zu differs at line %zu\n", k, row.line);
				abort();
			}
	}
	perfdb_csv_close(r);
	free(rec.f);
	free(scratch);
	return 0;
}
