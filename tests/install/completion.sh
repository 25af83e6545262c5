#!/usr/bin/env bash
# Bash completion (data/completion/perfdb.bash): every command of
# `perfdb --help` completes from nothing, options complete per command,
# {choices} complete after their option, and a prefix narrows the list.
#   completion.sh PERFDB SOURCE_DIR
set -u
export LC_ALL=C
PERFDB=$1 SRC=$2
# shellcheck source=/dev/null
source "$SRC/data/completion/perfdb.bash"
fail=0
complete_words() {  # words... (the last one is being completed)
  COMP_WORDS=("$PERFDB" "$@"); COMP_CWORD=$#; COMPREPLY=()
  _perfdb
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
expect() {  # want, words...
  local want=$1; shift
  local got; got=$(complete_words "$@")
  if [ "$got" != "$want" ]; then echo "complete '$*': got '$got', want '$want'"; fail=1; fi
}
cmds=$("$PERFDB" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
all=$(printf '%s\n' $cmds help --help --version | sort | tr '\n' ' ')
expect "$all" ""
expect "report " rep
expect "comm comm-suite " comm
expect "--hccl-dir --help --html " report --h
expect "--json " path --j
expect "--device " report --dev
# {choices} after the option (perfdb devices has none; microbench --backend does)
got=$(complete_words microbench --backend "")
case " $got " in *" msprof "*) ;; *) echo "microbench --backend: got '$got'"; fail=1;; esac
# every option of every command completes
for c in $cmds; do
  for o in $("$PERFDB" "$c" --help | grep -oE -- '^  (-., )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'); do
    case " $(complete_words "$c" "$o") " in *" $o "*) ;; *) echo "$c $o does not complete"; fail=1;; esac
  done
done
[ $fail -eq 0 ] && echo "ok: completion of $(echo $cmds | wc -w) commands"
exit $fail
