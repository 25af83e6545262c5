#!/usr/bin/env bash
# Packs a build made on this machine for a device machine that cannot build
# perfdb itself: the lent GPU machines start from an image without Debian's
# packages (oneDNN, OpenBLAS, yajl, jansson, libyaml, Open MPI, cmocka) and
# with no network to fetch them.  glibc there is at least as new as
# Debian 12's, so the binaries built here run there with their libraries
# beside them.
#
#   bash tests/device/pack.sh [BUILD_DIR] [OUT_DIR]     (defaults: build .device)
#
# OUT_DIR (ignored by git; name it in the device tool's `carry`) gets:
#   bin/perfdb, lib/perfdb/libperfdb-cuda.so   the binary as installed
#   tools/                                      GPU checks, CPU benches, CPU unit tests
#   sys.tar.xz                                  every library they load that is neither
#                                               glibc nor CUDA's (the device has its own
#                                               CUDA, matched to its driver), and Open
#                                               MPI's run time (mpirun, orted, components,
#                                               PMIx), by absolute path
# tests/device/run.sh --prebuilt OUT_DIR unpacks and uses it.
set -eu
BUILD=${1:-build}
OUT=${2:-.device}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
MOD=$BUILD/lib/perfdb/libperfdb-cuda.so
[ -x "$BUILD/bin/perfdb" ] && [ -f "$MOD" ] && [ -x "$BUILD/cuda_ops_check" ] ||
  { echo "pack.sh: build with CUDA first: make (missing $BUILD/bin/perfdb, $MOD or $BUILD/cuda_ops_check)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib/perfdb" "$OUT/tools"
cp "$BUILD/bin/perfdb" "$OUT/bin/"
cp "$MOD" "$OUT/lib/perfdb/"
tools=(cuda_ops_check microbench_cuda microbench_attention microbench_ref comm_ref)
for t in "${tools[@]}"; do cp "$BUILD/$t" "$OUT/tools/"; done
for t in "$BUILD"/tests/test_cpu*; do cp "$t" "$OUT/tools/"; done
# the tool binaries without their debug sections: the carry limit is 64 MiB
strip --strip-debug "$OUT"/tools/*

# libraries: everything ldd resolves outside glibc and CUDA, and oneDNN,
# which the CPU backend opens with dlopen (src/backend/cpu/dnnl_load.c), so
# no binary lists it: it and what it needs come too
glibc='^(libc|libm|libdl|libpthread|librt|libutil|ld-linux-x86-64|libresolv)\.so'
dnnl=$(/sbin/ldconfig -p | awk '$1 == "libdnnl.so.2" { print $NF; exit }')
[ -n "$dnnl" ] || { echo "pack.sh: libdnnl.so.2 not found (ldconfig -p): install libdnnl-dev" >&2; exit 1; }
list=$(mktemp)
{
  echo "$dnnl"
  for b in "$OUT/bin/perfdb" "$OUT/lib/perfdb/libperfdb-cuda.so" "$OUT"/tools/* "$dnnl"; do
    ldd "$b" | awk '$3 ~ /^\// {print $3}'
  done
} | sed 's|^/lib/|/usr/lib/|' | sort -u | while read -r p; do
  case "$p" in /usr/local/cuda*) continue ;; esac
  basename "$p" | grep -qE "$glibc" && continue
  echo "$p"
  readlink -f "$p"
done >"$list"
# Open MPI's run time: mpirun/orted, its components, help texts, PMIx and
# what the components load (a component whose library is missing is skipped
# by Open MPI, so the fabric ones need not come)
for pkg in openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libevent-core-2.1-7 \
           libevent-pthreads-2.1-7 libevent-2.1-7; do
  dpkg -L "$pkg" 2>/dev/null | grep -vE '/(doc|man|lintian)/' | while read -r f; do
    [ -f "$f" ] || [ -L "$f" ] && echo "$f"
  done
done >>"$list"
[ -f /etc/openmpi/openmpi-mca-params.conf ] && echo /etc/openmpi/openmpi-mca-params.conf >>"$list"
sed 's|^/lib/|/usr/lib/|; s|^/||' "$list" | sort -u >"$list.rel"
tar -C / -cJf "$OUT/sys.tar.xz" -T "$list.rel"
rm -f "$list" "$list.rel"
du -sh "$OUT" "$OUT/sys.tar.xz" "$OUT/tools"
