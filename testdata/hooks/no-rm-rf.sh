#!/bin/bash
# A Claude Code PreToolUse hook (matcher "Bash"): refuses a shell command
# that removes recursively and by force, however the flags are spelled
# (rm -rf, -fr, -Rf, -r -f, --recursive --force, sudo rm, after && or ;).
# Exit 2 blocks the call; what goes to stderr is the reason the model gets.
set -u
command=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("tool_input", {}).get("command", ""))')
[ -z "$command" ] && exit 0
# One line per simple command: split at ; && || | and newlines.
while IFS= read -r part; do
  read -r -a words <<<"$part"
  i=0
  while [ $i -lt ${#words[@]} ] && [[ ${words[$i]} =~ ^(sudo|command|env|nice|exec|xargs|[A-Za-z_][A-Za-z0-9_]*=.*)$ ]]; do
    i=$((i + 1))
  done
  [ $i -lt ${#words[@]} ] || continue
  [[ ${words[$i]##*/} == rm ]] || continue
  recursive=0 force=0
  for w in "${words[@]:$((i + 1))}"; do
    case $w in
    --) break ;;
    --recursive) recursive=1 ;;
    --force) force=1 ;;
    --*) ;;
    -*)
      [[ $w == *[rR]* ]] && recursive=1
      [[ $w == *f* ]] && force=1
      ;;
    esac
  done
  if [ $recursive = 1 ] && [ $force = 1 ]; then
    echo "Blocked by no-rm-rf.sh: \`${words[*]}\` removes files recursively by force; delete specific files instead." >&2
    exit 2
  fi
done < <(printf '%s\n' "$command" | sed -E 's/(&&|\|\||;|\|)/\n/g')
exit 0
