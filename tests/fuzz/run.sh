#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR for SECONDS each.  New inputs go to
# a scratch corpus (the committed seed corpus is read, never written); crashes
# are saved under BUILD_DIR/fuzz-artifacts/ and fail the run.
set -u
BUILD=$1
SECONDS_EACH=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/fuzz-artifacts"
status=0
for bin in "$BUILD"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  scratch="$BUILD/fuzz-corpus/$name"
  mkdir -p "$scratch"
  echo "== $name: ${SECONDS_EACH}s"
  if ! "$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
       -artifact_prefix="$BUILD/fuzz-artifacts/$name-" \
       "$scratch" "$HERE/corpus/$name" 2>"$BUILD/fuzz-$name.log"; then
    echo "   FAILED: see $BUILD/fuzz-$name.log and $BUILD/fuzz-artifacts/"
    status=1
  fi
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$BUILD/fuzz-$name.log" | sed 's/^/   /'
done
exit $status
