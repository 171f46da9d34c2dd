#!/usr/bin/env bash
# Installs whatever is missing, builds the in-browser simulator and serves it on
# http://127.0.0.1:8080 (it opens on the default cluster with the default scenario playing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-browser
export PATH="$HOME/.cargo/bin:$PWD/.tools/node_modules/.bin:$PATH"
PORT="${PORT:-8080}"
# trunk canonicalizes every [watch] ignore path, so they must exist before it starts.
mkdir -p target .tools
echo "kubesim: building and serving on http://127.0.0.1:$PORT (first build takes a few minutes)" >&2
exec trunk serve --release --address 127.0.0.1 --port "$PORT"
