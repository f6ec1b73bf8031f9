#!/usr/bin/env bash
# Memory under pressure through the public interface: for each value shape, start the release
# binary on free ports, register a look-aside engine over HTTP, set the node limit L with
# `ADMIN SET FRONTEND CONFIG`, write 10 × L with key churn from concurrent clients, and print the
# server's RSS above its baseline as a multiple of L (target ≤ 1.15).
#
#   scripts/governance-rss.sh [limit-MiB] [clients] [shapes...]
#
# Defaults: L = 64 MiB, 8 clients, shapes 512 4096 65536 1048576 mix. Each shape runs in a
# fresh process so that one's peak cannot hide in another's. ALLOCATOR=system runs the service
# on the system allocator instead of jemalloc (the comparison in docs/benchmarks.md).
set -euo pipefail

limit=${1:-64}
clients=${2:-8}
shift $(( $# > 2 ? 2 : $# ))
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(512 4096 65536 1048576 mix)

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
target="${CARGO_TARGET_DIR:-$root/target}"
features=()
[ "${ALLOCATOR:-jemalloc}" = system ] && features=(--no-default-features)
cargo build --release --locked -p metacache --bin metacache --example lookaside_rss "${features[@]}" \
    --manifest-path "$root/Cargo.toml" >&2
cp "$target/release/metacache" "$target/release/examples/lookaside_rss" "$work/"
echo "allocator: ${ALLOCATOR:-jemalloc}" >&2

printf '%-8s %8s %10s %10s %10s %10s %10s\n' shape puts 'peak×L' 'final×L' 'reserved×L' 'alloc×L' 'rejected%'
for shape in "${shapes[@]}"; do
    rm -rf "$work/data" "$work/ready"
    "$work/metacache" serve --data-dir "$work/data" --mysql-addr 127.0.0.1:0 \
        --http-addr 127.0.0.1:0 > "$work/ready" 2> "$work/metacache.log" &
    pid=$!
    for _ in $(seq 1 100); do grep -q ready "$work/ready" 2>/dev/null && break; sleep 0.1; done
    http=$(grep -o 'http=[0-9.:]*' "$work/ready" | cut -d= -f2)
    [ -n "$http" ] || { echo "metacache did not start:" >&2; cat "$work/metacache.log" >&2; exit 1; }
    sleep 1  # let the baseline settle (background threads, first allocations)
    line=$("$work/lookaside_rss" "$http" "$pid" "$shape" "$limit" "$clients")
    echo "$line" >> "$work/lines"
    field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$line"; }
    printf '%-8s %8s %10s %10s %10s %10s %10s\n' "$shape" "$(field puts)" "$(field peak_above_baseline_x_l)" \
        "$(field final_above_baseline_x_l)" "$(field reserved_x_l)" "$(field allocated_x_l)" "$(field rejected_pct)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
done
echo
echo "L = $limit MiB, $clients clients, 10 × L written per shape, key space 4 × L; raw lines:"
cat "$work/lines"
