/*
 * Fuzz target: the replay journal (src/replay/journal.c journal_read), the
 * file `microbench --resume` and subprocess mode read back.  It is
 * perfdb's own format, but a killed run tears its last line and a user may
 * edit or truncate it, so it is read as outside input.
 * Invariants: no crash or leak; every entry's key is "table\tsignature";
 * an ok entry's times are finite and >= 0 and its counts non-negative
 * (UBSan holds the conversions to them); the index finds, for every key,
 * its last entry and its last ok entry, as a linear scan does.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The last entry with e's key (among the ok ones when ok_only), by scan. */
static const struct jentry *scan(const struct journal *j, const char *key, int ok_only)
{
	const struct jentry *last = NULL;
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->v[i].key, key) == 0 && (!ok_only || j->v[i].ok))
			last = &j->v[i];
	return last;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 1 << 16)
		return 0;   /* fmemopen of 0 bytes is an error; the scan below is quadratic */
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		abort();
	struct journal j;
	memset(&j, 0, sizeof(j));
	int rc = journal_read(f, &j);
	fclose(f);
	if (rc < 0)
		abort();   /* only out of memory fails, which a 64 KiB input cannot cause */
	for (size_t i = 0; i < j.n; i++) {
		const struct jentry *e = &j.v[i];
		if (!e->key || !strchr(e->key, '\t'))
			abort();
		if (e->ok && (!isfinite(e->mean) || e->mean < 0 || !isfinite(e->median) || e->median < 0 ||
			      !isfinite(e->min) || e->min < 0 || !isfinite(e->std) || e->std < 0 ||
			      e->retries < 0 || e->threads < 0))
			abort();
		if (journal_find(&j, e->key, 0) != scan(&j, e->key, 0) ||
		    journal_find(&j, e->key, 1) != scan(&j, e->key, 1))
			abort();
	}
	journal_release(&j);
	return 0;
}
