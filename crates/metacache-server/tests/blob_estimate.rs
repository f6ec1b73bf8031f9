//! The look-aside value's estimate against the allocator: a `Blob` built the way a `PUT` builds
//! it (copied out of a larger receive buffer) and shared once the way a `GET` shares it must be
//! charged within ±5 % of the bytes the process really holds for it.

use metacache_estimate::counting::{Counting, assert_estimate_within, measured};
use metacache_server::lookaside::Blob;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn blobs_are_charged_what_they_keep_allocated() {
    // A receive buffer far larger than any one body, as hyper's may be.
    let buffer = vec![7_u8; 2 << 20];
    for len in [1, 100, 512, 4096, 10_000, 65_536, 1 << 20] {
        assert_estimate_within(&format!("blob of {len} B"), 0.05, || {
            let blob = Blob::copied(&buffer[..len]);
            // A GET hands out a clone: the first one gives the buffer its shared header.
            drop(blob.clone());
            blob
        });
    }
}

#[test]
fn a_copied_blob_does_not_pin_the_buffer_it_came_from() {
    let (blob, held) = measured(|| {
        let buffer = axum::body::Bytes::from(vec![1_u8; 1 << 20]);
        Blob::copied(&buffer.slice(..512))
    });
    assert_eq!(blob.0.len(), 512);
    assert!(
        held < 1024,
        "a 512-byte blob keeps {held} bytes allocated after its buffer is dropped"
    );
    // The view it replaces would have kept the whole buffer.
    let (_view, pinned) = measured(|| {
        let buffer = axum::body::Bytes::from(vec![1_u8; 1 << 20]);
        Blob(buffer.slice(..512))
    });
    assert!(pinned >= 1 << 20, "a view pins {pinned} bytes");
}
