//! HMS catalogs against a real Hive Metastore over Thrift (issue 16): the metastore of
//! pyspark's wheel (hive-metastore 2.3 on Derby) under the machine's JDK, filled through its
//! own Thrift API by `tests/clients/python/hms_fixture.py`. `scripts/test-deps.sh` installs
//! pyspark and hmsclient; without them, or without `java`, the tests say why they skip.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A Hive Metastore server on a free port with a private Derby database.
struct Metastore {
    child: Child,
    port: u16,
}

impl Drop for Metastore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// pyspark's bundled jars, if pyspark, hmsclient and java are here.
fn metastore_jars() -> Option<PathBuf> {
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: no java; run scripts/test-deps.sh");
        return None;
    }
    let found = Command::new("python3")
        .args([
            "-c",
            "import os, pyspark, hmsclient; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if found.is_none() {
        eprintln!("SKIPPED: no pyspark/hmsclient; run scripts/test-deps.sh");
    }
    found
}

impl Metastore {
    fn start(jars: &Path, dir: &Path) -> Metastore {
        let port = free_port();
        let log = std::fs::File::create(dir.join("metastore.log")).expect("log file");
        let child = Command::new("java")
            .arg("-cp")
            .arg(format!("{}/*", jars.display()))
            .args([
                "-Dhive.async.log.enabled=false",
                "-Ddatanucleus.schema.autoCreateAll=true",
                "-Dhive.metastore.schema.verification=false",
                "-Ddatanucleus.connectionPoolingType=None",
            ])
            .arg(format!(
                "-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={}/metastore_db;create=true",
                dir.display()
            ))
            .arg(format!(
                "-Dhive.metastore.warehouse.dir={}/managed",
                dir.display()
            ))
            .args(["org.apache.hadoop.hive.metastore.HiveMetaStore", "-p"])
            .arg(port.to_string())
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("java starts");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the metastore did not listen within 90 s; see {}/metastore.log",
                dir.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Metastore { child, port }
    }

    fn uri(&self) -> String {
        format!("thrift://127.0.0.1:{}", self.port)
    }

    /// Writes the fixture: `sales.orders` with `partitions` partitions, `sales.customers`,
    /// database `web`; data files under `warehouse`.
    fn fill(&self, warehouse: &Path, partitions: usize) {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/python/hms_fixture.py");
        let out = Command::new("python3")
            .arg(script)
            .arg(format!("127.0.0.1:{}", self.port))
            .arg(warehouse)
            .arg(partitions.to_string())
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "fixture: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

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
