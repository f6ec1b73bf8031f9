//! The process's allocator: jemalloc, chosen by measurement (docs/benchmarks.md, "Memory under
//! a binding limit"). Its size classes bound the rounding of every allocation (at most 25 % in
//! jemalloc's spacing of four classes per doubling, and 0 for the exact-sized buffers the
//! look-aside API keeps); freed pages go back to the system at once, so the resident set follows what the caches hold after churn; and it reports the
//! bytes it has allocated and holds resident, which the node's gauges show next to the ledger.

use metacache_catalog::memory::{AllocatorStats, set_allocator_probe};
use tikv_jemalloc_ctl::{epoch, stats};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its first allocation (`_RJEM_MALLOC_CONF` in the environment
/// still overrides them), each chosen by measurement (docs/benchmarks.md, "Memory under a
/// binding limit"):
/// - `dirty_decay_ms:0`, `muzzy_decay_ms:0`: freed pages go back to the system at once. With a
///   one-second decay, pages freed by evicting 64 KiB–1 MiB values under fast churn stayed
///   resident long enough to peak at 1.39–1.63 × the node limit; with none, 1.09–1.13 ×.
/// - `narenas:1`: one arena. Hive file listings (hundreds of small strings per value) evicted and
///   reloaded by several threads peaked at 1.35 × the limit with jemalloc's default of four
///   arenas per CPU (1.34 × with two arenas), 1.07 × with one; the thread caches keep most
///   allocations off the arena's lock, and throughput did not change on 2 cores.
/// - `background_thread:true`: purging that can leave the request path does.
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] =
    b"background_thread:true,dirty_decay_ms:0,muzzy_decay_ms:0,narenas:1\0";

/// Makes the allocator's statistics visible to the front ends (`/metrics`, the nodes table).
pub fn install_probe() {
    set_allocator_probe(read);
}

fn read() -> Option<AllocatorStats> {
    // jemalloc caches its statistics; advancing the epoch refreshes them.
    epoch::advance().ok()?;
    Some(AllocatorStats {
        allocated: stats::allocated::read().ok()? as u64,
        resident: stats::resident::read().ok()? as u64,
    })
}
