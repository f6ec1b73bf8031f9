//! The quota advisor through the real binary: look-aside traffic over HTTP under a binding entry
//! limit, then `information_schema.catalog_meta_cache_advice` over MySQL — the entry's curve
//! on a doubling grid, pinned to the hit rate the statistics table measures at its limit, the
//! catalog's own rows, and the question admins ask: the least bytes for a hit rate.

mod common;

use std::time::Duration;

use common::*;

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Rows of tab-separated `out` after its header.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// `requests` look-aside reads of the feature store over 600 keys, skewed (a key's popularity
/// falls with its rank), values of 0.5–3 KiB: a miss is followed by the PUT of its value, as a
/// client does. Returns the misses.
fn read_through(server: &Server, requests: u64) -> u64 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut misses = 0;
    for i in 0..requests {
        let rank = (mix(i) % 600) * (mix(i ^ 77) % 600) / 600;
        let key = format!("k{rank}");
        let url = format!("{}{FEATURE_STORE_BASE}/{key}", server.http);
        let mut response = agent.get(&url).call().expect("GET");
        if response.status().as_u16() == 404 {
            misses += 1;
            let value = vec![b'x'; 512 + (mix(rank) % 2560) as usize];
            let put = agent.put(&url).send(&value[..]).expect("PUT");
            assert!(put.status().is_success(), "PUT {key}: {}", put.status());
        } else {
            assert_eq!(response.status().as_u16(), 200);
            let _ = response.body_mut().read_to_vec();
        }
    }
    misses
}

/// Registers the feature store engine and creates catalog `fs` with `properties` added.
fn feature_store(server: &Server, properties: &str) {
    server.define_engine("feature_store", FEATURE_STORE_ENGINE);
    server.query(&format!(
        "CREATE CATALOG fs PROPERTIES ('type'='feature_store'{properties})"
    ));
}

/// The entry's advice rows (one per curve point) and what the node's advisors hold, from
/// `/metrics` (read after the rows: a query of the advice table drains the advisors first).
fn advice_and_reserved(server: &Server) -> (usize, u64) {
    let points = rows(&server.query(
        "SELECT CACHE_BYTES FROM information_schema.catalog_meta_cache_advice \
         WHERE CATALOG_NAME = 'fs' AND ENTRY_NAME = 'fs-features'",
    ))
    .len();
    (
        points,
        series(server, "metacache_advisor_reserved_bytes") as u64,
    )
}

/// The value of the series `name` (with its labels, if any) in a scrape of `/metrics`.
fn series(server: &Server, name: &str) -> f64 {
    let (status, body) = server.http("GET", "/metrics", None, None);
    assert_eq!(status, 200, "{body}");
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{name} in {body}"))
        .trim()
        .parse::<f64>()
        .expect("a number")
}

/// The advisors running on the node, from `/metrics` (counted at the advisor thread's last
/// round, every 25 ms): waits up to 10 s for `expected`, and returns the last count read.
fn advisors_running(server: &Server, expected: impl Fn(u64) -> bool) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let running = series(server, "metacache_advisors{state=\"running\"}") as u64;
        if expected(running) || std::time::Instant::now() > deadline {
            return running;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// `meta.cache.<engine>.<entry>.advisor` = `false` turns the entry's advisor off: the cache the
/// ALTER rebuilds has no curve and its advisor's memory goes back to the node. A value that is
/// not a boolean is refused and changes nothing; `true` turns it on again.
#[test]
fn an_entry_turns_its_advisor_off_and_on() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    feature_store(&server, "");
    read_through(&server, 500);
    let (points, reserved) = advice_and_reserved(&server);
    assert!(
        points > 0 && reserved > 0,
        "on by default: {points} points, {reserved} B"
    );
    let running = advisors_running(&server, |n| n >= 1);
    assert!(running >= 1, "the entry's advisor runs: {running}");

    let key = "meta.cache.feature_store.features.advisor";
    let error = server.fails(&format!(
        "ALTER CATALOG fs SET PROPERTIES ('{key}'='maybe')"
    ));
    assert!(
        error.ends_with(&format!(
            "Invalid value for '{key}': maybe (expected true or false)"
        )),
        "{error}"
    );
    assert_eq!(
        advice_and_reserved(&server).0,
        points,
        "a refused ALTER changes nothing"
    );

    server.query(&format!(
        "ALTER CATALOG fs SET PROPERTIES ('{key}'='FALSE')"
    ));
    read_through(&server, 500);
    assert_eq!(
        advice_and_reserved(&server),
        (0, 0),
        "off: no curve, nothing held"
    );
    assert_eq!(
        advisors_running(&server, |n| n == running - 1),
        running - 1,
        "the entry's advisor runs no more"
    );
    let created = server.query("SHOW CREATE CATALOG fs");
    assert!(
        created.contains(&format!("\"{key}\" = \"FALSE\"")),
        "{created}"
    );

    server.query(&format!("ALTER CATALOG fs SET PROPERTIES ('{key}'='true')"));
    read_through(&server, 500);
    let (points, reserved) = advice_and_reserved(&server);
    assert!(
        points > 0 && reserved > 0,
        "on again: {points} points, {reserved} B"
    );
}

#[test]
fn the_advice_table_answers_how_many_bytes_a_hit_rate_needs() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    // 256 KiB for the entry: about a fifth of its working set below.
    feature_store(
        &server,
        ", 'meta.cache.feature_store.features.max-weight'='256KB'",
    );
    // 3,000 look-aside reads over 600 keys, skewed (a key's popularity falls with its rank),
    // values of 0.5–3 KiB: a miss is followed by the PUT of its value, as a client does.
    let misses = read_through(&server, 3_000);
    assert!(misses > 600, "the limit binds: {misses} misses");

    let stats = server.cache_row("fs", "fs-features", "HIT_RATE, MAX_WEIGHT");
    let measured: f64 = stats[0].parse().expect("HIT_RATE");
    assert_eq!(stats[1], (256 << 10).to_string());

    let curve = rows(&server.query(
        "SELECT FE_HOST, ENGINE_NAME, CACHE_BYTES, PREDICTED_HIT_RATE, \
         PREDICTED_LOADS_PER_MINUTE, SAMPLED_REQUESTS, CONFIDENCE \
         FROM information_schema.catalog_meta_cache_advice \
         WHERE CATALOG_NAME = 'fs' AND ENTRY_NAME = 'fs-features' ORDER BY CACHE_BYTES",
    ));
    assert!(
        curve.len() >= 6,
        "a doubling grid up to the working set: {curve:?}"
    );
    let point = |row: &Vec<String>| -> (u64, f64) {
        (
            row[2].parse().expect("CACHE_BYTES"),
            row[3].parse().expect("PREDICTED_HIT_RATE"),
        )
    };
    for pair in curve.windows(2) {
        assert_eq!(point(&pair[1]).0, 2 * point(&pair[0]).0, "{curve:?}");
    }
    for row in &curve {
        assert_eq!(row[1], "feature_store");
        let (_, rate) = point(row);
        assert!((0.0..=1.0).contains(&rate), "{row:?}");
        let sampled: u64 = row[5].parse().expect("SAMPLED_REQUESTS");
        assert!(sampled > 0, "{row:?}");
        let confidence: f64 = row[6].parse().expect("CONFIDENCE");
        assert!((0.0..=1.0).contains(&confidence), "{row:?}");
    }
    // Pinned at the entry's own limit: the 256 KiB point is the measured hit rate.
    let at_limit = curve
        .iter()
        .map(point)
        .find(|(bytes, _)| *bytes == 256 << 10)
        .expect("a 256 KiB point");
    assert!(
        (at_limit.1 - measured).abs() < 0.02,
        "predicted {} at the limit, measured {measured}",
        at_limit.1
    );
    let (_, top) = point(curve.last().expect("points"));
    assert!(
        top > measured + 0.05,
        "more bytes, more hits: {top} vs {measured}"
    );

    // The admin's question, answered in SQL.
    let needed = server.query(&format!(
        "SELECT MIN(CACHE_BYTES) FROM information_schema.catalog_meta_cache_advice \
         WHERE ENTRY_NAME = 'fs-features' AND PREDICTED_HIT_RATE >= {}",
        (measured + top) / 2.0
    ));
    let needed: u64 = needed
        .lines()
        .nth(1)
        .expect("a row")
        .trim()
        .parse()
        .expect("bytes");
    assert!(needed > 256 << 10, "{needed}");

    // The catalog's rows: ENGINE_NAME and ENTRY_NAME NULL, its one cache's curve.
    let catalog = rows(&server.query(
        "SELECT ENGINE_NAME, ENTRY_NAME, CACHE_BYTES, PREDICTED_HIT_RATE \
         FROM information_schema.catalog_meta_cache_advice \
         WHERE CATALOG_NAME = 'fs' AND ENTRY_NAME IS NULL ORDER BY CACHE_BYTES",
    ));
    assert!(!catalog.is_empty());
    assert!(
        catalog.iter().all(|r| r[0] == "NULL" && r[1] == "NULL"),
        "{catalog:?}"
    );
    // What `meta.cache.max-weight` alone would do: its one cache, held to its own 256 KiB,
    // follows its own curve up to that limit and stays at its rate there beyond it.
    let own = |bytes: u64| {
        curve
            .iter()
            .map(point)
            .find(|(b, _)| *b == bytes.min(256 << 10))
            .map(|(_, rate)| rate)
    };
    for row in &catalog {
        let bytes: u64 = row[2].parse().expect("CACHE_BYTES");
        let rate: f64 = row[3].parse().expect("PREDICTED_HIT_RATE");
        let expected = own(bytes).unwrap_or_else(|| panic!("no cache point for {row:?}"));
        assert!(
            (rate - expected).abs() < 1e-3,
            "catalog {rate} at {bytes}, the cache's own curve {expected}: {catalog:?}"
        );
    }

    // The same table over HTTP.
    let (status, body) = server.http(
        "POST",
        "/api/v1/sql",
        Some(b"SELECT COUNT(*) AS n FROM information_schema.catalog_meta_cache_advice WHERE CATALOG_NAME = 'fs'"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(&format!("{}", curve.len() + catalog.len())),
        "{body}"
    );
}
