#!/usr/bin/env bash
# The staleness window of an HMS catalog (issue 16): how long after a partition is added to
# the metastore until metacache's SHOW PARTITIONS / partitions route shows it, with event
# polling (hms_events_polling_interval_ms) against TTL only. One real Hive Metastore (with the
# notification log writer of the tests), one metacache, three catalogs over it, read all the
# time by a client, so the caches stay warm as they would under a query load:
#   ttl_only    partition TTLs of TTL seconds, no polling
#   events_1s   polling every 1000 ms, default TTLs (a day)
#   events_200  polling every 200 ms, default TTLs
# Each round waits a random time in [0, TTL) (so additions fall anywhere in the TTL's and the
# pollers' cycles), adds one partition through Thrift and times, per catalog, until the
# partitions route lists it (checked every 20 ms). Prints median, p95 and max per catalog, and the
# metastore loads each catalog's partition caches made.
#
#   scripts/hms-staleness.sh [rounds] [ttl-seconds] [binary]   # default 12 10 target/debug
# Needs what scripts/test-deps.sh installs (a JDK, pyspark, hmsclient).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
rounds=${1:-12}
ttl=${2:-10}
bin=${3:-${CARGO_TARGET_DIR:-$root/target}/debug/metacache}
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

jars="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
javac -cp "$jars/*" -d "$work/listener" "$root/tests/clients/java/NotificationLogListener.java"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && java -cp "$jars/*:$work/listener" -Dhive.async.log.enabled=false \
    -Ddatanucleus.schema.autoCreateAll=true -Dhive.metastore.schema.verification=false \
    -Ddatanucleus.connectionPoolingType=None \
    -Dhive.metastore.event.listeners=metacache.test.NotificationLogListener \
    "-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName=$work/metastore_db;create=true" \
    "-Dhive.metastore.warehouse.dir=$work/managed" \
    org.apache.hadoop.hive.metastore.HiveMetaStore -p "$port" > "$work/metastore.log" 2>&1) &
for _ in $(seq 300); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.3; done
python3 "$root/tests/clients/python/hms_fixture.py" "127.0.0.1:$port" "$work/warehouse" 3 > /dev/null

METACACHE_SAMPLE_CATALOG=false "$bin" serve --mysql-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
    --data-dir "$work/data" > "$work/out" 2> "$work/log" &
for _ in $(seq 600); do grep -q "metacache ready" "$work/out" 2>/dev/null && break; sleep 0.1; done
mysql_port=$(sed -n 's/.*mysql=[^:]*:\([0-9]*\).*/\1/p' "$work/out")
[ -n "$mysql_port" ] || { echo "metacache did not start:" >&2; cat "$work/log" >&2; exit 1; }
http=$(sed -n 's/.*http=\([^ ]*\).*/\1/p' "$work/out")
sql() { mysql -h 127.0.0.1 -P "$mysql_port" -u root --batch --skip-ssl -N -e "$1"; }
uri="thrift://127.0.0.1:$port"
sql "CREATE CATALOG ttl_only PROPERTIES ('type'='hms', 'hive.metastore.uris'='$uri',
     'meta.cache.hive.partition_names.ttl-second'='$ttl', 'meta.cache.hive.partition_view.ttl-second'='$ttl')"
sql "CREATE CATALOG events_1s PROPERTIES ('type'='hms', 'hive.metastore.uris'='$uri', 'hms_events_polling_interval_ms'='1000')"
sql "CREATE CATALOG events_200 PROPERTIES ('type'='hms', 'hive.metastore.uris'='$uri', 'hms_events_polling_interval_ms'='200')"

python3 - "$port" "$http" "$rounds" "$ttl" <<'EOF'
import json, random, sys, time, urllib.request
from hmsclient import hmsclient

port, http, rounds, ttl = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
random.seed(16)
catalogs = ["ttl_only", "events_1s", "events_200"]

def names(catalog):
    url = "http://%s/api/v1/catalogs/%s/databases/sales/tables/orders/partitions" % (http, catalog)
    with urllib.request.urlopen(url) as r:
        return {p["name"] for p in json.load(r)["partitions"]}

for c in catalogs:
    names(c)  # warm
time.sleep(2)  # pollers started and took their cursor
seen = {c: [] for c in catalogs}
with hmsclient.HMSClient(host="127.0.0.1", port=port) as client:
    orders = client.get_table("sales", "orders")
    for i in range(rounds):
        day = "2025-%02d-%02d" % (1 + i // 28, 1 + i % 28)
        # At a random moment: not in step with the TTL's reloads or the pollers' ticks.
        time.sleep(random.uniform(0, ttl))
        client.add_partitions([client.make_partition(orders, [day])])
        added = time.perf_counter()
        waiting = set(catalogs)
        while waiting:
            for c in sorted(waiting):
                if "dt=" + day in names(c):
                    seen[c].append((time.perf_counter() - added) * 1000)
                    waiting.discard(c)
            time.sleep(0.02)

def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

print("%-12s %10s %10s %10s   (ms from add_partition to visible, %d rounds)" % ("catalog", "median", "p95", "max", rounds))
for c in catalogs:
    v = seen[c]
    print("%-12s %10.0f %10.0f %10.0f" % (c, pct(v, 50), pct(v, 95), max(v)))
EOF
echo
echo "metastore loads of the partition caches (hive-partition-names, hive-partition-view):"
sql "SELECT catalog_name, entry_name, load_success_count, invalidate_count FROM information_schema.catalog_meta_cache_statistics
     WHERE engine_name = 'hive' AND entry_name IN ('hive-partition-names', 'hive-partition-view') ORDER BY catalog_name, entry_name"
echo
echo "events:"
sql "SELECT catalog_name, poll_count, events_applied, partitions_invalidated, gap_resets FROM information_schema.catalog_meta_cache_events ORDER BY catalog_name"
