# Shared setup of the MPI integration tests (tests/mpi/<case>.sh PERFDB).
# Each case runs the real binary under mpirun in a scratch directory and
# checks what it wrote with tables.py; any failure exits non-zero.
set -eu
PERFDB=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-mpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export PERFDB_DATA_ROOT="$WORK/no-such-root"   # never touch a real database
unset PERFDB_DEVICES PERFDB_LOCK_TIMEOUT PERFDB_MPIRUN PERFDB_MPIRUN_ARGS QUICK NPROC
# A sandbox without network: shared memory between the ranks only, and no
# cross-memory attach (it needs ptrace rights that containers often lack).
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# The BTLs above are ob1's.  Left to choose, every rank would first try the
# cm PML, whose MTLs load libpsm2 and libinfinipath; their constructors sleep
# 0.2 s calibrating timers, and on one host without a fabric cm is never
# chosen.  That was 0.2 s of each mpirun here (docs/testing.md).
export OMPI_MCA_pml=ob1
# A rank exiting non-zero makes mpirun end the job, signalling the ranks left
# with a second between SIGTERM and SIGKILL (odls_base_sigkill_timeout): 1-2 s
# of each failure case.  perfdb's ranks exit by themselves after a failure
# (every failure case here checks that), so the grace is not needed.
export OMPI_MCA_odls_base_sigkill_timeout=0
# Open MPI refuses root unless told; the test machines run as root.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

fail() { echo "FAIL: $*" >&2; exit 1; }

# tables.py CHECK ARGS...: see its header
tables() { python3 "$HERE/tables.py" "$@" || fail "tables.py $*"; }
