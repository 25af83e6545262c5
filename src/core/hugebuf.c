/*
 * Buffers of 2 MiB and more are 2 MiB-aligned and advised onto transparent
 * huge pages where the kernel offers them (THP "madvise", as on the
 * machines perfdb has run on).  Two reasons:
 *   - an inference engine maps its weights and KV cache that way: with
 *     4 KiB pages a paged KV cache read in block-table order, or a
 *     transpose's strided writes, cost a TLB miss per page and ran at half
 *     the bandwidth of the same bytes read in order;
 *   - faulting in 4 KiB pages one by one cost this VM ~1.5 us a page: the
 *     64 MiB cache-flush and probe buffers were 32,768 faults, two thirds
 *     of a small microbench run (docs/replay.md "Buffers").
 * The advice is only advice: with THP off the buffer has 4 KiB pages and
 * works the same.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perfdb/hugebuf.h"

void *perfdb_huge_alloc(size_t bytes, size_t *cap)
{
	size_t need = bytes ? bytes : 1;
	size_t align = need >= PERFDB_HUGE_BYTES ? PERFDB_HUGE_BYTES : 4096;
	size_t n = (need + align - 1) & ~(align - 1);
	void *p;
	if (posix_memalign(&p, align, n) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == PERFDB_HUGE_BYTES)
		(void)madvise(p, n, MADV_HUGEPAGE);
#endif
	memset(p, 0, n);   /* zeroed, and faulted in once here rather than in a timed loop */
	if (cap)
		*cap = n;
	return p;
}
