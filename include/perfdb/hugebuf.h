/*
 * Large host buffers (hugebuf.c): the replay engine's tensors, its cache
 * flush buffer and the bandwidth probe's buffer.
 */
#ifndef PERFDB_HUGEBUF_H
#define PERFDB_HUGEBUF_H

#include <stddef.h>

#define PERFDB_HUGE_BYTES ((size_t)2 << 20)   /* a transparent huge page */

/*
 * At least `bytes` (rounded up; the size allocated in *cap when cap is not
 * NULL), zeroed and every page already faulted in; free() releases it.
 * NULL when out of memory.
 */
void *perfdb_huge_alloc(size_t bytes, size_t *cap);

#endif
