//! Estimators for the standard types that cache keys are made of.

use crate::{EstimateSize, Sizer};

impl EstimateSize for String {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_string(self);
    }
}

macro_rules! inline_only {
    ($($ty:ty),+) => {$(
        impl EstimateSize for $ty {
            fn estimate_size(&self, sizer: &mut Sizer) {
                sizer.add_inline(self);
            }
        }
    )+};
}

inline_only!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, bool);

#[cfg(test)]
mod tests {
    use crate::{Estimate, estimate};

    #[test]
    fn a_string_is_its_header_and_its_buffer() {
        let mut text = String::with_capacity(100);
        text.push_str("sales.orders");
        // The buffer at its allocator size class (100 → 112).
        assert_eq!(estimate(&text, 10), Estimate::Complete(24 + 112));
        assert_eq!(estimate(&7u64, 10), Estimate::Complete(8));
    }
}
