/*
 * Trace bytes, plain or gzip (src/parse/trace_source.h).
 */
#include "trace_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/fsio.h"

#define INBUF ((size_t)1 << 18)

static int fill(struct perfdb_tsrc *s, struct perfdb_err *err)
{
	if (s->eof)
		return 0;
	if (s->fd < 0) {
		s->eof = 1;
		return 0;   /* mem: everything was handed over at once */
	}
	for (;;) {
		ssize_t n = read(s->fd, s->in, INBUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return perfdb_err_errno(err, errno, "cannot read '%s'", s->name);
		s->inlen = (size_t)n;
		s->inpos = 0;
		if (n == 0)
			s->eof = 1;
		return 0;
	}
}

static int start(struct perfdb_tsrc *s, struct perfdb_err *err)
{
	if (s->fd >= 0) {
		s->in = malloc(INBUF);
		if (!s->in)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		PERFDB_TRY(fill(s, err));
		/* a 1-byte first read cannot hold the magic: read once more */
		if (s->inlen == 1 && !s->eof) {
			ssize_t n = read(s->fd, s->in + 1, INBUF - 1);
			if (n > 0)
				s->inlen += (size_t)n;
		}
	}
	s->gz = s->inlen - s->inpos >= 2 && s->in[s->inpos] == 0x1f && s->in[s->inpos + 1] == 0x8b;
	if (s->gz) {
		memset(&s->z, 0, sizeof(s->z));
		if (inflateInit2(&s->z, 15 + 16) != Z_OK)
			return perfdb_err_set(err, PERFDB_ENOMEM, "%s: cannot start gzip decoding", s->name);
		s->zinit = 1;
	}
	return 0;
}

int perfdb_tsrc_open(struct perfdb_tsrc *s, const char *path, struct perfdb_err *err)
{
	memset(s, 0, sizeof(*s));
	s->name = path;
	struct stat st;
	if (stat(path, &st) < 0 && errno == ENOENT) {
		s->fd = -1;
		return perfdb_err_set(err, PERFDB_ENOENT, "cannot open '%s': no such file", path);
	}
	s->fd = perfdb_open_regular(path, err);
	if (s->fd < 0) {
		int rc = s->fd;
		s->fd = -1;
		s->eof = 1;
		return rc;
	}
	return start(s, err);
}

int perfdb_tsrc_mem(struct perfdb_tsrc *s, const char *name, const void *data, size_t len,
		    struct perfdb_err *err)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->fd = -1;
	s->in = (unsigned char *)(uintptr_t)data;   /* read only: never written through */
	s->inlen = len;
	s->mem = data;
	return start(s, err);
}

void perfdb_tsrc_release(struct perfdb_tsrc *s)
{
	if (s->zinit)
		inflateEnd(&s->z);
	if (s->fd >= 0) {
		close(s->fd);
		free(s->in);
	}
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

long perfdb_tsrc_read(struct perfdb_tsrc *s, unsigned char *buf, size_t cap,
		      struct perfdb_err *err)
{
	if (!s->gz) {
		if (s->inpos == s->inlen)
			PERFDB_TRY(fill(s, err));
		size_t n = s->inlen - s->inpos;
		if (n > cap)
			n = cap;
		memcpy(buf, s->in + s->inpos, n);
		s->inpos += n;
		s->raw_off += n;
		return (long)n;
	}
	for (;;) {
		if (s->inpos == s->inlen) {
			PERFDB_TRY(fill(s, err));
			if (s->inpos == s->inlen) {
				if (s->zend)
					return 0;
				return perfdb_err_set(err, PERFDB_EPARSE,
						      "%s: truncated gzip stream (ends at compressed byte %llu)",
						      s->name, (unsigned long long)s->raw_off);
			}
		}
		if (s->zend) {
			/* bytes after a member: another member, or trailing junk */
			if (s->in[s->inpos] != 0x1f) {
				if (s->in[s->inpos] == 0) {
					s->inpos = s->inlen;   /* zero padding, as gzip -d allows */
					s->eof = s->fd < 0 ? 1 : s->eof;
					continue;
				}
				return perfdb_err_set(err, PERFDB_EPARSE,
						      "%s: junk after the gzip data at compressed byte %llu",
						      s->name, (unsigned long long)s->raw_off);
			}
			inflateReset(&s->z);
			s->zend = 0;
		}
		s->z.next_in = s->in + s->inpos;
		s->z.avail_in = (uInt)(s->inlen - s->inpos);
		s->z.next_out = buf;
		s->z.avail_out = (uInt)cap;
		int zr = inflate(&s->z, Z_NO_FLUSH);
		size_t used = (s->inlen - s->inpos) - s->z.avail_in;
		s->inpos += used;
		s->raw_off += used;
		size_t out = cap - s->z.avail_out;
		if (zr == Z_STREAM_END) {
			s->zend = 1;
		} else if (zr == Z_MEM_ERROR) {
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			return perfdb_err_set(err, PERFDB_EPARSE,
					      "%s: corrupt gzip data at compressed byte %llu: %s",
					      s->name, (unsigned long long)s->raw_off,
					      s->z.msg ? s->z.msg : "inflate failed");
		}
		if (out)
			return (long)out;
	}
}
