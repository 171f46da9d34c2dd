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
