use std::collections::HashMap;
use std::sync::Arc;

use mem_dbg::MemSize;

use super::*;
use crate::estimate_with_mem_dbg;

#[derive(MemSize)]
struct Column {
    name: String,
    type_name: String,
}
estimate_with_mem_dbg!(Column);

#[derive(MemSize)]
struct Partitioned {
    schema: Arc<Vec<Column>>,
    values: Vec<String>,
}
estimate_with_mem_dbg!(Partitioned);

struct Listing {
    files: Vec<String>,
}

impl EstimateSize for Listing {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add_inline(self);
        sizer.add_vec(&self.files, |s, f| s.add_string(f));
    }
}

struct Panics;
impl EstimateSize for Panics {
    fn estimate_size(&self, _: &mut Sizer) {
        panic!("estimator bug");
    }
}

struct Errs;
impl EstimateSize for Errs {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(10);
        sizer.fail("cannot size opaque handle");
    }
}

struct Nothing;
impl EstimateSize for Nothing {
    fn estimate_size(&self, _: &mut Sizer) {}
}

#[test]
fn generic_estimate_counts_capacity() {
    let mut name = String::with_capacity(100);
    name.push('a');
    let column = Column {
        name,
        type_name: String::new(),
    };
    assert_eq!(
        estimate(&column, 100),
        Estimate::Complete(size_of::<Column>() as u64 + 100)
    );
}

#[test]
fn shared_arc_is_charged_once() {
    let schema = Arc::new(vec![Column {
        name: "a".repeat(64),
        type_name: "int".to_owned(),
    }]);
    let one = Partitioned {
        schema: Arc::clone(&schema),
        values: vec![],
    };
    let pair = vec![
        Partitioned {
            schema: Arc::clone(&schema),
            values: vec![],
        },
        Partitioned {
            schema: Arc::clone(&schema),
            values: vec![],
        },
    ];
    struct Pair(Vec<Partitioned>);
    impl EstimateSize for Pair {
        fn estimate_size(&self, s: &mut Sizer) {
            s.add_inline(self);
            s.add_vec(&self.0, |s, p| s.add_heap_mem_dbg(p));
        }
    }
    let Estimate::Complete(single) = estimate(&one, 100) else {
        panic!()
    };
    let Estimate::Complete(double) = estimate(&Pair(pair), 100) else {
        panic!()
    };
    let arc_bytes = 16 + size_of::<Vec<Column>>() + size_of::<Column>() + 64 + 3;
    assert_eq!(single as usize, size_of::<Partitioned>() + arc_bytes);
    assert_eq!(
        double as usize,
        size_of::<Pair>() + 2 * size_of::<Partitioned>() + arc_bytes,
        "the schema Arc shared by both elements is counted once"
    );
}

#[test]
fn hand_written_and_generic_estimators_share_arcs() {
    let shared = Arc::new(vec![1u64; 10]);
    struct Both(Arc<Vec<u64>>, Arc<Vec<u64>>);
    impl EstimateSize for Both {
        fn estimate_size(&self, s: &mut Sizer) {
            s.add_inline(self);
            s.add_arc(&self.0, |s, v| s.add_vec(v, |_, _| {}));
            s.add_heap_mem_dbg(&self.1);
        }
    }
    let Estimate::Complete(bytes) = estimate(&Both(Arc::clone(&shared), shared), 100) else {
        panic!()
    };
    // The Arc's allocation (counts and the Vec) and the Vec's buffer, each at its size class.
    assert_eq!(
        bytes as usize,
        size_of::<Both>() + crate::size_class(16 + size_of::<Vec<u64>>()) + crate::size_class(80)
    );
}

#[test]
fn visit_budget_exhaustion_is_incomplete() {
    let listing = Listing {
        files: (0..100).map(|i| format!("f{i}")).collect(),
    };
    assert!(matches!(estimate(&listing, 1000), Estimate::Complete(_)));
    match estimate(&listing, 10) {
        Estimate::Incomplete { partial, detail } => {
            assert_eq!(detail, VISIT_BUDGET_EXHAUSTED);
            assert!(partial > 0);
        }
        other => panic!("expected incomplete, got {other:?}"),
    }
}

#[test]
fn hash_maps_count_their_table() {
    let map: HashMap<String, String> = (0..50).map(|i| (i.to_string(), "v".repeat(i))).collect();
    struct M(HashMap<String, String>);
    impl EstimateSize for M {
        fn estimate_size(&self, s: &mut Sizer) {
            s.add_inline(self);
            s.add_hash_map(&self.0, |s, k, v| {
                s.add_string(k);
                s.add_string(v);
            });
        }
    }
    let generic = map.mem_size(MEM_DBG_FLAGS) as u64;
    let table = crate::hash_table_bytes(map.capacity(), size_of::<(String, String)>(), 8);
    let strings: usize = map
        .iter()
        .map(|(k, v)| crate::size_class(k.capacity()) + crate::size_class(v.capacity()))
        .sum();
    let expected = (size_of::<M>() + crate::size_class(table) + strings) as u64;
    assert_eq!(estimate(&M(map), 1000), Estimate::Complete(expected));
    // mem_dbg counts the same allocations, unrounded.
    assert!(generic <= expected && expected - generic < expected / 4);
}

#[test]
fn panics_and_errors_become_failures() {
    assert_eq!(
        estimate(&Panics, 10),
        Estimate::Failed {
            detail: "estimator bug".into()
        }
    );
    assert_eq!(
        estimate(&Errs, 10),
        Estimate::Failed {
            detail: "cannot size opaque handle".into()
        }
    );
    assert_eq!(estimate(&Nothing, 10), Estimate::Complete(0));
}
