#!/usr/bin/env bash
# Starts the product: builds the plugin, then Grafana with it, Prometheus and the simulated vLLM fleet via Docker.
# This is the README's run command.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./scripts/node.sh   # Node 24 LTS (.nvmrc) first on PATH, installed from the npm registry when older

if ! command -v docker >/dev/null; then
  echo "run.sh: Docker is needed to start Grafana, Prometheus and the simulators, and 'docker' is not installed." >&2
  echo "        Install Docker Engine (or Docker Desktop) with the compose plugin, then run this again." >&2
  exit 1
fi
if ! docker info >/dev/null 2>&1; then
  echo "run.sh: the 'docker' command is here but no Docker engine answers (is the daemon running, and may this user use it?)." >&2
  exit 1
fi
if ! docker compose version >/dev/null 2>&1; then
  echo "run.sh: Docker's compose plugin is missing ('docker compose'); install docker-compose-plugin." >&2
  exit 1
fi

[ -d node_modules ] || npm install --no-audit --no-fund
npm run build
go tool mage -v
exec docker compose up --build "$@"
