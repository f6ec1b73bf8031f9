# Shared by the bench-*.sh scripts (sourced, not run): a scratch directory removed on exit, the
# release binary on free loopback ports, and nginx serving a directory as the peer.
#
#   source "$(dirname "$0")/bench-common.sh"
#   bench_setup NAME            # checks wrk, nginx and curl; sets $root and $work
#   start_metacache             # builds and starts metacache; sets $http (host:port)
#   start_nginx DIR             # serves DIR as nginx's root; sets $port

bench_setup() {
    bench_name=$1
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    work=$(mktemp -d)
    chmod 755 "$work"  # nginx workers run as an unprivileged user
    trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; rm -rf "$work"' EXIT
    for tool in wrk nginx curl; do
        command -v "$tool" >/dev/null || { echo "$bench_name: $tool is missing (apt-get install wrk nginx-light curl)" >&2; exit 1; }
    done
}

start_metacache() {
    cargo build --release --locked -p metacache --manifest-path "$root/Cargo.toml" >&2
    local bin="${CARGO_TARGET_DIR:-$root/target}/release/metacache"
    "$bin" serve --data-dir "$work/data" --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 > "$work/ready" 2> "$work/metacache.log" &
    for _ in $(seq 1 100); do grep -q ready "$work/ready" 2>/dev/null && break; sleep 0.1; done
    http=$(grep -o 'http=[0-9.:]*' "$work/ready" | cut -d= -f2)
    [ -n "$http" ] || { echo "$bench_name: metacache did not start:" >&2; cat "$work/metacache.log" >&2; exit 1; }
}

start_nginx() {
    local html=$1
    chmod 755 "$html"; chmod -R a+r "$html"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$work/tmp"
    cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:$port; root $html; }
}
CONF
    nginx -c "$work/nginx.conf" -p "$work"
}
