/*
 * oneDNN, loaded at run time (dnnl_load.c): perfdb links no libdnnl; the
 * oneDNN functions it calls load the library on first use.  The CPU
 * backend's open calls cpu_dnnl_open first, for a one-line error where
 * oneDNN is missing.  $PERFDB_DNNL_LIB names another library to load
 * (a path, or a name for the dynamic linker's search; docs/replay.md).
 */
#ifndef PERFDB_BACKEND_CPU_DNNL_LOAD_H
#define PERFDB_BACKEND_CPU_DNNL_LOAD_H

#include "perfdb/err.h"

/* 0 once oneDNN is loaded; else -PERFDB_EIO with the reason (the library
 * and dlerror's message, a missing function, a foreign major version). */
int cpu_dnnl_open(struct perfdb_err *err);

#endif
