#!/usr/bin/env bash
# Installs whatever is missing and runs every test: formatting and lints, native unit and
# integration tests, the wasm-bindgen tests in headless Chromium, the release site build and the
# end-to-end browser test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PWD/.tools/node_modules/.bin:$PATH"
export CHROMEDRIVER=/usr/bin/chromedriver
section() { printf '\n\033[1;34m== %s\033[0m\n' "$*" >&2; }

section "formatting and lints (cargo fmt --check; cargo clippy -D warnings)"
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings

section "native tests (cargo test --workspace: model crates, CLI, and the views rendered to HTML)"
cargo test --workspace
if [ -n "${KUBESIM_PRUNE_NATIVE_BUILD:-}" ]; then
  du -sh target/debug >&2 || true
  rm -rf target/debug
fi

section "browser tests (wasm-bindgen-test in headless Chromium)"
cargo test --target wasm32-unknown-unknown -p kubesim-sim -p kubesim-web

df -h . | tail -1 | awk '{print "disk free:", $4}' >&2

section "release site build (trunk build --release)"
trunk build --release
ls -l dist/*.wasm | awk '{print "wasm bundle:", $5, "bytes", $9}' >&2
for f in dist/*.wasm; do echo "wasm bundle gzip: $(gzip -9c "$f" | wc -c) bytes" >&2; done

if [ -f tests/e2e/e2e.mjs ]; then
  section "end-to-end (Playwright + Debian chromium)"
  NODE_PATH="$PWD/.tools/node_modules" node tests/e2e/e2e.mjs
fi
section "all tests passed"
