#!/usr/bin/env bash
# GET /metrics of the release binary with 100 catalogs × 20 caches (2,000 series per family),
# against nginx serving the same exposition text as a static file, both under wrk in the same
# run (loopback only, bounded duration). Prints per-request latency and the throughput ratio.
#
#   scripts/bench-metrics.sh [seconds]
set -euo pipefail

seconds=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; rm -rf "$work"' EXIT
for tool in wrk nginx curl; do
    command -v "$tool" >/dev/null || { echo "bench-metrics: $tool is missing (apt-get install wrk nginx-light curl)" >&2; exit 1; }
done
cargo build --release --locked -p metacache --manifest-path "$root/Cargo.toml" >&2
bin="${CARGO_TARGET_DIR:-$root/target}/release/metacache"
"$bin" serve --data-dir "$work/data" --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 > "$work/ready" 2> "$work/metacache.log" &
for _ in $(seq 1 100); do grep -q ready "$work/ready" 2>/dev/null && break; sleep 0.1; done
http=$(grep -o 'http=[0-9.:]*' "$work/ready" | cut -d= -f2)

entries=$(for i in $(seq 0 18); do printf '{"token": "e%d", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 1000}},' "$i"; done)
caches=$(for i in $(seq 0 18); do printf '{"entry_name": "bench-%d", "source": {"entry": "e%d"}},' "$i" "$i"; done)
curl -sf -X PUT "http://$http/api/v1/engines/bench" \
    --data "{\"catalog_types\": [\"bench\"], \"entries\": [${entries%,}], \"caches\": [${caches%,}]}" >/dev/null
for c in $(seq -w 0 99); do
    curl -sf -X POST "http://$http/api/v1/catalogs" --data "{\"name\": \"catalog_$c\", \"properties\": {\"type\": \"bench\", \"meta.cache.max-weight\": \"1GB\"}}" >/dev/null
    for i in 0 1 2 3; do
        curl -sf -X PUT "http://$http/api/v1/catalogs/catalog_$c/caches/bench/bench-$i/k" --data "value" >/dev/null
    done
done
curl -sf "http://$http/metrics" > "$work/metrics.txt"
series=$(grep -vc '^#' "$work/metrics.txt")

mkdir -p "$work/html" "$work/tmp"
cp "$work/metrics.txt" "$work/html/metrics"
chmod 755 "$work/html"; chmod 644 "$work/html/metrics"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:$port; root $work/html; }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"

# One scraper at a time, as Prometheus does.
run() { wrk -t1 -c1 -d"${seconds}s" --latency "$1"; }
ours=$(run "http://$http/metrics")
theirs=$(run "http://127.0.0.1:$port/metrics")
pick() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
echo "/metrics: $(wc -c < "$work/metrics.txt") bytes, $series series; wrk -t1 -c1 ${seconds}s:"
echo "  nginx static copy   p50 $(pick "$theirs" 50%)  p99 $(pick "$theirs" 99%)  $(echo "$theirs" | awk '/Requests\/sec/ {print $2}') req/s"
echo "  metacache /metrics  p50 $(pick "$ours" 50%)  p99 $(pick "$ours" 99%)  $(echo "$ours" | awk '/Requests\/sec/ {print $2}') req/s"
awk -v a="$(echo "$ours" | awk '/Requests\/sec/ {print $2}')" -v b="$(echo "$theirs" | awk '/Requests\/sec/ {print $2}')" \
    'BEGIN { printf "  ratio metacache / nginx = %.3f\n", a / b }'
