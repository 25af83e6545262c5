# bash completion for perfdb.
# Installed as <prefix>/share/bash-completion/completions/perfdb.
# Generated from the command table at completion time: the commands come
# from `perfdb --help`, a command's options and their {choices} from
# `perfdb <command> --help` (the same option tables that parse the
# arguments), so a new command or flag completes without editing this file.
_perfdb()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=""
	local bin=${COMP_WORDS[0]}
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		local cmds
		cmds=$("$bin" --help 2>/dev/null |
			awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
		mapfile -t COMPREPLY < <(compgen -W "$cmds help --help --version" -- "$cur")
		return 0
	fi
	local cmd=${COMP_WORDS[1]} help
	[ "$cmd" = help ] && {
		mapfile -t COMPREPLY < <(compgen -W "$("$bin" --help 2>/dev/null |
			awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}')" -- "$cur")
		return 0
	}
	help=$("$bin" "$cmd" --help 2>/dev/null) || return 0
	if [[ $prev == --* ]]; then
		# the option line: "  --name METAVAR" or "  --name {a,b,c}"
		local optline
		optline=$(printf '%s\n' "$help" | grep -E -- "^  (-., )?$prev( |$)" | head -n 1)
		if [[ $optline =~ \{([^}]*)\} ]]; then
			mapfile -t COMPREPLY < <(compgen -W "${BASH_REMATCH[1]//,/ }" -- "$cur")
			return 0
		fi
		if [[ $optline =~ ^\ +(-.,\ )?--[a-z0-9-]+\ [A-Z] ]]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
		fi
	fi
	if [[ $cur == -* || -z $cur ]]; then
		local opts
		opts=$(printf '%s\n' "$help" | grep -oE -- '^  (-., )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+')
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		[ -n "$cur" ] && return 0
	fi
	mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
	return 0
}
complete -F _perfdb perfdb
