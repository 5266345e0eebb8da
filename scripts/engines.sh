#!/usr/bin/env bash
# Installs the servers the tests compare with, where this machine lacks them:
#   - Debian's prometheus (Prometheus 2.42 + promtool), victoria-metrics and chromium, with apt-get (root only);
#   - Prometheus 3 and its promtool, built once from the Go module into a cache directory that outlives the checkout
#     ($INFERSCOPE_PROMETHEUS3, else ${XDG_CACHE_HOME:-~/.cache}/inferscope-bin, where pkg/internal/promtest looks).
#     A build is skipped when both binaries there already report the pinned version, so a cached run costs two
#     `--version` calls.
#   - VictoriaMetrics 1.151 (single node), Thanos and Cortex, built once into the same cache directory the same way
#     (version-checked; the scale-out tests in pkg/internal/promtest and pkg/e2e start them). Thanos's and Cortex's
#     go.mod carry replace directives, so `go install mod@version` refuses them: each is built in a scratch module
#     whose go.mod is the project's own with the module line renamed, requiring the project at its tag.
#     One build at a time, under nice: a cold build of all three takes several minutes (figures in README "Test").
# Usage: scripts/engines.sh [--ci]
#   --ci  install or build whatever is missing, and fail if that is impossible (the tests then fail rather than skip);
#   without it (scripts/test.sh) the same happens when run as root, and otherwise a warning says what will be skipped.
set -euo pipefail

PROM3_VERSION=3.16.0
PROM3_MODULE_VERSION=v0.316.0   # github.com/prometheus/prometheus tags Prometheus 3.x.y as v0.3xx.y
VM_VERSION=v1.151.0             # github.com/VictoriaMetrics/VictoriaMetrics, single-node victoria-metrics
THANOS_VERSION=v0.42.5          # github.com/thanos-io/thanos (Apache-2.0)
CORTEX_VERSION=v1.21.1          # github.com/cortexproject/cortex (Apache-2.0; Mimir is AGPL and not built)
SCALE_TOOLCHAIN=go1.27.3        # Thanos needs Go >= 1.26.10; used for these builds only, the project's go.mod is unchanged
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

# --- VictoriaMetrics 1.151, Thanos and Cortex, built from their modules ------------------------------------------
# Each lands as <dir>/<name>-<version>/<binary>, so versions live side by side and a bump rebuilds; a binary that does
# not print its version is rebuilt.
scale_ok() { [ -x "$1" ] && "$1" "$2" 2>&1 | head -n3 | grep -q "$3"; }
build_scale() { # name version binary version-flag version-pattern module-path cmd-package
  local name=$1 version=$2 bin=$3 flag=$4 pattern=$5 module=$6 pkg=$7
  local out="$dir/$name-$version/$bin"
  scale_ok "$out" "$flag" "$pattern" && return 0
  if ! can_install || ! command -v go >/dev/null; then
    if $ci; then echo "error: cannot build $name $version (needs go)" >&2; exit 1; fi
    warn "$name $version not found in $dir/$name-$version; tests against it are skipped (run scripts/engines.sh as root)."
    return 0
  fi
  printf '==> building %s %s into %s (once; cached between runs)\n' "$name" "$version" "$(dirname "$out")"
  mkdir -p "$dir"
  local tmp started=$SECONDS
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  local ldflags="-X github.com/prometheus/common/version.Version=${version#v}"
  [ "$name" = cortex ] && ldflags="-X main.Version=${version#v}"   # cmd/cortex copies main.Version into version.Version
  if [ "$name" = victoria-metrics ]; then
    ldflags="-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-$version"
    GOBIN="$tmp" GOFLAGS=-buildvcs=false nice -n 10 go install -ldflags "$ldflags" "$pkg@$version"
  else
    local gomod
    gomod=$(cd "$tmp" && GOTOOLCHAIN=$SCALE_TOOLCHAIN GOFLAGS=-mod=mod go mod download -json "$module@$version" |
      sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [ -f "$gomod" ] || { echo "error: no go.mod for $module@$version" >&2; exit 1; }
    sed "s|^module .*|module inferscope.build/$name|" "$gomod" >"$tmp/go.mod"
    printf '\nrequire %s %s\n' "$module" "$version" >>"$tmp/go.mod"
    # The build tags of both projects' Makefiles (and Thanos's .promu.yml): without slicelabels, Thanos's gRPC
    # codec sizes Prometheus's labels wrongly and the sidecar panics on its first Series call.
    (cd "$tmp" && GOTOOLCHAIN=$SCALE_TOOLCHAIN GOFLAGS="-mod=mod -buildvcs=false" \
      nice -n 10 go build -trimpath -tags netgo,slicelabels -ldflags "$ldflags" -o "$tmp/$bin" "$pkg")
  fi
  scale_ok "$tmp/$bin" "$flag" "$pattern" || { echo "error: built $name does not report version $version" >&2; exit 1; }
  mkdir -p "$(dirname "$out")"
  mv -f "$tmp/$bin" "$out"
  rm -rf "$tmp"
  trap - EXIT
  printf '==> %s %s built in %ds\n' "$name" "$version" $((SECONDS - started))
}
build_scale victoria-metrics "$VM_VERSION" victoria-metrics -version "$VM_VERSION" \
  github.com/VictoriaMetrics/VictoriaMetrics github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics
build_scale thanos "$THANOS_VERSION" thanos --version "version ${THANOS_VERSION#v} " \
  github.com/thanos-io/thanos github.com/thanos-io/thanos/cmd/thanos
build_scale cortex "$CORTEX_VERSION" cortex -version "version ${CORTEX_VERSION#v} " \
  github.com/cortexproject/cortex github.com/cortexproject/cortex/cmd/cortex
