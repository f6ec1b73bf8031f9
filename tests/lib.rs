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

/// The statements of the crash test and the model they are checked against.
pub mod crash {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    /// Catalogs by name, with their properties.
    pub type Model = BTreeMap<String, BTreeMap<String, String>>;

    /// One statement.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Op {
        /// CREATE CATALOG.
        Create {
            /// Name.
            name: String,
            /// Properties.
            properties: BTreeMap<String, String>,
        },
        /// ALTER CATALOG … SET PROPERTIES.
        Alter {
            /// Name.
            name: String,
            /// Properties set.
            properties: BTreeMap<String, String>,
        },
        /// DROP CATALOG.
        Drop {
            /// Name.
            name: String,
        },
    }

    /// splitmix64: a well-mixed number from `x`.
    pub fn mix(mut x: u64) -> u64 {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    impl Op {
        /// The statement number `index`, from `random`, given the catalogs that exist.
        pub fn choose(index: u64, random: u64, existing: &[String]) -> Self {
            let pick = || existing[(random >> 8) as usize % existing.len()].clone();
            let types = ["hms", "iceberg", "paimon", "jdbc", "lance"];
            match random % 10 {
                0..=4 if !existing.is_empty() => Op::Alter {
                    name: pick(),
                    properties: BTreeMap::from([
                        ("n".to_owned(), index.to_string()),
                        (
                            "meta.cache.max-weight".to_owned(),
                            format!("{}MB", index + 1),
                        ),
                        ("jdbc.password".to_owned(), format!("pw-{index}")),
                    ]),
                },
                5..=6 if existing.len() > 3 => Op::Drop { name: pick() },
                _ => Op::Create {
                    name: format!("c{index}"),
                    properties: BTreeMap::from([
                        (
                            "type".to_owned(),
                            types[(random >> 4) as usize % types.len()].to_owned(),
                        ),
                        ("n".to_owned(), index.to_string()),
                        ("password".to_owned(), format!("pw-{index}")),
                        (
                            "meta.cache.max-weight".to_owned(),
                            format!("{}MB", index + 1),
                        ),
                    ]),
                },
            }
        }

        /// The statement's effect on `model`.
        pub fn apply(&self, model: &mut Model) {
            match self {
                Op::Create { name, properties } => {
                    model.insert(name.clone(), properties.clone());
                }
                Op::Alter { name, properties } => {
                    if let Some(current) = model.get_mut(name) {
                        current.extend(properties.clone());
                    }
                }
                Op::Drop { name } => {
                    model.remove(name);
                }
            }
        }
    }
}
