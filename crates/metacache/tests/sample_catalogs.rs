//! The sample catalogs end to end: the real binary's first start creates catalogs `sample`,
//! `sample_iceberg`, `sample_paimon` and `sample_lance`; the real mysql client and HTTP read their metadata through the
//! caches, and the statistics table shows loads, hits, single flight, REFRESH and rejections.

mod common;

use std::path::Path;
use std::thread;

use common::{Server, data_dir};
use serde_json::Value;

const SAMPLE: &[(&str, &str)] = &[("METACACHE_SAMPLE_CATALOG", "true")];

/// `entry_name → (requests, hits, misses, loads, weight, rejects, reason)` of catalog `sample`
/// (or `sample_iceberg` for the iceberg entries).
fn stats(server: &Server, entry: &str) -> Vec<String> {
    let catalog = if entry.starts_with("iceberg") {
        "sample_iceberg"
    } else {
        "sample"
    };
    let out = server.query(&format!(
        "SELECT request_count, hit_count, miss_count, load_success_count, estimated_weight, \
         weight_reject_count, last_weight_reject_reason \
         FROM information_schema.catalog_meta_cache_statistics \
         WHERE catalog_name = '{catalog}' AND entry_name = '{entry}'"
    ));
    let row = out
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("no row for {entry}: {out}"));
    row.split('\t').map(str::to_owned).collect()
}

fn number(field: &str) -> u64 {
    field
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {field}"))
}

#[test]
fn first_start_serves_the_sample_warehouse_through_the_caches() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let catalogs = server.query("SHOW CATALOGS");
    assert!(catalogs.contains("sample\thms"), "{catalogs}");
    assert!(catalogs.contains("sample_iceberg\ticeberg"), "{catalogs}");
    assert!(catalogs.contains("sample_paimon\tpaimon"), "{catalogs}");
    assert!(catalogs.contains("sample_lance\tlance"), "{catalogs}");
    assert_eq!(
        server.query("SHOW DATABASES FROM sample"),
        "Database\nsales\nweb\n"
    );
    assert_eq!(
        server.query("SHOW TABLES FROM sample.sales"),
        "Tables_in_sales\ncustomers\norders\n"
    );
    let desc = server.query("DESC sample.sales.orders");
    assert!(
        desc.starts_with("Field\tType\tNull\tKey\tDefault\tExtra\n"),
        "{desc}"
    );
    assert!(desc.contains("order_id\tbigint\tNo\t\tNULL\t\n"), "{desc}");
    assert!(
        desc.contains("dt\tstring\tYes\t\tNULL\tPARTITION KEY\n"),
        "{desc}"
    );
    let partitions = server.query("SHOW PARTITIONS FROM sample.sales.orders");
    assert_eq!(partitions.lines().count(), 7, "{partitions}");
    assert!(partitions.starts_with("Partition\ndt=2024-01-01/region=eu\n"));
    assert_eq!(
        server
            .query("SHOW PARTITIONS FROM sample.sales.orders LIKE '%region=us'")
            .lines()
            .count(),
        4
    );
    // USE makes names relative to the session's catalog and database.
    assert!(
        server
            .query("USE sample.web; SHOW TABLES; DESC events")
            .contains("hour\tstring\tYes\t\tNULL\tPARTITION KEY")
    );

    let view = stats(&server, "hive-partition-view");
    assert_eq!(
        (number(&view[2]), number(&view[3])),
        (1, 1),
        "one cold load: {view:?}"
    );
    assert!(
        number(&view[1]) >= 1,
        "the second SHOW PARTITIONS hit: {view:?}"
    );
    assert!(number(&view[4]) > 0, "the view is charged: {view:?}");
    let schema = stats(&server, "schema");
    assert!(
        number(&schema[3]) >= 2,
        "orders and events schemas loaded: {schema:?}"
    );

    // Errors are MySQL errors with the right codes.
    assert_eq!(
        server.fails("DESC sample.sales.nope"),
        "ERROR 1146 (42S02) at line 1: Table 'sales.nope' doesn't exist"
    );
    assert_eq!(
        server.fails("SHOW TABLES FROM sample.nope"),
        "ERROR 1049 (42000) at line 1: Unknown database 'nope'"
    );
    server.query("CREATE CATALOG bare PROPERTIES ('type' = 'hms')");
    assert!(
        server
            .fails("SHOW DATABASES FROM bare")
            .contains("has no metadata source")
    );
}

#[test]
fn http_serves_planning_metadata_as_json() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let get = |path: &str| -> (u16, Value) {
        let (status, body) = server.http("GET", path, None, None);
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    };
    let (status, dbs) = get("/api/v1/catalogs/sample/databases");
    assert_eq!(status, 200);
    assert_eq!(dbs["databases"], serde_json::json!(["sales", "web"]));
    let (_, tables) = get("/api/v1/catalogs/sample/databases/sales/tables");
    assert_eq!(tables["tables"], serde_json::json!(["customers", "orders"]));
    let base = "/api/v1/catalogs/sample/databases/sales/tables/orders";
    let (_, table) = get(base);
    assert_eq!(table["format"], "parquet");
    assert_eq!(table["partition_keys"], serde_json::json!(["dt", "region"]));
    let (_, schema) = get(&format!("{base}/schema"));
    assert_eq!(schema["columns"][2]["type"], "decimal(10,2)");
    let (_, partitions) = get(&format!("{base}/partitions?region=us&dt=2024-01-02"));
    assert_eq!(partitions["partitions"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        partitions["partitions"][0]["values"],
        serde_json::json!(["2024-01-02", "us"])
    );
    let (_, files) = get(&format!("{base}/files?dt=2024-01-01&dt=2024-01-03"));
    assert_eq!(files["file_count"], 8);
    assert!(files["total_bytes"].as_u64().is_some_and(|b| b > 0));
    let first = &files["partitions"][0];
    assert_eq!(first["partition"], "dt=2024-01-01/region=eu");
    assert!(
        first["files"][0]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("file:///") && p.ends_with(".parquet"))
    );
    let (_, unpartitioned) = get("/api/v1/catalogs/sample/databases/sales/tables/customers/files");
    assert_eq!(unpartitioned["partitions"][0]["partition"], Value::Null);
    assert_eq!(unpartitioned["file_count"], 2);

    let (status, missing) = get("/api/v1/catalogs/sample/databases/sales/tables/nope/schema");
    assert_eq!(status, 404);
    assert_eq!(missing["error"]["code"], 1146);
    let (status, _) = get("/api/v1/catalogs/nope/databases");
    assert_eq!(status, 404);
    let (status, snapshots) = get(&format!("{base}/snapshots"));
    assert_eq!(status, 400);
    assert!(
        snapshots["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not supported by hive catalogs"))
    );
}

#[test]
fn concurrent_planners_share_loads_and_refresh_table_shows_new_partitions() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    let path = "/api/v1/catalogs/sample/databases/sales/tables/orders/files";
    thread::scope(|scope| {
        let planners: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| server.http("GET", path, None, None)))
            .collect();
        for planner in planners {
            let (status, body) = planner.join().expect("planner");
            assert_eq!(status, 200, "{body}");
        }
    });
    let file = stats(&server, "hive-file");
    assert_eq!(
        number(&file[3]),
        6,
        "one listing per partition for 16 planners: {file:?}"
    );
    assert_eq!(number(&file[0]), 16 * 6, "{file:?}");

    let orders = data.join("sample-warehouse/hive/sales.db/orders/dt=2024-01-04/region=us");
    std::fs::create_dir_all(&orders).expect("mkdir");
    std::fs::write(orders.join("part-00000.parquet"), b"PAR1").expect("write");
    let before = server.query("SHOW PARTITIONS FROM sample.sales.orders");
    assert!(!before.contains("2024-01-04"), "cached until refreshed");
    server.query("REFRESH TABLE sample.sales.orders");
    let after = server.query("SHOW PARTITIONS FROM sample.sales.orders");
    assert!(after.ends_with("dt=2024-01-04/region=us\n"), "{after}");
    let (status, body) = server.http(
        "POST",
        &format!("{}/refresh", path.trim_end_matches("/files")),
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_quota_too_small_for_a_listing_shows_its_reason_and_the_answer_is_still_right() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    server
        .query("ALTER CATALOG sample SET PROPERTIES ('meta.cache.hive.file.max-weight' = '600B')");
    let path = "/api/v1/catalogs/sample/databases/sales/tables/orders/files";
    for _ in 0..2 {
        let (status, body) = server.http("GET", path, None, None);
        assert_eq!(status, 200);
        let files: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(files["file_count"], 12);
    }
    let file = stats(&server, "hive-file");
    assert!(number(&file[5]) > 0, "{file:?}");
    assert_eq!(file[6], "entry_too_large");
}

#[test]
fn the_sample_catalog_is_created_once_per_data_directory() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    server.query(
        "DROP CATALOG sample; DROP CATALOG sample_iceberg; \
         DROP CATALOG sample_paimon; DROP CATALOG sample_lance",
    );
    server.stop();
    let server = Server::start(&data, SAMPLE);
    assert!(
        !server.query("SHOW CATALOGS").contains("sample"),
        "dropped stays dropped"
    );
    server.stop();
    let (_other, fresh) = data_dir();
    let server = Server::start(&fresh, &[]);
    assert!(
        !server.query("SHOW CATALOGS").contains("sample"),
        "off in tests by default"
    );
}

#[test]
fn the_sample_iceberg_catalog_answers_through_sql_and_http() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    assert_eq!(
        server.query("SHOW TABLES FROM sample_iceberg.shop"),
        "Tables_in_shop\ncustomers\ntrips\n"
    );
    let desc = server.query("DESC sample_iceberg.shop.trips");
    assert!(desc.contains("trip_id\tlong\tNo\t\tNULL\t\n"), "{desc}");
    assert!(
        desc.contains("pickup\tdate\tYes\t\tNULL\tPARTITION KEY\n"),
        "{desc}"
    );
    let partitions = server.query("SHOW PARTITIONS FROM sample_iceberg.shop.trips");
    assert_eq!(partitions.lines().count(), 5, "{partitions}");
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/sample_iceberg/databases/shop/tables/trips/snapshots",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let snapshots: Value = serde_json::from_str(&body).expect("json");
    let list = snapshots["snapshots"].as_array().expect("array");
    assert!(list.len() >= 5);
    assert_eq!(list.iter().filter(|s| s["current"] == true).count(), 1);
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/sample_iceberg/databases/shop/tables/trips/partitions?pickup_day=2024-01-04",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let partitions: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(partitions["partitions"][0]["name"], "pickup_day=2024-01-04");
    assert_eq!(partitions["partitions"][0]["totals"]["record_count"], 2);
    let table = stats(&server, "iceberg-table");
    assert_eq!(number(&table[3]), 1, "{table:?}");
}

#[test]
fn the_sample_paimon_and_lance_catalogs_answer_through_sql_and_http() {
    let (_dir, data) = data_dir();
    let server = Server::start(&data, SAMPLE);
    assert_eq!(
        server.query("SHOW TABLES FROM sample_paimon.shop"),
        "Tables_in_shop\nevents\nlevels\nmetrics\nnotes\nreadings\nticks\nticks_iso\nusers\n"
    );
    let partitions = server.query("SHOW PARTITIONS FROM sample_paimon.shop.metrics");
    assert!(
        partitions.contains("year=2024/host=__DEFAULT_PARTITION__"),
        "{partitions}"
    );
    assert_eq!(
        server.query("SHOW TABLES FROM sample_lance.default"),
        "Tables_in_default\nitems\n"
    );
    let (status, body) = server.http(
        "GET",
        "/api/v1/catalogs/sample_lance/databases/default/tables/items/access",
        None,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let access: Value = serde_json::from_str(&body).expect("json");
    let uri = access["uri"].as_str().unwrap_or_default();
    assert!(
        uri.ends_with("/sample-warehouse/lance/items.lance"),
        "{body}"
    );
    assert!(
        Path::new(uri.trim_start_matches("file://")).is_dir(),
        "the bundled dataset was extracted: {uri}"
    );
}
