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
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; rm -rf "$work"' EXIT

for tool in wrk nginx curl; do
    command -v "$tool" >/dev/null || { echo "bench-lookaside: $tool is missing (apt-get install wrk nginx-light curl)" >&2; exit 1; }
done

cargo build --release --locked -p metacache --manifest-path "$root/Cargo.toml" >&2
bin="${CARGO_TARGET_DIR:-$root/target}/release/metacache"

# metacache on free ports
"$bin" serve --data-dir "$work/data" --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 > "$work/ready" 2> "$work/metacache.log" &
for _ in $(seq 1 100); do grep -q ready "$work/ready" 2>/dev/null && break; sleep 0.1; done
http=$(grep -o 'http=[0-9.:]*' "$work/ready" | cut -d= -f2)
curl -sf -X PUT "http://$http/api/v1/engines/bench" --data '{"catalog_types": ["bench"],
  "entries": [{"token": "blobs", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 1000}}],
  "caches": [{"entry_name": "bench-blobs", "source": {"entry": "blobs"}}]}' >/dev/null
curl -sf -X POST "http://$http/api/v1/catalogs" --data '{"name": "bench", "properties": {"type": "bench"}}' >/dev/null
head -c "$size" /dev/urandom > "$work/value"
curl -sf -X PUT "http://$http/api/v1/catalogs/bench/caches/bench/bench-blobs/key" --data-binary "@$work/value" >/dev/null
ours="http://$http/api/v1/catalogs/bench/caches/bench/bench-blobs/key"

# nginx on a free port, serving the same bytes
mkdir -p "$work/html"
chmod 755 "$work"  # nginx workers run as an unprivileged user
cp "$work/value" "$work/html/key"
chmod 755 "$work/html"; chmod 644 "$work/html/key"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp;
    proxy_temp_path $work/tmp;
    fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp;
    scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:$port; root $work/html; }
}
CONF
mkdir -p "$work/tmp"
nginx -c "$work/nginx.conf" -p "$work"
theirs="http://127.0.0.1:$port/key"
cmp <(curl -sf "$ours") <(curl -sf "$theirs")

run() { wrk -t2 -c"$connections" -d"${seconds}s" "$1" | awk '/Requests\/sec/ {print $2}'; }
ours_rps=$(run "$ours")
theirs_rps=$(run "$theirs")
echo "value ${size} B, ${connections} connections, ${seconds} s each, wrk -t2 on 2 cores:"
echo "  nginx static file     ${theirs_rps} req/s"
echo "  metacache look-aside  ${ours_rps} req/s"
awk -v a="$ours_rps" -v b="$theirs_rps" 'BEGIN { printf "  ratio metacache / nginx = %.2f\n", a / b }'
