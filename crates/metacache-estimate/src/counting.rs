//! A counting global allocator for accuracy tests (feature `testing`): it records the net bytes
//! the current thread asks the allocator for while [`measured`] builds a value, so a test can
//! hold an estimate against the truth.
//!
//! A test binary installs it with
//! `#[global_allocator] static A: metacache_estimate::counting::Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::{DEFAULT_VISIT_BUDGET, Estimate, EstimateSize, estimate};

/// The system allocator, counting this thread's requests while a measurement runs.
pub struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static NET: Cell<i64> = const { Cell::new(0) };
}

fn record(delta: i64) {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = NET.try_with(|n| n.set(n.get() + delta));
    }
}

fn signed(bytes: usize) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

// SAFETY: delegates every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(signed(layout.size()));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(-signed(layout.size()));
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(signed(new_size) - signed(layout.size()));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Builds a value in a `Box` (so its inline size is allocated too) and returns it with the net
/// bytes this thread asked the allocator for meanwhile (temporaries freed again net out).
pub fn measured<T>(build: impl FnOnce() -> T) -> (Box<T>, u64) {
    NET.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let value = Box::new(build());
    COUNTING.with(|c| c.set(false));
    (value, u64::try_from(NET.with(Cell::get)).unwrap_or(0))
}

/// Builds a value with [`measured`] and panics unless its estimate is complete and within
/// ±`tolerance` (0.05 = 5 %) of the allocated bytes. Returns the relative error.
pub fn assert_estimate_within<T: EstimateSize>(
    name: &str,
    tolerance: f64,
    build: impl FnOnce() -> T,
) -> f64 {
    let (value, allocated) = measured(build);
    let Estimate::Complete(estimated) = estimate(value.as_ref(), DEFAULT_VISIT_BUDGET) else {
        panic!("{name}: estimate incomplete");
    };
    let error = (estimated as f64 - allocated as f64) / allocated as f64;
    eprintln!(
        "{name}: allocated {allocated} B, estimated {estimated} B, error {:+.2} %",
        error * 100.0
    );
    assert!(
        error.abs() <= tolerance,
        "{name}: estimated {estimated} vs allocated {allocated}"
    );
    error
}
