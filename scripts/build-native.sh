#!/usr/bin/env bash
# Builds the dns-server's batched UDP module (dns-server/serve/native, ADR 0105)
# with node-gyp, offline: against the headers of the project's own Node package
# (node_modules/node, the `node` devDependency), never downloading any. Run by
# `npm ci` (package.json's "install" script) once the dependencies are in; the
# node-gyp is the one npm carries (npm sets $npm_config_node_gyp for scripts).
# Needs python3, make and a C compiler (scripts/install-system-deps.sh).
# Linux only: elsewhere the dns-server answers UDP through dgram.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" != Linux ]; then
  echo "build-native: not Linux; the dns-server will use dgram for UDP" >&2
  exit 0
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac
nodedir="$PWD/node_modules/node/node_modules/node-linux-$arch"
if [ ! -f "$nodedir/include/node/node_api.h" ]; then
  echo "build-native: no Node headers at $nodedir/include/node (is the node devDependency installed?)" >&2
  exit 1
fi
gyp="${npm_config_node_gyp:-}"
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then
  # Outside npm: the node-gyp npm itself carries.
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
fi
# --nodedir: the headers above, so node-gyp downloads nothing; the module uses N-API only,
# so it loads in any Node with N-API 8 whatever the headers' version.
cd dns-server/serve/native
node "$gyp" rebuild --nodedir="$nodedir" --loglevel=warn >&2
test -f build/Release/udp_batch.node
echo "build-native: built dns-server/serve/native/build/Release/udp_batch.node" >&2
