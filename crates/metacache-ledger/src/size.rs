//! Weights as admins write them: fixed sizes (`512MB`, `4 gb`, `1024`) and, at node level only,
//! percentages of the node memory budget (`10%`, `12.5%`).
//!
//! Rules (§4): a size is digits, optional blanks, and an optional unit among `B KB MB GB TB PB`
//! in any case, units being powers of 1024; surrounding blanks are trimmed; a bare number is
//! bytes; anything above `i64::MAX` bytes is an overflow and invalid. A percentage is a decimal
//! greater than 0 and at most 100, followed by `%`, and resolves to whole bytes (floored).

use std::fmt;

use crate::WeightError;

/// The largest weight accepted, in bytes (limits are signed 64-bit numbers in the statistics
/// table, where `-1` means no limit).
pub const MAX_WEIGHT_BYTES: u64 = i64::MAX as u64;

/// The catalog-level weight key.
pub const CATALOG_MAX_WEIGHT_KEY: &str = "meta.cache.max-weight";

const UNITS: [(&str, u32); 6] = [
    ("B", 0),
    ("KB", 10),
    ("MB", 20),
    ("GB", 30),
    ("TB", 40),
    ("PB", 50),
];

/// Parses a fixed size in bytes; `None` when the text is not one (or overflows).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, rest) = text.split_at(digits_end);
    if digits.is_empty() {
        return None;
    }
    let unit = rest.trim_start();
    let shift = if unit.is_empty() {
        0
    } else {
        UNITS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(unit))?
            .1
    };
    let amount: u64 = digits.parse().ok()?;
    let bytes = amount.checked_mul(1u64 << shift)?;
    (bytes <= MAX_WEIGHT_BYTES).then_some(bytes)
}

/// A percentage of the node memory budget, kept exact (`12.5%` is 125 / 10) until resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percent {
    mantissa: u128,
    decimals: u32,
}

impl Percent {
    /// Parses `N%` or `N.M%` (blanks allowed around the number); `None` unless 0 < N ≤ 100.
    pub fn parse(text: &str) -> Option<Self> {
        let number = text.trim().strip_suffix('%')?.trim_end();
        let (int, frac) = number.split_once('.').unwrap_or((number, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !all_digits(int) || !all_digits(frac) || number.ends_with('.') {
            return None;
        }
        let decimals = u32::try_from(frac.len()).ok().filter(|&d| d <= 30)?;
        let mantissa: u128 = format!("{int}{frac}").parse().ok()?;
        let hundred = 100u128.checked_mul(10u128.checked_pow(decimals)?)?;
        (mantissa > 0 && mantissa <= hundred).then_some(Self { mantissa, decimals })
    }

    /// A whole percentage, 1 to 100 (clamped).
    pub const fn whole(percent: u8) -> Self {
        let p = if percent == 0 {
            1
        } else if percent > 100 {
            100
        } else {
            percent
        };
        Self {
            mantissa: p as u128,
            decimals: 0,
        }
    }

    /// This share of `total` bytes, floored to whole bytes.
    pub fn of(&self, total: u64) -> u64 {
        let denominator = 100u128 * 10u128.pow(self.decimals);
        let bytes = u128::from(total) * self.mantissa / denominator;
        u64::try_from(bytes)
            .unwrap_or(u64::MAX)
            .min(MAX_WEIGHT_BYTES)
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scale = 10u128.pow(self.decimals);
        let (int, frac) = (self.mantissa / scale, self.mantissa % scale);
        if self.decimals == 0 {
            write!(f, "{int}%")
        } else {
            write!(f, "{int}.{frac:0width$}%", width = self.decimals as usize)
        }
    }
}

/// The node-level setting `external_meta_cache_max_weight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeWeight {
    /// `0`: no node quota; caches still work.
    Unlimited,
    /// A fixed number of bytes.
    Bytes(u64),
    /// A share of the node memory budget.
    Percent(Percent),
}

impl NodeWeight {
    /// The node limit in bytes for a node memory budget of `node_memory` bytes (`None`: no quota).
    pub fn resolve(&self, node_memory: u64) -> Option<u64> {
        match self {
            Self::Unlimited => None,
            Self::Bytes(b) => Some(*b),
            Self::Percent(p) => Some(p.of(node_memory)),
        }
    }
}

impl fmt::Display for NodeWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unlimited => f.write_str("0"),
            Self::Bytes(b) => write!(f, "{}", format_exact(*b)),
            Self::Percent(p) => p.fmt(f),
        }
    }
}

/// Parses the node-level weight: `0` (no quota), a size, or a percentage.
pub fn parse_node_weight(key: &str, value: &str) -> Result<NodeWeight, WeightError> {
    let invalid = || WeightError::Invalid {
        key: key.to_owned(),
        value: value.to_owned(),
    };
    if value.trim().ends_with('%') {
        return Percent::parse(value)
            .map(NodeWeight::Percent)
            .ok_or_else(invalid);
    }
    match parse_size(value).ok_or_else(invalid)? {
        0 => Ok(NodeWeight::Unlimited),
        bytes => Ok(NodeWeight::Bytes(bytes)),
    }
}

/// Parses a catalog or entry limit: a positive fixed size.
pub fn parse_positive_weight(key: &str, value: &str) -> Result<u64, WeightError> {
    match parse_size(value) {
        None => Err(WeightError::Invalid {
            key: key.to_owned(),
            value: value.to_owned(),
        }),
        Some(0) => Err(WeightError::NotPositive {
            key: key.to_owned(),
        }),
        Some(bytes) => Ok(bytes),
    }
}

/// Checks an entry limit against its catalog limit (both in bytes).
pub fn check_entry_within_catalog(
    entry_key: &str,
    entry: u64,
    catalog: Option<u64>,
) -> Result<(), WeightError> {
    match catalog {
        Some(catalog) if entry > catalog => Err(WeightError::ExceedsCatalogLimit {
            key: entry_key.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Human-readable size for logs and docs (`1.50 GiB`), by `humansize`.
pub fn format_bytes(bytes: u64) -> String {
    humansize::format_size(bytes, humansize::BINARY)
}

/// The shortest exact size in the accepted syntax (`4GB`, `1536MB`, `1000`), so that a value
/// written back parses to the same bytes.
pub fn format_exact(bytes: u64) -> String {
    UNITS
        .iter()
        .rev()
        .filter(|(_, shift)| *shift > 0)
        .find(|(_, shift)| bytes != 0 && bytes.is_multiple_of(1u64 << shift))
        .map_or_else(
            || bytes.to_string(),
            |(unit, shift)| format!("{}{unit}", bytes >> shift),
        )
}

#[cfg(test)]
mod tests;
