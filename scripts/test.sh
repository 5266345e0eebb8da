#!/usr/bin/env bash
# Runs every InferScope test, in the order a fresh checkout needs: this is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./scripts/node.sh   # Node 24 LTS (.nvmrc) first on PATH, installed from the npm registry when older

step() { printf '\n==> %s\n' "$*"; }

# A fresh clone needs its npm packages. The servers the tests compare with (Debian's prometheus, victoria-metrics and
# chromium; Prometheus 3 built into a cache directory) are installed where this user may (root), else a warning says
# which tests will be skipped outside CI. When everything is in place this costs a few --version calls.
if [ ! -d node_modules ]; then
  step "installing npm packages (first run)"
  npm install --no-audit --no-fund
fi
./scripts/engines.sh

step "frontend: typecheck";                    npm run typecheck
step "frontend: lint";                         npm run lint
step "frontend: unit tests (Jest)";            npm run test:ci
step "frontend: component tests (Chromium)";   npm run test:ct
# The production build, both backends for 5 platforms, and the release zip the packaging checks below read.
step "release zip: npm run package";           npm run package
zip="$PWD/inferscope-vllm-app-$(node -p 'require("./package.json").version').zip"
step "go vet";                                 go vet ./pkg/... && go vet -tags mage ./Magefile.go
# Functions no executable reaches, beyond the allow-list of test-only API (golang.org/x/tools/cmd/deadcode, pinned).
step "deadcode";                               ./scripts/deadcode.sh
# gosec over what handles files, tokens and the agent's API; built once into a versioned cache directory.
GOSEC_VERSION=v2.30.0
gosec_bin="${XDG_CACHE_HOME:-$HOME/.cache}/inferscope-bin/gosec-$GOSEC_VERSION/gosec"
if [ ! -x "$gosec_bin" ]; then
  GOBIN="$(dirname "$gosec_bin")" go install "github.com/securego/gosec/v2/cmd/gosec@$GOSEC_VERSION"
fi
step "gosec (agent, app backend, profiler files)"; "$gosec_bin" -quiet ./pkg/agent/... ./pkg/cmd/inferscope-agent/... ./pkg/symbols/... ./pkg/app/... ./pkg/profilerconfig/...
# As the plugin catalog's reviewers run it: HIGH severity over the whole tree, code that does not ship included
# (a finding that cannot happen carries `// #nosec Gxxx -- why`).
step "gosec (whole tree, HIGH)";               "$gosec_bin" -quiet -severity high ./...
# Includes the protocol-harness tests against dist/, the packaging check (on the very zip just written) and the
# provisioning check.
# -timeout is per package: pkg/e2e takes 11 min alone on a quiet 2-core VM (2026-12-07); before its tests shared their
# simulated runs it ran into 45 min in a CI run beside the other packages in a slow hour. The margin is for such
# hours, not a budget.
step "go tests (race detector)";               INFERSCOPE_PLUGIN_ZIP="$zip" go test -race -count=1 -timeout 60m ./pkg/...
# Every benchmark once (-benchtime 1x), so none stops compiling or running unnoticed; figures are not asserted. The
# fleet dashboard benchmark drives the built data source at 1, 64 and 256 endpoints in both modes (a few minutes).
step "benchmarks, once each";                  go test -run '^$' -bench . -benchtime 1x -timeout 30m ./pkg/...
# A module of its own (it imports Prometheus's textparse): its test checks the three parsers it benchmarks agree.
step "parser comparison module";               (cd bench/parse && go vet ./... && go test -count=1 -bench . -benchtime 1x ./...)
