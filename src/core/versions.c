/*
 * The versions of the libraries perfdb runs with, as they report
 * themselves: `perfdb --version` and the report page both print them.
 */
#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "perfdb/versions.h"

void perfdb_library_versions(char *out, size_t cap)
{
	char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
	int mlen = 0;
	/* one of the few MPI calls allowed before MPI_Init */
	if (MPI_Get_library_version(mpi, &mlen) != MPI_SUCCESS)
		mlen = 0;
	mpi[mlen] = '\0';
	mpi[strcspn(mpi, ",\n")] = '\0';
	snprintf(out, cap, "jansson %s, libyaml %s, %s", JANSSON_VERSION, yaml_get_version_string(),
		 mlen ? mpi : "MPI (unknown)");
}
