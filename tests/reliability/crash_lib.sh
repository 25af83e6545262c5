# The SIGKILL loop shared by tests/reliability/crash_*.sh (sourced after lib.sh).
#
# crash_loop NAME BASE CMD CHECK
#   BASE  a directory holding db/ (the old database) and the command's inputs
#   CMD   a bash command run in a copy of BASE (writes db/); the loop starts
#         it with exec, so no leading VAR=value (use env VAR=value cmd)
#   CHECK "hash": every table must hash to its old or its new content, the
#         new one from an uninterrupted run of CMD on another copy;
#         "shape": (measured values differ run to run) every table must be
#         the old one or parse as a complete table with the new run's header,
#         row count and the cells that the run does not measure.
# KILLS instants (default 50, $PERFDB_RELIABILITY_KILLS) are drawn uniformly
# over 1.1x the command's measured duration with bash's PRNG seeded by
# $PERFDB_RELIABILITY_SEED (default 1; printed).  After each kill: the lock
# can be taken, each table is old or new, temporary files are only the
# killed process's own, and the next run succeeds, removes them and leaves
# the new tables.
KILLS=${PERFDB_RELIABILITY_KILLS:-50}
SEED=${PERFDB_RELIABILITY_SEED:-1}
# With at least BLIND_MIN kills, a loop in which every kill left the old
# tables is a failure: its kills never met a write, so it proved nothing
# (the microbench loop once ran that way for a day, its command failing
# under exec).  Below that, "all old" can happen by chance: microbench
# writes in the last fifth of its run, 0.8^30 < 0.2 %.
BLIND_MIN=${BLIND_MIN:-30}

run_in() { (cd "$1" && bash -c "$2" >/dev/null 2>"$1/.stderr"); }

# shape_check OLD_DB NEW_DB LABEL=RUN_DB...: every RUN_DB against the shape
# rule, in one Python process (its start-up is a quarter second on these VMs:
# once per kill it was most of the loop's time).  Failures name their LABEL.
shape_check() {
  python3 - "$@" <<'PY'
import csv, os, sys
old, new = sys.argv[1:3]
def load(d, f):
    p = os.path.join(d, f)
    if not os.path.exists(p):
        return None
    with open(p, newline="") as h:
        return h.read()
bad = 0
for arg in sys.argv[3:]:
    label, run = arg.split("=", 1)
    for f in sorted(set(os.listdir(new)) | set(os.listdir(old))):
        if not f.endswith(".csv"):
            continue
        o, n, r = load(old, f), load(new, f), load(run, f)
        if r == o:
            continue
        if r is None or n is None or not r.endswith("\n"):
            print("FAIL: %s: %s is neither the old table nor a complete new one" % (label, f)); bad += 1; continue
        R, N = list(csv.reader(r.splitlines())), list(csv.reader(n.splitlines()))
        O = list(csv.reader(o.splitlines())) if o else None
        if len(R) != len(N) or R[0] != N[0] or any(len(x) != len(N[0]) for x in R):
            print("FAIL: %s: %s is a partial table (%d rows, want %d)" % (label, f, len(R), len(N))); bad += 1
            continue
        # cells the run left alone (same in the old and the new table) must match
        if O and len(O) == len(N) and O[0] == N[0]:
            for i in range(1, len(N)):
                for j in range(len(N[0])):
                    if O[i][j] == N[i][j] and R[i][j] != N[i][j]:
                        print("FAIL: %s: %s row %d col %d changed" % (label, f, i, j)); bad += 1
sys.exit(1 if bad else 0)
PY
}

crash_loop() {
  local name=$1 base=$2 cmd=$3 check=$4
  local ref="$WORK/$name.ref" run="$WORK/$name.run"
  rm -rf "$ref"; cp -a "$base" "$ref"
  local t0 t1 dur
  t0=$(now)
  if ! run_in "$ref" "$cmd"; then fail "$name: the uninterrupted run failed: $(cat "$ref/.stderr")"; return; fi
  t1=$(now)
  dur=$(elapsed "$t0" "$t1")
  # each table's old and new hash (absent: empty), for the per-kill check
  local old_h new_h f
  local -A O=() N=() G=() ALL=()
  table_hashes "$base/db" O; old_h=$TH
  table_hashes "$ref/db" N; new_h=$TH
  [ "$old_h" != "$new_h" ] || { fail "$name: the command changes no table"; return; }
  for f in "${!O[@]}" "${!N[@]}"; do ALL[$f]=1; done
  local dur_us
  dur_us=$(awk -v d="$dur" 'BEGIN { printf "%d", d * 1e6 }')
  RANDOM=$SEED
  echo "$name: $KILLS kills over ${dur}s (seed $SEED, ${check} check)"
  local i n_old=0 n_new=0 n_mixed=0 n_tmp=0 states="$WORK/$name.states" shapes=()
  rm -rf "$states"; mkdir -p "$states"
  for ((i = 1; i <= KILLS; i++)); do
    rm -rf "$run"; cp -a "$base" "$run"
    local delay us
    us=$((dur_us * 11 * RANDOM / 327680))   # uniform over 1.1x the duration
    printf -v delay '%d.%06d' $((us / 1000000)) $((us % 1000000))
    (cd "$run" && exec bash -c "exec $cmd" >/dev/null 2>&1) &
    local pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    local got
    table_hashes "$run/db" G; got=$TH
    if [ "$check" = hash ]; then
      # each table: its old or its new hash (absent counts as a state too)
      local bad=
      for f in "${!ALL[@]}"; do
        [ "${G[$f]-}" = "${O[$f]-}" ] || [ "${G[$f]-}" = "${N[$f]-}" ] || bad+=" $f"
      done
      [ -z "$bad" ] || fail "$name kill $i (after ${delay}s): neither old nor new:$bad"
    else
      cp -a "$run/db" "$states/$i.killed"
      shapes+=("kill $i (after ${delay}s)=$states/$i.killed")
    fi
    if [ "$got" = "$old_h" ]; then n_old=$((n_old + 1))
    elif [ "$check" = hash ] && [ "$got" = "$new_h" ]; then n_new=$((n_new + 1))
    else n_mixed=$((n_mixed + 1)); fi
    lock_free "$run/db" || fail "$name kill $i: the lock is still held"
    local t
    for t in $(temps "$run"); do
      n_tmp=$((n_tmp + 1))
      case $(basename "$t") in
        *.tmp."$pid".*) ;;   # the killed writer's own, removed by the next run
        *) fail "$name kill $i: unexpected temporary file $t" ;;
      esac
    done
    if ! run_in "$run" "$cmd"; then
      fail "$name kill $i: the next run failed: $(head -3 "$run/.stderr")"; continue
    fi
    [ -z "$(temps "$run")" ] || fail "$name kill $i: the next run left $(temps "$run")"
    if [ "$check" = hash ]; then
      table_hashes "$run/db"
      [ "$TH" = "$new_h" ] || fail "$name kill $i: the next run did not give the new tables"
    else
      cp -a "$run/db" "$states/$i.next"
      shapes+=("the run after kill $i=$states/$i.next")
    fi
  done
  if [ "$check" = shape ]; then
    local out line
    if ! out=$(shape_check "$base/db" "$ref/db" "${shapes[@]}"); then
      [ -n "$out" ] || out="FAIL: the shape check itself failed"
      while IFS= read -r line; do fail "$name: ${line#FAIL: }"; done <<< "$out"
    fi
  fi
  # a loop whose kills all fell before the first write proves nothing
  if [ "$KILLS" -ge "$BLIND_MIN" ] && [ "$n_old" -eq "$KILLS" ]; then
    fail "$name: all $KILLS kills left the old tables: none fell on a write (blind loop)"
  fi
  echo "$name: tables all old after $n_old kills, all new after $n_new, some of each after $n_mixed; $n_tmp temporary file(s) of killed writers found and removed by the next run"
}
