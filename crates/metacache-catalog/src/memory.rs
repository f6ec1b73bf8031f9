//! The node memory budget that percentages of `external_meta_cache_max_weight` refer to: the
//! process's cgroup memory limit when it has one, else the machine's physical RAM (both read
//! by `sysinfo`), unless the config sets `node_memory_budget`.

use std::fmt;

/// Where the node memory budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySource {
    /// The cgroup (container) memory limit of this process.
    Cgroup,
    /// Physical RAM: no cgroup limit applies.
    Physical,
    /// `node_memory_budget` in the configuration.
    Configured,
}

impl fmt::Display for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySource::Cgroup => "cgroup memory limit",
            MemorySource::Physical => "physical RAM",
            MemorySource::Configured => "node_memory_budget",
        })
    }
}

/// The node memory budget, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeMemory {
    /// Bytes.
    pub bytes: u64,
    /// Where they came from.
    pub source: MemorySource,
}

/// Reads the cgroup limit and physical RAM now; `None` where neither can be read.
pub fn detect() -> Option<NodeMemory> {
    let mut system = sysinfo::System::new().ok()?;
    system.refresh_memory();
    let physical = system.total_memory();
    let cgroup = system
        .cgroup_limits()
        .map(|limits| limits.total_memory)
        .filter(|&bytes| bytes > 0 && (physical == 0 || bytes < physical));
    match (cgroup, physical) {
        (Some(bytes), _) => Some(NodeMemory {
            bytes,
            source: MemorySource::Cgroup,
        }),
        (None, 0) => None,
        (None, bytes) => Some(NodeMemory {
            bytes,
            source: MemorySource::Physical,
        }),
    }
}

/// This machine's host name (the default `FE_HOST`).
pub fn host_name() -> String {
    sysinfo::System::host_name().unwrap_or_else(|_| "localhost".to_owned())
}

/// The options the service runs jemalloc with (the binary exports them as `malloc_conf`; a
/// bench measuring the service's memory exports the same), each chosen by measurement
/// (docs/benchmarks.md, "Memory under a binding limit"):
/// - `dirty_decay_ms:0`, `muzzy_decay_ms:0`: freed pages go back to the system at once. With a
///   one-second decay, pages freed by evicting 64 KiB–1 MiB values under fast churn stayed
///   resident long enough to peak at 1.39–1.63 × the node limit; with none, 1.09–1.13 ×.
/// - `narenas:1`: one arena. Hive file listings (hundreds of small strings per value) evicted and
///   reloaded by several threads peaked at 1.35 × the limit with jemalloc's default of four
///   arenas per CPU (1.34 × with two arenas), 1.07 × with one; the thread caches keep most
///   allocations off the arena's lock, and throughput did not change on 2 cores.
/// - `background_thread:true`: purging that can leave the request path does.
pub const JEMALLOC_CONF: &[u8] =
    b"background_thread:true,dirty_decay_ms:0,muzzy_decay_ms:0,narenas:1\0";

/// What the process's allocator reports: the truth the ledger's estimates are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Bytes in live allocations, at their real (size-class) sizes.
    pub allocated: u64,
    /// Bytes of physical memory the allocator holds (live, fragmented and not yet purged).
    pub resident: u64,
}

impl AllocatorStats {
    /// `resident / allocated`: how much memory fragmentation and unpurged pages add.
    pub fn fragmentation(&self) -> f64 {
        self.resident as f64 / self.allocated.max(1) as f64
    }

    /// `reserved / allocated`: how much of what the allocator has handed out the ledger's
    /// `reserved` bytes account for.
    pub fn reserved_ratio(&self, reserved: u64) -> f64 {
        reserved as f64 / self.allocated.max(1) as f64
    }
}

static ALLOCATOR_PROBE: std::sync::OnceLock<fn() -> Option<AllocatorStats>> =
    std::sync::OnceLock::new();

/// Installs the function that reads the allocator's statistics. The binary, which chooses the
/// global allocator, installs it once at start; libraries and tests that use another allocator
/// have none, and [`allocator_stats`] answers `None`.
pub fn set_allocator_probe(probe: fn() -> Option<AllocatorStats>) {
    // A second install (tests starting several servers in one process) keeps the first.
    let _ = ALLOCATOR_PROBE.set(probe);
}

/// The allocator's statistics now, if the process's allocator reports them.
pub fn allocator_stats() -> Option<AllocatorStats> {
    ALLOCATOR_PROBE.get().and_then(|probe| probe())
}

/// The resident set size of this process, in bytes (`None` where it cannot be read).
pub fn process_rss_bytes() -> Option<u64> {
    let pid = sysinfo::get_current_pid().ok()?;
    let mut system = sysinfo::System::new().ok()?;
    system.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::Some(&[pid]),
        false,
        sysinfo::ProcessRefreshKind::nothing().with_memory(),
    );
    system.process(pid).map(sysinfo::Process::memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_a_plausible_budget_on_this_machine() {
        let memory = detect().expect("Linux exposes /proc/meminfo");
        assert!(memory.bytes >= 64 << 20, "{memory:?}");
        assert_ne!(memory.source, MemorySource::Configured);
        #[cfg(target_os = "linux")]
        {
            let meminfo = std::fs::read_to_string("/proc/meminfo").expect("meminfo");
            let kib: u64 = meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .expect("MemTotal");
            assert!(memory.bytes <= kib * 1024, "never above physical RAM");
        }
    }

    #[test]
    fn reads_this_process_s_rss() {
        let rss = process_rss_bytes().expect("readable");
        assert!(rss > 1 << 20 && rss < 16 << 30, "{rss}");
    }
}
