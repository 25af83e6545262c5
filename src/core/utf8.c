/* UTF-8 validation (include/perfdb/utf8.h), shared by the CSV reader and the trace reader. */
#include "perfdb/utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Returns the offset of the first invalid UTF-8 byte in [p, p+len), or len. */
size_t perfdb_utf8_check(const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i = 0;
	while (i < len) {
#ifdef __SSE2__
		while (i + 16 <= len &&
		       !_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i))))
			i += 16;
		if (i >= len)
			break;
#endif
		unsigned c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t need;
		unsigned min;
		if ((c & 0xE0) == 0xC0) { need = 1; min = 0x80; c &= 0x1F; }
		else if ((c & 0xF0) == 0xE0) { need = 2; min = 0x800; c &= 0x0F; }
		else if ((c & 0xF8) == 0xF0) { need = 3; min = 0x10000; c &= 0x07; }
		else return i;
		if (i + need >= len)
			return i;
		for (size_t k = 1; k <= need; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return i;
			c = (c << 6) | (p[i + k] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			return i;
		i += need + 1;
	}
	return len;
}
