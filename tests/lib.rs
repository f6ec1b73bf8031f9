//! Shared helpers of metacache's cross-crate tests.

use metacache_estimate::{EstimateSize, Sizer};

/// A cached value whose estimate is exactly `.0` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub u64);

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(usize::try_from(self.0).unwrap_or(usize::MAX));
    }
}
