//! HMS catalogs against a real Hive Metastore over Thrift (issue 16); the metastore, its
//! fixture and Spark are started by `common::hms`.

mod common;

use std::time::{Duration, Instant};

use common::hms::{Metastore, metastore_jars};
use common::*;

#[test]
fn an_hms_catalog_reads_the_metastore_through_its_caches() {
    let Some(jars) = metastore_jars() else { return };
    let (tmp, data) = data_dir();
    let metastore = Metastore::start(&jars, tmp.path());
    let warehouse = tmp.path().join("warehouse");
    metastore.fill(&warehouse, 5);
    let server = Server::start(&data, &[]);
    // Doris's own first lines: an HMS catalog with a Thrift URI and nothing else.
    server.query(&format!(
        "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}')",
        metastore.uri()
    ));
    assert_eq!(
        server.query("SHOW DATABASES FROM hms"),
        "Database\ndefault\nsales\nweb\n"
    );
    assert_eq!(
        server.query("SHOW TABLES FROM hms.sales"),
        "Tables_in_sales\ncustomers\norders\n"
    );
    let desc = server.query("DESC hms.sales.orders");
    assert!(desc.contains("\nid\tbigint\tYes\t"), "{desc}");
    assert!(
        desc.contains("\ndt\tstring\tYes\t\tNULL\tPARTITION KEY\n"),
        "{desc}"
    );
    let partitions = server.query("SHOW PARTITIONS FROM hms.sales.orders");
    assert_eq!(partitions.lines().count(), 6, "{partitions}");
    assert!(partitions.contains("dt=2024-01-03"), "{partitions}");
    assert!(server.fails("DESC hms.sales.nosuch").contains("nosuch"));

    // Planning: partitions and their files, from the locations the metastore recorded.
    let (status, files) = server.http(
        "GET",
        "/api/v1/catalogs/hms/databases/sales/tables/orders/files",
        None,
        None,
    );
    assert_eq!(status, 200, "{files}");
    let files: serde_json::Value = serde_json::from_str(&files).expect("JSON");
    assert_eq!(files["file_count"], 5, "{files}");

    // Warm: answered from the caches; the metastore was asked for the names once.
    server.query("SHOW PARTITIONS FROM hms.sales.orders");
    let view = server.cache_row("hms", "hive-partition-view", "hit_count");
    assert_ne!(view[0], "0", "a warm SHOW PARTITIONS hits: {view:?}");
    let names = server.cache_row("hms", "hive-partition-names", "miss_count");
    assert_eq!(names[0], "1", "one metastore call for the names: {names:?}");

    // A metastore that stops answering: a clear error, no hang.
    drop(metastore);
    server.query("REFRESH CATALOG hms");
    let started = Instant::now();
    let error = server.fails("SHOW TABLES FROM hms.sales");
    assert!(
        error.contains("no Hive Metastore of 'hive.metastore.uris' answered"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{error}");
}

#[test]
fn a_dead_uri_fails_over_to_the_next() {
    let Some(jars) = metastore_jars() else { return };
    let (tmp, data) = data_dir();
    let metastore = Metastore::start(&jars, tmp.path());
    metastore.fill(&tmp.path().join("warehouse"), 2);
    let server = Server::start(&data, &[]);
    let dead = format!("thrift://127.0.0.1:{}", free_port());
    server.query(&format!(
        "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='{dead},{}')",
        metastore.uri()
    ));
    assert_eq!(
        server.query("SHOW TABLES FROM hms.sales"),
        "Tables_in_sales\ncustomers\norders\n"
    );
    assert!(
        server.log_text().contains("trying the next URI"),
        "the failover is logged"
    );
    // Every URI dead: the error names each one.
    server.query(&format!(
        "CREATE CATALOG gone PROPERTIES ('type'='hms', 'hive.metastore.uris'='{dead}')"
    ));
    let error = server.fails("SHOW DATABASES FROM gone");
    assert!(error.contains(&dead), "{error}");
    // A location outside the node's allow-list is not read.
    drop(server);
    let server = Server::start(&data, &[("METACACHE_SOURCE_ALLOWED_LOCATIONS", "/nowhere")]);
    let error = server.fails("DESC hms.sales.orders");
    assert!(error.contains("source_allowed_locations"), "{error}");
}

/// Polls `check` every 100 ms until it holds; fails with `what` after `limit`.
fn wait_for(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One column of the catalog's row of `catalog_meta_cache_events`.
fn events_column(server: &Server, catalog: &str, column: &str) -> String {
    let out = server.query(&format!(
        "SELECT {column} FROM information_schema.catalog_meta_cache_events \
         WHERE catalog_name = '{catalog}'"
    ));
    out.lines().nth(1).unwrap_or_default().to_owned()
}

fn file_count(server: &Server, catalog: &str, table: &str) -> u64 {
    let (status, body) = server.http(
        "GET",
        &format!("/api/v1/catalogs/{catalog}/databases/{table}/files"),
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let files: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    files["file_count"].as_u64().expect("file_count")
}

fn number(text: &str) -> u64 {
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

#[test]
fn metastore_events_invalidate_exactly_what_they_name() {
    let Some(jars) = metastore_jars() else { return };
    let (tmp, data) = data_dir();
    let metastore = Metastore::start(&jars, tmp.path());
    metastore.fill(&tmp.path().join("warehouse"), 3);
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}', \
         'hms_events_polling_interval_ms'='200')",
        metastore.uri()
    ));
    let refused =
        server.fails("ALTER CATALOG hms SET PROPERTIES ('hms_events_polling_interval_ms'='50')");
    assert!(
        refused.contains("'hms_events_polling_interval_ms': '50'"),
        "{refused}"
    );
    assert_eq!(events_column(&server, "hms", "STATE"), "idle");
    // First use builds the connector, which starts the poller.
    server.query("SHOW DATABASES FROM hms");
    wait_for(Duration::from_secs(30), "the poller starts", || {
        events_column(&server, "hms", "STATE") == "polling"
    });
    assert_eq!(
        server
            .query("SHOW PARTITIONS FROM hms.sales.orders")
            .lines()
            .count(),
        4
    );
    assert_eq!(file_count(&server, "hms", "sales/tables/orders"), 3);
    assert!(server.query("DESC hms.sales.customers").contains("name"));
    let listed = number(&server.cache_row("hms", "hive-file", "miss_count")[0]);

    // Spark adds a partition and drops a table; nobody runs REFRESH.
    metastore.spark(
        &tmp.path().join("spark"),
        &[
            "INSERT INTO sales.orders PARTITION (dt='2024-02-01') VALUES (7, 1.5)",
            "DROP TABLE sales.customers",
        ],
    );
    wait_for(
        Duration::from_secs(30),
        "the partition Spark added appears",
        || {
            server
                .query("SHOW PARTITIONS FROM hms.sales.orders")
                .contains("dt=2024-02-01")
        },
    );
    wait_for(
        Duration::from_secs(30),
        "the dropped table disappears",
        || !server.mysql("DESC hms.sales.customers").ok,
    );
    // Exactly what the events named: one new listing, the three others still cached.
    assert_eq!(file_count(&server, "hms", "sales/tables/orders"), 4);
    let relisted = number(&server.cache_row("hms", "hive-file", "miss_count")[0]);
    assert_eq!(relisted - listed, 1, "only the new partition was listed");
    assert_eq!(events_column(&server, "hms", "GAP_RESETS"), "0");
    assert_eq!(events_column(&server, "hms", "UNAPPLIED_RESETS"), "0");
    assert!(number(&events_column(&server, "hms", "EVENTS_APPLIED")) >= 2);
    assert!(number(&events_column(&server, "hms", "PARTITIONS_INVALIDATED")) >= 1);
    assert!(number(&events_column(&server, "hms", "TABLES_INVALIDATED")) >= 1);
    assert_eq!(events_column(&server, "hms", "LAG_EVENTS"), "0");
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(
        metrics.contains("metacache_source_events_total{catalog=\"hms\",outcome=\"applied\"}"),
        "{metrics}"
    );

    // A metastore that stops answering: polls fail, are counted, and the node keeps serving.
    drop(metastore);
    wait_for(Duration::from_secs(60), "failed polls are shown", || {
        events_column(&server, "hms", "STATE") == "failing"
    });
    assert!(number(&events_column(&server, "hms", "POLL_FAILURE_COUNT")) >= 1);
    assert!(
        server
            .query("SHOW PARTITIONS FROM hms.sales.orders")
            .contains("dt=2024-02-01")
    );
    // Turning polling off stops the poller; the row stays with its history.
    server.query("ALTER CATALOG hms SET PROPERTIES ('hms_events_polling_interval_ms'='0')");
    let _ = server.mysql("SHOW DATABASES FROM hms");
    assert_eq!(events_column(&server, "hms", "STATE"), "off");
}

#[test]
fn spark_tables_and_iceberg_tables_of_the_metastore() {
    let Some(jars) = metastore_jars() else { return };
    let (tmp, data) = data_dir();
    let metastore = Metastore::start(&jars, tmp.path());
    let spark_dir = tmp.path().join("spark");
    let out = metastore.spark(
        &spark_dir,
        &[
            "CREATE DATABASE lake",
            "CREATE TABLE lake.events (id BIGINT, kind STRING) PARTITIONED BY (day STRING) STORED AS PARQUET",
            "INSERT INTO lake.events PARTITION (day='2024-01-01') VALUES (1, 'a'), (2, 'b')",
            "INSERT INTO lake.events PARTITION (day='2024-01-02') VALUES (3, NULL)",
            "ANALYZE TABLE lake.events COMPUTE STATISTICS FOR COLUMNS id, kind",
        ],
    );
    assert!(out.contains("> ANALYZE TABLE"), "{out}");
    // An Iceberg table written by pyiceberg, registered as Iceberg's HiveCatalog does.
    let iceberg = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/iceberg/warehouse");
    let mut metadata: Vec<_> = std::fs::read_dir(iceberg.join("shop/trips/metadata"))
        .expect("fixture")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    metadata.sort();
    metastore.register_iceberg("shop", "trips", metadata.last().expect("metadata"));

    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}')",
        metastore.uri()
    ));
    let desc = server.query("DESC hms.lake.events");
    assert!(desc.contains("\nkind\tstring\tYes\t"), "{desc}");
    assert!(
        desc.contains("\nday\tstring\tYes\t\tNULL\tPARTITION KEY\n"),
        "{desc}"
    );
    assert_eq!(
        server.query("SHOW PARTITIONS FROM hms.lake.events"),
        "Partition\nday=2024-01-01\nday=2024-01-02\n"
    );
    assert!(file_count(&server, "hms", "lake/tables/events") >= 2);
    // Spark's ANALYZE keeps column statistics in table parameters.
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/hms/databases/lake/tables/events/column-stats",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let stats: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(stats["columns"]["id"]["ndv"], 3, "{body}");
    assert_eq!(stats["columns"]["id"]["min"], "1", "{body}");
    assert_eq!(stats["columns"]["kind"]["null_count"], 1, "{body}");
    // Metastore column statistics (written through Thrift) come first.
    metastore.fill(&tmp.path().join("warehouse"), 2);
    let (_, body) = server.http(
        "GET",
        "/api/v1/catalogs/hms/databases/sales/tables/orders/column-stats",
        None,
        None,
    );
    assert!(body.contains("\"ndv\":999"), "{body}");

    // The Iceberg table: the metastore names the metadata, the Iceberg reader does the rest.
    let written_at = "file:///tmp/metacache-iceberg-fixture";
    for (name, kind) in [
        ("hms_ice", "'type'='hms'"),
        ("ice", "'type'='iceberg', 'iceberg.catalog.type'='hms'"),
    ] {
        server.query(&format!(
            "CREATE CATALOG {name} PROPERTIES ({kind}, 'hive.metastore.uris'='{}', \
             'warehouse'='{}', 'location.rewrite-from'='{written_at}')",
            metastore.uri(),
            iceberg.display()
        ));
        let desc = server.query(&format!("DESC {name}.shop.trips"));
        assert!(
            desc.contains("pickup\tdate\tYes\t\tNULL\tPARTITION KEY\n"),
            "{name}: {desc}"
        );
        let partitions = server.query(&format!("SHOW PARTITIONS FROM {name}.shop.trips"));
        assert_eq!(partitions.lines().count(), 5, "{name}: {partitions}");
        let table = server.cache_row(name, "iceberg-table", "miss_count");
        assert_eq!(
            table[0], "1",
            "{name}: read through the iceberg caches: {table:?}"
        );
    }
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/hms_ice/databases/shop/tables/trips/snapshots",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"current\":true"), "{body}");
}

#[test]
fn a_gap_in_the_event_log_drops_the_catalog_and_resets_the_cursor() {
    let Some(jars) = metastore_jars() else { return };
    let (tmp, data) = data_dir();
    let first = tmp.path().join("first");
    std::fs::create_dir_all(&first).expect("dir");
    let metastore = Metastore::start(&jars, &first);
    let port = metastore.port;
    // Filled twice: the second fill drops and re-creates, so the log is longer.
    metastore.fill(&first.join("warehouse"), 3);
    metastore.fill(&first.join("warehouse"), 3);
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG hms PROPERTIES ('type'='hms', 'hive.metastore.uris'='{}', \
         'hms_events_polling_interval_ms'='200')",
        metastore.uri()
    ));
    server.query("SHOW DATABASES FROM hms");
    wait_for(Duration::from_secs(30), "the poller starts", || {
        events_column(&server, "hms", "STATE") == "polling"
    });
    let cursor = number(&events_column(&server, "hms", "LAST_EVENT_ID"));
    assert!(cursor >= 10, "cursor {cursor}");
    assert_eq!(
        server
            .query("SHOW PARTITIONS FROM hms.sales.orders")
            .lines()
            .count(),
        4
    );
    // The metastore comes back at the same address from another database (a restore): its
    // log is shorter than the cursor, so events were lost.
    drop(metastore);
    let second = tmp.path().join("second");
    std::fs::create_dir_all(&second).expect("dir");
    let metastore = Metastore::start_on(&jars, &second, port);
    metastore.fill(&second.join("warehouse"), 2);
    wait_for(Duration::from_secs(30), "the gap is found", || {
        events_column(&server, "hms", "GAP_RESETS") == "1"
    });
    let reset_to = number(&events_column(&server, "hms", "LAST_EVENT_ID"));
    assert!(
        reset_to < cursor,
        "the cursor moved to the metastore's position: {reset_to}"
    );
    assert!(
        events_column(&server, "hms", "LAST_ERROR").contains("older than the cursor"),
        "the reason is shown"
    );
    // Every cache was dropped: the new metastore's two partitions, without REFRESH.
    assert_eq!(
        server.query("SHOW PARTITIONS FROM hms.sales.orders"),
        "Partition\ndt=2024-01-01\ndt=2024-01-02\n"
    );
}
