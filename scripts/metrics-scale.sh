#!/usr/bin/env bash
# /metrics at deployment scale (issue 14): 1,000 Hive catalogs over the fixture warehouse, of
# which 50 have been queried (SHOW DATABASES, SHOW TABLES, DESC), the rest idle. Prints the
# scrape's size, series (and series per built cache), and render time over N scrapes through
# HTTP, for each binary given, one after the other in the same run.
#
# With CHURN=1 the scrapes run under load: two MySQL clients keep querying catalogs c000-c099
# (the set in use grows and moves while scraping) and a third refreshes one of them every
# 100 ms (caches rebuilt, counters restarting); the statements they completed are reported.
#
#   scripts/metrics-scale.sh [scrapes] [binary ...]     # default: 50 scrapes, target/debug
#   CHURN=1 scripts/metrics-scale.sh 200 target/release/metacache
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
scrapes=${1:-50}
shift || true
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("${CARGO_TARGET_DIR:-$root/target}/debug/metacache")
warehouse="$root/tests/fixtures/hive/warehouse"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

for bin in "${binaries[@]}"; do
    data="$work/data-$RANDOM"
    METACACHE_SAMPLE_CATALOG=false "$bin" serve --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
        --data-dir "$data" > "$work/out" 2> "$work/log" &
    pid=$!
    for _ in $(seq 100); do grep -q "metacache ready" "$work/out" 2>/dev/null && break; sleep 0.1; done
    mysql_port=$(sed -n 's/.*mysql=[^:]*:\([0-9]*\).*/\1/p' "$work/out")
    http=$(sed -n 's/.*http=\([^ ]*\).*/\1/p' "$work/out")
    sql="mysql -h 127.0.0.1 -P $mysql_port -u root --batch"
    for c in $(seq 0 999 | xargs printf "%03d "); do
        echo "CREATE CATALOG c$c PROPERTIES (\"type\" = \"hms\", \"warehouse\" = \"$warehouse\");"
    done > "$work/create.sql"
    $sql < "$work/create.sql" > /dev/null
    for c in $(seq 0 49 | xargs printf "%03d "); do
        echo "SHOW DATABASES FROM c$c; SHOW TABLES FROM c$c.sales; DESC c$c.sales.orders;"
    done > "$work/query.sql"
    $sql < "$work/query.sql" > /dev/null
    curl -sf "http://$http/metrics" > "$work/metrics.txt"
    series=$(grep -vc '^#' "$work/metrics.txt")
    built=$($sql -N -e "SELECT count(*) FROM information_schema.catalog_meta_cache_statistics WHERE request_count > 0 OR estimated_weight > 0")
    churners=()
    if [ "${CHURN:-0}" = 1 ]; then
        for worker in 1 2; do
            (
                n=0
                while :; do
                    for c in $(seq 0 99 | shuf | xargs printf "%03d "); do
                        echo "SHOW TABLES FROM c$c.sales; DESC c$c.sales.orders; SHOW PARTITIONS FROM c$c.sales.orders;"
                    done | $sql > /dev/null 2>&1 || true
                    n=$((n + 300))
                    echo "$n" > "$work/churn-$worker"
                done
            ) &
            churners+=($!)
        done
        (
            while :; do
                $sql -e "REFRESH CATALOG c$(printf %03d $((RANDOM % 100)))" > /dev/null 2>&1 || true
                sleep 0.1
            done
        ) &
        churners+=($!)
        sleep 2
    fi
    for _ in $(seq "$scrapes"); do
        curl -s -o /dev/null -w '%{time_total}\n' "http://$http/metrics"
    done | sort -n > "$work/times"
    churned=""
    if [ ${#churners[@]} -gt 0 ]; then
        kill "${churners[@]}" 2>/dev/null || true
        done_statements=$(cat "$work"/churn-* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
        churned=", under churn ($done_statements statements in whole rounds meanwhile)"
        rm -f "$work"/churn-*
    fi
    pick() { awk -v q="$1" '{ v[NR] = $1 } END { i = int(NR * q + 0.5); if (i < 1) i = 1; printf "%.1f ms", v[i] * 1000 }' "$work/times"; }
    printf '%s: %s bytes, %s series, %s caches in use; %s scrapes: p50 %s, p99 %s%s\n' \
        "$bin" "$(wc -c < "$work/metrics.txt")" "$series" "$built" "$scrapes" "$(pick 0.5)" "$(pick 0.99)" "$churned"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
done
