#!/usr/bin/env bash
# Look-aside GET throughput of metacache against nginx serving a static file of the same size,
# both measured with wrk in the same run on this machine (loopback only, bounded duration).
#
#   scripts/bench-lookaside.sh [value-bytes] [seconds] [connections]
#
# Needs wrk and nginx (Debian packages `wrk`, `nginx-light`); builds metacache in release.
set -euo pipefail

size=${1:-1024}
seconds=${2:-10}
connections=${3:-32}
source "$(dirname "$0")/bench-common.sh"
bench_setup bench-lookaside
start_metacache
curl -sf -X PUT "http://$http/api/v1/engines/bench" --data '{"catalog_types": ["bench"],
  "entries": [{"token": "blobs", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 1000}}],
  "caches": [{"entry_name": "bench-blobs", "source": {"entry": "blobs"}}]}' >/dev/null
curl -sf -X POST "http://$http/api/v1/catalogs" --data '{"name": "bench", "properties": {"type": "bench"}}' >/dev/null
head -c "$size" /dev/urandom > "$work/value"
curl -sf -X PUT "http://$http/api/v1/catalogs/bench/caches/bench/bench-blobs/key" --data-binary "@$work/value" >/dev/null
ours="http://$http/api/v1/catalogs/bench/caches/bench/bench-blobs/key"

# nginx on a free port, serving the same bytes
mkdir -p "$work/html"
cp "$work/value" "$work/html/key"
start_nginx "$work/html"
theirs="http://127.0.0.1:$port/key"
cmp <(curl -sf "$ours") <(curl -sf "$theirs")

run() { wrk -t2 -c"$connections" -d"${seconds}s" "$1" | awk '/Requests\/sec/ {print $2}'; }
ours_rps=$(run "$ours")
theirs_rps=$(run "$theirs")
echo "value ${size} B, ${connections} connections, ${seconds} s each, wrk -t2 on 2 cores:"
echo "  nginx static file     ${theirs_rps} req/s"
echo "  metacache look-aside  ${ours_rps} req/s"
awk -v a="$ours_rps" -v b="$theirs_rps" 'BEGIN { printf "  ratio metacache / nginx = %.2f\n", a / b }'
