//! Memory under pressure through the public interface: against a running metacache (release
//! build, started by `scripts/governance-rss.sh`), register a look-aside engine over HTTP, set
//! the node limit L with `ADMIN SET FRONTEND CONFIG`, then write 10 × L of values from several
//! concurrent clients, with keys rewritten (the key space holds 4 × L), and report how far the
//! server's RSS rose above its baseline, as a multiple of L.
//!
//! ```text
//! lookaside_rss <host:port> <server-pid> <shape> [limit-MiB] [clients]
//! shape: 512 | 4096 | 65536 | 1048576 | mix   (mix: each put picks one of the four sizes)
//! ```
//!
//! Prints one line of `key=value` fields (parsed by the script) and nothing else on stdout.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value as Json;

use http::{call, define_blob_engine};

const SIZES: [usize; 4] = [512, 4096, 65_536, 1 << 20];
const KEY_SPACE_FACTOR: u64 = 4;
const WRITE_FACTOR: u64 = 10;

struct Shape {
    name: String,
    /// Fixed size, or `None` for the mix.
    size: Option<usize>,
}

impl Shape {
    fn mean(&self) -> u64 {
        match self.size {
            Some(size) => size as u64,
            None => SIZES.iter().sum::<usize>() as u64 / SIZES.len() as u64,
        }
    }
}

fn new_agent() -> ureq::Agent {
    http::new_agent(Duration::from_secs(60))
}

fn status_kib(pid: u32, field: &str) -> Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("{field} of process {pid}"))
}

/// The first row of a query through `POST /api/v1/sql`, as name → value.
fn sql_row(agent: &ureq::Agent, base: &str, statement: &str) -> Result<BTreeMap<String, Json>> {
    let reply = call(
        agent,
        "POST",
        &format!("{base}/api/v1/sql"),
        statement.as_bytes(),
    )?;
    let columns = reply["columns"].as_array().context("columns")?;
    let row = reply["rows"][0].as_array().context("no row")?;
    Ok(columns
        .iter()
        .zip(row)
        .map(|(c, v)| (c["name"].as_str().unwrap_or_default().to_owned(), v.clone()))
        .collect())
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, pid, shape, rest @ ..] = args.as_slice() else {
        bail!("usage: lookaside_rss <host:port> <server-pid> <shape> [limit-MiB] [clients]");
    };
    let pid: u32 = pid.parse().context("server pid")?;
    let shape = Shape {
        name: shape.clone(),
        size: match shape.as_str() {
            "mix" => None,
            size => Some(size.parse().context("shape: a size in bytes or `mix`")?),
        },
    };
    let limit_mib: u64 = rest.first().map_or(Ok(64), |s| s.parse())?;
    let clients: u64 = rest.get(1).map_or(Ok(8), |s| s.parse())?;
    let limit = limit_mib << 20;
    let base = format!("http://{addr}");
    let agent = new_agent();

    define_blob_engine(&agent, &base, "rss", "rss-blobs")?;
    call(
        &agent,
        "POST",
        &format!("{base}/api/v1/catalogs"),
        br#"{"name": "rss", "properties": {"type": "rss"}}"#,
    )?;
    call(
        &agent,
        "POST",
        &format!("{base}/api/v1/sql"),
        format!(
            r#"ADMIN SET FRONTEND CONFIG ("external_meta_cache_max_weight" = "{limit_mib}MB")"#
        )
        .as_bytes(),
    )?;

    let baseline = status_kib(pid, "VmRSS:")? << 10;
    let keys = (KEY_SPACE_FACTOR * limit / shape.mean()).max(1);
    let target = WRITE_FACTOR * limit;
    let written = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let outcomes: Vec<BTreeMap<String, u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let written = Arc::clone(&written);
                let (base, shape) = (&base, &shape);
                scope.spawn(move || -> Result<BTreeMap<String, u64>> {
                    let agent = new_agent();
                    let mut seed =
                        0x9E37_79B9_7F4A_7C15 ^ (client + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
                    let largest = shape.size.unwrap_or(SIZES[SIZES.len() - 1]);
                    let body: Vec<u8> = (0..largest).map(|i| (i % 251) as u8).collect();
                    let mut outcomes = BTreeMap::new();
                    while written.load(Ordering::Relaxed) < target {
                        let r = xorshift(&mut seed);
                        let key = r % keys;
                        let size = shape
                            .size
                            .unwrap_or(SIZES[(r >> 32) as usize % SIZES.len()]);
                        let url =
                            format!("{base}/api/v1/catalogs/rss/caches/rss/rss-blobs/k{key:08}");
                        let reply = call(&agent, "PUT", &url, &body[..size])?;
                        let outcome = if reply["retained"].as_bool() == Some(true) {
                            "retained".to_owned()
                        } else {
                            reply["reason"].as_str().unwrap_or("unknown").to_owned()
                        };
                        *outcomes.entry(outcome).or_insert(0) += 1;
                        written.fetch_add(size as u64, Ordering::Relaxed);
                    }
                    Ok(outcomes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| bail!("a client panicked")))
            .collect::<Result<_>>()
    })?;
    let elapsed = started.elapsed();
    // Let background purging return freed pages before the final reading.
    std::thread::sleep(Duration::from_secs(2));

    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for outcome in outcomes {
        for (k, v) in outcome {
            *totals.entry(k).or_insert(0) += v;
        }
    }
    let puts: u64 = totals.values().sum();
    let peak = status_kib(pid, "VmHWM:")? << 10;
    let now = status_kib(pid, "VmRSS:")? << 10;
    let node = sql_row(
        &agent,
        &base,
        "SELECT * FROM information_schema.catalog_meta_cache_nodes",
    )?;
    let reserved = node
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("ESTIMATED_WEIGHT"))
        .and_then(|(_, v)| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .unwrap_or(0);
    let allocated = node
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("ALLOCATED_BYTES"))
        .and_then(|(_, v)| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .unwrap_or(0);
    let rejected: u64 = totals
        .iter()
        .filter(|(k, _)| *k != "retained")
        .map(|(_, v)| v)
        .sum();
    let l = limit as f64;
    println!(
        "shape={} limit_mib={limit_mib} clients={clients} puts={puts} keys={keys} seconds={:.1} \
         peak_above_baseline_x_l={:.3} final_above_baseline_x_l={:.3} reserved_x_l={:.3} \
         allocated_x_l={:.3} rejected_pct={:.2} outcomes={:?}",
        shape.name,
        elapsed.as_secs_f64(),
        peak.saturating_sub(baseline) as f64 / l,
        now.saturating_sub(baseline) as f64 / l,
        reserved as f64 / l,
        allocated as f64 / l,
        100.0 * rejected as f64 / puts.max(1) as f64,
        totals,
    );
    Ok(())
}
