#!/usr/bin/env bash
# Fails when the docs name paths that do not exist, or leave out what they promise to list:
#   - every path the README's "Repository layout" block names must exist;
#   - each scheduler plugin README's "## Files" section must name every non-test .go file and every directory of
#     its package, and only those.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
fail=0

# The README's layout block: the first word of each line is a path relative to the root (a trailing / for a
# directory; name real paths, no "<binary>" placeholders); indented lines continue the one above.
layout=$(awk '/^## Repository layout/{found=1; next} found && /^```/{n++; if (n==2) exit; next} found && n==1' README.md)
if [ -z "$layout" ]; then
  echo "README.md: no code block under \"## Repository layout\"" >&2
  exit 1
fi
while IFS= read -r line; do
  case "$line" in "" | " "*) continue ;; esac
  path=${line%% *}
  if [ ! -e "${path%/}" ]; then
    echo "README.md layout names $path, which does not exist" >&2
    fail=1
  fi
done <<< "$layout"

for readme in pkg/scheduler/plugins/*/README.md; do
  dir=$(dirname "$readme")
  files=$(awk '/^## Files/{found=1; next} found && /^## /{exit} found' "$readme" | grep -o '`[^`]*`' | tr -d '`' | grep -E '(\.go|/)$' | sort -u || true)
  if [ -z "$files" ]; then
    echo "$readme: no file list under \"## Files\"" >&2
    fail=1
    continue
  fi
  for f in $files; do
    case "$f" in ../*) continue ;; esac
    if [ ! -e "$dir/${f%/}" ]; then
      echo "$readme lists $f, which is not in $dir" >&2
      fail=1
    fi
  done
  for f in $(cd "$dir" && ls -1 | grep -v '_test\.go$' | grep -v '^README\.md$'); do
    name=$f
    [ -d "$dir/$f" ] && name="$f/"
    if ! grep -qxF -- "$name" <<< "$files"; then
      echo "$readme does not list $name" >&2
      fail=1
    fi
  done
done

if [ "$fail" -ne 0 ]; then
  echo "Docs name paths that do not match the tree: fix the README(s) above." >&2
  exit 1
fi
echo "verify-docs: OK"
