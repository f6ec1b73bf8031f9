//! `information_schema.catalog_meta_cache_scopes`: one row per open scan scope (§8.2) — its
//! catalog, label, tables, leases, earliest credential expiry, calls to the source, refreshes
//! and their failures, and when it was opened, last used and expires. Counts and times only:
//! no credential, no option value.

use super::{SystemContext, format_millis, int};
use crate::output::{ColumnType, Value};

use ColumnType::{Bigint as I, String as S};

/// The columns, in order.
pub const SCOPES: &[(&str, ColumnType)] = &[
    ("FE_HOST", S),
    ("SCOPE_ID", S),
    ("CATALOG_NAME", S),
    ("LABEL", S),
    ("ENTRY_COUNT", I),
    ("LEASE_COUNT", I),
    ("EARLIEST_CREDENTIAL_EXPIRY", S),
    ("ESTIMATED_WEIGHT", I),
    ("ACCESS_COUNT", I),
    ("RESOLVE_COUNT", I),
    ("REFRESH_COUNT", I),
    ("REFRESH_FAILURE_COUNT", I),
    ("REFUSED_COUNT", I),
    ("IDLE_TIMEOUT_MS", I),
    ("CREATE_TIME", S),
    ("LAST_USED_TIME", S),
    ("EXPIRE_TIME", S),
];

/// The rows.
pub fn scope_rows(context: &SystemContext) -> Vec<Vec<Value>> {
    context
        .manager
        .scopes()
        .list()
        .into_iter()
        .map(|s| {
            vec![
                context.fe_host.as_ref().into(),
                s.scope_id.into(),
                s.catalog.into(),
                s.label.into(),
                int(u64::try_from(s.entries).unwrap_or(u64::MAX)),
                int(u64::try_from(s.leases).unwrap_or(u64::MAX)),
                s.earliest_expiry_millis
                    .map_or(Value::Null, |m| format_millis(Some(m))),
                int(s.bytes),
                int(s.accesses),
                int(s.resolutions),
                int(s.refreshes),
                int(s.refresh_failures),
                int(s.refused),
                int(s.idle_timeout_ms),
                format_millis(Some(s.created_millis)),
                format_millis(Some(s.last_used_millis)),
                format_millis(Some(s.expires_at_millis)),
            ]
        })
        .collect()
}
