//! Pause points for the crash tests: a test process asks to stop at a point inside an
//! exclusive operation, says so on stderr, and waits there to be killed. Unset (the default)
//! they cost one relaxed load.

use std::sync::atomic::{AtomicU8, Ordering};

/// A point inside an exclusive operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Point {
    /// Publication: the ledger is dirty, the block not renamed into place yet.
    Publishing = 1,
    /// Eviction: the ledger is dirty, no block removed yet.
    Evicting = 2,
}

static PAUSE_AT: AtomicU8 = AtomicU8::new(0);

/// Makes this process stop for good the next time it reaches `point`.
pub fn pause_at(point: Point) {
    PAUSE_AT.store(point as u8, Ordering::SeqCst);
}

pub(crate) fn pause_here(point: Point) {
    if PAUSE_AT.load(Ordering::Relaxed) == point as u8 {
        eprintln!("paused at {point:?}");
        loop {
            std::thread::park();
        }
    }
}
