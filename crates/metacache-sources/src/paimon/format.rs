//! Paimon's files, read without the Paimon SDK: schemas and snapshots are JSON (`serde_json`),
//! manifest lists and manifests are Avro (`apache-avro`), partition values are Paimon
//! `BinaryRow`s.
//!
//! # Table layout
//! ```text
//! <warehouse>/<db>.db/<table>/schema/schema-<id>        JSON: fields, partitionKeys, primaryKeys, options, comment
//! <warehouse>/<db>.db/<table>/snapshot/snapshot-<id>    JSON: schemaId, baseManifestList, deltaManifestList, …
//! <warehouse>/<db>.db/<table>/manifest/manifest-list-*  Avro: the manifests of a snapshot
//! <warehouse>/<db>.db/<table>/manifest/manifest-*       Avro: data files added (_KIND 0) or deleted (_KIND 1)
//! <warehouse>/<db>.db/<table>/<k>=<v>/bucket-<n>/<file> data
//! ```
//!
//! # Invariants
//! - Unknown JSON fields and Avro fields are ignored (newer writers add some); a missing field
//!   that the reader needs is an [`Error::Invalid`] naming the file.
//! - A `BinaryRow` is decoded only for the partition types listed in [`decode_partition`];
//!   anything else is an error, never a guessed value.

use std::collections::BTreeMap;

use apache_avro::types::Value;
use serde::Deserialize;

use crate::{Error, Result};

/// A `schema/schema-<id>` file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaFile {
    /// Its id.
    pub id: i64,
    /// The columns.
    pub fields: Vec<FieldFile>,
    /// Partition columns, outermost first.
    #[serde(default)]
    pub partition_keys: Vec<String>,
    /// Primary-key columns (empty for append-only tables).
    #[serde(default)]
    pub primary_keys: Vec<String>,
    /// Table options (`bucket`, `file.format`…).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// The table comment.
    #[serde(default)]
    pub comment: Option<String>,
}

/// A column of a schema file. Its type is text for atomic types (`BIGINT NOT NULL`) and an
/// object for nested ones.
#[derive(Debug, Clone, Deserialize)]
pub struct FieldFile {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub data_type: serde_json::Value,
    /// Its comment.
    #[serde(default)]
    pub description: Option<String>,
}

impl FieldFile {
    /// The type without `NOT NULL`, in lower case (`bigint`, `varchar(10)`, `array<int>`), and
    /// whether it may hold NULL.
    pub fn type_and_nullability(&self) -> (String, bool) {
        let text = match &self.data_type {
            serde_json::Value::String(s) => s.clone(),
            other => nested_type(other),
        };
        let trimmed = text.trim();
        match trimmed
            .to_ascii_uppercase()
            .strip_suffix(" NOT NULL")
            .map(str::len)
        {
            Some(len) => (trimmed[..len].to_ascii_lowercase(), false),
            None => (trimmed.to_ascii_lowercase(), true),
        }
    }
}

/// `ARRAY<…>`, `MAP<…,…>`, `ROW<…>` from the JSON form of a nested type.
fn nested_type(value: &serde_json::Value) -> String {
    let text = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => nested_type(other),
        None => "unknown".to_owned(),
    };
    let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or("");
    let base = kind.split_whitespace().next().unwrap_or("").to_owned();
    match base.as_str() {
        "ARRAY" | "MULTISET" => format!("{base}<{}>", text(value.get("element"))),
        "MAP" => format!(
            "MAP<{}, {}>",
            text(value.get("key")),
            text(value.get("value"))
        ),
        "ROW" => {
            let fields = value
                .get("fields")
                .and_then(|f| f.as_array())
                .map(|fields| {
                    fields
                        .iter()
                        .map(|f| {
                            let name = f.get("name").and_then(|n| n.as_str()).unwrap_or("?");
                            format!("{name} {}", text(f.get("type")))
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            format!("ROW<{fields}>")
        }
        _ => kind.to_owned(),
    }
}

/// A `snapshot/snapshot-<id>` file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotFile {
    /// Its id.
    pub id: i64,
    /// The schema its files were written with.
    pub schema_id: i64,
    /// Manifest list of the files before this commit.
    pub base_manifest_list: String,
    /// Manifest list of this commit's changes.
    pub delta_manifest_list: String,
    /// Rows in the table after the commit.
    #[serde(default)]
    pub total_record_count: Option<i64>,
    /// `APPEND`, `COMPACT`, `OVERWRITE`, `ANALYZE`.
    pub commit_kind: String,
    /// Commit time, Unix milliseconds.
    pub time_millis: i64,
}

/// Parses a JSON file; `location` names it in errors.
pub fn parse_json<T: for<'de> Deserialize<'de>>(bytes: &[u8], location: &str) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::Invalid {
        location: location.to_owned(),
        reason: e.to_string(),
    })
}

/// A data file added to or deleted from a table, as a manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Whether the entry deletes the file (else it adds it).
    pub delete: bool,
    /// The partition, a serialized `BinaryRow`.
    pub partition: Vec<u8>,
    /// The bucket.
    pub bucket: i32,
    /// The file name, relative to `<partition>/bucket-<n>/`.
    pub file_name: String,
    /// Bytes.
    pub file_size: u64,
    /// Rows.
    pub row_count: u64,
    /// When the file was written, Unix milliseconds (writers before 0.9 do not say).
    pub creation_millis: Option<i64>,
    /// The file's full location when it lives outside the table directory.
    pub external_path: Option<String>,
}

/// The manifest file names a manifest list holds.
pub fn read_manifest_list(bytes: &[u8], location: &str) -> Result<Vec<String>> {
    records(bytes, location)?
        .iter()
        .map(|r| string(field(r, "_FILE_NAME", location)?, "_FILE_NAME", location))
        .collect()
}

/// The entries of a manifest, in file order.
pub fn read_manifest(bytes: &[u8], location: &str) -> Result<Vec<ManifestEntry>> {
    records(bytes, location)?
        .iter()
        .map(|record| {
            let file = field(record, "_FILE", location)?;
            let kind = int(field(record, "_KIND", location)?, "_KIND", location)?;
            Ok(ManifestEntry {
                delete: kind == 1,
                partition: bytes_of(field(record, "_PARTITION", location)?, location)?,
                bucket: i32::try_from(int(
                    field(record, "_BUCKET", location)?,
                    "_BUCKET",
                    location,
                )?)
                .unwrap_or(0),
                file_name: string(field(file, "_FILE_NAME", location)?, "_FILE_NAME", location)?,
                file_size: u64::try_from(int(
                    field(file, "_FILE_SIZE", location)?,
                    "_FILE_SIZE",
                    location,
                )?)
                .unwrap_or(0),
                row_count: u64::try_from(int(
                    field(file, "_ROW_COUNT", location)?,
                    "_ROW_COUNT",
                    location,
                )?)
                .unwrap_or(0),
                creation_millis: optional(file, "_CREATION_TIME").and_then(|v| match v {
                    Value::TimestampMillis(t) | Value::LocalTimestampMillis(t) | Value::Long(t) => {
                        Some(*t)
                    }
                    _ => None,
                }),
                external_path: optional(file, "_EXTERNAL_PATH").and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    _ => None,
                }),
            })
        })
        .collect()
}

fn records(bytes: &[u8], location: &str) -> Result<Vec<Value>> {
    let invalid = |e: apache_avro::Error| Error::Invalid {
        location: location.to_owned(),
        reason: e.to_string(),
    };
    apache_avro::Reader::new(bytes)
        .map_err(invalid)?
        .map(|r| r.map_err(invalid))
        .collect()
}

fn field<'v>(record: &'v Value, name: &str, location: &str) -> Result<&'v Value> {
    let Value::Record(fields) = record else {
        return Err(invalid_field(name, location));
    };
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| unwrap_union(v))
        .ok_or_else(|| invalid_field(name, location))
}

/// A field that may be absent or null.
fn optional<'v>(record: &'v Value, name: &str) -> Option<&'v Value> {
    let Value::Record(fields) = record else {
        return None;
    };
    let value = unwrap_union(&fields.iter().find(|(n, _)| n == name)?.1);
    (!matches!(value, Value::Null)).then_some(value)
}

fn unwrap_union(value: &Value) -> &Value {
    match value {
        Value::Union(_, inner) => inner,
        other => other,
    }
}

fn invalid_field(name: &str, location: &str) -> Error {
    Error::Invalid {
        location: location.to_owned(),
        reason: format!("missing or malformed field {name}"),
    }
}

fn int(value: &Value, name: &str, location: &str) -> Result<i64> {
    match value {
        Value::Int(i) => Ok(i64::from(*i)),
        Value::Long(l) => Ok(*l),
        _ => Err(invalid_field(name, location)),
    }
}

fn string(value: &Value, name: &str, location: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        _ => Err(invalid_field(name, location)),
    }
}

fn bytes_of(value: &Value, location: &str) -> Result<Vec<u8>> {
    match value {
        Value::Bytes(b) | Value::Fixed(_, b) => Ok(b.clone()),
        _ => Err(invalid_field("_PARTITION", location)),
    }
}

/// Decodes a serialized partition `BinaryRow` (a 4-byte big-endian arity, then the row: a null
/// bit set with an 8-bit header, one 8-byte slot per field, the variable-length part) into text
/// values, `None` for NULL. `types` are the partition columns' types as
/// [`FieldFile::type_and_nullability`] gives them.
///
/// Values are spelled as Paimon spells them in partition directory names, so that the name
/// built from them is the directory the files are in. Supported: `char`/`varchar`/`string`,
/// `boolean`, `tinyint`, `smallint`, `int`/`integer`, `bigint`, `float`, `double`,
/// `decimal(p,s)` (plain notation with `s` fraction digits: `12.50`), `date` — its day number
/// since 1970-01-01 when `legacy_names` (the table option `partition.legacy-name`, true by
/// default: `19723`), else `YYYY-MM-DD` — and `timestamp(p)` (see [`timestamp`]; with a local
/// time zone only under legacy names, which use UTC fields).
pub fn decode_partition(
    bytes: &[u8],
    types: &[String],
    legacy_names: bool,
) -> std::result::Result<Vec<Option<String>>, String> {
    let arity = types.len();
    if arity == 0 {
        return Ok(Vec::new());
    }
    let declared = bytes
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or("partition row shorter than its header")?;
    if usize::try_from(declared).ok() != Some(arity) {
        return Err(format!(
            "partition row has {declared} fields, the schema {arity}"
        ));
    }
    let row = &bytes[4..];
    let null_bytes = (arity + 63 + 8) / 64 * 8;
    let slot = |i: usize| -> std::result::Result<[u8; 8], String> {
        let start = null_bytes + i * 8;
        row.get(start..start + 8)
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .ok_or_else(|| format!("partition row too short for field {i}"))
    };
    types
        .iter()
        .enumerate()
        .map(|(i, data_type)| {
            let bit = i + 8;
            let is_null = row
                .get(bit / 8)
                .is_some_and(|byte| byte & (1 << (bit % 8)) != 0);
            if is_null {
                return Ok(None);
            }
            let s = slot(i)?;
            let base = data_type
                .split(|c: char| c == '(' || c.is_whitespace())
                .next()
                .unwrap_or("");
            let text = match base {
                "string" | "varchar" | "char" => {
                    let word = u64::from_le_bytes(s);
                    let bytes = if word & (1 << 63) != 0 {
                        let len = usize::from((s[7] & 0x7f).min(7));
                        s[..len].to_vec()
                    } else {
                        variable_part(row, word, None)
                            .ok_or_else(|| format!("string of field {i} outside the row"))?
                            .to_vec()
                    };
                    String::from_utf8(bytes).map_err(|_| format!("field {i} is not UTF-8"))?
                }
                "boolean" => (s[0] != 0).to_string(),
                "tinyint" => i8::from_le_bytes([s[0]]).to_string(),
                "smallint" => i16::from_le_bytes([s[0], s[1]]).to_string(),
                "int" | "integer" => i32::from_le_bytes([s[0], s[1], s[2], s[3]]).to_string(),
                "date" => {
                    let days = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                    if legacy_names {
                        days.to_string()
                    } else {
                        date(days)
                    }
                }
                "timestamp" => {
                    let precision = timestamp_precision(data_type)?;
                    let (millis, nanos) = if precision <= 3 {
                        // Compact: epoch milliseconds in the slot.
                        (i64::from_le_bytes(s), 0)
                    } else {
                        // Epoch milliseconds in the variable part; the slot holds
                        // offset << 32 | nanoseconds within the millisecond.
                        let word = u64::from_le_bytes(s);
                        let millis = variable_part(row, word, Some(8))
                            .and_then(|b| <[u8; 8]>::try_from(b).ok())
                            .ok_or_else(|| format!("timestamp of field {i} outside the row"))?;
                        let nanos = u32::try_from(word & 0xffff_ffff).unwrap_or(u32::MAX);
                        if nanos >= 1_000_000 {
                            return Err(format!("timestamp of field {i} has {nanos} ns past its millisecond"));
                        }
                        (i64::from_le_bytes(millis), nanos)
                    };
                    if is_local_zoned(data_type) && !legacy_names {
                        return Err(format!(
                            "partition columns of type {data_type} are named in the writer's time zone, which the files do not record"
                        ));
                    }
                    timestamp(millis, nanos, legacy_names, precision)
                }
                "decimal" | "numeric" => {
                    let (precision, scale) = decimal_shape(data_type)?;
                    let unscaled = if precision <= 18 {
                        // Compact: the unscaled value in the slot.
                        i128::from(i64::from_le_bytes(s))
                    } else {
                        // The unscaled value's big-endian two's complement bytes in the
                        // variable part; the slot holds offset << 32 | length.
                        let bytes = variable_part(row, u64::from_le_bytes(s), None)
                            .ok_or_else(|| format!("decimal of field {i} outside the row"))?;
                        big_endian_i128(bytes).ok_or_else(|| {
                            format!("decimal of field {i} has {} bytes", bytes.len())
                        })?
                    };
                    plain_decimal(unscaled, scale)
                }
                "bigint" => i64::from_le_bytes(s).to_string(),
                "float" => {
                    let v = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                    java_float_text(f64::from(v), &format!("{v:e}"))
                }
                "double" => {
                    let v = f64::from_le_bytes(s);
                    java_float_text(v, &format!("{v:e}"))
                }
                other => {
                    return Err(format!(
                        "partition columns of type {other} are not supported"
                    ));
                }
            };
            Ok(Some(text))
        })
        .collect()
}

/// The bytes a slot word points at in the row's variable part: the offset is its high 32 bits,
/// the length its low 32 bits unless `len` says (a timestamp keeps nanoseconds there).
fn variable_part(row: &[u8], word: u64, len: Option<usize>) -> Option<&[u8]> {
    let offset = usize::try_from(word >> 32).ok()?;
    let len = match len {
        Some(len) => len,
        None => usize::try_from(word & 0xffff_ffff).ok()?,
    };
    row.get(offset..offset.checked_add(len)?)
}

/// A float or double as Java's `Float/Double.toString` spells it (and so Paimon's partition
/// directories): `1.0`, `0.5`, `1.0E10`, `1.5E-5`, `NaN`, `Infinity`. `v` is the value and
/// `shortest` its shortest round-trip digits in Rust's `{:e}` form for its own width (`1.5e-5`),
/// so a float keeps float digits (`0.1`, not `0.10000000149011612`).
fn java_float_text(v: f64, shortest: &str) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((shortest, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let magnitude = v.abs();
    if v == 0.0 || (1e-3..1e7).contains(&magnitude) {
        // Plain notation: the digits of the mantissa moved by the exponent.
        let negative = mantissa.starts_with('-');
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        // `{:e}` puts one digit before the point.
        let point = 1 + exponent;
        let (whole, fraction) = if point <= 0 {
            let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
            ("0".to_owned(), format!("{zeros}{digits}"))
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            let padded = format!("{digits:0<point$}");
            (padded[..point].to_owned(), padded[point..].to_owned())
        };
        let fraction = fraction.trim_end_matches('0');
        let fraction = if fraction.is_empty() { "0" } else { fraction };
        let sign = if negative { "-" } else { "" };
        format!("{sign}{whole}.{fraction}")
    } else {
        let mantissa = if mantissa.contains('.') {
            mantissa.to_owned()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    }
}

/// Precision of `timestamp(p)` (`timestamp` alone is Paimon's `timestamp(6)`).
fn timestamp_precision(data_type: &str) -> std::result::Result<u32, String> {
    let Some(open) = data_type.find('(') else {
        return Ok(6);
    };
    data_type[open + 1..]
        .split(')')
        .next()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .filter(|p| *p <= 9)
        .ok_or_else(|| format!("malformed type {data_type}"))
}

/// `timestamp with local time zone` / `timestamp_ltz`.
fn is_local_zoned(data_type: &str) -> bool {
    data_type.starts_with("timestamp_ltz") || data_type.contains("local time zone")
}

/// A timestamp as Paimon names partition directories. Legacy names are Java's
/// `LocalDateTime.toString()`: `2024-01-01T12:00`, seconds only when not zero
/// (`…T12:00:30`), then the fraction in groups of three digits (`.123`, `.123456`,
/// `.123456789`). Otherwise `2024-01-01 12:00:30` with the nine-digit fraction stripped of
/// trailing zeros but kept to `precision` digits (`.000` at precision 3), as Paimon's
/// `DateTimeUtils.formatTimestamp` writes it. Both read the UTC fields.
fn timestamp(millis: i64, nanos_of_milli: u32, legacy: bool, precision: u32) -> String {
    let days = millis.div_euclid(86_400_000);
    let of_day = millis.rem_euclid(86_400_000);
    let (hour, minute, second) = (of_day / 3_600_000, of_day / 60_000 % 60, of_day / 1000 % 60);
    let nanos = u32::try_from(of_day % 1000).unwrap_or(0) * 1_000_000 + nanos_of_milli;
    let day = i32::try_from(days).map_or_else(|_| days.to_string(), date);
    if legacy {
        let mut text = format!("{day}T{hour:02}:{minute:02}");
        if second != 0 || nanos != 0 {
            text.push_str(&format!(":{second:02}"));
        }
        if nanos != 0 {
            let fraction = format!("{nanos:09}");
            let digits = if nanos.is_multiple_of(1_000_000) {
                3
            } else if nanos.is_multiple_of(1000) {
                6
            } else {
                9
            };
            text.push('.');
            text.push_str(&fraction[..digits]);
        }
        text
    } else {
        let mut fraction = format!("{nanos:09}");
        let keep = usize::try_from(precision).unwrap_or(9);
        while fraction.len() > keep && fraction.ends_with('0') {
            fraction.pop();
        }
        let base = format!("{day} {hour:02}:{minute:02}:{second:02}");
        if fraction.is_empty() {
            base
        } else {
            format!("{base}.{fraction}")
        }
    }
}

/// Precision and scale of `decimal(p,s)` (`decimal` alone is Paimon's `decimal(10,0)`).
fn decimal_shape(data_type: &str) -> std::result::Result<(u32, u32), String> {
    let Some(open) = data_type.find('(') else {
        return Ok((10, 0));
    };
    let inner = data_type[open + 1..]
        .split(')')
        .next()
        .ok_or_else(|| format!("malformed type {data_type}"))?;
    let mut parts = inner.split(',').map(|p| p.trim().parse::<u32>());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(p)), Some(Ok(s)), None) if (1..=38).contains(&p) && s <= p => Ok((p, s)),
        (Some(Ok(p)), None, None) if (1..=38).contains(&p) => Ok((p, 0)),
        _ => Err(format!("malformed type {data_type}")),
    }
}

/// A big-endian two's complement integer of at most 16 bytes.
fn big_endian_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(full))
}

/// `unscaled × 10^-scale` in plain notation with exactly `scale` fraction digits, as Java's
/// `BigDecimal.toPlainString` (and Paimon's partition names) spell it: `-0.75`, `12.50`, `7`.
fn plain_decimal(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = usize::try_from(scale).unwrap_or(usize::MAX);
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// `YYYY-MM-DD` of a day number since 1970-01-01 (proleptic Gregorian).
fn date(days: i32) -> String {
    // Howard Hinnant's civil_from_days.
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn partition_rows_written_by_pypaimon_decode() {
        // Taken from the fixture's manifests (tests/fixtures/paimon).
        let long_string =
            hex("0000000100000000000000000a00000010000000323032342d30312d3031000000000000");
        assert_eq!(
            decode_partition(&long_string, &["string".to_owned()], true),
            Ok(vec![Some("2024-01-01".to_owned())])
        );
        let int_and_short = hex("000000020000000000000000e7070000000000006100000000000081");
        let types = ["int".to_owned(), "string".to_owned()];
        assert_eq!(
            decode_partition(&int_and_short, &types, true),
            Ok(vec![Some("2023".to_owned()), Some("a".to_owned())])
        );
        let with_null = hex("000000020002000000000000e8070000000000000000000000000000");
        assert_eq!(
            decode_partition(&with_null, &types, true),
            Ok(vec![Some("2024".to_owned()), None])
        );
    }

    #[test]
    fn decimals_and_dates_are_spelled_as_paimon_names_directories() {
        // decimal(6,2) -0.75 (compact: the unscaled long in the slot) and a date, day 19723.
        let mut row = hex("00000002000000000000000000000000");
        row.truncate(4 + 8);
        row.extend_from_slice(&19_723i64.to_le_bytes());
        row.extend_from_slice(&(-75i64).to_le_bytes());
        let types = ["date".to_owned(), "decimal(6, 2)".to_owned()];
        assert_eq!(
            decode_partition(&row, &types, true),
            Ok(vec![Some("19723".to_owned()), Some("-0.75".to_owned())])
        );
        assert_eq!(
            decode_partition(&row, &types, false),
            Ok(vec![
                Some("2024-01-01".to_owned()),
                Some("-0.75".to_owned())
            ])
        );
        // decimal(20,3): 16 bytes reserved in the variable part, the slot is offset << 32 | len.
        let mut wide = vec![0, 0, 0, 1];
        wide.extend_from_slice(&[0; 8]);
        wide.extend_from_slice(&((16u64 << 32) | 9).to_le_bytes());
        let unscaled: i128 = -12_345_678_901_234_567_890;
        wide.extend_from_slice(&unscaled.to_be_bytes()[7..]);
        wide.extend_from_slice(&[0; 7]);
        assert_eq!(
            decode_partition(&wide, &["decimal(20,3)".to_owned()], true),
            Ok(vec![Some("-12345678901234567.890".to_owned())])
        );
    }

    #[test]
    fn timestamps_are_spelled_as_java_and_paimon_spell_them() {
        let noon = 1_704_110_400_000; // 2024-01-01T12:00:00Z
        let cases = [
            (noon, 0, true, 6, "2024-01-01T12:00"),
            (noon + 30_000, 0, true, 6, "2024-01-01T12:00:30"),
            (noon + 30_123, 0, true, 6, "2024-01-01T12:00:30.123"),
            (
                noon + 30_123,
                456_000,
                true,
                6,
                "2024-01-01T12:00:30.123456",
            ),
            (
                noon + 30_123,
                456_789,
                true,
                9,
                "2024-01-01T12:00:30.123456789",
            ),
            (noon + 5, 0, true, 3, "2024-01-01T12:00:00.005"),
            (-1, 0, true, 3, "1969-12-31T23:59:59.999"),
            (noon, 0, false, 3, "2024-01-01 12:00:00.000"),
            (noon, 0, false, 0, "2024-01-01 12:00:00"),
            (noon + 30_120, 0, false, 3, "2024-01-01 12:00:30.120"),
            (
                noon + 30_123,
                400_000,
                false,
                6,
                "2024-01-01 12:00:30.123400",
            ),
            (
                noon + 30_123,
                456_789,
                false,
                9,
                "2024-01-01 12:00:30.123456789",
            ),
        ];
        for (millis, nanos, legacy, precision, text) in cases {
            assert_eq!(timestamp(millis, nanos, legacy, precision), text);
        }
        assert_eq!(timestamp_precision("timestamp"), Ok(6));
        assert_eq!(timestamp_precision("timestamp(3)"), Ok(3));
        assert!(timestamp_precision("timestamp(12)").is_err());
        // With a local time zone, non-legacy names depend on the writer's zone: refused.
        let mut row = vec![0, 0, 0, 1];
        row.extend_from_slice(&[0; 8]);
        row.extend_from_slice(&noon.to_le_bytes());
        let ltz = ["timestamp(3) with local time zone".to_owned()];
        assert_eq!(
            decode_partition(&row, &ltz, true),
            Ok(vec![Some("2024-01-01T12:00".to_owned())])
        );
        assert!(decode_partition(&row, &ltz, false).is_err());
    }

    #[test]
    fn floats_are_spelled_as_java_spells_them() {
        let double = |v: f64| java_float_text(v, &format!("{v:e}"));
        let float = |v: f32| java_float_text(f64::from(v), &format!("{v:e}"));
        let cases = [
            (double(1.0), "1.0"),
            (double(0.5), "0.5"),
            (double(-2.0), "-2.0"),
            (double(0.0), "0.0"),
            (double(-0.0), "-0.0"),
            (double(123.25), "123.25"),
            (double(0.001), "0.001"),
            (double(9_999_999.0), "9999999.0"),
            (double(1e7), "1.0E7"),
            (double(1e10), "1.0E10"),
            (double(1.5e-5), "1.5E-5"),
            (double(-1.25e-4), "-1.25E-4"),
            (double(1e300), "1.0E300"),
            (double(f64::NAN), "NaN"),
            (double(f64::NEG_INFINITY), "-Infinity"),
            (float(0.1), "0.1"),
            (float(3.4e38), "3.4E38"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn plain_decimals_keep_their_scale() {
        let cases = [
            (1250, 2, "12.50"),
            (-75, 2, "-0.75"),
            (5, 3, "0.005"),
            (-5, 3, "-0.005"),
            (0, 2, "0.00"),
            (7, 0, "7"),
            (-7, 0, "-7"),
            (i128::MAX, 38, "1.70141183460469231731687303715884105727"),
        ];
        for (unscaled, scale, text) in cases {
            assert_eq!(
                plain_decimal(unscaled, scale),
                text,
                "{unscaled} scale {scale}"
            );
        }
        assert_eq!(decimal_shape("decimal"), Ok((10, 0)));
        assert_eq!(decimal_shape("decimal(6, 2)"), Ok((6, 2)));
        assert!(decimal_shape("decimal(2, 6)").is_err());
        assert!(decimal_shape("decimal(x)").is_err());
        assert_eq!(big_endian_i128(&[0xff, 0xb5]), Some(-75));
        assert_eq!(big_endian_i128(&[0x04, 0xe2]), Some(1250));
        assert_eq!(big_endian_i128(&[]), None);
        assert_eq!(big_endian_i128(&[0; 17]), None);
    }

    #[test]
    fn malformed_rows_are_errors_not_guesses() {
        assert!(decode_partition(&[0, 0], &["string".to_owned()], true).is_err());
        let one = hex("000000010000000000000000e707000000000000");
        assert!(decode_partition(&one, &["int".to_owned(), "int".to_owned()], true).is_err());
        assert!(decode_partition(&one, &["time".to_owned()], true).is_err());
        let outside = hex("0000000100000000000000000a000000ff000000");
        assert!(decode_partition(&outside, &["string".to_owned()], true).is_err());
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(date(-1), "1969-12-31");
    }

    #[test]
    fn column_types_lose_not_null_and_keep_nesting() {
        let field = |t: serde_json::Value| FieldFile {
            name: "c".to_owned(),
            data_type: t,
            description: None,
        };
        assert_eq!(
            field(serde_json::json!("BIGINT NOT NULL")).type_and_nullability(),
            ("bigint".to_owned(), false)
        );
        let array = serde_json::json!({"type": "ARRAY", "element": "INT"});
        assert_eq!(
            field(array).type_and_nullability(),
            ("array<int>".to_owned(), true)
        );
    }
}
