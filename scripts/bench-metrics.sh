#!/usr/bin/env bash
# GET /metrics of the release binary with 100 catalogs × 19 caches (1,900 series per family),
# against nginx serving the same exposition text as a static file, both under wrk in the same
# run (loopback only, bounded duration). Prints per-request latency and the throughput ratio.
#
#   scripts/bench-metrics.sh [seconds]          # 4 caches a catalog hold one value each
#   scripts/bench-metrics.sh [seconds] busy     # the hard case, below
#
# `busy`: every cache serves look-aside clients (wrk, 2 connections, GET and on a miss PUT, keys
# skewed towards low numbers over 300 a cache, values of 100 B to 2 KB) for 20 s before and all
# through the measurement; each catalog's `meta.cache.max-weight` (2MB) is below its working set
# (~6 MB), so the budget binds and the caches evict; every cache has a quota advisor, so a scrape
# carries some 15,000 curve points. One scraper at a time, as Prometheus does, while the clients
# go on; nginx is measured under the same clients, serving a copy of a scrape taken under them.
# Besides wrk's back-to-back scrapes, 40 scrapes 0.5 s apart (curl) give the latency a scraper
# at an interval sees.
set -euo pipefail

seconds=${1:-10}
mode=${2:-idle}
source "$(dirname "$0")/bench-common.sh"
bench_setup bench-metrics
start_metacache

limit=1GB
[ "$mode" = busy ] && limit=2MB
entries=$(for i in $(seq 0 18); do printf '{"token": "e%d", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 1000}},' "$i"; done)
caches=$(for i in $(seq 0 18); do printf '{"entry_name": "bench-%d", "source": {"entry": "e%d"}},' "$i" "$i"; done)
curl -sf -X PUT "http://$http/api/v1/engines/bench" \
    --data "{\"catalog_types\": [\"bench\"], \"entries\": [${entries%,}], \"caches\": [${caches%,}]}" >/dev/null
for c in $(seq -w 0 99); do
    curl -sf -X POST "http://$http/api/v1/catalogs" --data "{\"name\": \"catalog_$c\", \"properties\": {\"type\": \"bench\", \"meta.cache.max-weight\": \"$limit\"}}" >/dev/null
    for i in 0 1 2 3; do
        curl -sf -X PUT "http://$http/api/v1/catalogs/catalog_$c/caches/bench/bench-$i/k" --data "value" >/dev/null
    done
done

clients_rps=""
if [ "$mode" = busy ]; then
    cat > "$work/clients.lua" <<'LUA'
-- Look-aside clients: a GET of a skewed key of a random cache; after a miss, a PUT of its value.
local put = nil
local last = nil
request = function()
    if put then
        local p = put
        put = nil
        return wrk.format("PUT", p.path, nil, p.body)
    end
    local u = math.random()
    local key = math.floor(u * u * u * 300)
    last = {
        path = string.format("/api/v1/catalogs/catalog_%02d/caches/bench/bench-%d/key-%d",
            math.random(0, 99), math.random(0, 18), key),
        size = 100 + (key * 2654435761) % 1900,
    }
    return wrk.format("GET", last.path)
end
response = function(status, headers, body)
    if status == 404 and last then
        put = { path = last.path, body = string.rep("v", last.size) }
    end
end
LUA
    clients() { wrk -t1 -c2 -d"$1" -s "$work/clients.lua" "http://$http" | awk '/Requests\/sec/ {print $2}'; }
    clients 20s >/dev/null
fi

# While the clients (if any) go on: a scrape to copy for nginx, then one scraper at a time.
run() { wrk -t1 -c1 -d"${seconds}s" --latency "$1"; }
under_clients() {
    if [ "$mode" = busy ]; then
        clients "$((seconds + 4))s" > "$work/clients.rps" &
        local pid=$!
        sleep 2
        "$@"
        wait "$pid"
        clients_rps="$clients_rps $(cat "$work/clients.rps")"
    else
        "$@"
    fi
}
under_clients curl -sf "http://$http/metrics" -o "$work/metrics.txt"
series=$(grep -vc '^#' "$work/metrics.txt")
curves=$(grep -c '_advice_hit_ratio{' "$work/metrics.txt" || true)
mkdir -p "$work/html"
cp "$work/metrics.txt" "$work/html/metrics"
start_nginx "$work/html"

measure() { eval "$1=\$(run \"\$2\")"; }
under_clients measure ours "http://$http/metrics"
under_clients measure theirs "http://127.0.0.1:$port/metrics"
# Scrapes spaced as Prometheus spaces them (here every 0.5 s, 40 of them): each finds the rows
# built ahead after the one before ready, where back-to-back scrapes (wrk above) race the build.
spaced() {
    for _ in $(seq 1 40); do
        curl -sf -o /dev/null -w '%{time_total}\n' "http://$http/metrics"
        sleep 0.5
    done | sort -n | awk '{ t[NR] = $1 * 1000 } END { printf "p50 %.2fms  p99 %.2fms (of %d)", t[int(NR * 0.5) + 1], t[NR], NR }' > "$work/spaced"
}
seconds_before=$seconds
seconds=$(( 40 * 6 / 10 + 1 ))
under_clients spaced
seconds=$seconds_before
pick() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
echo "/metrics ($mode): $(wc -c < "$work/metrics.txt") bytes, $series series ($curves curve points); wrk -t1 -c1 ${seconds}s:"
[ -n "$clients_rps" ] && echo "  look-aside clients meanwhile (req/s: the copy's scrape, metacache's, nginx's, the spaced scrapes'):$clients_rps"
echo "  nginx static copy   p50 $(pick "$theirs" 50%)  p99 $(pick "$theirs" 99%)  $(echo "$theirs" | awk '/Requests\/sec/ {print $2}') req/s"
echo "  metacache /metrics  p50 $(pick "$ours" 50%)  p99 $(pick "$ours" 99%)  $(echo "$ours" | awk '/Requests\/sec/ {print $2}') req/s"
echo "  metacache, scrapes 0.5 s apart  $(cat "$work/spaced")"
awk -v a="$(echo "$ours" | awk '/Requests\/sec/ {print $2}')" -v b="$(echo "$theirs" | awk '/Requests\/sec/ {print $2}')" \
    'BEGIN { printf "  ratio metacache / nginx = %.3f\n", a / b }'
if [ "$mode" = busy ]; then
    stats=$(curl -sf -X POST "http://$http/api/v1/sql" --data "SELECT sum(hit_count) AS hits, sum(request_count) AS requests, sum(eviction_count) AS evictions, sum(weight_reject_count) AS rejects FROM information_schema.catalog_meta_cache_statistics")
    echo "  caches: $stats"
    grep '^metacache_advisor_reserved_bytes\|^metacache_advisor_max_weight_bytes' "$work/metrics.txt" | sed 's/^/  /'
fi
