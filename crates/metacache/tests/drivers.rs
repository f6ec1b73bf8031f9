//! Every mainstream MySQL driver against the binary (issue 13): PyMySQL, mysql-connector-python
//! (pure and C extension), SQLAlchemy with pandas, Node's mysql2 (`query` and `execute`) and
//! MariaDB Connector/J (text, server-side prepared statements, `DatabaseMetaData`). Each client
//! runs the same session from `tests/clients/`: connect without and with a database, the
//! statistics queries of docs/troubleshooting.md, DDL, the entry-limit error, and the
//! connection still usable after it. `scripts/test-deps.sh` (run by `make test`) installs the
//! drivers; where one cannot be found the test says SKIPPED and why.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn warehouse() -> String {
    fixture_warehouse()
        .canonicalize()
        .expect("the fixture warehouse")
        .display()
        .to_string()
}

/// Runs a client; passes on `OK`, skips (exit 3) when its driver is missing, fails otherwise.
fn run_client(name: &str, command: &mut Command) {
    let output = match command.output() {
        Ok(output) => output,
        Err(error) => {
            eprintln!("SKIPPED {name}: cannot run its client ({error}); run scripts/test-deps.sh");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(3) {
        eprintln!("SKIPPED {name}: {}", stdout.trim());
        return;
    }
    assert!(
        output.status.success() && stdout.contains("OK "),
        "{name} failed:\n{stdout}\n{stderr}"
    );
}

fn python(driver: &str) {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    run_client(
        driver,
        Command::new("python3")
            .arg(repo().join("tests/clients/python/drivers.py"))
            .arg(driver)
            .arg(server.mysql_port.to_string())
            .arg(warehouse()),
    );
}

#[test]
fn pymysql() {
    python("pymysql");
}

#[test]
fn mysql_connector_python_pure() {
    python("connector-pure");
}

#[test]
fn mysql_connector_python_c_extension() {
    python("connector-c");
}

#[test]
fn sqlalchemy_reflection_and_pandas() {
    python("sqlalchemy");
}

#[test]
fn node_mysql2_query_and_execute() {
    let client = repo().join("tests/clients/node");
    if !client.join("node_modules/mysql2").is_dir() {
        eprintln!("SKIPPED mysql2: not installed in tests/clients/node; run scripts/test-deps.sh");
        return;
    }
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    run_client(
        "mysql2",
        Command::new("node")
            .arg(client.join("drivers.js"))
            .arg(server.mysql_port.to_string())
            .arg(warehouse()),
    );
}

/// MariaDB Connector/J: `$METACACHE_CONNECTOR_J`, else Debian's `libmariadb-java`.
fn connector_j() -> Option<PathBuf> {
    std::env::var_os("METACACHE_CONNECTOR_J")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("/usr/share/java/mariadb-java-client.jar")))
        .filter(|jar| jar.is_file())
}

#[test]
fn mariadb_connector_j_metadata_and_prepared_statements() {
    let Some(jar) = connector_j() else {
        eprintln!("SKIPPED connector-j: no mariadb-java-client.jar; run scripts/test-deps.sh");
        return;
    };
    let classes = tempfile::tempdir().expect("temp dir");
    let compiled = Command::new("javac")
        .arg("-d")
        .arg(classes.path())
        .arg("-cp")
        .arg(&jar)
        .arg(repo().join("tests/clients/java/Drivers.java"))
        .output();
    match compiled {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("javac failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(error) => {
            eprintln!("SKIPPED connector-j: no javac ({error}); run scripts/test-deps.sh");
            return;
        }
    }
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let classpath = format!("{}:{}", jar.display(), classes.path().display());
    run_client(
        "connector-j",
        Command::new("java")
            .args(["-cp", &classpath, "Drivers"])
            .arg(server.mysql_port.to_string())
            .arg(warehouse()),
    );
}
