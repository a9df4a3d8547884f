#!/usr/bin/env bash
# Runs the reference team's JSON-RPC test suite (klaytn/klaytn-rpc-tester, unmodified) against a
# fresh `chaind --dev`. Makes its own virtualenv under target/rpc-suite/venv on first use.
#
#   tests/rpc-suite/run.sh                 # both passes (HTTP, then WebSocket)
#   tests/rpc-suite/run.sh --protocol rpc  # HTTP only
#   tests/rpc-suite/run.sh --help          # every option
#
# The suite is read from $RPC_TESTER_DIR, default ../shared/klaytn-rpc-tester beside the
# repository; chaind from $CHAIND, default target/release/chaind (built when missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$repo/target/rpc-suite/venv"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.ready" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    touch "$venv/.ready"
fi
chaind="${CHAIND:-$repo/target/release/chaind}"
if [ ! -x "$chaind" ]; then
    (cd "$repo" && cargo build --release --locked --bin chaind)
fi
exec "$venv/bin/python" "$here/runner.py" --chaind "$chaind" \
    --suite "${RPC_TESTER_DIR:-$repo/../shared/klaytn-rpc-tester}" "$@"
