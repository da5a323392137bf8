#!/usr/bin/env bash
# Installs the npm dependencies when they are missing or older than the lock
# file, so that the README's commands work from a fresh clone. A no-op after
# `npm ci` (which is what CI runs first).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund
fi
# npm ci builds the dns-server's batched UDP module; a checkout installed before it existed, or
# whose C source changed since, builds it here (offline, scripts/build-native.sh).
native=dns-server/serve/native
if [ "$(uname -s)" = Linux ] && { [ ! -f "$native/build/Release/udp_batch.node" ] ||
  [ -n "$(find "$native/udp_batch.c" "$native/binding.gyp" -newer "$native/build/Release/udp_batch.node")" ]; }; then
  echo "building the batched UDP module (scripts/build-native.sh)" >&2
  PATH="$PWD/node_modules/.bin:$PATH" bash scripts/build-native.sh
fi
# The node devDependency's binary comes from a preinstall script, outside the lock file's hashes:
# it must be the one images/node-binary.sha256 pins (see images/node-binary.md).
if ! sha256sum --check --quiet --strict images/node-binary.sha256 >&2; then
  echo "node_modules' Node binary is not the one build/node-binary.sha256 pins (build/node-binary.md); refusing to run it" >&2
  exit 1
fi
