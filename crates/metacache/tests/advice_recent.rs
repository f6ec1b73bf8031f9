//! The quota advisor forgets through the real binary: a node key sets how fast its counts
//! halve (`external_meta_cache_advisor_half_life_seconds`, changed at runtime), and a cache
//! whose keys of the past went idle advises for the keys in use — its sample and working set
//! shrink to theirs — where, at the default of 15 minutes, it would still size itself for
//! every key it ever saw.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Keys of the past: each read once, more than the sample's 4,096.
const PAST_KEYS: usize = 6_000;

/// Keys in use after them.
const PRESENT_KEYS: usize = 200;

/// Bytes of each value.
const VALUE_BYTES: usize = 1024;

struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    fn new(server: &Server) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Self {
            agent,
            base: format!("{}{FEATURE_STORE_BASE}", server.http),
        }
    }

    /// A look-aside read of `key`: a miss is followed by the PUT of its value, as a client
    /// does. Whether it hit.
    fn read(&self, key: &str) -> bool {
        let url = format!("{}/{key}", self.base);
        let mut response = self.agent.get(&url).call().expect("GET");
        match response.status().as_u16() {
            200 => {
                let _ = response.body_mut().read_to_vec();
                true
            }
            404 => {
                let put = self
                    .agent
                    .put(&url)
                    .send(&[b'v'; VALUE_BYTES][..])
                    .expect("PUT");
                assert!(put.status().is_success(), "PUT {key}: {}", put.status());
                false
            }
            status => panic!("GET {key}: {status}"),
        }
    }
}

/// The cache's advice from the API.
fn advice(server: &Server) -> Value {
    let (status, body) = server.http("GET", "/api/v1/catalogs/fs/advice", None, None);
    assert_eq!(status, 200, "{body}");
    let advice: Value = serde_json::from_str(&body).expect("advice JSON");
    advice["caches"]
        .as_array()
        .and_then(|caches| caches.first())
        .cloned()
        .unwrap_or_else(|| panic!("no cache in the advice: {advice}"))
}

fn number(advice: &Value, field: &str) -> f64 {
    advice[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {advice}"))
}

#[test]
fn a_short_half_life_forgets_the_keys_of_the_past() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.define_engine("feature_store", FEATURE_STORE_ENGINE);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store')");
    let shown = server
        .query("ADMIN SHOW FRONTEND CONFIG LIKE 'external_meta_cache_advisor_half_life_seconds'");
    assert!(
        shown.contains("\t900\t"),
        "the default, 15 minutes: {shown}"
    );
    let client = Client::new(&server);

    for key in 0..PAST_KEYS {
        assert!(!client.read(&format!("past-{key}")), "each read once");
    }
    let past = advice(&server);
    let sampled = number(&past, "sampled_keys");
    let working_set = number(&past, "working_set_bytes");
    eprintln!(
        "after the keys of the past: {sampled} sampled at {}, working set {working_set} B",
        number(&past, "sampling_rate")
    );
    assert!(sampled >= 3_000.0, "the sample filled: {past}");
    assert_eq!(number(&past, "half_life_seconds"), 900.0, "{past}");
    assert!(
        working_set >= (PAST_KEYS * VALUE_BYTES) as f64 * 0.7,
        "every key of the past counts: {past}"
    );

    // Refused values change nothing.
    for bad in ["0", "604801", "-1", "1.5", "soon"] {
        let error = server.fails(&format!(
            "ADMIN SET FRONTEND CONFIG ('external_meta_cache_advisor_half_life_seconds' = '{bad}')"
        ));
        assert!(
            error.contains("Invalid value for configuration key 'external_meta_cache_advisor_half_life_seconds'")
                && error.contains("seconds, 1 to 604800"),
            "{bad}: {error}"
        );
    }
    server
        .query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_advisor_half_life_seconds' = '1')");
    let shown = server
        .query("ADMIN SHOW FRONTEND CONFIG LIKE 'external_meta_cache_advisor_half_life_seconds'");
    assert!(shown.contains("\t1\t"), "{shown}");

    // The keys in use, read in rounds: the past's keys, requested once, fall below 1/64 of a
    // request after seven halvings and leave the sample.
    let started = Instant::now();
    let mut rounds = 0;
    let present = loop {
        for key in 0..PRESENT_KEYS {
            client.read(&format!("present-{key}"));
        }
        rounds += 1;
        if started.elapsed() >= Duration::from_secs(8) {
            let present = advice(&server);
            if number(&present, "sampled_keys") <= PRESENT_KEYS as f64 {
                break present;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the keys of the past are still sampled after a minute of 1 s half-lives: {present}"
            );
        }
    };
    assert_eq!(number(&present, "half_life_seconds"), 1.0, "{present}");
    let rate = number(&present, "sampling_rate");
    let working_set = number(&present, "working_set_bytes");
    eprintln!(
        "after {rounds} rounds of the keys in use: {} sampled at {rate}, working set {working_set} B",
        number(&present, "sampled_keys")
    );
    let in_use = (PRESENT_KEYS * VALUE_BYTES) as f64;
    assert!(
        working_set >= in_use * 0.5 && working_set <= in_use * 3.0,
        "the working set is the keys in use ({in_use} B of values): {present}"
    );
    eprintln!("{present:#}");
    let points = present["points"].as_array().expect("points");
    let top = points.last().expect("a curve");
    let hit_rate = top["hit_rate"].as_f64().expect("hit_rate");
    assert!(
        hit_rate >= 0.9,
        "the keys in use fit at the top of the curve: {top}"
    );
    let largest = top["cache_bytes"].as_f64().expect("cache_bytes");
    assert!(
        largest <= 4.0 * in_use * 3.0,
        "the grid ends near the keys in use, not the past's: {present}"
    );
}
