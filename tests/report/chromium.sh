#!/usr/bin/env bash
# The report page in a real browser (issue 11): headless Chromium loads the
# page of the committed database tests/data/report/db without a console
# error, every chart holds as many <circle class="pt"> points as its
# data-points attribute says (and more than none), and a screenshot is made.
# Skips (exit 77) when chromium is not installed.
#   chromium.sh PERFDB DATA_DIR SHOT_PNG
set -u
PERFDB=$1 DATA=$2 SHOT=$3
CHROMIUM=$(command -v chromium || command -v chromium-browser) || {
  echo "chromium not installed: skipped"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-chromium.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r "$DATA/report/db" "$WORK/db"
"$PERFDB" report --database-root "$WORK/db" --device TEST_DEVICE \
  --vllm-version vllm1.0.0_torch2.0.0_cann8.0 --html "$WORK/report.html" >/dev/null || exit 1
run() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$WORK/profile" \
    --enable-logging=stderr --v=0 "$@" "file://$WORK/report.html"
}
run --dump-dom >"$WORK/dom.html" 2>"$WORK/dom.err" || { echo "chromium failed"; cat "$WORK/dom.err"; exit 1; }
run --screenshot="$SHOT" --window-size=1400,2600 >/dev/null 2>"$WORK/shot.err" || {
  echo "chromium screenshot failed"; cat "$WORK/shot.err"; exit 1; }
fail=0
if grep -E 'CONSOLE|Uncaught|Failed to load|net::ERR' "$WORK/dom.err" "$WORK/shot.err"; then
  echo "console errors above"; fail=1
fi
# One record per chart: its declared count, then the circles up to </svg>.
awk 'BEGIN { RS = "<svg class=\"chart\""; n = 0; bad = 0 }
     NR > 1 { n++; split($0, a, "</svg>"); body = a[1]
              match(body, /data-points="[0-9]+"/); want = substr(body, RSTART + 13, RLENGTH - 14) + 0
              got = gsub(/<circle class="pt/, "", body)
              if (got != want || want == 0) { print "chart " n ": " got " points, data-points " want; bad = 1 } }
     END { if (n != 8) { print n " charts, expected 8"; bad = 1 } exit bad }' "$WORK/dom.html" || fail=1
[ -s "$SHOT" ] && [ "$(head -c 8 "$SHOT" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || {
  echo "no PNG screenshot at $SHOT"; fail=1; }
[ $fail -eq 0 ] && echo "ok: 8 charts with their points, screenshot $SHOT"
exit $fail
