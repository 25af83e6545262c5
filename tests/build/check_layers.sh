#!/bin/bash
# The layering is the build's (CMakeLists.txt perfdb_layer and
# perfdb_layer_lib, docs/design.md "Layers"): each layer's sources compile
# with include/ and their own tree of links under build/layers/<layer>/,
# and each layer is its own library, linked with the layers below it only.
# This checks, with the compiler the build uses, that each tree lets
# through what the layer may use and stops what it may not, that no source
# climbs out with "../", and, from the archives' symbols, that no layer
# calls up or across.
#   check_layers.sh CC SRC_DIR BUILD_DIR [MPI_INCLUDE_DIR...]
set -u
cc=$1 src=$2 bld=$3
shift 3
mpi=()
for d in "$@"; do mpi+=(-isystem "$d"); done
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

layers="core ops backend parse grid comm report replay predict closure"
for l in $layers; do
	[ -d "$bld/layers/$l" ] || { echo "FAIL: no include tree for layer $l"; fail=1; }
done
stages="parse/parse.h grid/grid.h comm/comm.h report/dbreport.h replay/replay.h predict/predict.h closure/closure.h"
# core: its public headers only
for h in ops/opdef.h backend/backend.h backend/transport.h replay/engine.h cli/opt.h $stages; do
	try core "$h" hidden
done
try core perfdb/table.h ok
try core perfdb/op_mapping.h ok
# the operator layer: itself, below every backend and stage
try ops ops/opdef.h ok
try ops ops/coll.h ok
for h in backend/backend.h backend/transport.h replay/engine.h $stages; do
	try ops "$h" hidden
done
# backends: the operator layer and their own interfaces, no stage
try backend backend/backend.h ok
try backend backend/transport.h ok
try backend backend/kernel_report.h ok
try backend ops/opdef.h ok
for h in replay/engine.h comm/harness.h cli/opt.h $stages; do
	try backend "$h" hidden
done
# each stage: its own folder and what lies below it, never another stage
for st in parse grid comm report replay; do
	for h in $stages comm/harness.h replay/engine.h cli/opt.h; do
		case $h in "$st"/*) try "$st" "$h" ok ;; *) try "$st" "$h" hidden ;; esac
	done
done
# parse sizes the collectives of a profile by the operator layer's comm definitions
try parse ops/coll.h ok
try grid ops/opdef.h ok
try comm ops/coll.h ok
try comm backend/transport.h ok
try report ops/opdef.h ok
try report backend/backend.h hidden
try replay backend/backend.h ok
try replay ops/opdef.h ok
# predict: built on the parse stage's readers, and nothing else above core
try predict predict/predict.h ok
try predict parse/parse.h ok
for h in grid/grid.h comm/comm.h report/dbreport.h replay/replay.h replay/engine.h \
	 ops/opdef.h backend/backend.h cli/opt.h; do
	try predict "$h" hidden
done
# closure: the torch replay run in predict's op sequence, and no other stage
try closure closure/closure.h ok
try closure predict/predict.h ok
try closure replay/torch_run.h ok
for h in grid/grid.h comm/comm.h report/dbreport.h cli/opt.h; do
	try closure "$h" hidden
done
# and no stage below it sees it
for st in parse grid comm report replay predict; do
	try "$st" closure/closure.h hidden
done

# Links: the build links each layer's whole archive with only the layers
# below it (CMakeLists.txt perfdb_layer_lib, build/linkcheck/), so a call
# that climbs fails the build.  Here the same rule by a second method:
# every symbol a layer's archive leaves undefined is defined in a layer it
# may use, or in no perfdb archive at all (libc, MPI, ...).
declare -A below=([core]="" [ops]="core" [backend]="ops core"
	[parse]="ops core" [grid]="ops core" [comm]="backend ops core"
	[report]="ops core" [replay]="backend ops core" [predict]="parse ops core"
	[closure]="predict replay parse backend ops core")
defs() { nm -g --defined-only "$bld/libperfdb-$1.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRCV]/ {print $3}' | sort -u; }
for l in $layers; do
	[ -f "$bld/libperfdb-$l.a" ] || { echo "FAIL: no library for layer $l"; fail=1; }
	defs "$l" >"$tmp/def.$l"
done
cat "$tmp"/def.* | sort -u >"$tmp/def.all"
check_link() {   # layer "allowed layers" -> prints the symbols that climb
	local l=$1 allowed=$2
	nm -u "$bld/libperfdb-$l.a" | awk 'NF == 2 {print $2}' | sort -u >"$tmp/undef"
	: >"$tmp/ok"
	for d in $l $allowed; do cat "$tmp/def.$d" >>"$tmp/ok"; done
	sort -u -o "$tmp/ok" "$tmp/ok"
	# ours (defined in some perfdb layer) but not in an allowed one
	comm -12 "$tmp/undef" "$tmp/def.all" | comm -23 - "$tmp/ok"
}
for l in $layers; do
	bad=$(check_link "$l" "${below[$l]}")
	[ -z "$bad" ] || { echo "FAIL: layer $l calls up or across:" $bad | head -c 600; echo; fail=1; }
done
# the check itself can fail: replay's archive checked against core alone
# must show its calls into the backends
[ -n "$(check_link replay core)" ] || { echo "FAIL: the link check saw no climb where one is"; fail=1; }
# and the build made the link-check programs, one per layer
for l in $layers; do
	[ -x "$bld/linkcheck/perfdb_linkcheck_$l" ] || { echo "FAIL: no link check for layer $l"; fail=1; }
done

# a relative climb would get round the trees
if grep -rn '#include "\.\./' "$src/src" --include='*.c' --include='*.h' --include='*.cu'; then
	echo "FAIL: an include climbs out of its folder with ../"
	fail=1
fi
[ $fail -eq 0 ] && echo "layers: ok"
exit $fail
