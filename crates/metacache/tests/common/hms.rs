//! A real Hive Metastore for the HMS tests (issue 16): the metastore of pyspark's wheel
//! (hive-metastore 2.3 on Derby) under the machine's JDK, with a notification log writer
//! (`tests/clients/java/NotificationLogListener.java`, compiled here with `javac`) and a file
//! system that lets it record `s3://` locations (`LocalS3FileSystem.java`), filled
//! through its own Thrift API (`hms_fixture.py`) and changed by Spark SQL (`spark_sql.py`).
//! `scripts/test-deps.sh` installs pyspark, hmsclient and a JDK; without them the tests say
//! why they skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::free_port;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// A Hive Metastore server on a free port with a private Derby database.
pub struct Metastore {
    child: Child,
    /// Its Thrift port.
    pub port: u16,
}

impl Drop for Metastore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// pyspark's bundled jars, if pyspark, hmsclient and java are here.
pub fn metastore_jars() -> Option<PathBuf> {
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
    /// Starts one with its Derby database and logs in `dir`.
    pub fn start(jars: &Path, dir: &Path) -> Metastore {
        Self::start_on(jars, dir, free_port())
    }

    /// [`Metastore::start`] on `port` (a metastore that comes back at the same address).
    pub fn start_on(jars: &Path, dir: &Path, port: u16) -> Metastore {
        let listener = compile_listener(jars, dir);
        let log = std::fs::File::create(dir.join("metastore.log")).expect("log file");
        let child = Command::new("java")
            .arg("-cp")
            .arg(format!("{}:{}/*", listener.display(), jars.display()))
            .args([
                "-Dhive.async.log.enabled=false",
                "-Ddatanucleus.schema.autoCreateAll=true",
                "-Dhive.metastore.schema.verification=false",
                "-Ddatanucleus.connectionPoolingType=None",
                "-Dhive.metastore.event.listeners=metacache.test.NotificationLogListener",
            ])
            .arg(format!("-Dmetacache.s3.root={}/s3", dir.display()))
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

    /// `thrift://127.0.0.1:<port>`.
    pub fn uri(&self) -> String {
        format!("thrift://127.0.0.1:{}", self.port)
    }

    /// Writes the fixture: `sales.orders` with `partitions` partitions, `sales.customers`,
    /// database `web`; data files under `warehouse`.
    pub fn fill(&self, warehouse: &Path, partitions: usize) {
        let partitions = partitions.to_string();
        self.fixture(&[warehouse.as_os_str(), partitions.as_ref()]);
    }

    /// Registers the Iceberg table whose current metadata is `metadata_file` as
    /// `database.table`, as Iceberg's HiveCatalog does (`table_type=ICEBERG`).
    pub fn register_iceberg(&self, database: &str, table: &str, metadata_file: &Path) {
        self.fixture(&[
            "iceberg".as_ref(),
            database.as_ref(),
            table.as_ref(),
            metadata_file.as_os_str(),
        ]);
    }

    /// Moves `database.table` and its partitions from below the local `from` to the same
    /// paths below `to` (`s3://bucket/prefix`), as `ALTER TABLE … SET LOCATION` does.
    pub fn relocate(&self, database: &str, table: &str, from: &Path, to: &str) {
        self.fixture(&[
            "relocate".as_ref(),
            database.as_ref(),
            table.as_ref(),
            from.as_os_str(),
            to.as_ref(),
        ]);
    }

    fn fixture(&self, args: &[&std::ffi::OsStr]) {
        let out = Command::new("python3")
            .arg(repo("tests/clients/python/hms_fixture.py"))
            .arg(format!("127.0.0.1:{}", self.port))
            .args(args)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "fixture: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs Spark SQL `statements` against this metastore (managed tables' files under
    /// `warehouse`) and returns what they printed: `> SQL` lines and rows.
    pub fn spark(&self, warehouse: &Path, statements: &[&str]) -> String {
        let out = Command::new("python3")
            .arg(repo("tests/clients/python/spark_sql.py"))
            .arg(format!("127.0.0.1:{}", self.port))
            .arg(warehouse)
            .args(statements)
            .output()
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "spark: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

/// Compiles the metastore's test classes (the notification log writer, the file system that
/// answers its checks of `s3://` locations) into `dir`/listener with a `core-site.xml` that
/// names the latter; returns that class directory, for the front of the class path.
fn compile_listener(jars: &Path, dir: &Path) -> PathBuf {
    let classes = dir.join("listener");
    std::fs::create_dir_all(&classes).expect("class dir");
    std::fs::write(
        classes.join("core-site.xml"),
        "<?xml version=\"1.0\"?>\n<configuration><property><name>fs.s3.impl</name>\
         <value>metacache.test.LocalS3FileSystem</value></property></configuration>\n",
    )
    .expect("core-site.xml");
    let out = Command::new("javac")
        .arg("-cp")
        .arg(format!("{}/*", jars.display()))
        .arg("-d")
        .arg(&classes)
        .arg(repo("tests/clients/java/NotificationLogListener.java"))
        .arg(repo("tests/clients/java/LocalS3FileSystem.java"))
        .output()
        .expect("javac runs (scripts/test-deps.sh installs a JDK)");
    assert!(
        out.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    classes
}
