# Sourced by the benches that run the real PyTorch (closure.sh,
# torch_alone.sh) after they set BUILD: sets PERFDB (the binary under test)
# and PY (/usr/bin/python3, Debian's python3-torch), exits 1 when the build
# is missing and 77 when PyTorch is, and defines malloc_kept, the allocator
# setting the closure measures under (docs/measuring.md "The allocator's
# fresh pages").
# (under set -e a failed cd here would end the bench before it says why)
PERFDB=$(cd "$BUILD/bin" 2>/dev/null && pwd || echo "$BUILD/bin")/perfdb
PY=/usr/bin/python3
[ -x "$PERFDB" ] || { echo "build first: make (missing $BUILD/bin/perfdb)" >&2; exit 1; }
if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "bench/$(basename "$0") needs PyTorch for $PY: apt-get install python3-torch (Debian 12: torch 1.13)" >&2
	exit 77
fi

# no mmap below 1 GiB, never trim the heap, grow it 256 MiB at a time
malloc_kept() {
	export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=268435456
}
