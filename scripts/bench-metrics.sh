#!/usr/bin/env bash
# GET /metrics of the release binary with 100 catalogs × 20 caches (2,000 series per family),
# against nginx serving the same exposition text as a static file, both under wrk in the same
# run (loopback only, bounded duration). Prints per-request latency and the throughput ratio.
#
#   scripts/bench-metrics.sh [seconds]
set -euo pipefail

seconds=${1:-10}
source "$(dirname "$0")/bench-common.sh"
bench_setup bench-metrics
start_metacache

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

mkdir -p "$work/html"
cp "$work/metrics.txt" "$work/html/metrics"
start_nginx "$work/html"

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
