//! The quota advisor on the bundled sample catalogs, through the real binary: a skewed mix of
//! planning requests over HTTP (tables, schemas, partitions, file listings, snapshots, Lance
//! access) records each cache's trace in its advisor; then the same requests are replayed with
//! each curve point's bytes set as the limit — per cache with its entry's `max-weight`, per
//! catalog with `meta.cache.max-weight` — and the hit rate the statistics table measures is
//! compared with the one predicted. The sample catalogs' key sets are smaller than the sample,
//! so the per-cache curves are simulations of every key: they must match the replays closely.
//! The catalog curve predicts a bare shared limit of each size, and gives its best split among
//! the caches with that split's own prediction: the test applies each point both ways (the
//! catalog's limit alone; the catalog's limit and each cache's share in one statement, as the
//! dashboard writes it), and bounds how near each prediction comes.
//!
//! The first test sends the requests one at a time, so a replay is nearly the trace the
//! advisor saw; the second sends them from several clients at once, recording and replaying,
//! as engines do: the advisor then sees one interleaving of the requests and each replay another;
//! the third interleaves `REFRESH TABLE`, `REFRESH DATABASE` and `REFRESH CATALOG` with the
//! requests, recording and replaying, as an admin's scripts or a metastore's events do.

mod common;

use std::collections::HashMap;

use common::{Server, data_dir, split_statement};
use serde_json::Value;

const SAMPLE: &[(&str, &str)] = &[("METACACHE_SAMPLE_CATALOG", "true")];

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Every planning request the sample catalogs answer, one path each.
fn requests() -> Vec<String> {
    let mut paths = Vec::new();
    let tables: &[(&str, &str, &str, &[&str])] = &[
        (
            "sample",
            "sales",
            "orders",
            &[
                "dt=2024-01-01",
                "dt=2024-01-02",
                "dt=2024-01-03",
                "region=us",
            ],
        ),
        ("sample", "sales", "customers", &[]),
        ("sample", "web", "events", &[]),
        ("sample_iceberg", "shop", "trips", &[]),
        ("sample_iceberg", "shop", "customers", &[]),
        ("sample_paimon", "shop", "events", &[]),
        ("sample_paimon", "shop", "users", &[]),
        ("sample_paimon", "shop", "metrics", &[]),
        ("sample_paimon", "shop", "readings", &[]),
        ("sample_paimon", "shop", "levels", &[]),
        ("sample_paimon", "shop", "ticks", &[]),
        ("sample_paimon", "shop", "notes", &[]),
    ];
    for (catalog, db, table, filters) in tables {
        let base = format!("/api/v1/catalogs/{catalog}/databases/{db}/tables/{table}");
        paths.push(format!("/api/v1/catalogs/{catalog}/databases/{db}/tables"));
        paths.push(base.clone());
        paths.push(format!("{base}/schema"));
        paths.push(format!("{base}/partitions"));
        paths.push(format!("{base}/files"));
        for filter in *filters {
            paths.push(format!("{base}/files?{filter}"));
            paths.push(format!("{base}/partitions?{filter}"));
        }
        if *catalog != "sample" {
            paths.push(format!("{base}/snapshots"));
        }
    }
    paths.push("/api/v1/catalogs/sample_lance/databases/default/tables/items/access".into());
    paths
}

/// How a workload is sent: by how many clients at once, and how many times each limit is
/// replayed.
#[derive(Debug, Clone, Copy)]
struct Clients {
    count: usize,
    replays: usize,
}

/// One client, one request at a time: a replay is nearly the trace the advisor saw. Nearly: a
/// file listing loads a table's partitions at once and stores them in whatever order their
/// loads end, so a cache of a few listings keeps one or another (`sample.hive-file` at 4 KiB
/// measured 0.253–0.343 in replays of one build); three replays span that better than two.
const ONE: Clients = Clients {
    count: 1,
    replays: 3,
};

/// Several clients at once, as engines send.
const CONCURRENT: Clients = Clients {
    count: 4,
    replays: 3,
};

/// Sends `workload` from `clients` concurrent clients, each every `clients`-th request of it
/// (concurrent requests for one key wait for one load, and the server's threads take the
/// requests in whatever order); every request must be answered. A request that starts with
/// `REFRESH` is a statement, sent over MySQL.
fn send(server: &Server, workload: &[String], clients: usize) {
    std::thread::scope(|scope| {
        for client in 0..clients {
            scope.spawn(move || {
                for request in workload.iter().skip(client).step_by(clients) {
                    if request.starts_with("REFRESH") {
                        server.query(request);
                        continue;
                    }
                    let (status, body) = server.http("GET", request, None, None);
                    assert!(status == 200 || status == 400, "{request}: {status} {body}");
                }
            });
        }
    });
}

/// `n` requests over [`requests`], skewed: a request's popularity falls with its rank.
fn workload(n: u64) -> Vec<String> {
    let all = requests();
    let len = all.len() as u64;
    (0..n)
        .map(|i| {
            let rank = (mix(i) % len) * (mix(i ^ 0x77) % len) / len;
            all[rank as usize].clone()
        })
        .collect()
}

/// `workload` with a REFRESH statement before every `every`-th request, in turn: one table of
/// each catalog, a database, and a whole catalog.
fn with_refreshes(workload: &[String], every: usize) -> Vec<String> {
    const REFRESHES: &[&str] = &[
        "REFRESH TABLE sample.sales.orders",
        "REFRESH TABLE sample_iceberg.shop.trips",
        "REFRESH DATABASE sample_paimon.shop",
        "REFRESH TABLE sample.web.events",
        "REFRESH CATALOG sample_iceberg",
        "REFRESH TABLE sample_paimon.shop.events",
    ];
    let mut refreshes = REFRESHES.iter().cycle();
    let mut out = Vec::new();
    for (i, request) in workload.iter().enumerate() {
        if i > 0 && i.is_multiple_of(every) {
            out.extend(refreshes.next().map(|r| r.to_string()));
        }
        out.push(request.clone());
    }
    out
}

type Key = (String, String, String);

/// `(catalog, engine, entry) → (requests, hits)` from the statistics table.
fn counts(server: &Server) -> HashMap<Key, (u64, u64)> {
    let out = server.query(
        "SELECT CATALOG_NAME, ENGINE_NAME, ENTRY_NAME, REQUEST_COUNT, HIT_COUNT \
         FROM information_schema.catalog_meta_cache_statistics",
    );
    out.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let number = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
            (
                (f[0].into(), f[1].into(), f[2].into()),
                (number(f[3]), number(f[4])),
            )
        })
        .collect()
}

/// Sends `workload` from `clients` clients and answers the requests and hits of `catalog` (of
/// one cache of it, `(engine, entry)`, if given) that it caused.
fn replay(
    server: &Server,
    workload: &[String],
    clients: usize,
    catalog: &str,
    cache: Option<(&str, &str)>,
) -> (u64, u64) {
    server.query(&format!("REFRESH CATALOG {catalog}"));
    let before = counts(server);
    send(server, workload, clients);
    let after = counts(server);
    let mut total = (0, 0);
    for (key, (requests, hits)) in &after {
        let (c, engine, entry) = key;
        if c != catalog || cache.is_some_and(|cache| cache != (engine, entry)) {
            continue;
        }
        let (r0, h0) = before.get(key).copied().unwrap_or((0, 0));
        total.0 += requests.saturating_sub(r0);
        total.1 += hits.saturating_sub(h0);
    }
    total
}

/// Runs `statement`, then replays `workload` as `clients` says: the hit rates of `catalog` (of
/// one of its caches, if given).
fn measure(
    server: &Server,
    workload: &[String],
    clients: Clients,
    statement: &str,
    catalog: &str,
    cache: Option<(&str, &str)>,
) -> Vec<f64> {
    server.query(statement);
    (0..clients.replays)
        .map(|_| {
            let (requests, hits) = replay(server, workload, clients.count, catalog, cache);
            assert!(requests > 0, "no requests after {statement}");
            hits as f64 / requests as f64
        })
        .collect()
}

/// A compared point: bytes, predicted hit rate, and the hit rates the replays measured (a
/// replay is not always the same trace: the clients' requests interleave differently, and a
/// request that lists several partitions loads them concurrently, in whatever order they
/// finish).
#[derive(Debug)]
struct Compared {
    what: String,
    bytes: u64,
    predicted: f64,
    measured: Vec<f64>,
}

impl Compared {
    /// How far the prediction is from the replays' range, widened by half its own width on
    /// each side. Where the replays agree (most points) that is their value, judged exactly.
    /// Where they differ — a listing's partitions load at once and finish in the machine's
    /// order, and a cache of one or two listings keeps whichever came last — the real cache
    /// at that size lands anywhere in a band about that wide, and the recorded run the advisor
    /// simulates is one more draw from it: with three replays a fourth run falls outside their
    /// range half the time (a CI run: `hive-file` at 4 KiB predicted 0.354 from the recording,
    /// replays 0.157–0.287).
    fn error(&self) -> f64 {
        let low = self.measured.iter().copied().fold(f64::INFINITY, f64::min);
        let high = self
            .measured
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let slack = (high - low) / 2.0;
        (low - slack - self.predicted)
            .max(self.predicted - high - slack)
            .max(0.0)
    }
}

/// Prints the compared points (for docs/benchmarks.md) and answers their mean absolute and
/// largest error.
fn report(what: &str, compared: &[Compared]) -> (f64, f64) {
    let errors: Vec<f64> = compared.iter().map(Compared::error).collect();
    let mae = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let max = errors.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "{what}, {} points: MAE {mae:.4}, max {max:.4}",
        errors.len()
    );
    for c in compared {
        let measured: Vec<String> = c.measured.iter().map(|m| format!("{m:.3}")).collect();
        eprintln!(
            "  {} {}: predicted {:.3}, measured {}",
            c.what,
            c.bytes,
            c.predicted,
            measured.join(", ")
        );
    }
    (mae, max)
}

/// A curve point of the advice API: its bytes and predicted hit rate.
fn point_of(point: &Value) -> (u64, f64) {
    let bytes = point["cache_bytes"].as_u64().expect("cache_bytes");
    (bytes, point["hit_rate"].as_f64().expect("hit_rate"))
}

/// A catalog point's best split: its bytes and the hit rate the split predicts.
fn split_of(point: &Value) -> (u64, f64) {
    let bytes = point["cache_bytes"].as_u64().expect("cache_bytes");
    let rate = point["split_hit_rate"].as_f64().expect("split_hit_rate");
    (bytes, rate)
}

/// The (bytes, predicted hit rate) points of a cache's curve.
fn points(curve: &Value) -> Vec<(u64, f64)> {
    let points = curve["points"].as_array().into_iter().flatten();
    points.map(point_of).collect()
}

/// A cache's curve: its catalog, engine, entry, the property that limits it, and its points.
type Entry = (&'static str, String, String, String, Vec<(u64, f64)>);

/// Each cache's curve and each catalog's curve points (with their splits), from the advice
/// API; every key of the sample catalogs is sampled.
fn advice(server: &Server) -> (Vec<Entry>, Vec<(&'static str, Vec<Value>)>) {
    let mut entries = Vec::new();
    // Each catalog's own curve: its points as the advice API gives them, with their splits.
    let mut catalogs = Vec::new();
    for catalog in ["sample", "sample_iceberg", "sample_paimon", "sample_lance"] {
        let (status, body) = server.http(
            "GET",
            &format!("/api/v1/catalogs/{catalog}/advice"),
            None,
            None,
        );
        assert_eq!(status, 200, "{body}");
        let advice: Value = serde_json::from_str(&body).expect("advice JSON");
        for cache in advice["caches"].as_array().expect("caches") {
            assert_eq!(cache["sampling_rate"], 1.0, "every key sampled: {cache}");
            // Drained by the governor's thread as the clients send: nothing is lost, unless a
            // drain came late on a loaded machine — then once, before the queue grew.
            let dropped = cache["dropped_events"].as_u64().expect("dropped_events");
            assert!(dropped <= 512, "events lost: {cache}");
            if dropped > 0 {
                eprintln!(
                    "{catalog} {}: {dropped} events dropped",
                    cache["entry_name"]
                );
            }
            let engine = cache["engine"].as_str().expect("engine").to_string();
            let entry = cache["entry_name"]
                .as_str()
                .expect("entry_name")
                .to_string();
            let property = cache["property"].as_str().expect("property").to_string();
            entries.push((catalog, engine, entry, property, points(cache)));
        }
        let curve = advice["catalog"]["points"].as_array().cloned();
        catalogs.push((catalog, curve.unwrap_or_default()));
    }
    (entries, catalogs)
}

/// Each cache alone under each of its curve's sizes, the workload replayed as `clients` says (its engine's caches restart empty with every change of the limit, and REFRESH
/// empties the rest).
fn per_cache(
    server: &Server,
    workload: &[String],
    clients: Clients,
    entries: &[Entry],
) -> Vec<Compared> {
    let mut compared = Vec::new();
    for (catalog, engine, entry, property, curve) in entries {
        if property == "meta.cache.max-weight" {
            // A cache without a limit of its own shares the catalog's: compared as the
            // catalog's curve.
            continue;
        }
        for &(bytes, predicted) in curve {
            let statement =
                format!("ALTER CATALOG {catalog} SET PROPERTIES ('{property}' = '{bytes}')");
            let cache = Some((engine.as_str(), entry.as_str()));
            let measured = measure(server, workload, clients, &statement, catalog, cache);
            compared.push(Compared {
                what: format!("{catalog}.{entry}"),
                bytes,
                predicted,
                measured,
            });
        }
        server.query(&format!(
            "ALTER CATALOG {catalog} SET PROPERTIES ('{property}' = '1GB')"
        ));
    }
    compared
}

/// Each catalog under one shared limit at each point of its own curve (first: an entry's limit
/// may not exceed its catalog's), the workload replayed as `clients` says; then the limit is
/// lifted for the caches' own limits.
fn per_catalog(
    server: &Server,
    workload: &[String],
    clients: Clients,
    catalogs: &[(&'static str, Vec<Value>)],
) -> Vec<Compared> {
    let mut shared = Vec::new();
    for (catalog, curve) in catalogs {
        for point in curve {
            let (bytes, predicted) = point_of(point);
            let statement = format!(
                "ALTER CATALOG {catalog} SET PROPERTIES ('meta.cache.max-weight' = '{bytes}')"
            );
            let measured = measure(server, workload, clients, &statement, catalog, None);
            shared.push(Compared {
                what: catalog.to_string(),
                bytes,
                predicted,
                measured,
            });
        }
        server.query(&format!(
            "ALTER CATALOG {catalog} SET PROPERTIES ('meta.cache.max-weight' = '1GB')"
        ));
    }
    shared
}

#[test]
fn curves_of_the_sample_catalogs_follow_replays_at_each_limit() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let workload = workload(400);
    send(&server, &workload, ONE.count);
    let (entries, catalogs) = advice(&server);

    let shared = per_catalog(&server, &workload, ONE, &catalogs);
    let compared = per_cache(&server, &workload, ONE, &entries);
    // The catalog's points model a bare shared limit (a residence time common to its caches):
    // a model of reclamation between the caches, not a simulation of it as each cache's own
    // curve is of that cache, hence wider bounds than per cache.
    let (mae, max) = report("shared by each catalog's caches", &shared);
    assert!(
        mae <= 0.035 && max <= 0.12,
        "MAE {mae:.4}, max {max:.4}: {shared:#?}"
    );
    // (`sample_lance` has one value of a few hundred bytes: below the grid's smallest size,
    // 1 KiB, so no curve.)
    for (catalog, curve) in &catalogs {
        assert!(
            curve.len() >= 3 || *catalog == "sample_lance",
            "{catalog}: {curve:?}"
        );
    }
    let (mae, max) = report("per cache", &compared);
    assert!(
        compared.len() >= 8,
        "at least 8 sizes compared: {compared:#?}"
    );
    assert!(
        mae <= 0.01 && max <= 0.03,
        "MAE {mae:.4}, max {max:.4}: {compared:#?}"
    );

    // Each catalog point applied as its split: the catalog's limit and each cache's share of
    // it in one statement (a cache the split gives nothing is disabled), as the dashboard
    // writes it.
    let mut applied = Vec::new();
    for (catalog, curve) in &catalogs {
        for point in curve {
            let (bytes, predicted) = split_of(point);
            let statement = split_statement(&format!("`{catalog}`"), point);
            let measured = measure(&server, &workload, ONE, &statement, catalog, None);
            applied.push(Compared {
                what: catalog.to_string(),
                bytes,
                predicted,
                measured,
            });
        }
    }
    // What is left of the split's error is the trace itself changing with the limits (a cache
    // that misses, or is disabled, asks the others again), and the shares between grid points.
    let (mae, max) = report("catalogs split as advised", &applied);
    assert!(
        mae <= 0.06 && max <= 0.2,
        "MAE {mae:.4}, max {max:.4}: {applied:#?}"
    );
    // The split is worth its statement: its caches hit at least as often as under the bare
    // limit of the same size, taken over the points.
    let mean = |c: &[Compared]| {
        let rates = c.iter().flat_map(|c| c.measured.iter());
        rates.sum::<f64>() / c.iter().map(|c| c.measured.len()).sum::<usize>().max(1) as f64
    };
    let (split, bare) = (mean(&applied), mean(&shared));
    eprintln!("mean measured hit rate: split {split:.4}, bare shared limit {bare:.4}");
    assert!(split >= bare - 0.005, "split {split:.4}, bare {bare:.4}");
}

/// The same caches with the requests sent by several clients at once ([`CONCURRENT`]), to
/// record and to replay. The advisor then sees one interleaving of the requests and each
/// replay another, and a cache of a few values keeps whichever came last: the real cache's own
/// hit rate at a size varies from replay to replay, so each point is replayed three times and
/// the prediction is measured from their range. A longer workload than the first test's evens
/// the interleavings out over more requests per cache. Nothing may be lost on the way: every
/// advisor's queue is drained by the governor's thread while the clients send. Each catalog's
/// rows are replayed too, as a bare shared limit at each point of its curve.
#[test]
fn curves_recorded_from_concurrent_clients_follow_concurrent_replays() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let workload = workload(800);
    send(&server, &workload, CONCURRENT.count);
    let (entries, catalogs) = advice(&server);
    let shared = per_catalog(&server, &workload, CONCURRENT, &catalogs);
    let compared = per_cache(&server, &workload, CONCURRENT, &entries);
    let (mae, max) = report(
        &format!(
            "shared by each catalog's caches, {} concurrent clients",
            CONCURRENT.count
        ),
        &shared,
    );
    assert!(
        mae <= 0.035 && max <= 0.12,
        "MAE {mae:.4}, max {max:.4}: {shared:#?}"
    );
    let (mae, max) = report(
        &format!("per cache, {} concurrent clients", CONCURRENT.count),
        &compared,
    );
    assert!(compared.len() >= 8, "{compared:#?}");
    // The largest errors are at caches of one or two values with a few dozen requests (the
    // Paimon schema cache: 20, so its hit rate moves in steps of 0.05), where three
    // interleavings do not span what a fourth does: 0.03–0.10 in the runs so far, 0.10 being
    // two requests of that cache (docs/benchmarks.md); the bound allows four.
    assert!(
        mae <= 0.02 && max <= 0.2,
        "MAE {mae:.4}, max {max:.4}: {compared:#?}"
    );
}

/// The caches with REFRESH statements among the requests, to record and to replay: a value
/// invalidated is gone at every size, so the advisor's miniatures drop it too (before they did,
/// the curve of a cache refreshed often rose as if the values stayed). One client, as in the
/// first test, so each replay is the recorded trace.
#[test]
fn curves_recorded_with_refreshes_follow_replays_with_the_same_refreshes() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let workload = with_refreshes(&workload(400), 20);
    send(&server, &workload, ONE.count);
    let (entries, _) = advice(&server);
    let compared = per_cache(&server, &workload, ONE, &entries);
    let (mae, max) = report("per cache, with refreshes", &compared);
    assert!(compared.len() >= 8, "{compared:#?}");
    assert!(
        mae <= 0.01 && max <= 0.03,
        "MAE {mae:.4}, max {max:.4}: {compared:#?}"
    );
}
