//! A counting global allocator for accuracy tests (feature `testing`): it records the net bytes
//! the current thread is really given while [`measured`] builds a value — each request at
//! jemalloc's size class ([`size_class`], the service's allocator; checked against jemalloc's
//! own `nallocx` in this crate's tests) — so a test can hold an estimate against the truth.
//!
//! A test binary installs it with
//! `#[global_allocator] static A: metacache_estimate::counting::Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::{DEFAULT_VISIT_BUDGET, Estimate, EstimateSize, estimate, size_class};

/// The system allocator, counting this thread's requests while a measurement runs.
pub struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Whether requests count at their size class (the real size) or as requested.
    static REAL_SIZES: Cell<bool> = const { Cell::new(true) };
    static NET: Cell<i64> = const { Cell::new(0) };
}

fn record(delta: i64) {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = NET.try_with(|n| n.set(n.get() + delta));
    }
}

fn signed(bytes: usize) -> i64 {
    let real = REAL_SIZES.try_with(Cell::get).unwrap_or(true);
    i64::try_from(if real { size_class(bytes) } else { bytes }).unwrap_or(i64::MAX)
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
///
/// The box itself counts at the value's inline size: in a cache the value lives inside the
/// cache's slot, whose allocation (and its rounding) the fixed accounting overhead covers.
pub fn measured<T>(build: impl FnOnce() -> T) -> (Box<T>, u64) {
    NET.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let value = Box::new(build());
    COUNTING.with(|c| c.set(false));
    let rounding = signed(size_of::<T>()) - i64::try_from(size_of::<T>()).unwrap_or(0);
    let net = NET.with(Cell::get) - rounding;
    (value, u64::try_from(net).unwrap_or(0))
}

/// Builds a value with [`measured`] and panics unless its estimate is complete and within
/// ±`tolerance` (0.05 = 5 %) of the bytes really allocated (each request at its size class).
/// Returns the relative error.
pub fn assert_estimate_within<T: EstimateSize>(
    name: &str,
    tolerance: f64,
    build: impl FnOnce() -> T,
) -> f64 {
    assert_within(name, tolerance, true, build)
}

/// [`assert_estimate_within`] against the bytes *requested*, for estimates made by the generic
/// `mem_dbg` walk, which sees capacities but not single allocations, so cannot round them.
pub fn assert_generic_estimate_within<T: EstimateSize>(
    name: &str,
    tolerance: f64,
    build: impl FnOnce() -> T,
) -> f64 {
    assert_within(name, tolerance, false, build)
}

fn assert_within<T: EstimateSize>(
    name: &str,
    tolerance: f64,
    real_sizes: bool,
    build: impl FnOnce() -> T,
) -> f64 {
    REAL_SIZES.with(|r| r.set(real_sizes));
    let (value, allocated) = measured(build);
    REAL_SIZES.with(|r| r.set(true));
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
