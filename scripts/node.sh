# Sourced by .ci/run and scripts/*.sh: puts the pinned Node LTS (.nvmrc) first on PATH when the machine's node is
# older than its major. Node is installed from the npm registry package node-linux-<arch> (the binary is inside the
# package) into ~/.cache/inferscope-bin/node-v<version>, once; the machine's npm then runs on it. package.json's
# engines asks for the same major.
INFERSCOPE_NODE_VERSION=$(cat "$(dirname "${BASH_SOURCE[0]}")/../.nvmrc")
inferscope_node_major=${INFERSCOPE_NODE_VERSION%%.*}

inferscope_use_node() {
  local have major arch dir
  have=$(node --version 2>/dev/null || true)
  major=${have#v}; major=${major%%.*}
  if [ -n "$have" ] && [ "$major" -ge "$inferscope_node_major" ] 2>/dev/null; then
    return 0
  fi
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) arch=linux-x64 ;;
    Linux/aarch64 | Linux/arm64) arch=linux-arm64 ;;
    *)
      echo "node.sh: Node ${have:-(none)} is older than $inferscope_node_major; install Node $INFERSCOPE_NODE_VERSION (https://nodejs.org) for $(uname -s)/$(uname -m)." >&2
      return 1 ;;
  esac
  if ! command -v npm >/dev/null; then
    echo "node.sh: neither Node $inferscope_node_major nor npm is installed; install Node $INFERSCOPE_NODE_VERSION (https://nodejs.org)." >&2
    return 1
  fi
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/inferscope-bin/node-v$INFERSCOPE_NODE_VERSION"
  if [ ! -x "$dir/node_modules/node-$arch/bin/node" ]; then
    echo "node.sh: Node ${have:-(none)} is older than $inferscope_node_major; installing node-$arch@$INFERSCOPE_NODE_VERSION from the npm registry into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "node-$arch@$INFERSCOPE_NODE_VERSION" >&2 || return 1
  fi
  export PATH="$dir/node_modules/node-$arch/bin:$PATH"
  hash -r
  [ "$(node --version)" = "v$INFERSCOPE_NODE_VERSION" ] || { echo "node.sh: $dir holds $(node --version), not v$INFERSCOPE_NODE_VERSION" >&2; return 1; }
}
inferscope_use_node
