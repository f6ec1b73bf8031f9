//! Thrift metastore objects turned into ours: locations, columns, formats and column
//! statistics (the metastore's own, or those Spark's `ANALYZE` keeps in table parameters).

use hive_metastore::{ColumnStatisticsData, FieldSchema};
use pilota::FastStr;

use super::values::{ColumnStatistics, HiveTable};
use crate::ColumnInfo;

/// Hadoop spells local locations `file:/dir`; the stores want `file:///dir`.
pub(super) fn normalize(location: &str) -> String {
    match location.strip_prefix("file:") {
        Some(rest) if !rest.starts_with("//") => format!("file://{rest}"),
        _ => location.to_owned(),
    }
}

/// Where the metastore recorded a partition (`""` when it recorded none).
pub(super) fn location_of(partition: hive_metastore::Partition) -> String {
    partition
        .sd
        .and_then(|sd| sd.location)
        .map(|l| l.to_string())
        .unwrap_or_default()
}

pub(super) fn strings(values: Vec<FastStr>) -> Vec<String> {
    values.into_iter().map(|v| v.to_string()).collect()
}

pub(super) fn column(field: &FieldSchema) -> ColumnInfo {
    ColumnInfo {
        name: field.name.as_deref().unwrap_or_default().to_owned(),
        data_type: field.r#type.as_deref().unwrap_or_default().to_owned(),
        nullable: true,
        comment: field.comment.as_deref().unwrap_or_default().to_owned(),
    }
}

/// The data format of an input format class (`…MapredParquetInputFormat` → `parquet`; Hudi's
/// input formats → `hudi`).
pub(super) fn format_of(input_format: &str) -> String {
    let lower = input_format.to_ascii_lowercase();
    // `org.apache.hudi.hadoop.HoodieParquetInputFormat` and its realtime twin: a Hudi table.
    if lower.contains("hoodie") || lower.contains(".hudi.") {
        return "hudi".to_owned();
    }
    ["parquet", "orc", "avro", "rcfile", "sequencefile", "json"]
        .into_iter()
        .find(|f| lower.contains(f))
        .unwrap_or(if lower.contains("text") {
            "textfile"
        } else {
            "unknown"
        })
        .to_owned()
}

/// The statistics Spark's `ANALYZE TABLE … FOR COLUMNS` wrote for `column` into the table's
/// parameters (`spark.sql.statistics.colStats.<column>.<stat>`), if any.
pub(super) fn spark_statistics(table: &HiveTable, column: &str) -> Option<ColumnStatistics> {
    let prefix = format!("spark.sql.statistics.colStats.{column}.");
    let stat = |name: &str| {
        table
            .properties
            .get(&format!("{prefix}{name}"))
            .map(String::as_str)
    };
    let count = |name: &str| stat(name).and_then(|v| v.trim().parse::<u64>().ok());
    stat("version")?;
    Some(ColumnStatistics {
        ndv: count("distinctCount"),
        null_count: count("nullCount"),
        min: stat("min").map(str::to_owned),
        max: stat("max").map(str::to_owned),
        avg_size: stat("avgLen").and_then(|v| v.trim().parse::<f64>().ok()),
        max_size: count("maxLen"),
    })
}

pub(super) fn column_statistics(data: &ColumnStatisticsData) -> ColumnStatistics {
    let count = |v: i64| u64::try_from(v).ok();
    match data {
        ColumnStatisticsData::LongStats(s) => ColumnStatistics {
            ndv: count(s.num_d_vs),
            null_count: count(s.num_nulls),
            min: s.low_value.map(|v| v.to_string()),
            max: s.high_value.map(|v| v.to_string()),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::DoubleStats(s) => ColumnStatistics {
            ndv: count(s.num_d_vs),
            null_count: count(s.num_nulls),
            min: s.low_value.map(|v| v.to_string()),
            max: s.high_value.map(|v| v.to_string()),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::StringStats(s) => ColumnStatistics {
            ndv: count(s.num_d_vs),
            null_count: count(s.num_nulls),
            avg_size: Some(s.avg_col_len),
            max_size: count(s.max_col_len),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::BooleanStats(s) => ColumnStatistics {
            null_count: count(s.num_nulls),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::BinaryStats(s) => ColumnStatistics {
            null_count: count(s.num_nulls),
            avg_size: Some(s.avg_col_len),
            max_size: count(s.max_col_len),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::DecimalStats(s) => ColumnStatistics {
            ndv: count(s.num_d_vs),
            null_count: count(s.num_nulls),
            ..ColumnStatistics::default()
        },
        ColumnStatisticsData::DateStats(s) => ColumnStatistics {
            ndv: count(s.num_d_vs),
            null_count: count(s.num_nulls),
            ..ColumnStatistics::default()
        },
        #[allow(unreachable_patterns)]
        _ => ColumnStatistics::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_local_locations_become_file_urls() {
        assert_eq!(normalize("file:/tmp/w/t"), "file:///tmp/w/t");
        assert_eq!(normalize("file:///tmp/w/t"), "file:///tmp/w/t");
        assert_eq!(normalize("s3://b/w/t"), "s3://b/w/t");
    }

    #[test]
    fn spark_column_statistics_come_from_table_parameters() {
        let properties = [
            ("spark.sql.statistics.colStats.id.version", "2"),
            ("spark.sql.statistics.colStats.id.distinctCount", "2"),
            ("spark.sql.statistics.colStats.id.nullCount", "0"),
            ("spark.sql.statistics.colStats.id.min", "1"),
            ("spark.sql.statistics.colStats.id.max", "2"),
            ("spark.sql.statistics.colStats.id.avgLen", "8"),
            ("spark.sql.statistics.colStats.id.maxLen", "8"),
        ];
        let table = HiveTable {
            database: "lake".to_owned(),
            name: "events".to_owned(),
            location: String::new(),
            format: "parquet".to_owned(),
            comment: String::new(),
            columns: Vec::new(),
            partition_keys: Vec::new(),
            properties: properties
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        let id = spark_statistics(&table, "id");
        assert_eq!(
            id,
            Some(ColumnStatistics {
                ndv: Some(2),
                null_count: Some(0),
                min: Some("1".to_owned()),
                max: Some("2".to_owned()),
                avg_size: Some(8.0),
                max_size: Some(8),
            })
        );
        assert_eq!(spark_statistics(&table, "kind"), None);
    }

    #[test]
    fn input_formats_name_the_data_format() {
        assert_eq!(
            format_of("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"),
            "parquet"
        );
        assert_eq!(
            format_of("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"),
            "orc"
        );
        assert_eq!(
            format_of("org.apache.hadoop.mapred.TextInputFormat"),
            "textfile"
        );
        assert_eq!(
            format_of("org.apache.hudi.hadoop.HoodieParquetInputFormat"),
            "hudi"
        );
    }
}
