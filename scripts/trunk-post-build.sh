#!/bin/sh
# Trunk post-build hook (Trunk.toml): moves Trunk's inline module loader out of index.html
# into boot.js, so the page's Content-Security-Policy can forbid every inline script.
set -eu
dir="${TRUNK_STAGING_DIR:?run by trunk}"
html="$dir/index.html"
awk -v boot="$dir/boot.js" '
  /<script type="module">/ && !done { inside = 1; next }
  inside && /<\/script>/ { inside = 0; done = 1; print "<script type=\"module\" src=\"./boot.js\"></script>"; next }
  inside { print > boot; next }
  { print }
' "$html" > "$html.tmp"
mv "$html.tmp" "$html"
test -s "$dir/boot.js" || { echo "trunk-post-build: no inline loader found in $html" >&2; exit 1; }
# Start the simulation's Web Worker first, so its module downloads and compiles while the page's
# own loads: what it sends waits in a queue until the app takes it (web/src/worker.rs, `connect`).
cat - "$dir/boot.js" > "$dir/boot.js.tmp" <<'JS'
try {
  const worker = new Worker("./kubesim-worker_loader.js");
  const started = { worker, queue: [], failed: false };
  worker.onmessage = (event) => started.queue.push(event.data);
  worker.onerror = () => { started.failed = true; };
  window.__kubesimWorker = started;
} catch (_) { /* no workers here: the app loads the simulation itself */ }
JS
mv "$dir/boot.js.tmp" "$dir/boot.js"
# The simulation's glue binds `wasm_bindgen` with `let` (a classic script's global lexical
# binding, not a property of the global object): name it where the page's fallback, which loads
# the glue itself when no worker can start, can find it (web/src/worker.rs, `on_page`).
test -s "$dir/kubesim-worker.js" || { echo "trunk-post-build: no kubesim-worker.js in $dir" >&2; exit 1; }
printf '\nself.__kubesimSimulation = wasm_bindgen;\n' >> "$dir/kubesim-worker.js"
