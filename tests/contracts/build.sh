#!/bin/sh
# Rebuilds tests/contracts/out/*.json from tests/contracts/*.sol with solc from
# the npm registry (solc's JavaScript build, pinned), installed in a temporary
# directory so that no node_modules lands in the repository.
# Usage: sh tests/contracts/build.sh   (from anywhere; needs node and npm)
set -eu
SOLC_VERSION=0.8.24
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-audit --no-fund "solc@$SOLC_VERSION"
node "$here/compile.js" "$tmp/node_modules/solc"
