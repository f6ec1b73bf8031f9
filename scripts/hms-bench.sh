#!/usr/bin/env bash
# Cold vs warm metadata of a table with many partitions through a real Hive Metastore
# (issue 16): SHOW PARTITIONS over MySQL and the planning route's files over HTTP, each timed
# cold (first request after REFRESH TABLE) and warm (median of the next ones), with the
# metastore loads each warm request caused, read from the statistics table (LOAD_SUCCESS_COUNT
# of the hive-* caches before and after).
#
#   scripts/hms-bench.sh [partitions] [warm-runs] [binary]   # default 10000 20 target/debug
# Needs what scripts/test-deps.sh installs (java, pyspark, hmsclient).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
partitions=${1:-10000}
runs=${2:-20}
bin=${3:-${CARGO_TARGET_DIR:-$root/target}/debug/metacache}
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

jars="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && java -cp "$jars/*" -Dhive.async.log.enabled=false -Ddatanucleus.schema.autoCreateAll=true \
    -Dhive.metastore.schema.verification=false -Ddatanucleus.connectionPoolingType=None \
    "-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName=$work/metastore_db;create=true" \
    "-Dhive.metastore.warehouse.dir=$work/managed" \
    org.apache.hadoop.hive.metastore.HiveMetaStore -p "$port" > "$work/metastore.log" 2>&1) &
for _ in $(seq 300); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.3; done
started=$(date +%s)
python3 "$root/tests/clients/python/hms_fixture.py" "127.0.0.1:$port" "$work/warehouse" "$partitions" > /dev/null
echo "fixture: $partitions partitions written through Thrift in $(( $(date +%s) - started )) s" >&2

METACACHE_SAMPLE_CATALOG=false "$bin" serve --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
    --data-dir "$work/data" > "$work/out" 2> "$work/log" &
for _ in $(seq 100); do grep -q "metacache ready" "$work/out" 2>/dev/null && break; sleep 0.1; done
mysql_port=$(sed -n 's/.*mysql=[^:]*:\([0-9]*\).*/\1/p' "$work/out")
http=$(sed -n 's/.*http=\([^ ]*\).*/\1/p' "$work/out")
sql() { mysql -h 127.0.0.1 -P "$mysql_port" -u root --batch --skip-ssl -N -e "$1"; }
sql "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://127.0.0.1:$port')"
loads() { sql "SELECT sum(load_success_count + load_failure_count) FROM information_schema.catalog_meta_cache_statistics WHERE catalog_name = 'hms'"; }
ms() { python3 -c 'import sys, time; t = time.perf_counter(); import subprocess; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); print("%.1f" % ((time.perf_counter() - t) * 1000))' "$@"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

measure() {
    local name=$1; shift
    sql "REFRESH TABLE hms.sales.orders" > /dev/null
    local before cold warm after
    before=$(loads)
    cold=$(ms "$@")
    after=$(loads)
    local cold_loads=$(( after - before ))
    warm=$(for _ in $(seq "$runs"); do ms "$@"; done | median)
    local warm_loads=$(( $(loads) - after ))
    printf '%-28s cold %8s ms (%s metastore/listing loads)   warm median %7s ms (%s loads in %s runs)\n' \
        "$name" "$cold" "$cold_loads" "$warm" "$warm_loads" "$runs"
}

measure "SHOW PARTITIONS (MySQL)" mysql -h 127.0.0.1 -P "$mysql_port" -u root --skip-ssl -e "SHOW PARTITIONS FROM hms.sales.orders"
measure "files of all partitions" curl -sf "http://$http/api/v1/catalogs/hms/databases/sales/tables/orders/files"
