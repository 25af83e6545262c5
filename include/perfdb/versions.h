/*
 * Library versions (versions.c).
 */
#ifndef PERFDB_VERSIONS_H
#define PERFDB_VERSIONS_H

#include <stddef.h>

/* "jansson X, libyaml Y, <MPI library's first line>" into out[0..cap). */
void perfdb_library_versions(char *out, size_t cap);

#endif
