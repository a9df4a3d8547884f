#!/usr/bin/env bash
# Instructions per chain_sign call over HTTP, counted by callgrind: repeatable (the same
# binary and inputs give the same count, whatever else the machine is doing), so a change to
# the request path can be judged where wall-clock figures are too noisy.
#
#   1. chaind runs under `valgrind --tool=callgrind` on a fresh data directory with --dev
#      (its developer account, light scrypt) and HTTP on 127.0.0.1:<free port>;
#   2. the account is unlocked, the counters are zeroed, and benches/rpc_load.rs sends
#      chain_sign calls on one keep-alive connection for RPC_BENCH_SECS (default 4) seconds;
#   3. the counters are dumped and divided by the number of chain_sign calls:
#      all of chaind's instructions, those of signing (SecretKey::sign_hash) and of the
#      message hash (signed_message_hash), and the rest: the cost of the request path.
#
# Usage: benches/rpc_instructions.sh     Needs valgrind (callgrind_annotate). 127.0.0.1 only.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 2; }

cargo build --release --bin chaind
bench=$(cargo bench --bench rpc_load --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "rpc_load" and m.get("executable"):
        print(m["executable"])')

work=$(mktemp -d)
pid=
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    target/release/chaind --dev --lightkdf --datadir "$work/data" --ipcdisable \
    --rpc --rpcaddr 127.0.0.1 --rpcport 0 --rpcapi chain,personal,rpc >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 120); do
    grep -q "HTTP endpoint opened" "$work/log" 2>/dev/null && break
    sleep 0.5
done
url=$(grep -o 'url=http://127.0.0.1:[0-9]*' "$work/log" | head -1 | cut -d= -f2)
account=$(grep -o 'address=0x[0-9a-f]*' "$work/log" | head -1 | cut -d= -f2)
[[ -n $url && -n $account ]] || { cat "$work/log" >&2; exit 1; }

curl -sf -H 'Content-Type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"personal_unlockAccount\",\"params\":[\"$account\",\"\",0]}" \
    "$url/" >/dev/null
callgrind_control -z "$pid" >/dev/null 2>&1
RPC_BENCH_URL="$url/" RPC_BENCH_CONNS=1 RPC_BENCH_SECS="${RPC_BENCH_SECS:-4}" \
    RPC_BENCH_BODY="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"chain_sign\",\"params\":[\"$account\",\"0x68656c6c6f\"]}" \
    "$bench" | grep '^RESULT'
callgrind_control -d "$pid" >/dev/null 2>&1
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=

dump=$(ls "$work"/cg.out.* | head -1)
callgrind_annotate --threshold=100 --inclusive=yes "$dump" >"$work/inclusive" 2>/dev/null
callgrind_annotate --threshold=100 --tree=calling "$dump" >"$work/tree" 2>/dev/null
grep -m1 'ChainApi::sign (' "$work/tree" | grep -o '([0-9,]*x)' | tr -d '(),x' >"$work/calls"
python3 - "$work/inclusive" "$work/calls" <<'EOF'
import re, sys
calls = int(open(sys.argv[2]).read().strip() or 0)
if calls == 0:
    sys.exit("no chain_sign call was counted")
total, inclusive = None, {}
for line in open(sys.argv[1]):
    if "PROGRAM TOTALS" in line:
        total = int(line.split()[0].replace(",", ""))
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(.*?) \[", line)
    if m:
        inclusive.setdefault(m.group(2), int(m.group(1).replace(",", "")))
def of(suffix):
    return next((n for name, n in inclusive.items() if name.endswith(suffix)), 0)
sign, digest = of("crypto::SecretKey::sign_hash"), of("crypto::signed_message_hash")
print(f"chain_sign calls: {calls}")
print(f"instructions per call: {total / calls:,.0f}")
print(f"  signing (SecretKey::sign_hash): {sign / calls:,.0f}")
print(f"  message hash (signed_message_hash): {digest / calls:,.0f}")
print(f"  request path (HTTP, JSON-RPC, parameters, hex): {(total - sign - digest) / calls:,.0f}")
EOF
