#!/usr/bin/env bash
# Prints the README's command NAME (run | test): the first line of the fenced block that follows
# the `<!-- readme-command: NAME -->` marker. CI runs exactly what it prints, so the README's
# commands cannot drift from what is proven to work.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/readme-command.sh run|test}
cmd=$(awk -v marker="<!-- readme-command: $name -->" '
  $0 == marker { found = 1; next }
  found && /^```/ { if (inblock) exit; inblock = 1; next }
  found && inblock { print; exit }' README.md)
if [ -z "$cmd" ]; then
  echo "README.md has no command marked '<!-- readme-command: $name -->' followed by a fenced block" >&2
  exit 1
fi
printf '%s\n' "$cmd"
