#!/usr/bin/env bash
# The report page in a real browser (issues 11, 23): headless Chromium loads
# the page of the committed database tests/data/report/db, and of the
# committed example database examples/database, without a console error;
# every chart drawn holds as many <circle class="pt"> points as its
# data-points attribute says, and more than none; no "no data points"
# placeholder is left; the summary figures read off the rendered page are
# the ones tests/unit/report/test_dbreport.c asserts (worked out by hand there);
# a screenshot of each page at a 1366-px laptop width is written for review.
# Skips (exit 77) when chromium is not installed.
#   chromium.sh PERFDB DATA_DIR SHOT_PNG   (the example page: SHOT_PNG with _example before .png)
set -u
PERFDB=$1 DATA=$2 SHOT=$3
SHOT2=${SHOT%.png}_example.png
CHROMIUM=$(command -v chromium || command -v chromium-browser) || {
  echo "chromium not installed: skipped"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-chromium.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r "$DATA/report/db" "$WORK/db"
"$PERFDB" report --database-root "$WORK/db" --device TEST_DEVICE \
  --vllm-version vllm1.0.0_torch2.0.0_cann8.0 --html "$WORK/report.html" >/dev/null || exit 1
cp -r "$DATA/../../examples/database" "$WORK/example"
"$PERFDB" report --database-root "$WORK/example" --vllm-version 0.13.0 --torch-version 2.8.0 \
  --cann-version 8.3 --html "$WORK/example.html" >/dev/null || exit 1
run() {   # page, then chromium flags
  local page=$1; shift
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$WORK/profile" \
    --enable-logging=stderr --v=0 "$@" "file://$WORK/$page"
}
fail=0
check_page() {   # page shot charts
  local page=$1 shot=$2 charts=$3
  run "$page" --dump-dom >"$WORK/dom.html" 2>"$WORK/dom.err" || {
    echo "chromium failed on $page"; cat "$WORK/dom.err"; fail=1; return; }
  run "$page" --screenshot="$shot" --window-size=1366,2400 >/dev/null 2>"$WORK/shot.err" || {
    echo "chromium screenshot of $page failed"; cat "$WORK/shot.err"; fail=1; return; }
  if grep -E 'CONSOLE|Uncaught|Failed to load|net::ERR' "$WORK/dom.err" "$WORK/shot.err"; then
    echo "$page: console errors above"; fail=1
  fi
  if grep -q 'no data points' "$WORK/dom.html"; then echo "$page: a 'no data points' placeholder"; fail=1; fi
  # One record per chart: its declared count, then the circles up to </svg>.
  awk -v want_charts="$charts" -v page="$page" 'BEGIN { RS = "<svg class=\"chart\""; n = 0; bad = 0 }
       NR > 1 { n++; split($0, a, "</svg>"); body = a[1]
                match(body, /data-points="[0-9]+"/); want = substr(body, RSTART + 13, RLENGTH - 14) + 0
                got = gsub(/<circle class="pt/, "", body)
                if (got != want || want == 0) { print page " chart " n ": " got " points, data-points " want; bad = 1 } }
       END { if (n != want_charts) { print page ": " n " charts, expected " want_charts; bad = 1 } exit bad }' \
    "$WORK/dom.html" || fail=1
  [ -s "$shot" ] && [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || {
    echo "no PNG screenshot at $shot"; fail=1; }
}
figure() { sed -n "s/.*<b data-figure=\"$1\">\([0-9]*\)<\/b>.*/\1/p" "$WORK/dom.html" | head -n 1; }
# the fixture: the overall scatter and 2 x 2 collective charts (no type reaches 8 points)
check_page report.html "$SHOT" 5
for kv in rows=10 usable=8 profiled=6 mb_only=2 theory_only=2 both=4 hot=2 failed=1 contended=2 \
          roof=7 above=0 no_cost=0 no_device=1 comm_tables=2 comm_ops=2 comm_series=3 comm_points=4; do
  got=$(figure "${kv%%=*}")
  [ "$got" = "${kv#*=}" ] || { echo "summary figure ${kv%%=*}: page says '$got', the unit test ${kv#*=}"; fail=1; }
done
# the example database (test_example_roofline): 9 roofline points, none above the roof (the
# durations were set from the A3 die's roof, worked out there), so no outlier row;
# no row has both durations (no scatter), no type reaches 8 points (no per-type chart):
# the all_reduce latency and busbw charts only
check_page example.html "$SHOT2" 2
[ "$(figure roof)" = 9 ] && [ "$(figure above)" = 0 ] || { echo "example: roof $(figure roof), above $(figure above)"; fail=1; }
[ "$(grep -c '<tr class="above">' "$WORK/dom.html")" = 0 ] || { echo "example: an outlier row listed"; fail=1; }
[ $fail -eq 0 ] && echo "ok: every chart has its points, summary figures as tested, screenshots $SHOT $SHOT2"
exit $fail
