//! The quota advisor through the public interface, on a cache too large to sample every key of:
//! against a running metacache (release build, started by `scripts/advice-lookaside.sh`),
//! register a look-aside engine over HTTP, send a Zipf trace of GETs (and a PUT after each
//! miss, as an engine loads) from several concurrent clients, read the cache's curve from
//! `GET /api/v1/catalogs/{catalog}/advice`, then replay the same trace on a fresh catalog
//! created with each curve point's bytes as the entry's `max-weight`, and compare the predicted
//! hit rate with the one the statistics table measures.
//!
//! ```text
//! advice_lookaside <host:port> [keys] [requests] [zipf-alpha] [clients] [replays]
//! ```
//!
//! Defaults: 20,000 keys, 200,000 requests, α 1.0, 4 clients, 1 replay a size. Values are
//! 256 B – 16 KiB (log-uniform per key; each charged its length plus 512 bytes), so the curve's
//! smallest sizes hold a few of the hottest keys — the sizes the advisor simulates at full scale
//! (`advice/crowd.rs`) once the cache has more keys than its sample.
//!
//! `SIZES=65536,1048576` compares those curve points only. Prints one line per compared size
//! (with what the replays' PUTs that were not retained answered) and a summary line
//! (`mae=… max=…`) on stdout; the recording's figures on stderr.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde_json::Value as Json;

use http::{call, define_blob_engine, send};

const CATALOG: &str = "adv";
const ENTRY: &str = "adv-blobs";

fn new_agent() -> ureq::Agent {
    http::new_agent(Duration::from_secs(120))
}

fn sql(agent: &ureq::Agent, base: &str, statement: &str) -> Result<Json> {
    call(
        agent,
        "POST",
        &format!("{base}/api/v1/sql"),
        statement.as_bytes(),
    )
}

/// The requests and hits the statistics table counts for the advised cache.
fn counts(agent: &ureq::Agent, base: &str) -> Result<(u64, u64)> {
    let reply = sql(
        agent,
        base,
        &format!(
            "SELECT REQUEST_COUNT, HIT_COUNT FROM information_schema.catalog_meta_cache_statistics \
             WHERE CATALOG_NAME = '{CATALOG}' AND ENTRY_NAME = '{ENTRY}'"
        ),
    )?;
    let row = reply["rows"][0].as_array().context("no statistics row")?;
    let number = |v: &Json| v.as_u64().or_else(|| v.as_str()?.parse().ok());
    Ok((
        number(&row[0]).context("REQUEST_COUNT")?,
        number(&row[1]).context("HIT_COUNT")?,
    ))
}

/// Drops the catalog (if it exists) and creates it again with `properties`: every replay
/// starts from an empty cache with no history, as the recorded run did.
fn fresh_catalog(agent: &ureq::Agent, base: &str, properties: &[(String, String)]) -> Result<()> {
    sql(agent, base, &format!("DROP CATALOG IF EXISTS {CATALOG}"))?;
    let mut all = serde_json::Map::new();
    all.insert("type".into(), Json::String(CATALOG.into()));
    for (key, value) in properties {
        all.insert(key.clone(), Json::String(value.clone()));
    }
    let body = serde_json::json!({"name": CATALOG, "properties": all});
    call(
        agent,
        "POST",
        &format!("{base}/api/v1/catalogs"),
        body.to_string().as_bytes(),
    )?;
    Ok(())
}

/// The trace: key indexes drawn from a Zipf(α) popularity over `keys` keys whose ranks are
/// shuffled (a key's hash says nothing of its rank), and each key's value size.
struct Trace {
    requests: Vec<u32>,
    sizes: Vec<usize>,
}

impl Trace {
    fn new(keys: usize, requests: usize, alpha: f64) -> Self {
        let mut rng = StdRng::seed_from_u64(0x5EED_AD71_CE00_0001);
        let mut cumulative = Vec::with_capacity(keys);
        let mut total = 0.0;
        for rank in 1..=keys {
            total += (rank as f64).powf(-alpha);
            cumulative.push(total);
        }
        let mut of_rank: Vec<u32> = (0..keys as u32).collect();
        of_rank.shuffle(&mut rng);
        let requests = (0..requests)
            .map(|_| {
                let u = rng.random::<f64>() * total;
                let rank = cumulative.partition_point(|&c| c < u).min(keys - 1);
                of_rank[rank]
            })
            .collect();
        // Log-uniform between 256 B and 16 KiB.
        let sizes = (0..keys)
            .map(|_| (256.0 * 64f64.powf(rng.random::<f64>())) as usize)
            .collect();
        Self { requests, sizes }
    }

    /// Bytes every key takes once charged (length + 512).
    fn working_set(&self) -> u64 {
        self.sizes.iter().map(|&s| s as u64 + 512).sum()
    }
}

/// What the PUTs of a run answered: `retained`, or the reason they were not.
type Outcomes = BTreeMap<String, u64>;

/// Sends the trace from `clients` clients, each every `clients`-th request: a GET, and after a
/// miss a PUT of the key's value (with the lease the GET handed out, if any).
fn run(base: &str, trace: &Trace, clients: usize) -> Result<(Duration, Outcomes)> {
    let started = Instant::now();
    let body: Vec<u8> = (0..1 << 14).map(|i| (i % 251) as u8).collect();
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let body = &body;
                scope.spawn(move || -> Result<Outcomes> {
                    let mut outcomes = Outcomes::new();
                    let agent = new_agent();
                    for &key in trace.requests.iter().skip(client).step_by(clients) {
                        let url = format!(
                            "{base}/api/v1/catalogs/{CATALOG}/caches/{CATALOG}/{ENTRY}/k{key}"
                        );
                        let (status, lease, text) = send(&agent, "GET", &url, &[], None)?;
                        match status {
                            200 => {}
                            404 => {
                                let size = trace.sizes[key as usize];
                                let (status, _, text) =
                                    send(&agent, "PUT", &url, &body[..size], lease.as_deref())?;
                                if status != 200 {
                                    bail!("PUT {url}: {status} {text}");
                                }
                                let reply: Json = serde_json::from_str(&text)?;
                                let outcome = if reply["retained"] == true {
                                    "retained"
                                } else {
                                    reply["reason"].as_str().unwrap_or("unknown")
                                };
                                *outcomes.entry(outcome.to_owned()).or_default() += 1;
                            }
                            _ => bail!("GET {url}: {status} {text}"),
                        }
                    }
                    Ok(outcomes)
                })
            })
            .collect();
        let mut all = Outcomes::new();
        for handle in handles {
            let outcomes = handle
                .join()
                .unwrap_or_else(|_| bail!("a client panicked"))?;
            for (outcome, n) in outcomes {
                *all.entry(outcome).or_default() += n;
            }
        }
        Ok::<_, anyhow::Error>(all)
    })?;
    Ok((started.elapsed(), outcomes))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, rest @ ..] = args.as_slice() else {
        bail!(
            "usage: advice_lookaside <host:port> [keys] [requests] [zipf-alpha] [clients] [replays]"
        );
    };
    let keys: usize = rest.first().map_or(Ok(20_000), |s| s.parse())?;
    let requests: usize = rest.get(1).map_or(Ok(200_000), |s| s.parse())?;
    let alpha: f64 = rest.get(2).map_or(Ok(1.0), |s| s.parse())?;
    let clients: usize = rest.get(3).map_or(Ok(4), |s| s.parse())?;
    let replays: usize = rest.get(4).map_or(Ok(1), |s| s.parse())?;
    if keys == 0 || clients == 0 || replays == 0 {
        bail!("keys, clients and replays must be positive");
    }
    let base = format!("http://{addr}");
    let agent = new_agent();
    define_blob_engine(&agent, &base, CATALOG, ENTRY)?;
    let trace = Trace::new(keys, requests, alpha);
    eprintln!(
        "trace: {keys} keys, {requests} requests, Zipf {alpha}, working set {:.1} MiB, {clients} clients",
        trace.working_set() as f64 / (1 << 20) as f64
    );

    fresh_catalog(&agent, &base, &[])?;
    let (took, outcomes) = run(&base, &trace, clients)?;
    let (recorded_requests, recorded_hits) = counts(&agent, &base)?;
    eprintln!(
        "recorded: {recorded_requests} requests, hit rate {:.4}, {:.1} s ({:.0} requests/s)",
        recorded_hits as f64 / recorded_requests.max(1) as f64,
        took.as_secs_f64(),
        requests as f64 / took.as_secs_f64()
    );
    eprintln!("recorded PUTs: {outcomes:?}");
    let advice = call(
        &agent,
        "GET",
        &format!("{base}/api/v1/catalogs/{CATALOG}/advice"),
        &[],
    )?;
    let cache = advice["caches"]
        .as_array()
        .and_then(|caches| caches.iter().find(|c| c["entry_name"] == ENTRY))
        .context("the advised cache is not in the advice")?
        .clone();
    let property = cache["property"].as_str().context("property")?.to_owned();
    eprintln!(
        "advice: sampling rate {}, {} sampled keys, working set {} B, {} events dropped, {} B reserved",
        cache["sampling_rate"],
        cache["sampled_keys"],
        cache["working_set_bytes"],
        cache["dropped_events"],
        cache["reserved_bytes"]
    );
    let points: Vec<(u64, f64)> = cache["points"]
        .as_array()
        .context("points")?
        .iter()
        .filter_map(|p| Some((p["cache_bytes"].as_u64()?, p["hit_rate"].as_f64()?)))
        .collect();
    if points.len() < 8 {
        bail!("only {} curve points", points.len());
    }
    // `SIZES=65536,1048576` compares those points only.
    let only: Option<Vec<u64>> = std::env::var("SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|b| b.trim().parse().ok()).collect());
    let points: Vec<(u64, f64)> = points
        .into_iter()
        .filter(|(bytes, _)| only.as_ref().is_none_or(|only| only.contains(bytes)))
        .collect();

    let mut errors = Vec::new();
    println!(
        "{:>12} {:>10} {:>22} {:>8}  PUTs not retained",
        "bytes", "predicted", "measured", "error"
    );
    for (bytes, predicted) in points {
        let mut measured = Vec::new();
        let mut refused = Outcomes::new();
        for _ in 0..replays {
            fresh_catalog(&agent, &base, &[(property.clone(), bytes.to_string())])?;
            let (_, outcomes) = run(&base, &trace, clients)?;
            for (outcome, n) in outcomes {
                if outcome != "retained" {
                    *refused.entry(outcome).or_default() += n;
                }
            }
            let (requests, hits) = counts(&agent, &base)?;
            measured.push(hits as f64 / requests.max(1) as f64);
        }
        let low = measured.iter().copied().fold(f64::INFINITY, f64::min);
        let high = measured.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let error = (low - predicted).max(predicted - high).max(0.0);
        let shown: Vec<String> = measured.iter().map(|m| format!("{m:.3}")).collect();
        println!(
            "{bytes:>12} {predicted:>10.3} {:>22} {error:>8.3}  {refused:?}",
            shown.join(",")
        );
        errors.push(error);
    }
    let mae = errors.iter().sum::<f64>() / errors.len() as f64;
    let max = errors.iter().copied().fold(0.0, f64::max);
    println!(
        "keys={keys} requests={requests} alpha={alpha} clients={clients} replays={replays} \
         points={} mae={mae:.4} max={max:.4}",
        errors.len()
    );
    Ok(())
}
