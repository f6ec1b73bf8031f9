#!/usr/bin/env python3
"""Cluster benchmarks (issue 19): propagation delay of ALTER and REFRESH between 3 nodes on a
private PostgreSQL, and the cluster-wide statistics query for 3 nodes x 100 catalogs against
the same query on a single node with the same catalogs (measured in the same run).

Needs the PostgreSQL binaries (/usr/lib/postgresql/<v>/bin) and a built metacache binary:
    cargo build -p metacache && scripts/cluster-bench.py [ITERATIONS=100]
Prints one JSON line per measurement; docs/benchmarks.md quotes them.
"""
import glob, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("METACACHE_BIN") or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "metacache")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
WAREHOUSE = os.path.join(ROOT, "tests", "fixtures", "hive", "warehouse")


def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def as_pg(args):
    return (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []) + args


def start_pg(work):
    bindir = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    d = os.path.join(work, "pg"); os.makedirs(d)
    if os.geteuid() == 0:
        shutil.chown(d, "postgres")
    subprocess.run(as_pg([f"{bindir}/initdb", "-D", f"{d}/data", "-U", "postgres", "--auth=trust", "--no-sync"]), check=True, capture_output=True)
    p = port()
    subprocess.run(as_pg([f"{bindir}/pg_ctl", "-D", f"{d}/data", "-l", f"{d}/log", "-o",
                          f"-p {p} -k {d} -c listen_addresses=127.0.0.1 -c fsync=off", "-w", "start"]), check=True, capture_output=True)
    return bindir, d, p


def start_node(work, name, env):
    data = os.path.join(work, name)
    e = dict(os.environ, METACACHE_SAMPLE_CATALOG="false", **env)
    proc = subprocess.Popen([BIN, "serve", "--mysql-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--data-dir", data],
                            stdout=subprocess.PIPE, stderr=open(data + ".log", "w"), env=e, text=True)
    for line in proc.stdout:
        if line.startswith("metacache ready"):
            words = dict(w.split("=", 1) for w in line.split() if "=" in w)
            MYSQL[proc.pid] = words["mysql"]
            return proc, "http://" + words["http"]
    raise SystemExit(f"{name} did not start: see {data}.log")


MYSQL = {}  # pid -> the node's MySQL address


def mysql_conn(proc):
    import mysql.connector  # mysql-connector-python (scripts/test-deps.sh installs it)
    host, port = MYSQL[proc.pid].rsplit(":", 1)
    return mysql.connector.connect(host=host, port=int(port), user="root", password="")


def call(base, method, path, body=None):
    req = urllib.request.Request(base + path, data=body.encode() if body else None, method=method)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def sql(base, text):
    return call(base, "POST", "/api/v1/sql", text)


def pct(values, p):
    v = sorted(values); return v[min(len(v) - 1, int(p * len(v)))]


def report(what, ms, **extra):
    print(json.dumps({"what": what, "n": len(ms), "p50_ms": round(pct(ms, 0.5), 2), "p99_ms": round(pct(ms, 0.99), 2), "max_ms": round(max(ms), 2), **extra}), flush=True)


def main():
    work = tempfile.mkdtemp(prefix="metacache-cluster-bench")
    os.chmod(work, 0o755)  # the postgres user reaches its directory inside
    procs = []
    bindir, pgdir, pgport = start_pg(work)
    try:
        url = f"postgres://postgres@127.0.0.1:{pgport}/postgres"
        nodes = []
        for name in ["n1", "n2", "n3"]:
            proc, base = start_node(work, name, {"METACACHE_STORE": url, "METACACHE_FE_HOST": name})
            procs.append(proc); nodes.append(base)
        single, single_base = start_node(work, "single", {})
        procs.append(single)
        n1, others = nodes[0], nodes[1:]
        sql(n1, f"CREATE CATALOG lake PROPERTIES ('type' = 'hms', 'warehouse' = '{WAREHOUSE}')")
        deadline = time.time() + 10
        while not all(any(c["name"] == "lake" for c in call(o, "GET", "/api/v1/catalogs")["catalogs"]) for o in others):
            assert time.time() < deadline, "lake never propagated"
            time.sleep(0.01)

        # ALTER: from the statement's return on n1 until each other node shows the new value.
        delays = []
        for i in range(N):
            sql(n1, f"ALTER CATALOG lake SET PROPERTIES ('meta.cache.hive.file.ttl-second' = '{1000 + i}')")
            t0 = time.perf_counter()
            pending = set(others)
            while pending:
                for o in list(pending):
                    props = call(o, "GET", "/api/v1/catalogs/lake")["properties"]
                    if props.get("meta.cache.hive.file.ttl-second") == str(1000 + i):
                        delays.append((time.perf_counter() - t0) * 1000); pending.discard(o)
        report("ALTER propagation to each other node", delays)

        # REFRESH TABLE: until each other node's invalidation counter of the catalog moves.
        def invalidations(base):
            text = urllib.request.urlopen(base + "/metrics", timeout=30).read().decode()
            return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
                       if l.startswith("metacache_cache_invalidations_total{") and 'catalog="lake"' in l)
        for base in nodes:
            call(base, "GET", "/api/v1/catalogs/lake/databases/sales/tables/orders/partitions")
        delays = []
        for i in range(N):
            before = {o: invalidations(o) for o in others}
            sql(n1, "REFRESH TABLE lake.sales.orders")
            t0 = time.perf_counter()
            pending = set(others)
            while pending:
                for o in list(pending):
                    if invalidations(o) > before[o]:
                        delays.append((time.perf_counter() - t0) * 1000); pending.discard(o)
            for base in others:  # cache the table again
                call(base, "GET", "/api/v1/catalogs/lake/databases/sales/tables/orders/partitions")
        report("REFRESH TABLE propagation to each other node", delays)

        # Statistics of 3 nodes x 100 catalogs against one node with the same 100 catalogs.
        for i in range(100):
            stmt = f"CREATE CATALOG c{i:03d} PROPERTIES ('type' = 'hms', 'warehouse' = '{WAREHOUSE}')"
            sql(n1, stmt); sql(single_base, stmt)
        time.sleep(1.5)
        queries = [("SELECT *", "SELECT * FROM information_schema.catalog_meta_cache_statistics"),
                   ("one catalog", "SELECT * FROM information_schema.catalog_meta_cache_statistics WHERE CATALOG_NAME = 'c042'"),
                   ("sum by node", "SELECT FE_HOST, SUM(ESTIMATED_SIZE), SUM(HIT_COUNT) FROM information_schema.catalog_meta_cache_statistics GROUP BY FE_HOST")]
        for name, text in queries:
            for label, base in [("cluster (3 nodes)", n1), ("single node", single_base)]:
                ms, rows = [], 0
                for _ in range(max(N, 50)):
                    t0 = time.perf_counter()
                    out = sql(base, text)
                    ms.append((time.perf_counter() - t0) * 1000)
                    rows = len(out["rows"])
                report(f"statistics {name} over HTTP, {label}", ms, rows=rows)
            for label, proc in [("cluster (3 nodes)", procs[0]), ("single node", single)]:
                conn = mysql_conn(proc)
                cur = conn.cursor()
                ms, rows = [], 0
                for _ in range(max(N, 50)):
                    t0 = time.perf_counter()
                    cur.execute(text)
                    rows = len(cur.fetchall())
                    ms.append((time.perf_counter() - t0) * 1000)
                report(f"statistics {name} over MySQL, {label}", ms, rows=rows)
                conn.close()
    finally:
        for p in procs:
            p.kill(); p.wait()
        subprocess.run(as_pg([f"{bindir}/pg_ctl", "-D", f"{pgdir}/data", "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
