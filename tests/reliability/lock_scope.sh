#!/usr/bin/env bash
# The lock's scope and what it leaves (docs/database.md "Writes",
# docs/reliability.md guarantees 4, 5 and 9):
#  1. Nothing is left behind: after parse, grid (and its no-op re-run),
#     writeback, microbench, check and report the database holds exactly its
#     tables and reports/; a no-op grid leaves every byte as it was.
#  2. One serial order whatever the paths: `grid --database-root R` and
#     `parse --database-root R <version flags>` (which writes R/<dev>/
#     vllm_ascend/<v>) started together, 5 rounds: the result equals grid-
#     then-parse or parse-then-grid (both computed serially and checked to
#     differ); a lock of the wrong scope gives neither.
#  3. A writer of a directory holds off writers above and below it: while a
#     process holds R/<dev>/vllm_ascend/<v> as perfdb does, grid on R and
#     parse through a symlink alias of <v> time out with the holder's pid;
#     a sibling version directory is written meanwhile.
#  4. No symlink is followed: `<db>/.perfdb.lock -> ../victim` (the old
#     attack) leaves victim untouched, a dangling one creates nothing, and a
#     linked directory or table inside the database is not walked into.
#  5. A FIFO where a table should be is an error, not a hang.
#  6. microbench --prune-empty-duration-rows never deletes the rows that a
#     grid added while it measured (they are not rows it saw and failed).
#   usage: lock_scope.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
ORACLE="$HERE/../grid/oracle_grid.py"
extras() {  # entries of DIR that are neither tables, the mapping (microbench's) nor under reports/
  find "$1" -mindepth 1 ! -name '*.csv' ! -path "$1/op_mapping.yaml" ! -path "$1/reports" \
    ! -path "$1/reports/*" | sort
}
hidden() { find "$1" -name '.*' | sort; }

# ---- 1. nothing left behind ----
D="$WORK/plain"
python3 "$ORACLE" make-db "$D" >/dev/null || fail make-db
"$GEN_PROFILE" "$WORK/prof" --rows 3000 --ranks 1 --seed 5 >/dev/null
python3 "$HERE/gen_op_summary.py" "$D" "$WORK/ops/PROF_000001_1/mindstudio_profiler_output/op_summary_1.csv" 2
run() {  # LABEL CMD...
  local label=$1; shift
  "$@" >/dev/null 2>"$WORK/one.err" || { fail "$label failed: $(cat "$WORK/one.err")"; return; }
  [ -z "$(extras "$D")" ] || fail "$label left: $(extras "$D" | tr '\n' ' ')"
  [ -z "$(hidden "$D")" ] || fail "$label left hidden files: $(hidden "$D" | tr '\n' ' ')"
}
run parse "$P" parse -q --profiling-path "$WORK/prof" --database-path "$D"
run grid "$P" grid -q --database-path "$D" --target-models Qwen/Qwen3-32B --rows 20 --seed 1
before=$(tree_hashes "$D")
run "grid again" "$P" grid -q --database-path "$D" --target-models Qwen/Qwen3-32B --rows 20 --seed 1
# the same seed draws the same rows, all present now: nothing may change
[ "$(tree_hashes "$D")" = "$before" ] || fail "a no-op grid run changed the database"
run writeback "$P" writeback --profiling-path "$WORK/ops" --database-path "$D"
[ ! -e "$D/op_mapping.yaml" ] || fail "parse, grid or writeback wrote an op_mapping.yaml into an Ascend database"
run microbench env PERFDB_PROBE=0 "$P" microbench --backend cpu --force-device --database-path "$D" \
  --ops Add --repeat-count 1 --row-budget 0.01
# --backend cpu writes the simulator's mapping (docs/database.md "op_mapping.yaml"), perfdb's own file
grep -q '^# perfdb-op-mapping fnv1a64:' "$D/op_mapping.yaml" ||
  fail "microbench --backend cpu left no op_mapping.yaml of its own"
run check "$P" check --database-path "$D"
run report "$P" report --database-path "$D" --html "$WORK/r.html"
echo "nothing left behind: $(find "$D" -maxdepth 1 -name '*.csv' | wc -l) tables, op_mapping.yaml and reports/ only"

# ---- 2. grid on the root || parse into a version directory ----
VREL=TEST_DEVICE/vllm_ascend/vllm0.1_torch2.0_cann8.0
python3 "$ORACLE" make-db "$WORK/R0/$VREL" >/dev/null || fail make-db
"$GEN_PROFILE" "$WORK/pr" --rows 20000 --ranks 2 --seed 11 >/dev/null
grid_root() { "$P" grid -q --database-root "$1" --target-models Qwen/Qwen3-32B --rows 50 --seed 3 \
  >/dev/null 2>>"$WORK/err"; }
parse_ver() { "$P" parse -q --profiling-path "$WORK/pr" --database-root "$1" --device TEST_DEVICE \
  --vllm-version 0.1 --torch-version 2.0 --cann-version 8.0 >/dev/null 2>>"$WORK/err"; }
race "grid on the root || parse into $VREL" "$WORK/R0" 5 grid_root parse_ver tree_hashes

# ---- 3. a holder of a version directory, as perfdb holds it ----
R="$WORK/held"; cp -a "$WORK/R0" "$R"
mkdir -p "$R/TEST_DEVICE/vllm_ascend/vllm0.2_torch2.0_cann8.0"
ln -s "$R/$VREL" "$WORK/alias"
mkfifo "$WORK/release.fifo"
# shared flocks on every parent, top-down, then the directory exclusively
python3 - "$R/$VREL" "$WORK/ready" "$WORK/release.fifo" <<'PY' &
import fcntl, os, sys
d = os.path.realpath(sys.argv[1])
parts, fds = d.strip("/").split("/"), []
for k in range(len(parts) + 1):
    fd = os.open("/" + "/".join(parts[:k]), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX if k == len(parts) else fcntl.LOCK_SH)
    fds.append(fd)
open(sys.argv[2], "w").close()
open(sys.argv[3]).read()
PY
holder=$!
until [ -e "$WORK/ready" ]; do sleep 0.05; done
before=$(tree_hashes "$R")
PERFDB_LOCK_TIMEOUT=1 "$P" grid -q --database-root "$R" --target-models Qwen/Qwen3-32B --rows 5 \
  --seed 1 >/dev/null 2>"$WORK/g.err"; rc=$?
[ $rc -eq 1 ] || fail "grid on the root while a version is held: exit $rc"
grep -q "^perfdb grid: error: database '$R' is locked by another perfdb process (pid $holder: python3); gave up after 1 s" "$WORK/g.err" ||
  fail "grid's lock message: $(cat "$WORK/g.err")"
PERFDB_LOCK_TIMEOUT=1 "$P" parse -q --profiling-path "$WORK/prof" --database-path "$WORK/alias" \
  >/dev/null 2>"$WORK/p.err"; rc=$?
[ $rc -eq 1 ] || fail "parse through a link to the held directory: exit $rc"
grep -q "is locked by another perfdb process (pid $holder: python3)" "$WORK/p.err" ||
  fail "parse's lock message: $(cat "$WORK/p.err")"
[ "$(tree_hashes "$R")" = "$before" ] || fail "a writer changed a held database"
PERFDB_LOCK_TIMEOUT=1 "$P" parse -q --profiling-path "$WORK/prof" \
  --database-path "$R/TEST_DEVICE/vllm_ascend/vllm0.2_torch2.0_cann8.0" >/dev/null 2>"$WORK/s.err" ||
  fail "a sibling version directory could not be written: $(cat "$WORK/s.err")"
echo go > "$WORK/release.fifo"; wait $holder
echo "a held version directory: grid on the root and parse through a link waited, a sibling was written"

# ---- 4. no symlink followed ----
S="$WORK/sym"; mkdir -p "$S/db" "$WORK/outside"
echo "precious" > "$WORK/victim.txt"
ln -s ../victim.txt "$S/db/.perfdb.lock"
"$P" parse -q --profiling-path "$WORK/prof" --database-path "$S/db" >/dev/null 2>"$WORK/e" ||
  fail "parse beside a planted link: $(cat "$WORK/e")"
[ "$(cat "$WORK/victim.txt")" = "precious" ] || fail "the lock wrote through a planted link"
rm "$S/db/.perfdb.lock"; ln -s ../created.txt "$S/db/.perfdb.lock"
"$P" parse -q --profiling-path "$WORK/prof" --database-path "$S/db" >/dev/null 2>"$WORK/e" ||
  fail "parse beside a dangling link: $(cat "$WORK/e")"
[ ! -e "$S/created.txt" ] || fail "the lock created the target of a dangling link"
rm "$S/db/.perfdb.lock"
python3 "$ORACLE" make-db "$WORK/outside" >/dev/null
cp "$WORK/outside/Add.csv" "$WORK/Add.outside"
ln -s ../../outside "$S/db/shared"
ln -s . "$S/db/loop"
ln -s ../../outside/Mul.csv "$S/db/Linked.csv"
cp "$WORK/outside/Mul.csv" "$WORK/Mul.outside"
"$P" grid --database-path "$S/db" --target-models Qwen/Qwen3-32B --rows 5 --seed 1 >"$WORK/o" 2>"$WORK/e" ||
  fail "grid beside linked directories: $(cat "$WORK/e")"
cmp -s "$WORK/outside/Add.csv" "$WORK/Add.outside" && cmp -s "$WORK/outside/Mul.csv" "$WORK/Mul.outside" ||
  fail "grid wrote outside the database through a link"
n=$(find "$S/db" -maxdepth 1 -name '*.csv' -type f | wc -l)
grep -q "of the $n CSV files under" "$WORK/o" || fail "grid walked links or loops: $(grep Appended "$WORK/o")"
echo "links: the lock and the walk stayed inside the database ($n tables walked)"

# ---- 5. a FIFO where a table should be ----
F="$WORK/fifo"; mkdir -p "$F"
"$P" parse -q --profiling-path "$WORK/prof" --database-path "$F" >/dev/null 2>&1 || fail "parse"
t=$(ls "$F" | head -1); rm "$F/$t"; mkfifo "$F/$t"
timeout 20 "$P" parse -q --profiling-path "$WORK/prof" --database-path "$F" >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 1 ] || fail "parse into a database with a FIFO table: exit $rc (124 = hung)"
grep -q "'$F/$t': not a regular file" "$WORK/e" || fail "FIFO message: $(cat "$WORK/e")"
nohang() {  # LABEL CMD...: exits within 20 s, non-zero, naming the FIFO
  local label=$1; shift
  timeout 20 "$@" >"$WORK/e" 2>&1; local rc=$?
  [ $rc -ne 124 ] || { fail "$label hung on a FIFO"; return; }
  [ $rc -ne 0 ] || fail "$label accepted a FIFO"
  grep -q "not a regular file" "$WORK/e" || fail "$label: $(cat "$WORK/e")"
}
nohang check "$P" check --database-path "$F"
nohang report "$P" report --database-path "$F" --html "$WORK/f.html"
[ -p "$F/Add.csv" ] || { rm -f "$F/Add.csv"; mkfifo "$F/Add.csv"; }
nohang microbench env PERFDB_PROBE=0 "$P" microbench --backend cpu --force-device --database-path "$F" \
  --ops Add --repeat-count 1 --row-budget 0.01
mkdir -p "$WORK/model"; mkfifo "$WORK/model/config.json"
nohang "grid --model-config" "$P" grid --database-path "$D" --model-config "$WORK/model/config.json" --rows 1
echo "FIFOs where tables or a model config should be: parse, check, report, microbench, grid exit 1 naming them"
# ---- 6. prune keeps what others added meanwhile ----
M="$WORK/prune"; mkdir -p "$M"
python3 "$ORACLE" make-db "$WORK/m0" >/dev/null; cp "$WORK/m0/Add.csv" "$M/"
grid_add() {  # DB SEED ROWS
  "$P" grid -q --database-path "$1" --target-models Qwen/Qwen3-32B --seed "$2" --rows "$3" \
    >/dev/null 2>>"$WORK/err"; }
grid_add "$M" 2 4 || fail "grid: $(cat "$WORK/err")"   # 5 rows, 40 repeats: seconds
base=$(wc -l < "$M/Add.csv")
cp -a "$M" "$WORK/m_grid"
grid_add "$WORK/m_grid" 7 30 || fail "grid: $(cat "$WORK/err")"
added=$(( $(wc -l < "$WORK/m_grid/Add.csv") - base ))
[ "$added" -gt 0 ] || fail "grid added no rows: the check would be blind"
PERFDB_PROBE=0 "$P" microbench --backend cpu --force-device --database-path "$M" --ops Add \
  --repeat-count 40 --row-budget 3 --prune-empty-duration-rows >/dev/null 2>"$WORK/mb.err" & mb=$!
sleep 1.5   # microbench has read the table and is measuring
kill -0 $mb 2>/dev/null || fail "microbench finished before grid ran: the check would be blind"
grid_add "$M" 7 30 || fail "grid during microbench: $(cat "$WORK/err")"
wait $mb || fail "microbench: $(cat "$WORK/mb.err")"
lines=$(wc -l < "$M/Add.csv")
# the measured rows and every row grid added (serially: microbench, then grid)
[ "$lines" -eq $((base + added)) ] ||
  fail "prune during a concurrent grid: $lines lines, want $((base + added)) (grid's rows were deleted)"
echo "prune || grid: the $added rows grid added while microbench measured were kept"
finish
