//! The quota advisor's rows that `/metrics` exports, built ahead of the scrape that reads them.
//!
//! A node's rows take most of a scrape to build (2,000 caches' curves and 100 catalogs'
//! shared-limit models: docs/benchmarks.md, "`/metrics`"), while what they say moves over
//! minutes (the advisors' counts halve every quarter of an hour by default). So a scrape
//! answers from the rows built after the scrape before it, if those are at most
//! [`ADVICE_AHEAD_MAX_AGE`] old, and starts building the next on a thread of its own:
//! refresh-ahead (§8.3) applied to the node's own statistics. The first scrape, and one after a
//! longer pause, builds the rows itself. A series of the advice families therefore lags its
//! scrape by one scrape interval; the SQL table and the dashboard read
//! [`CatalogManager::advice_rows`], built at each read.
//!
//! Invariants: at most one build runs in the background; rows are kept whole (a reader sees one
//! build's rows, never a mix), and newer rows are never replaced by older ones; a build that
//! panics or whose thread cannot start leaves the kept rows as they are and lets the next
//! scrape try again. The rows kept are as large as one scrape's (about 1 MB at 100 catalogs ×
//! 20 caches with curves), and like the scrape's own text not charged to the ledger.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use super::CatalogManager;
use crate::AdviceRow;

/// The oldest rows a scrape answers from: longer than the usual scrape intervals (15 s to 1 min)
/// and short against the advisors' half-life (15 min by default).
pub const ADVICE_AHEAD_MAX_AGE: Duration = Duration::from_secs(120);

/// The rows kept, and whether a build runs.
#[derive(Default)]
pub(super) struct Ahead {
    kept: Mutex<Option<Built>>,
    building: AtomicBool,
}

/// Rows and the moment their build started.
#[derive(Clone)]
struct Built {
    rows: Arc<Vec<AdviceRow>>,
    at_nanos: u64,
}

/// Clears the building flag when a background build ends, even by a panic.
struct Building<'a>(&'a AtomicBool);

impl Drop for Building<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl CatalogManager {
    /// The advisor's rows for `/metrics`: those built after the last call if they are at most
    /// [`ADVICE_AHEAD_MAX_AGE`] old (and then the next are built in the background), else rows
    /// built now.
    pub fn advice_rows_ahead(self: &Arc<Self>) -> Arc<Vec<AdviceRow>> {
        let now = self.governor.clock().now_nanos();
        let kept = self.ahead.kept.lock().clone();
        let max_age = u64::try_from(ADVICE_AHEAD_MAX_AGE.as_nanos()).unwrap_or(u64::MAX);
        match kept {
            Some(built) if now.saturating_sub(built.at_nanos) <= max_age => {
                self.build_ahead();
                built.rows
            }
            _ => {
                let rows = Arc::new(self.advice_rows());
                self.keep(Arc::clone(&rows), now);
                rows
            }
        }
    }

    /// Whether rows are being built in the background now.
    pub fn advice_ahead_building(&self) -> bool {
        self.ahead.building.load(Ordering::Acquire)
    }

    /// Waits, at most `timeout`, until no build runs in the background (its rows then kept);
    /// whether none runs. For benches and tests that time or check the read after a build.
    pub fn wait_advice_ahead(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while self.advice_ahead_building() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }

    /// Keeps `rows` built from `at_nanos`, unless newer rows are kept already.
    fn keep(&self, rows: Arc<Vec<AdviceRow>>, at_nanos: u64) {
        let mut kept = self.ahead.kept.lock();
        if kept.as_ref().is_none_or(|k| k.at_nanos <= at_nanos) {
            *kept = Some(Built { rows, at_nanos });
        }
    }

    /// Starts building the next rows on a thread of their own, unless a build runs.
    fn build_ahead(self: &Arc<Self>) {
        if self.ahead.building.swap(true, Ordering::AcqRel) {
            return;
        }
        let manager: Weak<Self> = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("advice-ahead".to_owned())
            .spawn(move || {
                let Some(manager) = manager.upgrade() else {
                    return;
                };
                let _building = Building(&manager.ahead.building);
                let at = manager.governor.clock().now_nanos();
                let rows = Arc::new(manager.advice_rows());
                manager.keep(rows, at);
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start building the advice rows ahead; the next scrape builds them");
            self.ahead.building.store(false, Ordering::Release);
        }
    }
}
