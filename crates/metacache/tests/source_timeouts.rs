//! A network source that stops answering fails the load instead of holding it forever
//! (issue 12): an Iceberg REST catalog whose server accepts connections and never replies.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::*;

/// A server on a free loopback port that accepts connections and then says nothing.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn a_hung_rest_catalog_fails_the_load_within_the_request_timeout() {
    let port = silent_server();
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_SOURCE_REQUEST_TIMEOUT_SECONDS", "1")]);
    server.query(&format!(
        "CREATE CATALOG r PROPERTIES ('type'='iceberg', 'iceberg.catalog.type'='rest', \
         'uri'='http://127.0.0.1:{port}')"
    ));
    let started = Instant::now();
    let reply = server.mysql("SHOW DATABASES FROM r");
    assert!(!reply.ok, "{}", reply.out);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the load was held {:?}",
        started.elapsed()
    );
    assert!(
        reply.err.contains("ERROR 1105")
            && reply
                .err
                .contains("no answer within 1 s (source_request_timeout_seconds)"),
        "{}",
        reply.err
    );
    eprintln!("{}", reply.err.trim());
    assert_eq!(server.query("SELECT 1 AS one"), "one\n1\n");
}

#[test]
fn a_hung_hive_metastore_fails_the_load_within_the_request_timeout_and_is_counted() {
    let port = silent_server();
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_SOURCE_REQUEST_TIMEOUT_SECONDS", "1")]);
    server.query(&format!(
        "CREATE CATALOG slow PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://127.0.0.1:{port}')"
    ));
    let started = Instant::now();
    let error = server.fails("DESC slow.sales.orders");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "held {:?}",
        started.elapsed()
    );
    assert!(
        error.contains(&format!("thrift://127.0.0.1:{port}: no answer within 1 s")),
        "{error}"
    );
    let row = server.cache_row("slow", "hive-table", "load_failure_count, last_error");
    assert_eq!(row[0], "1", "{row:?}");
    assert!(row[1].contains("no answer within 1 s"), "{row:?}");
}
