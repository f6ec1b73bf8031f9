//! Allocation sizes: what the allocator really hands out for a request ([`size_class`]), and
//! the sizes of std containers whose layout is not visible through their API.

/// The bytes jemalloc, the service's allocator, really allocates for a request of `bytes`
/// (its default size classes on 64-bit targets with a 16-byte quantum): 8, then steps of 16 up
/// to 128, then four classes per doubling (160, 192, 224, 256, 320, …, 4096, 5120, …), the
/// same spacing for large allocations. A request never costs less than its class, so an
/// estimate that rounds each allocation to it charges what the process really holds.
pub fn size_class(bytes: usize) -> usize {
    match bytes {
        0 => 0,
        1..=8 => 8,
        9..=128 => bytes.div_ceil(16) * 16,
        _ => {
            let lg = usize::BITS - 1 - (bytes - 1).leading_zeros();
            let delta = 1usize << (lg - 2);
            bytes.div_ceil(delta).saturating_mul(delta)
        }
    }
}

/// Nodes of a `std::collections::BTreeMap<K, V>` of `len` entries, as `(count, bytes)` pairs
/// for leaves and internal nodes. Its nodes hold up to 11 entries; the count assumes the
/// occupancy that insertion settles at (7 per node, as the generic `mem_dbg` walk also
/// assumes), exact for the common maps of at most 11 entries (one leaf).
pub fn btree_nodes<K, V>(len: usize) -> [(usize, usize); 2] {
    const CAPACITY: usize = 11;
    const FILL: usize = 7;
    if len == 0 {
        return [(0, 0), (0, 0)];
    }
    let align = align_of::<K>()
        .max(align_of::<V>())
        .max(align_of::<usize>());
    // The parent pointer, the parent index and length (two u16), the keys, the values.
    let unpadded = size_of::<usize>() + 4 + CAPACITY * (size_of::<K>() + size_of::<V>());
    let leaf = unpadded.div_ceil(align) * align;
    let internal = leaf + (CAPACITY + 1) * size_of::<usize>();
    if len <= CAPACITY {
        return [(1, leaf), (0, internal)];
    }
    let leaves = len.div_ceil(FILL);
    let (mut internals, mut level) = (0, leaves);
    while level > 1 {
        level = level.div_ceil(FILL + 1);
        internals += level;
    }
    [(leaves, leaf), (internals, internal)]
}

/// Width of a hashbrown control group on this target.
const GROUP_WIDTH: usize = if cfg!(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
)) {
    16
} else {
    8
};

/// Bytes of the single allocation behind a `std::collections::HashMap<K, V>` (or `HashSet`)
/// whose [`capacity`](std::collections::HashMap::capacity) is `capacity`, with entries of
/// `entry_size` bytes aligned to `entry_align`. Mirrors hashbrown's layout: buckets are a power of
/// two holding 8/7 of the capacity, followed by one control byte per bucket plus one group.
pub fn hash_table_bytes(capacity: usize, entry_size: usize, entry_align: usize) -> usize {
    let Some(buckets) = buckets_for(capacity, entry_size) else {
        return usize::MAX;
    };
    if buckets == 0 {
        return 0;
    }
    let ctrl_align = entry_align.max(GROUP_WIDTH);
    let data = entry_size.saturating_mul(buckets);
    let ctrl_offset = data.saturating_add(ctrl_align - 1) & !(ctrl_align - 1);
    ctrl_offset
        .saturating_add(buckets)
        .saturating_add(GROUP_WIDTH)
}

fn buckets_for(capacity: usize, entry_size: usize) -> Option<usize> {
    if capacity == 0 {
        return Some(0);
    }
    if capacity < 15 {
        let min_capacity = match (GROUP_WIDTH, entry_size) {
            (16, 0..=1) => 14,
            (16, 2..=3) => 7,
            (8, 0..=1) => 7,
            _ => 3,
        };
        let capacity = capacity.max(min_capacity);
        return Some(match capacity {
            0..4 => 4,
            4..8 => 8,
            _ => 16,
        });
    }
    Some((capacity.checked_mul(8)? / 7).next_power_of_two())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use mem_dbg::{MemSize, SizeFlags};

    use super::*;

    #[test]
    fn matches_mem_dbg_for_maps_of_every_size() {
        for n in [0usize, 1, 3, 7, 8, 14, 15, 100, 1000, 5000] {
            let map: HashMap<u64, u32> = (0..n as u64).map(|i| (i, 0)).collect();
            let generic = map.mem_size(SizeFlags::CAPACITY) - size_of::<HashMap<u64, u32>>();
            let ours = hash_table_bytes(
                map.capacity(),
                size_of::<(u64, u32)>(),
                align_of::<(u64, u32)>(),
            );
            assert_eq!(ours, generic, "{n} entries");
        }
    }
}
