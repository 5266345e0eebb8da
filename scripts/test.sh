#!/usr/bin/env bash
# Runs every InferScope test, in the order a fresh checkout needs: this is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  echo "warning: Debian's prometheus package is not installed; tests that compare with a real Prometheus will be skipped" >&2
  echo "         (sudo apt-get install prometheus). CI installs it and fails instead of skipping." >&2
fi

step "frontend: typecheck";                    npm run typecheck
step "frontend: lint";                         npm run lint
step "frontend: unit tests (Jest)";            npm run test:ci
step "frontend: production build into dist/";  npm run build
step "backends: app + data source, 5 platforms"; go tool mage -v
step "go vet";                                 go vet ./pkg/... && go vet -tags mage ./Magefile.go
# Includes the protocol-harness tests against dist/, the packaging check and the provisioning check.
step "go tests (race detector)";               go test -race -count=1 -timeout 30m ./pkg/...
