#!/usr/bin/env bash
# Disk-tier hits (issue 20): throughput and latency of 1, 2 and 4 processes reading one
# directory at once, against raw reads of the same block files by the same processes (open +
# read + close: no lock, no ledger, no checksum, no recency stamp) in the same run.
#
#   scripts/disk-bench.sh                 # COUNT=2000 SIZE=16384 SECS=5 by default
#
# Prints one line per (processes, mode): total reads/s, the slowest process's p50 and p99.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
COUNT=${COUNT:-2000}
SIZE=${SIZE:-16384}
SECS=${SECS:-5}
cargo build --quiet --release -p metacache-disk --bins
P="$TARGET/release/metacache-disk-probe"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
"$P" "$DIR" $((1 << 30)) fill s3://bench/t "$COUNT" "$SIZE" >/dev/null
echo "blocks: $COUNT x $SIZE bytes (page cache), $SECS s per run, $(nproc) cores"
for n in 1 2 4; do
  for mode in tier raw; do
    extra=""
    [ "$mode" = raw ] && extra=raw
    out="$DIR/out"
    : > "$out"
    for _ in $(seq "$n"); do
      "$P" "$DIR" $((1 << 30)) bench s3://bench/t "$COUNT" "$SIZE" "$SECS" $extra >> "$out" &
    done
    wait
    grep '^bench ' "$out" | tr '=' ' ' | awk -v n="$n" -v mode="$mode" '
      { total += $5; if ($7 > p50) p50 = $7; if ($9 > p99) p99 = $9 }
      END { printf "processes=%d mode=%s reads_per_second=%d p50_us=%d p99_us=%d\n", n, mode, total, p50, p99 }'
  done
done
