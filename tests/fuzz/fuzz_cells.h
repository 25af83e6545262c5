/*
 * The input layout of the row-cell fuzz targets (fuzz_shape.c,
 * fuzz_case_build.c): one selector byte, then up to six cells split on
 * '\n'.  Include once per target; the function is static.
 */
#ifndef PERFDB_FUZZ_CELLS_H
#define PERFDB_FUZZ_CELLS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* data[1..size) as a NUL-terminated copy (*text, the caller frees) split into cells[6] (missing ones ""). */
static int fuzz_cells(const uint8_t *data, size_t size, char **text, char *cells[6])
{
	*text = malloc(size);
	if (!*text)
		return -1;
	memcpy(*text, data + 1, size - 1);
	(*text)[size - 1] = '\0';
	for (int i = 0; i < 6; i++)
		cells[i] = "";
	char *p = *text;
	for (int i = 0; i < 6 && p; i++) {
		cells[i] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
	return 0;
}

#endif
