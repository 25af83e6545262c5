#!/usr/bin/env bash
# Every document the code cites is one the repository holds: each
# `docs/<name>.md` (docs/spec/ included) named in src/, include/, tests/,
# bench/ and scripts/ must exist.
#   check_refs.sh REPO_ROOT
set -u
ROOT=$1
cd "$ROOT" || exit 1
bad=0
while IFS= read -r ref; do
  [ -f "$ref" ] || { echo "cited but missing: $ref ($(grep -rlI --exclude-dir=corpus "$ref" src include tests bench scripts | head -1))"; bad=$((bad + 1)); }
done < <(grep -rhoI --exclude-dir=corpus -E "docs/[a-z_/.]+\.md" src include tests bench scripts | sed 's/\.$//' | sort -u)
n=$(grep -rhoI --exclude-dir=corpus -E "docs/[a-z_/.]+\.md" src include tests bench scripts | sort -u | wc -l)
[ $bad -eq 0 ] || { echo "$bad cited document(s) missing"; exit 1; }
echo "all $n documents cited by the code exist"
