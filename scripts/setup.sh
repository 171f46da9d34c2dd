#!/usr/bin/env bash
# Installs whatever kubesim's build and tests need and is missing. Idempotent: on a machine that
# already has everything it only checks versions (a second or two).
# Usage: scripts/setup.sh [--no-browser] [--no-trunk]
set -euo pipefail
WASM_BINDGEN_VERSION=0.2.130   # must equal the `=` pin of wasm-bindgen in Cargo.toml
TRUNK_VERSION=0.21.14
BINARYEN_VERSION=132
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="$ROOT/.tools"
need_browser=1; need_trunk=1
for a in "$@"; do
  case "$a" in --no-browser) need_browser=0;; --no-trunk) need_trunk=0;; esac
done
log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
export PATH="$HOME/.cargo/bin:$TOOLS/node_modules/.bin:$PATH"

if ! rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (~2 min)"
  # No --locked: a locked transitive version is not served by the registry here (see toolchain.md).
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ "$need_trunk" = 1 ] && ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION"; then
  log "installing trunk $TRUNK_VERSION (~5 min)"
  cargo install trunk --version "$TRUNK_VERSION" --locked --force
fi

if [ "$need_trunk" = 1 ] && ! wasm-opt --version 2>/dev/null | grep -q "version $BINARYEN_VERSION"; then
  log "installing binaryen $BINARYEN_VERSION (wasm-opt) from npm into .tools/"
  mkdir -p "$TOOLS"
  npm install --silent --no-audit --no-fund --prefix "$TOOLS" "binaryen@$BINARYEN_VERSION" >/dev/null
fi

# kubesim serve's client tests: the official Python client (Debian's python3-kubernetes).
# Real kubectl (the parity suite's oracle) is not packaged by Debian; without it the parity
# suite skips with a message.
if ! /usr/bin/python3 -c "import kubernetes" 2>/dev/null; then
  log "installing Debian python3-kubernetes (kubesim serve's Python client test)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-kubernetes >/dev/null; } || log "python3-kubernetes unavailable: the Python client test will skip"
fi

if [ "$need_browser" = 1 ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    log "installing Debian chromium + chromium-driver"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  if [ ! -d "$TOOLS/node_modules/playwright-core" ]; then
    log "installing playwright-core from npm into .tools/ (end-to-end tests use Debian's chromium)"
    mkdir -p "$TOOLS"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS" playwright-core >/dev/null
  fi
fi
log "toolchain ready"
