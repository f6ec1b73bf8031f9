//! Statements end to end through a session: DDL with the spec's messages, SHOW, and SELECTs on
//! DataFusion over the statistics table.

use std::sync::Arc;

use metacache_cache::ManagedCache;
use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{CacheId, CatalogManager, ManagerOptions, MemoryStore, TableKey};
use metacache_estimate::{EstimateSize, Sizer};
use metacache_sql::system::STATISTICS;
use metacache_sql::{ColumnType, Output, Session, SqlEngine, Value};

struct Blob(u64);

impl EstimateSize for Blob {
    fn estimate_size(&self, sizer: &mut Sizer) {
        sizer.add(self.0 as usize);
    }
}

fn engine() -> (Arc<CatalogManager>, Session) {
    let mut options = ManagerOptions::new(Arc::new(MemoryStore::new()));
    options.node_memory = Some(NodeMemory {
        bytes: 1 << 30,
        source: MemorySource::Configured,
    });
    let manager = Arc::new(CatalogManager::open(options).expect("opens"));
    let session = SqlEngine::new(Arc::clone(&manager), "fe1")
        .session("root", 7)
        .expect("session");
    (manager, session)
}

fn session() -> Session {
    engine().1
}

async fn run(session: &mut Session, sql: &str) -> Output {
    session
        .execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn rows(session: &mut Session, sql: &str) -> (Vec<String>, Vec<Vec<Value>>) {
    match run(session, sql).await {
        Output::Rows { columns, rows } => (columns.into_iter().map(|c| c.name).collect(), rows),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

async fn error(session: &mut Session, sql: &str) -> String {
    session.execute(sql).await.expect_err(sql).to_string()
}

async fn with_two_catalogs() -> Session {
    two_catalogs().await.1
}

async fn two_catalogs() -> (Arc<CatalogManager>, Session) {
    let (manager, mut s) = engine();
    run(&mut s, "CREATE CATALOG hive_prod COMMENT 'prod' PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1GB', 'password'='hunter2')").await;
    run(&mut s, "CREATE CATALOG ice PROPERTIES ('type'='iceberg')").await;
    (manager, s)
}

#[tokio::test]
async fn select_star_shows_the_28_columns_in_order() {
    let mut s = with_two_catalogs().await;
    let output = run(
        &mut s,
        "SELECT * FROM information_schema.catalog_meta_cache_statistics",
    )
    .await;
    let Output::Rows { columns, rows } = output else {
        panic!("rows")
    };
    let expected: Vec<(&str, ColumnType)> = STATISTICS.to_vec();
    let got: Vec<(&str, ColumnType)> = columns
        .iter()
        .map(|c| (c.name.as_str(), c.column_type))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(rows.len(), 19 + 9, "hms: 19 caches, iceberg: 9");
    assert!(rows.iter().all(|r| r[0] == Value::from("fe1")));
}

#[tokio::test]
async fn names_match_case_insensitively_and_headers_show_as_written() {
    let mut s = with_two_catalogs().await;
    let (headers, found) = rows(
        &mut s,
        "select Catalog_Name, ENGINE_name, count(*) AS Caches, SUM(max_weight) from INFORMATION_SCHEMA.Catalog_Meta_Cache_Statistics \
         where catalog_name = 'hive_prod' group by catalog_name, engine_name having count(*) > 1 order by ENGINE_NAME limit 2",
    )
    .await;
    assert_eq!(
        headers,
        ["Catalog_Name", "ENGINE_name", "Caches", "SUM(max_weight)"]
    );
    assert_eq!(
        found,
        vec![
            vec![
                "hive_prod".into(),
                "hive".into(),
                Value::Int(6),
                Value::Int(6 << 30)
            ],
            vec![
                "hive_prod".into(),
                "hudi".into(),
                Value::Int(4),
                Value::Int(4 << 30)
            ],
        ]
    );
    let (headers, _) = rows(&mut s, "select s.*, c.catalog_type from catalog_meta_cache_statistics s join catalogs c using (catalog_name)").await;
    assert_eq!(headers.len(), 29);
    assert_eq!(&headers[..2], ["FE_HOST", "CATALOG_NAME"]);
    assert_eq!(headers[28], "catalog_type");
}

#[tokio::test]
async fn real_engine_features_work() {
    let mut s = with_two_catalogs().await;
    let (_, top) = rows(
        &mut s,
        "WITH t AS (SELECT catalog_name, entry_name, rank() OVER (PARTITION BY catalog_name ORDER BY capacity DESC, entry_name) AS r \
         FROM catalog_meta_cache_statistics) SELECT catalog_name, entry_name FROM t WHERE r = 1 ORDER BY 1",
    )
    .await;
    // hive and hudi both have a hive-partition cache of capacity 100000: a tie.
    assert_eq!(
        top,
        vec![
            vec!["hive_prod".into(), "hive-partition".into()],
            vec!["hive_prod".into(), "hive-partition".into()],
            vec!["ice".into(), "iceberg-manifest".into()],
        ]
    );
    let (_, upper) = rows(&mut s, "SELECT upper(catalog_name), round(avg(hit_rate), 2) FROM catalog_meta_cache_statistics GROUP BY 1 ORDER BY 1").await;
    assert_eq!(upper[0], vec!["HIVE_PROD".into(), Value::Double(0.0)]);
}

#[tokio::test]
async fn statistics_follow_the_caches() {
    let (manager, mut s) = two_catalogs().await;
    let catalog = manager.catalog("hive_prod").expect("catalog");
    let cache: ManagedCache<TableKey, Blob> = catalog
        .cache(&CacheId::new("hive", "hive-file"))
        .expect("declared")
        .expect("built");
    cache
        .get_or_load(TableKey::new("db", "t"), || async {
            Ok::<_, std::io::Error>(Blob(1000))
        })
        .await
        .expect("load");
    cache.get(&TableKey::new("db", "t"));
    let (_, r) = rows(
        &mut s,
        "SELECT request_count, hit_count, miss_count, hit_rate, estimated_size, estimated_weight, max_weight, ttl_second, \
         last_load_success_time <> '' FROM catalog_meta_cache_statistics WHERE entry_name = 'hive-file' AND engine_name = 'hive'",
    )
    .await;
    assert_eq!(
        r,
        vec![vec![
            Value::Int(2),
            Value::Int(1),
            Value::Int(1),
            Value::Double(0.5),
            Value::Int(1),
            // 1,000 + the key (two String headers, two 8-byte buffers) + 512.
            Value::Int(1576),
            Value::Int(1 << 30),
            Value::Int(86_400),
            Value::Bool(true),
        ]]
    );
}

#[tokio::test]
async fn catalog_statements_answer_with_the_spec_messages() {
    let mut s = session();
    assert_eq!(
        error(
            &mut s,
            "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1.5GB')"
        )
        .await,
        "Invalid cache weight for 'meta.cache.max-weight': 1.5GB"
    );
    assert_eq!(
        error(&mut s, "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1GB', 'meta.cache.hive.file.max-weight'='2GB')").await,
        "meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight"
    );
    assert_eq!(
        error(
            &mut s,
            "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.hive.nosuch.max-weight'='1GB')"
        )
        .await,
        "Unknown metadata cache weight property: meta.cache.hive.nosuch.max-weight"
    );
    run(&mut s, "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.max-weight'='4GB', 'jdbc.password'='hunter2')").await;
    assert_eq!(
        error(
            &mut s,
            "ALTER CATALOG c SET PROPERTIES ('meta.cache.max-weight'='0')"
        )
        .await,
        "meta.cache.max-weight must be positive"
    );
    let (_, create) = rows(&mut s, "SHOW CREATE CATALOG c").await;
    let Value::Text(text) = &create[0][1] else {
        panic!("text")
    };
    assert!(
        text.contains("\"jdbc.password\" = \"*XXX\"") && !text.contains("hunter2"),
        "{text}"
    );
    let (headers, catalogs) = rows(&mut s, "SHOW CATALOGS").await;
    assert_eq!(
        headers,
        [
            "CatalogId",
            "CatalogName",
            "Type",
            "IsCurrent",
            "CreateTime",
            "LastUpdateTime",
            "Comment"
        ]
    );
    assert_eq!(catalogs.len(), 2);
    assert_eq!(
        error(&mut s, "DROP CATALOG nosuch").await,
        "Unknown catalog 'nosuch'"
    );
    assert!(matches!(
        run(&mut s, "DROP CATALOG IF EXISTS nosuch").await,
        Output::Done { affected: 0, .. }
    ));
    assert!(matches!(
        run(&mut s, "REFRESH CATALOG c").await,
        Output::Done { .. }
    ));
    assert_eq!(
        error(&mut s, "REFRESH DATABASE db").await,
        "No database selected: REFRESH DATABASE <catalog>.<database>, or SWITCH <catalog> first"
    );
    run(&mut s, "SWITCH c").await;
    run(&mut s, "REFRESH DATABASE db").await;
    assert!(matches!(
        run(&mut s, "DROP CATALOG c").await,
        Output::Done { affected: 1, .. }
    ));
}

#[tokio::test]
async fn warnings_of_the_last_statement() {
    let mut s = session();
    run(
        &mut s,
        "CREATE CATALOG c PROPERTIES ('type'='hms', 'meta.cache.vector.segments.enable'='true')",
    )
    .await;
    let (_, warnings) = rows(&mut s, "SHOW WARNINGS").await;
    assert_eq!(warnings.len(), 1);
    run(&mut s, "SELECT 1").await;
    assert!(rows(&mut s, "SHOW WARNINGS").await.1.is_empty());
}

#[tokio::test]
async fn frontend_config_through_sql() {
    let mut s = session();
    run(
        &mut s,
        "ADMIN SET FRONTEND CONFIG ('external_meta_cache_max_weight' = '10%')",
    )
    .await;
    let (headers, config) = rows(
        &mut s,
        "ADMIN SHOW FRONTEND CONFIG LIKE 'external_meta_cache_max%'",
    )
    .await;
    assert_eq!(
        headers,
        ["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"]
    );
    assert_eq!(config[0][1], Value::from("10%"));
    assert_eq!(config[1][1], Value::from(((1u64 << 30) / 10).to_string()));
    assert_eq!(
        error(
            &mut s,
            "ADMIN SET FRONTEND CONFIG ('external_meta_cache_max_weight' = '0%')"
        )
        .await,
        "Invalid cache weight for 'external_meta_cache_max_weight': 0%"
    );
    assert_eq!(
        error(&mut s, "ADMIN SET FRONTEND CONFIG ('a' = '1', 'b' = '2')").await,
        "ADMIN SET FRONTEND CONFIG takes one key at a time, not 2"
    );
}

#[tokio::test]
async fn what_clients_send_on_connect() {
    let mut s = session();
    let (_, v) = rows(&mut s, "select @@version_comment limit 1").await;
    assert_eq!(
        v[0][0],
        Value::from(metacache_sql::variables::version_comment())
    );
    let (_, v) = rows(&mut s, "SELECT @@session.auto_increment_increment, @@max_allowed_packet, DATABASE(), CONNECTION_ID()").await;
    assert_eq!(
        v[0],
        vec![
            Value::Int(1),
            Value::Int(16 << 20),
            Value::Null,
            Value::Int(7)
        ]
    );
    run(&mut s, "SET NAMES utf8mb4").await;
    run(&mut s, "USE information_schema").await;
    let (_, v) = rows(&mut s, "SELECT DATABASE()").await;
    assert_eq!(v[0][0], Value::from("information_schema"));
    let (_, dbs) = rows(&mut s, "SHOW DATABASES").await;
    assert_eq!(dbs, vec![vec![Value::from("information_schema")]]);
    let (_, tables) = rows(&mut s, "SHOW TABLES").await;
    assert!(tables.contains(&vec![Value::from("catalog_meta_cache_statistics")]));
    let (_, columns) = rows(&mut s, "SELECT column_name FROM information_schema.columns WHERE table_name = 'catalog_meta_cache_statistics' ORDER BY ordinal_position").await;
    assert_eq!(columns.len(), 28);
    assert_eq!(columns[27][0], Value::from("LAST_WEIGHT_REJECT_REASON"));
    let (_, desc) = rows(&mut s, "DESC catalog_meta_cache_statistics").await;
    assert_eq!(desc[0][0], Value::from("FE_HOST"));
    assert_eq!(
        error(&mut s, "USE nosuch").await,
        "Unknown database 'nosuch'"
    );
    assert_eq!(
        error(&mut s, "SELECT @@nosuch").await,
        "Unknown system variable 'nosuch'"
    );
}

#[tokio::test]
async fn select_cannot_change_or_read_anything_else() {
    let mut s = session();
    for sql in [
        "EXPLAIN CREATE TABLE t AS SELECT 1",
        "SELECT * FROM nosuch",
        "SELECT * FROM '/etc/passwd'",
    ] {
        let e = error(&mut s, sql).await;
        assert!(!e.is_empty(), "{sql}");
    }
    assert_eq!(
        error(&mut s, "SELECT * FROM nosuch").await,
        "Table 'information_schema.nosuch' doesn't exist"
    );
    assert!(
        error(&mut s, "SELEC 1")
            .await
            .starts_with("Syntax error: Expected: CREATE, ALTER")
    );
}
