/*
 * AddressSanitizer builds only (-DPERFDB_SANITIZE=ON): dlclose does nothing
 * in perfdb.  Open MPI unloads its components (and PMIx with them) in
 * MPI_Finalize; LeakSanitizer runs at exit, when their frames can no longer
 * be named, so tests/lsan_mpi.supp could not tell Open MPI's deliberate
 * leftovers from perfdb's own leaks.  Keeping every library mapped makes
 * each leak's stack name its library.  Normal builds contain nothing here.
 */
#if defined(__SANITIZE_ADDRESS__)
int dlclose(void *handle);

int dlclose(void *handle)
{
	(void)handle;
	return 0;
}
#else
typedef int perfdb_asan_keep_dso_unused;   /* ISO C: no empty translation unit */
#endif
