/*
 * The bytes of a trace file, gzip or not (src/parse/, not public API).
 *
 * torch's tensorboard_trace_handler(use_gzip=True) writes `.json.gz`; the
 * kind is told by the gzip magic bytes (1f 8b), not the name.  Concatenated
 * gzip members are read one after another, as gzip -d does.  Reads come in
 * chunks of a fixed buffer: memory does not grow with the file.
 */
#ifndef PERFDB_PARSE_TRACE_SOURCE_H
#define PERFDB_PARSE_TRACE_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "perfdb/err.h"

struct perfdb_tsrc {
	const char *name;          /* for messages */
	int fd;                    /* -1: reading mem */
	const unsigned char *mem;
	size_t memlen, mempos;
	int gz;                    /* gzip detected */
	int zinit, zend;           /* inflate initialised; last member ended */
	z_stream z;
	unsigned char *in;         /* raw read buffer */
	size_t inlen, inpos;
	int eof;                   /* no more raw bytes */
	uint64_t raw_off;          /* raw bytes consumed so far */
};

/* Open path (a regular file) or wrap data.  release() in every case. */
int perfdb_tsrc_open(struct perfdb_tsrc *s, const char *path, struct perfdb_err *err);
int perfdb_tsrc_mem(struct perfdb_tsrc *s, const char *name, const void *data, size_t len,
		    struct perfdb_err *err);
void perfdb_tsrc_release(struct perfdb_tsrc *s);

/* Up to cap decompressed bytes into buf: the count, 0 at the end, or a
 * negative code ("<file>: truncated gzip stream (at compressed byte N)",
 * "<file>: corrupt gzip data at compressed byte N: <zlib's reason>"). */
long perfdb_tsrc_read(struct perfdb_tsrc *s, unsigned char *buf, size_t cap,
		      struct perfdb_err *err);

#endif
