#!/usr/bin/env bash
# The JSON-RPC load bench against its reference: nginx serving a fixed JSON body.
#
#   1. nginx (Debian's package, installed when missing) listens on 127.0.0.1:<free port> with
#      one worker per core, no access log, unlimited keep-alive, and answers every request
#      with a fixed body of the same bytes as chaind's rpc_modules reply (its trailing newline
#      included);
#   2. benches/rpc_load.rs loads it with 1 and 8 keep-alive connections (RPC_BENCH_URL);
#   3. nginx is stopped, and the full bench runs against chaind with nginx's figures as
#      RPC_BENCH_BASELINE, so it judges both targets of the issue;
#   4. nginx is measured again (on a shared machine the figures drift from minute to
#      minute), and the ratio rpc_modules(chaind) / nginx is printed for 1 and 8 connections,
#      against the mean of nginx's two runs and against each.
#
# Usage: benches/rpc_compare.sh   (RPC_BENCH_SECS, RPC_BENCH_CONNS are passed on)
# Needs root only to install nginx. Only 127.0.0.1 is used.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
    echo "installing nginx ..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    # Debian's package starts its own service on port 80; this script does not need it.
    if command -v systemctl >/dev/null && systemctl is-active --quiet nginx 2>/dev/null; then
        systemctl stop nginx || true
    elif [[ -f /run/nginx.pid ]]; then
        kill "$(cat /run/nginx.pid)" 2>/dev/null || true
    fi
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

# Build first, so that nginx is not measured while the compiler runs.
cargo bench --bench rpc_load --no-run

work=$(mktemp -d)
nginx_pid=
cleanup() {
    if [[ -n $nginx_pid ]]; then
        kill "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
body='{"jsonrpc":"2.0","id":1,"result":{"chain":"1.0","personal":"1.0","rpc":"1.0"}}'
cores=$(nproc)
mkdir -p "$work/tmp"
cat >"$work/nginx.conf" <<EOF
worker_processes $cores;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        location / {
            default_type application/json;
            return 200 '$body\n';
        }
    }
}
EOF
start_nginx() {
    "$nginx_bin" -p "$work" -c "$work/nginx.conf" &
    nginx_pid=$!
    for _ in $(seq 100); do
        if python3 - "$port" 2>/dev/null <<'PY'; then break; fi
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
PY
        sleep 0.05
    done
}
stop_nginx() {
    kill "$nginx_pid"
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=
}
url=http://127.0.0.1:$port/

# nginx is measured before and after chaind, to show how much the machine drifted.
bench_nginx() { # $1: label
    start_nginx
    # Check the body: same bytes as chaind's reply.
    local got
    got=$(python3 - "$url" <<'PY'
import sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=b'{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":[]}', headers={"Content-Type": "application/json"}))
sys.stdout.write("%d %d" % (r.status, len(r.read())))
PY
)
    echo "== nginx, fixed body, $1 (at $url, $cores workers; status and body length: $got) =="
    [[ $got == "200 $((${#body} + 1))" ]] || { echo "unexpected nginx reply" >&2; exit 1; }
    nginx_out=$(RPC_BENCH_URL=$url cargo bench --bench rpc_load 2>&1) || { echo "$nginx_out"; exit 1; }
    echo "$nginx_out" | grep -v '^RESULT\|Finished\|Running' || true
    stop_nginx
}

rps() { # RESULT lines on stdin; $1 case, $2 conns
    awk -v c="$1" -v n="$2" '$1 == "RESULT" && $2 == "case=" c && $3 == "conns=" n {
        for (i = 4; i <= NF; i++) if ($i ~ /^rps=/) { sub("rps=", "", $i); print $i } }'
}
conns=$(echo "${RPC_BENCH_CONNS:-1,8}" | tr ',' ' ')

bench_nginx before
nginx_before=$nginx_out
baseline=
for n in $conns; do
    baseline+="${baseline:+,}$n=$(echo "$nginx_before" | rps url "$n")"
done

echo
echo "== chaind (rpc_modules judged against nginx before: $baseline) =="
chaind_out=$(RPC_BENCH_BASELINE=$baseline cargo bench --bench rpc_load 2>&1) || true
echo "$chaind_out" | grep -v '^RESULT\|^RATIO\|Finished\|Running' || true

echo
bench_nginx after
nginx_after=$nginx_out

echo
echo "== rpc_modules: chaind / nginx (nginx: mean of before and after) =="
for n in $conns; do
    c=$(echo "$chaind_out" | rps rpc_modules "$n")
    a=$(echo "$nginx_before" | rps url "$n")
    b=$(echo "$nginx_after" | rps url "$n")
    awk -v n="$n" -v c="$c" -v a="$a" -v b="$b" 'BEGIN {
        g = (a + b) / 2; r = c / g
        printf "%d connection(s): chaind %.0f req/s; nginx %.0f before, %.0f after; ratio %.2f (%.2f..%.2f), target >= 0.50: %s\n",
            n, c, a, b, r, c / (a > b ? a : b), c / (a < b ? a : b), (r >= 0.5 ? "PASS" : "FAIL") }'
done
