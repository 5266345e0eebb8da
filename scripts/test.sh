#!/usr/bin/env bash
# Runs every InferScope test, in the order a fresh checkout needs: this is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# A fresh clone needs its npm packages; Debian's prometheus is installed where this user may (root), else the tests
# that compare with a real Prometheus are skipped outside CI.
if [ ! -d node_modules ]; then
  step "installing npm packages (first run)"
  npm install --no-audit --no-fund
fi
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "installing Debian's prometheus (first run)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus
  else
    echo "warning: Debian's prometheus package is not installed; tests that compare with a real Prometheus will be skipped" >&2
    echo "         (sudo apt-get install prometheus). CI installs it and fails instead of skipping." >&2
  fi
fi

step "frontend: typecheck";                    npm run typecheck
step "frontend: lint";                         npm run lint
step "frontend: unit tests (Jest)";            npm run test:ci
step "frontend: component tests (Chromium)";   npm run test:ct
step "frontend: production build into dist/";  npm run build
step "backends: app + data source, 5 platforms"; go tool mage -v
step "go vet";                                 go vet ./pkg/... && go vet -tags mage ./Magefile.go
# Includes the protocol-harness tests against dist/, the packaging check and the provisioning check.
step "go tests (race detector)";               go test -race -count=1 -timeout 30m ./pkg/...
