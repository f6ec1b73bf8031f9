#!/usr/bin/env bash
# The quota advisor through the public interface, on a cache of more keys than its sample (so
# its curve comes from a sample, and its smallest sizes from the full-scale simulation of the
# hottest keys): start the release binary on free ports, send a Zipf trace of look-aside GETs
# and PUTs over HTTP from concurrent clients, then replay it on a fresh catalog at each point
# of the curve the advice API gave, and print predicted against measured hit rates.
#
#   scripts/advice-lookaside.sh [keys] [requests] [zipf-alpha] [clients] [replays]
#
# Defaults: 20,000 keys, 200,000 requests, α 1.0, 4 clients, 1 replay a size (about five
# minutes on 2 cores). One process serves the recording and every replay.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release --locked -p metacache --bin metacache --example advice_lookaside \
    --manifest-path "$root/Cargo.toml" >&2
"$target/release/metacache" serve --data-dir "$work/data" --mysql-addr 127.0.0.1:0 \
    --http-addr 127.0.0.1:0 > "$work/ready" 2> "$work/metacache.log" &
for _ in $(seq 1 100); do grep -q ready "$work/ready" 2>/dev/null && break; sleep 0.1; done
http=$(grep -o 'http=[0-9.:]*' "$work/ready" | cut -d= -f2)
[ -n "$http" ] || { echo "metacache did not start:" >&2; cat "$work/metacache.log" >&2; exit 1; }
"$target/release/examples/advice_lookaside" "$http" "$@"
