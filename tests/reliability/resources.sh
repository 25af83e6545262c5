#!/usr/bin/env bash
# Resources: a full disk, a read-only database and a missing parent
# directory each give a clear error and exit 1, leave every old file as it
# was and leave no temporary file.
#
# What is real and what is simulated (printed as the test runs):
#  - full disk: a 2 MiB tmpfs filled to the last block, when mount(8) is
#    permitted (root with CAP_SYS_ADMIN); always also RLIMIT_FSIZE = 0
#    (`ulimit -f 0` with SIGXFSZ ignored: every write fails with EFBIG),
#    which needs no privilege.
#  - read-only database: a read-only bind mount when permitted, else (not
#    root) a directory without write permission; root without mount
#    cannot be stopped by permissions, so that part is then skipped.
#  - missing parent: real.
#   usage: resources.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
MOUNTS=()
cleanup() {
  local m
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
P=$PERFDB
"$GEN_PROFILE" "$WORK/pa" --rows 5000 --ranks 1 --seed 11 >/dev/null
"$GEN_PROFILE" "$WORK/pb" --rows 5000 --ranks 1 --seed 12 --layers 3 >/dev/null
"$P" parse -q --profiling-path "$WORK/pa" --database-path "$WORK/db0" >/dev/null || fail "parse"
python3 "$HERE/gen_op_summary.py" "$WORK/db0" "$WORK/wprof/PROF_000001_1/mindstudio_profiler_output/op_summary_1.csv"

# expect_fail LABEL DB REGEX CMD...: exit 1, one error line matching REGEX,
# DB unchanged (every file but the lock, whose content is the last holder's
# pid, by hash), no temporary file.  The message goes through a pipe: under
# RLIMIT_FSIZE a regular file could not receive it.
expect_fail() {
  local label=$1 db=$2 re=$3; shift 3
  local before
  before=$(tree_hashes "$db" | grep -v '/\.perfdb\.lock$')
  "$@" 2>&1 >/dev/null | cat >"$WORK/err"
  local rc=${PIPESTATUS[0]}
  [ $rc -eq 1 ] || fail "$label: exit $rc, expected 1 ($(head -2 "$WORK/err"))"
  grep -Eq "$re" "$WORK/err" || fail "$label: message '$(tail -1 "$WORK/err")' does not match /$re/"
  [ "$(tree_hashes "$db" | grep -v '/\.perfdb\.lock$')" = "$before" ] || fail "$label: the database changed"
  [ -z "$(temps "$db")" ] || fail "$label: temporary files left: $(temps "$db")"
  echo "$label: $(tail -1 "$WORK/err")"
}

can_mount=0
mkdir -p "$WORK/probe"
if mount -t tmpfs -o size=64k tmpfs "$WORK/probe" 2>/dev/null; then
  umount "$WORK/probe"; can_mount=1
fi

cmds() {  # DB: the writers, each as one line
  echo "parse:$P parse -q --profiling-path $WORK/pb --database-path $1"
  echo "grid:$P grid --database-path $1 --target-models Qwen/Qwen3-32B --rows 20 --seed 1"
  echo "writeback:$P writeback --profiling-path $WORK/wprof --database-path $1"
}
run_all() {  # TITLE DB REGEX [PREFIX...]
  local title=$1 db=$2 re=$3; shift 3
  local line
  while IFS= read -r line; do
    # shellcheck disable=SC2086
    expect_fail "$title, ${line%%:*}" "$db" "$re" "$@" ${line#*:}
  done < <(cmds "$db")
}

# ---- full disk ----
if [ $can_mount -eq 1 ]; then
  echo "full disk: a 2 MiB tmpfs, filled"
  mkdir -p "$WORK/full"
  mount -t tmpfs -o size=2m tmpfs "$WORK/full" && MOUNTS+=("$WORK/full")
  cp -a "$WORK/db0" "$WORK/full/db"
  mkdir -p "$WORK/full/db/reports"   # writeback's report directory, made before the disk fills
  dd if=/dev/zero of="$WORK/full/filler" bs=4k 2>/dev/null
  run_all "tmpfs full" "$WORK/full/db" "^perfdb [a-z]+: error: .*'$WORK/full/db/[^']*'.*No space left on device$"
else
  echo "full disk: mount not permitted here; the tmpfs part is skipped (RLIMIT_FSIZE below still runs)"
fi
echo "full disk simulated by RLIMIT_FSIZE = 0 (writes fail with EFBIG)"
cp -a "$WORK/db0" "$WORK/fsize"
mkdir -p "$WORK/fsize/reports"
run_all "RLIMIT_FSIZE" "$WORK/fsize" "^perfdb [a-z]+: error: .*'$WORK/fsize/[^']*'.*File too large$" \
  bash -c 'trap "" XFSZ; (ulimit -f 0; exec "$@") 2>&1 >/dev/null | cat >&2; exit "${PIPESTATUS[0]}"' fsize

# ---- read-only database ----
cp -a "$WORK/db0" "$WORK/ro"
if [ $can_mount -eq 1 ] && mount --bind "$WORK/ro" "$WORK/ro" && MOUNTS+=("$WORK/ro") &&
   mount -o remount,bind,ro "$WORK/ro"; then
  echo "read-only database: a read-only bind mount"
  run_all "read-only mount" "$WORK/ro" "^perfdb [a-z]+: error: .*'$WORK/ro/[^']*'.*Read-only file system$"
elif [ "$(id -u)" != 0 ]; then
  echo "read-only database: a directory without write permission (not root)"
  chmod -R a-w "$WORK/ro"
  run_all "no write permission" "$WORK/ro" "^perfdb [a-z]+: error: .*'$WORK/ro/[^']*'.*Permission denied$"
  chmod -R u+w "$WORK/ro"
else
  echo "read-only database: SKIPPED (root without mount: permissions do not stop root)"
fi

# ---- missing parent directory ----
echo "missing parent directory"
cp -a "$WORK/db0" "$WORK/db"
printf '{"traceEvents": []}' > "$WORK/trace.json"
expect_fail "trace-to-csv into a missing directory" "$WORK/db" \
  "^perfdb trace-to-csv: error: cannot write '$WORK/missing/dir/out.csv': no temporary file in '$WORK/missing/dir': No such file or directory$" \
  "$P" trace-to-csv --trace "$WORK/trace.json" --output "$WORK/missing/dir/out.csv"
expect_fail "report into a missing directory" "$WORK/db" \
  "^perfdb report: error: cannot write '$WORK/missing/r.html': no temporary file in '$WORK/missing': No such file or directory$" \
  "$P" report --database-path "$WORK/db" --html "$WORK/missing/r.html"
expect_fail "grid on a missing database" "$WORK/db" \
  "^perfdb grid: error: Data directory does not exist: $WORK/missing/db$" \
  "$P" grid --database-path "$WORK/missing/db"
touch "$WORK/afile"
expect_fail "parse under a file" "$WORK/db" \
  "^perfdb parse: error: cannot create directory '$WORK/afile/db': '$WORK/afile' is not a directory$" \
  "$P" parse -q --profiling-path "$WORK/pa" --database-path "$WORK/afile/db"
expect_fail "writeback under a file" "$WORK/db" \
  "^perfdb writeback: error: cannot create directory '$WORK/afile/db': '$WORK/afile' is not a directory$" \
  "$P" writeback --profiling-path "$WORK/wprof" --database-path "$WORK/afile/db"
[ ! -e "$WORK/missing" ] || fail "a missing directory was created"
finish
