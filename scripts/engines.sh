#!/usr/bin/env bash
# Installs the servers the tests compare with, where this machine lacks them:
#   - Debian's prometheus (Prometheus 2.42 + promtool), victoria-metrics and chromium, with apt-get (root only);
#   - Prometheus 3 and its promtool, built once from the Go module into a cache directory that outlives the checkout
#     ($INFERSCOPE_PROMETHEUS3, else ${XDG_CACHE_HOME:-~/.cache}/inferscope-bin, where pkg/internal/promtest looks).
#     A build is skipped when both binaries there already report the pinned version, so a cached run costs two
#     `--version` calls.
# Usage: scripts/engines.sh [--ci]
#   --ci  install or build whatever is missing, and fail if that is impossible (the tests then fail rather than skip);
#   without it (scripts/test.sh) the same happens when run as root, and otherwise a warning says what will be skipped.
set -euo pipefail

PROM3_VERSION=3.16.0
PROM3_MODULE_VERSION=v0.316.0   # github.com/prometheus/prometheus tags Prometheus 3.x.y as v0.3xx.y
ci=false
[ "${1:-}" = --ci ] && ci=true
[ -n "${CI:-}" ] && ci=true   # .ci/run exports CI=true

warn() { printf 'warning: %s\n' "$*" >&2; }
can_install() { $ci || [ "$(id -u)" = 0 ]; }

# --- Debian packages --------------------------------------------------------------------------------------------
missing=()
command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus)
command -v victoria-metrics >/dev/null || missing+=(victoria-metrics)
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if can_install && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    printf '==> installing Debian packages: %s\n' "${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  elif $ci; then
    echo "error: cannot install ${missing[*]} (needs root and apt-get)" >&2
    exit 1
  else
    warn "Debian packages missing: ${missing[*]} (sudo apt-get install ${missing[*]});"
    warn "  tests that compare with those servers are skipped. CI installs them and fails instead of skipping."
  fi
fi

# --- Prometheus 3, built from its module --------------------------------------------------------------------------
dir=${INFERSCOPE_PROMETHEUS3:-${XDG_CACHE_HOME:-$HOME/.cache}/inferscope-bin}
[ -f "$dir" ] && dir=$(dirname "$dir")
has_version() { [ -x "$1" ] && "$1" --version 2>/dev/null | head -n1 | grep -q "version ${PROM3_VERSION} "; }
need=()
for b in prometheus promtool; do
  has_version "$dir/$b" || need+=("$b")
done
if [ ${#need[@]} -gt 0 ]; then
  if can_install && command -v go >/dev/null; then
    printf '==> building Prometheus %s (%s) into %s (once; cached between runs)\n' "$PROM3_VERSION" "${need[*]}" "$dir"
    mkdir -p "$dir"
    tmp=$(mktemp -d "$dir/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    for b in "${need[@]}"; do
      # remove_all_sd: a plain install fails on a refused service-discovery module; -X makes --version report it.
      GOBIN="$tmp" GOFLAGS=-buildvcs=false go install -tags remove_all_sd \
        -ldflags "-X github.com/prometheus/common/version.Version=${PROM3_VERSION}" \
        "github.com/prometheus/prometheus/cmd/${b}@${PROM3_MODULE_VERSION}"
      has_version "$tmp/$b" || { echo "error: built $b does not report version $PROM3_VERSION" >&2; exit 1; }
      mv -f "$tmp/$b" "$dir/$b"   # same filesystem: a concurrent run sees the old binary or the new one, never half
    done
  elif $ci; then
    echo "error: cannot build Prometheus $PROM3_VERSION (needs go)" >&2
    exit 1
  else
    warn "Prometheus $PROM3_VERSION not found in $dir (${need[*]} missing); tests against it are skipped."
    warn "  Build it as root with scripts/engines.sh, or: GOBIN=$dir go install -tags remove_all_sd \\"
    warn "    -ldflags '-X github.com/prometheus/common/version.Version=$PROM3_VERSION' \\"
    warn "    github.com/prometheus/prometheus/cmd/prometheus@$PROM3_MODULE_VERSION  (and cmd/promtool likewise)"
  fi
fi
