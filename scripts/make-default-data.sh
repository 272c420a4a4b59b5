#!/usr/bin/env bash
# Regenerates data/default.txt, the built-in training text behind
# `hymo-run train --data default`: the project's own documentation and
# sources (git-tracked files only; nothing third-party, nothing from outside
# this repository), concatenated in sorted path order, each file preceded by
# a "==> path <==" line. Byte-level (vocab 256) models read it as bytes.
#
#   bash scripts/make-default-data.sh          # writes data/default.txt
set -euo pipefail
cd "$(dirname "$0")/.."
out=data/default.txt
mkdir -p data
tmp=$(mktemp data/.default.txt.XXXXXX)
trap 'rm -f "$tmp"' EXIT
{
  git ls-files -- README.md 'docs/*.md' 'docs/**/*.md'
  git ls-files -- dialects passes models runtime tools scripts |
    grep -E '\.(h|cc|cpp|td|yaml|md|sh|txt)$' | grep -v '^data/'
} | awk '!seen[$0]++' | sort | while IFS= read -r f; do
  [ -f "$f" ] || continue
  printf '==> %s <==\n' "$f"
  cat "$f"
  printf '\n'
done > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out ($(wc -c < "$out") bytes)"
