#![allow(clippy::print_stdout)] // a command-line tool: its answers are its output
//! One process of the disk tier's multi-process tests (tests/processes.rs), and a small tool
//! for looking at a tier directory:
//!
//! ```text
//! metacache-disk-probe DIR CAPACITY [--pause publishing|evicting] [--scope S] COMMAND…
//!   read LOCATION SOURCE_FILE [DELAY_MS]   read through; a load reads SOURCE_FILE after
//!                                           DELAY_MS and appends a line to SOURCE_FILE.loads
//!   fill PREFIX COUNT SIZE                 read COUNT distinct synthetic objects of SIZE bytes
//!   reread PREFIX COUNT SIZE               the same objects again, checking their bytes
//!   invalidate                             fence the scope
//!   stats                                  print the totals
//!   bench PREFIX COUNT SIZE SECONDS [raw]  read random objects of a `fill`ed set for SECONDS and
//!                                           print `bench reads=… per_second=… p50_us=… p99_us=…`;
//!                                           `raw`: read the block files directly (no lock, no
//!                                           ledger, no checksum) — the floor to compare with
//! ```
//! Ends by printing one line `stats key=value …`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use metacache_disk::testing::{Point, pause_at};
use metacache_disk::{BlockKey, DiskStats, DiskTier, Options};

fn main() {
    if let Err(e) = run() {
        eprintln!("metacache-disk-probe: {e}");
        std::process::exit(2);
    }
}

fn synthetic(location: &str, size: usize) -> Bytes {
    // Bytes that differ per location, so a block served for the wrong object shows.
    let seed = location
        .bytes()
        .fold(7u8, |a, b| a.wrapping_mul(31).wrapping_add(b));
    Bytes::from(
        (0..size)
            .map(|i| seed.wrapping_add((i % 251) as u8))
            .collect::<Vec<_>>(),
    )
}

fn run() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut scope = "probe".to_owned();
    let mut take_flag = |name: &str| -> Option<String> {
        let at = args.iter().position(|a| a == name)?;
        args.remove(at);
        (at < args.len()).then(|| args.remove(at))
    };
    if let Some(point) = take_flag("--pause") {
        pause_at(match point.as_str() {
            "publishing" => Point::Publishing,
            "evicting" => Point::Evicting,
            other => return Err(format!("no pause point {other}")),
        });
    }
    if let Some(s) = take_flag("--scope") {
        scope = s;
    }
    let usage = "usage: DIR CAPACITY COMMAND…";
    let dir = PathBuf::from(args.first().ok_or(usage)?);
    let capacity: u64 = args
        .get(1)
        .and_then(|c| c.parse().ok())
        .ok_or("CAPACITY must be a number of bytes")?;
    let command: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let tier = DiskTier::open(&dir, Options::with_capacity(capacity));
    runtime.block_on(async {
        match command.as_slice() {
            ["read", location, source, rest @ ..] => {
                let delay = rest.first().and_then(|d| d.parse().ok()).unwrap_or(0);
                let bytes = tier
                    .read_through(BlockKey::new(location), &scope, || async {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        let mut loads = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(format!("{source}.loads"))
                            .map_err(|e| e.to_string())?;
                        writeln!(loads, "{}", std::process::id()).map_err(|e| e.to_string())?;
                        std::fs::read(source)
                            .map(Bytes::from)
                            .map_err(|e| e.to_string())
                    })
                    .await?;
                println!("read {} bytes", bytes.len());
            }
            ["fill" | "reread", prefix, count, size] => {
                let count: usize = count.parse().map_err(|_| "COUNT")?;
                let size: usize = size.parse().map_err(|_| "SIZE")?;
                for i in 0..count {
                    let location = format!("{prefix}/{i:06}.avro");
                    let bytes = tier
                        .read_through(BlockKey::new(&location), &scope, || async {
                            Ok::<_, String>(synthetic(&location, size))
                        })
                        .await?;
                    if bytes != synthetic(&location, size) {
                        return Err(format!("wrong bytes for {location}"));
                    }
                }
            }
            ["bench", prefix, count, size, seconds, rest @ ..] => {
                let count: usize = count.parse().map_err(|_| "COUNT")?;
                let size: usize = size.parse().map_err(|_| "SIZE")?;
                let seconds: u64 = seconds.parse().map_err(|_| "SECONDS")?;
                let raw = rest.first() == Some(&"raw");
                let locations: Vec<String> = (0..count)
                    .map(|i| format!("{prefix}/{i:06}.avro"))
                    .collect();
                let layout = metacache_disk::layout::Layout::new(&dir);
                let files: Vec<PathBuf> = locations
                    .iter()
                    .map(|l| layout.block(metacache_disk::layout::BlockId::of(l)))
                    .collect();
                let mut latencies = Vec::new();
                let mut state = u64::from(std::process::id()) | 1;
                let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
                while std::time::Instant::now() < deadline {
                    // xorshift: a different sequence per process, no dependency.
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let i = (state % count as u64) as usize;
                    let started = std::time::Instant::now();
                    let len = if raw {
                        std::fs::read(&files[i]).map_err(|e| e.to_string())?.len()
                    } else {
                        let location = &locations[i];
                        tier.read_through(BlockKey::new(location), &scope, || async {
                            Ok::<_, String>(synthetic(location, size))
                        })
                        .await?
                        .len()
                    };
                    latencies.push(started.elapsed().as_nanos() as u64);
                    if len < size {
                        return Err(format!("short read of {}", locations[i]));
                    }
                }
                latencies.sort_unstable();
                let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize] / 1000;
                println!(
                    "bench reads={} per_second={} p50_us={} p99_us={}",
                    latencies.len(),
                    latencies.len() as u64 / seconds.max(1),
                    at(0.5),
                    at(0.99)
                );
            }
            ["invalidate"] => tier.invalidate(&scope).map_err(|e| e.to_string())?,
            ["stats"] => {}
            other => return Err(format!("unknown command {other:?}; {usage}")),
        }
        Ok::<_, String>(())
    })?;
    print_stats(&tier.stats());
    Ok(())
}

fn print_stats(s: &DiskStats) {
    let opt = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
    println!(
        "stats capacity={} used={} blocks={} hits={} misses={} coalesced={} published={} evictions={} corrupt={} fenced={} too_large={} lock_timeouts={} errors={} unavailable={}",
        opt(s.capacity),
        opt(s.used),
        opt(s.blocks),
        s.hits,
        s.misses,
        s.coalesced,
        s.published,
        s.evictions,
        s.corrupt_dropped,
        s.fenced,
        s.too_large,
        s.lock_timeouts,
        s.errors,
        s.unavailable.is_some(),
    );
}
