//! Parsed Iceberg metadata projected into the compact values the caches keep: the table
//! (`IcebergTable::from_metadata`), a manifest (`ManifestValue::from_manifest`) and the
//! partitions of a snapshot aggregated from its manifests.

use super::*;

impl IcebergTable {
    /// The projection of parsed table metadata read from `metadata_location`.
    pub fn from_metadata(metadata_location: String, m: &TableMetadata) -> IcebergTable {
        let schema = m.current_schema();
        let columns: Vec<ColumnInfo> = schema
            .as_struct()
            .fields()
            .iter()
            .map(|f| ColumnInfo {
                name: f.name.clone(),
                data_type: f.field_type.to_string(),
                nullable: !f.required,
                comment: f.doc.clone().unwrap_or_default(),
            })
            .collect();
        let column_name = |id: i32| {
            m.schemas_iter()
                .find_map(|s| s.field_by_id(id).map(|f| f.name.clone()))
                .unwrap_or_default()
        };
        let mut specs: Vec<SpecInfo> = m
            .partition_specs_iter()
            .map(|spec| SpecInfo {
                spec_id: spec.spec_id(),
                fields: spec
                    .fields()
                    .iter()
                    .map(|f| PartitionFieldInfo {
                        name: f.name.clone(),
                        transform: f.transform.to_string(),
                        source_column: column_name(f.source_id),
                    })
                    .collect(),
            })
            .collect();
        specs.sort_by_key(|s| s.spec_id);
        let mut snapshots: Vec<SnapshotEntry> = m
            .snapshots()
            .map(|s| SnapshotEntry {
                id: s.snapshot_id(),
                parent_id: s.parent_snapshot_id(),
                timestamp_millis: s.timestamp_ms(),
                operation: s.summary().operation.as_str().to_owned(),
                manifest_list: s.manifest_list().to_owned(),
            })
            .collect();
        snapshots.sort_by_key(|s| (s.timestamp_millis, s.id));
        IcebergTable {
            metadata_location,
            location: m.location().to_owned(),
            format_version: match m.format_version() {
                FormatVersion::V1 => 1,
                FormatVersion::V2 => 2,
                FormatVersion::V3 => 3,
            },
            current_snapshot_id: m.current_snapshot_id(),
            columns,
            default_spec_id: m.default_partition_spec().spec_id(),
            specs,
            snapshots,
            properties: m
                .properties()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        }
    }
}

impl ManifestValue {
    /// The projection of a parsed manifest.
    pub fn from_manifest(manifest: &Manifest) -> ManifestValue {
        let metadata = manifest.metadata();
        let spec = metadata.partition_spec();
        let schema = metadata.schema();
        let entries = manifest
            .entries()
            .iter()
            .map(|entry| {
                let file = entry.data_file();
                let partition: &Struct = file.partition();
                let values: Vec<Option<String>> = spec
                    .fields()
                    .iter()
                    .zip(partition.iter())
                    .map(|(field, literal)| {
                        let literal = literal?;
                        let source = schema.field_by_id(field.source_id)?;
                        let result_type = field.transform.result_type(&source.field_type).ok()?;
                        Some(field.transform.to_human_string(&result_type, Some(literal)))
                    })
                    .collect();
                let name = if spec.fields().is_empty() {
                    String::new()
                } else {
                    spec.partition_to_path(partition, Arc::clone(schema))
                };
                ManifestEntryInfo {
                    alive: entry.is_alive(),
                    content: match file.content_type() {
                        DataContentType::Data => 0,
                        DataContentType::PositionDeletes => 1,
                        DataContentType::EqualityDeletes => 2,
                    },
                    path: file.file_path().to_owned(),
                    size: file.file_size_in_bytes(),
                    record_count: file.record_count(),
                    partition: name,
                    partition_values: values,
                    equality_ids: file.equality_ids().unwrap_or_default(),
                    snapshot_id: entry.snapshot_id(),
                }
            })
            .collect();
        ManifestValue {
            spec_id: spec.spec_id(),
            entries,
        }
    }
}

pub(super) fn aggregate_partitions(manifests: &[Cached<ManifestValue>]) -> SnapshotPartitions {
    let mut by_name: BTreeMap<&str, IcebergPartition> = BTreeMap::new();
    for manifest in manifests {
        for e in manifest
            .entries
            .iter()
            .filter(|e| e.alive && e.content == 0)
        {
            let p = by_name
                .entry(&e.partition)
                .or_insert_with(|| IcebergPartition {
                    name: e.partition.clone(),
                    values: e.partition_values.clone(),
                    spec_id: manifest.spec_id,
                    file_count: 0,
                    record_count: 0,
                    total_bytes: 0,
                    last_updated_snapshot_id: None,
                });
            p.file_count += 1;
            p.record_count += e.record_count;
            p.total_bytes += e.size;
            p.last_updated_snapshot_id = p.last_updated_snapshot_id.max(e.snapshot_id);
        }
    }
    let mut partitions: Vec<IcebergPartition> = by_name.into_values().collect();
    partitions.shrink_to_fit();
    SnapshotPartitions {
        partitions,
        manifests: Vec::new(),
    }
}
