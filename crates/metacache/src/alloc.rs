//! The process's allocator: jemalloc, chosen by measurement (docs/benchmarks.md, "Memory under
//! a binding limit"). Its size classes bound the rounding of every allocation (at most 25 % in
//! jemalloc's spacing of four classes per doubling, and 0 for the exact-sized buffers the
//! look-aside API keeps); freed pages go back to the system at once, so the resident set follows what the caches hold after churn; and it reports the
//! bytes it has allocated and holds resident, which the node's gauges show next to the ledger.

use metacache_catalog::memory::{AllocatorStats, set_allocator_probe};
use tikv_jemalloc_ctl::{epoch, stats};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options ([`JEMALLOC_CONF`](metacache_catalog::memory::JEMALLOC_CONF)), read at
/// its first allocation; `_RJEM_MALLOC_CONF` in the environment still overrides them.
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] = metacache_catalog::memory::JEMALLOC_CONF;

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
