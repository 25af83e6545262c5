#!/bin/bash
# The layering is the build's (CMakeLists.txt perfdb_layer, docs/design.md
# "Layers"): each layer's sources compile with include/ and their own tree
# of links under build/layers/<layer>/.  This checks, with the compiler
# the build uses, that each tree lets through what the layer may use and
# stops what it may not, and that no source climbs out with "../".
#   check_layers.sh CC SRC_DIR BUILD_DIR [MPI_INCLUDE_DIR...]
set -u
cc=$1 src=$2 bld=$3
shift 3
mpi=()
for d in "$@"; do mpi+=(-isystem "$d"); done
fail=0

try() {   # layer header expect(ok|hidden)
	local layer=$1 hdr=$2 want=$3 out rc
	out=$(printf '#include "%s"\n' "$hdr" | "$cc" -fsyntax-only -std=c17 -I"$src/include" \
		-I"$bld/gen" -I"$bld/layers/$layer" "${mpi[@]}" -x c - 2>&1)
	rc=$?
	if [ "$want" = ok ] && [ $rc -ne 0 ]; then
		echo "FAIL: layer $layer cannot include $hdr: $out" | head -3
		fail=1
	elif [ "$want" = hidden ] && ! grep -q "$hdr: No such file" <<<"$out"; then
		echo "FAIL: layer $layer can include $hdr (rc $rc)"
		fail=1
	fi
}

for l in core stage opdef report backend replay; do
	[ -d "$bld/layers/$l" ] || { echo "FAIL: no include tree for layer $l"; fail=1; }
done
# core and the self-contained stages: core's public headers only
for h in backend/backend.h replay/opdef/opdef.h replay/engine.h comm/transport.h cli/opt.h; do
	try core "$h" hidden
	try stage "$h" hidden
done
try core perfdb/table.h ok
# the operator layer: itself, below every backend
try opdef replay/opdef/opdef.h ok
try opdef backend/backend.h hidden
try opdef replay/engine.h hidden
# the report: the operator layer's definitions (its costs), nothing above them
try report replay/opdef/opdef.h ok
for h in backend/backend.h replay/engine.h comm/transport.h cli/opt.h; do
	try report "$h" hidden
done
# backends: the operator layer and the transport interface, not the engine or the stages
try backend backend/backend.h ok
try backend replay/opdef/opdef.h ok
try backend comm/transport.h ok
try backend replay/engine.h hidden
try backend comm/harness.h hidden
try backend cli/opt.h hidden
# the replay stage: backends and the operator layer, not the CLI
try replay replay/engine.h ok
try replay backend/backend.h ok
try replay cli/opt.h hidden
try replay comm/harness.h hidden

# a relative climb would get round the trees
if grep -rn '#include "\.\./' "$src/src" --include='*.c' --include='*.h' --include='*.cu'; then
	echo "FAIL: an include climbs out of its folder with ../"
	fail=1
fi
[ $fail -eq 0 ] && echo "layers: ok"
exit $fail
