#!/usr/bin/env bash
# Fails when a function nothing calls from the executables is in the tree (golang.org/x/tools/cmd/deadcode), unless
# scripts/deadcode-allow.txt lists it with the reason it stays; also fails on allow-list entries that match nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
DEADCODE_VERSION=v0.52.0
bin="${XDG_CACHE_HOME:-$HOME/.cache}/inferscope-bin/deadcode-$DEADCODE_VERSION/deadcode"
if [ ! -x "$bin" ]; then
  GOBIN="$(dirname "$bin")" go install "golang.org/x/tools/cmd/deadcode@$DEADCODE_VERSION"
fi
# The module's own packages: npm packages under node_modules may carry Go sources of their own.
mapfile -t pkgs < <(go list ./... | grep -v '/node_modules/')
report="$("$bin" -f '{{range .Funcs}}{{$.Path}}.{{.Name}}{{"\n"}}{{end}}' "${pkgs[@]}")"
allowed="$(grep -v '^#' scripts/deadcode-allow.txt | awk 'NF {print $1}')"
status=0
while IFS= read -r fn; do
  [ -n "$fn" ] || continue
  ok=""
  while IFS= read -r a; do
    # A package entry covers its functions and methods (path.Name); a function entry itself.
    if [ "$fn" = "$a" ] || [ "${fn#"$a".}" != "$fn" ]; then ok=1; break; fi
  done <<<"$allowed"
  if [ -z "$ok" ]; then echo "dead code: $fn (delete it, or list it in scripts/deadcode-allow.txt with why)"; status=1; fi
done <<<"$report"
while IFS= read -r a; do
  if ! grep -qE "^$(printf '%s' "$a" | sed 's/[.[\*^$/]/\\&/g')(\.|$)" <<<"$report"; then
    echo "scripts/deadcode-allow.txt: $a is no longer reported; remove the entry"; status=1
  fi
done <<<"$allowed"
exit $status
