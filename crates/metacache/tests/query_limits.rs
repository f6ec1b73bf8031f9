//! One query must not take the node down (issue 12): no row generators, a node-wide query
//! memory pool that results count in, and a time limit — each answered with a clear MySQL
//! error while the server stays up and within its memory.

mod common;

use common::*;

/// The system tables' columns (one row per column, ~100) joined with themselves three times:
/// about a million rows of text.
const CROSS_JOIN: &str = "SELECT * FROM information_schema.columns a, \
     information_schema.columns b, information_schema.columns c";

/// Minutes of work in constant memory (a string function over billions of joined rows).
const SLOW: &str = "SELECT max(concat(a.column_name, b.column_name, c.column_name, d.column_name)) \
     FROM information_schema.columns a, information_schema.columns b, \
     information_schema.columns c, information_schema.columns d, information_schema.columns e";

#[test]
fn a_query_cannot_take_the_node_past_its_memory() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_QUERY_MEMORY_LIMIT", "32MB")]);
    // The baseline after a first query: sessions and DataFusion's registries exist.
    server.query("SELECT count(*) FROM information_schema.columns");
    let baseline = server.memory_kib("VmRSS");
    let error = server.fails("SELECT * FROM range(1, 400000000)");
    assert!(error.contains("range"), "{error}");
    let reply = server.mysql("SELECT repeat('x', 2000000000)");
    assert!(
        !reply.ok && reply.err.contains("Invalid function 'repeat'"),
        "{}",
        reply.err
    );
    let rows: u64 = server
        .query("SELECT count(*) AS n FROM information_schema.columns")
        .lines()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert!(rows >= 50, "{rows} columns");
    let error = server.fails(CROSS_JOIN);
    assert!(
        error.starts_with("ERROR 1105") && error.contains("query_memory_limit"),
        "{error}"
    );
    assert_eq!(
        server.query("SELECT 1 AS one"),
        "one\n1\n",
        "the server stays up"
    );
    // The process grew by at most the query pool and a margin for what the pool does not
    // see (DataFusion's batches in flight, the MySQL write buffer, allocator slack).
    let grown_mib = server.memory_kib("VmHWM").saturating_sub(baseline) / 1024;
    assert!(grown_mib <= 32 + 96, "grew by {grown_mib} MiB");
    eprintln!("peak growth {grown_mib} MiB for a 32 MiB query pool");
}

#[test]
fn a_query_that_runs_too_long_is_cut_off() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query("ADMIN SET FRONTEND CONFIG ('query_timeout_seconds' = '1')");
    let started = std::time::Instant::now();
    let error = server.fails(SLOW);
    assert!(
        error.starts_with("ERROR 1317")
            && error.contains("maximum statement execution time exceeded (1 s"),
        "{error}"
    );
    assert!(
        started.elapsed().as_secs() < 30,
        "cut off, not run to the end"
    );
    assert_eq!(
        server.query("SELECT 1 AS one"),
        "one\n1\n",
        "the server stays up"
    );
    assert_eq!(
        server.fails("ADMIN SET FRONTEND CONFIG ('query_timeout_seconds' = '0')"),
        "ERROR 1105 (HY000) at line 1: Invalid value for configuration key 'query_timeout_seconds': 0 (a whole number of seconds, 1 to 86400)"
    );
}

#[test]
fn a_client_that_hangs_up_cancels_its_statement() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let mut client = std::process::Command::new(mysql_client())
        .args(["-h", "127.0.0.1", "-P", &server.mysql_port.to_string()])
        .args(["-u", "root", "-e", SLOW])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mysql client runs");
    // The statement is running once the server burns CPU (it would for minutes).
    let started = std::time::Instant::now();
    let busy = |window_ms: u64| {
        let before = server.cpu_ticks();
        std::thread::sleep(std::time::Duration::from_millis(window_ms));
        server.cpu_ticks() - before
    };
    while busy(500) < 25 {
        assert!(
            started.elapsed().as_secs() < 30,
            "the statement did not start within 30 s"
        );
    }
    // The client dies the way a closed laptop or a killed script does: no KILL QUERY, no
    // COM_QUIT, only the kernel closing its socket.
    client.kill().expect("kill the client");
    client.wait().expect("reap the client");
    let hung_up = std::time::Instant::now();
    while !server.log_text().contains("client hung up") {
        assert!(
            hung_up.elapsed().as_secs() < 20,
            "no cancel within 20 s of the hang-up: {}",
            server.log_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Without the cancel the statement would go on using a core until query_timeout_seconds
    // (60 s): about 200 ticks in 2 s.
    let ticks = busy(2000);
    assert!(ticks < 50, "{ticks} ticks in 2 s after the cancel");
    assert_eq!(
        server.query("SELECT 1 AS one"),
        "one\n1\n",
        "the server stays up"
    );
}

#[test]
fn a_stop_cancels_a_running_query_after_the_grace_period() {
    let (_tmp, data) = data_dir();
    let mut server = Server::start(&data, &[("METACACHE_SHUTDOWN_GRACE_SECONDS", "1")]);
    let port = server.mysql_port;
    let query = std::thread::spawn(move || {
        std::process::Command::new(mysql_client())
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &port.to_string(),
                "-u",
                "root",
                "-e",
            ])
            .arg(SLOW)
            .output()
            .expect("mysql client runs")
    });
    // Let the query start (it would run for minutes).
    std::thread::sleep(std::time::Duration::from_secs(1));
    let stop_asked = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill runs");
    while server.alive() {
        assert!(
            stop_asked.elapsed().as_secs() < 20,
            "the server did not stop within 20 s of SIGTERM (grace 1 s)"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let output = query.join().expect("client thread");
    assert!(!output.status.success(), "the query was cut off");
    assert!(
        server.log_text().contains("after the grace period"),
        "{}",
        server.log_text()
    );
}
