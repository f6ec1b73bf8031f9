//! Random and truncated SQL and protocol bytes against both front ends of the real binary; the
//! server must stay up, answer every well-formed request with a well-formed reply, and serve
//! the next client. Bounded: a fixed number of requests, loopback only.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

const FRAGMENTS: &[&str] = &[
    "CREATE",
    "CATALOG",
    "ALTER",
    "DROP",
    "SET",
    "PROPERTIES",
    "SHOW",
    "CREATE CATALOG",
    "REFRESH",
    "TABLE",
    "DATABASE",
    "ADMIN",
    "FRONTEND",
    "CONFIG",
    "LIKE",
    "IF",
    "NOT",
    "EXISTS",
    "SELECT",
    "*",
    "FROM",
    "WHERE",
    "GROUP BY",
    "HAVING",
    "ORDER BY",
    "LIMIT",
    "UNION ALL",
    "JOIN",
    "USING",
    "OVER (PARTITION BY catalog_name)",
    "count(*)",
    "sum(",
    "avg(",
    "information_schema.catalog_meta_cache_statistics",
    "catalogs",
    "tables",
    "columns",
    "catalog_name",
    "max_weight",
    "(",
    ")",
    "((((((((((",
    "))))))))))",
    "'",
    "\"",
    "`",
    "=",
    ",",
    ";",
    ".",
    "--",
    "/*",
    "*/",
    "\\",
    "NULL",
    "@@version",
    "@@",
    "'type'",
    "'hms'",
    "'iceberg'",
    "'meta.cache.max-weight'",
    "'4GB'",
    "'1.5GB'",
    "'0'",
    "'-1'",
    "'8EB'",
    "'10%'",
    "'meta.cache.hive.file.max-weight'",
    "'external_meta_cache_max_weight'",
    "c",
    "fuzz_cat",
    "`weird name`",
    "1",
    "-1",
    "99999999999999999999999",
    "1e308",
    "0x41",
    "\u{0}",
    "\u{202e}",
    "é",
    "日本",
    "🦀",
    "\t",
    "\n",
    "USE",
    "SWITCH",
    "DESC",
    "EXPLAIN",
    "WITH t AS (SELECT 1)",
    "VALUES (1)",
    "CAST(",
    "AS",
    "BIGINT",
    "CASE WHEN",
    "THEN",
    "END",
    "IN",
    "BETWEEN",
];

fn statement(rng: &mut StdRng) -> String {
    let mut sql = String::new();
    for _ in 0..rng.random_range(1..16) {
        sql.push_str(FRAGMENTS[rng.random_range(0..FRAGMENTS.len())]);
        sql.push(' ');
    }
    if rng.random_bool(0.3) {
        let cut = rng.random_range(0..=sql.len());
        let cut = (0..=cut)
            .rev()
            .find(|&i| sql.is_char_boundary(i))
            .unwrap_or(0);
        sql.truncate(cut);
    }
    if rng.random_bool(0.05) {
        sql = "(".repeat(rng.random_range(100..5000)) + "SELECT 1";
    }
    sql
}

fn raw(addr: &str, bytes: &[u8]) {
    if let Ok(mut stream) = TcpStream::connect(addr) {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(30)));
        let _ = stream.write_all(bytes);
        let mut sink = [0u8; 4096];
        let _ = stream.read(&mut sink);
    }
}

/// A MySQL packet: 3-byte length, sequence number, payload.
fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut p = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
    p.extend_from_slice(payload);
    p
}

/// Logs in as root without a password over a raw socket, then sends `after`.
fn raw_mysql_session(addr: &str, after: &[u8]) {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut greeting = [0u8; 1024];
    if stream.read(&mut greeting).is_err() {
        return;
    }
    // CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
    let caps: u32 = 0x1 | 0x200 | 0x8000 | 0x80000;
    let mut response = Vec::new();
    response.extend_from_slice(&caps.to_le_bytes());
    response.extend_from_slice(&(16u32 << 20).to_le_bytes());
    response.push(45);
    response.extend_from_slice(&[0u8; 23]);
    response.extend_from_slice(b"root\0");
    response.push(0);
    response.extend_from_slice(b"mysql_native_password\0");
    let _ = stream.write_all(&packet(1, &response));
    let mut ok = [0u8; 1024];
    let _ = stream.read(&mut ok);
    let _ = stream.write_all(after);
    let mut sink = [0u8; 65536];
    let _ = stream.read(&mut sink);
}

/// A generator seeded from `METACACHE_FUZZ_SEED`, or at random; the seed is printed so that a
/// failure can be replayed.
fn seeded(what: &str) -> StdRng {
    let seed: u64 = std::env::var("METACACHE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    eprintln!("{what} seed {seed} (METACACHE_FUZZ_SEED to replay)");
    StdRng::seed_from_u64(seed)
}

/// Path segments the HTTP fuzz combines, with random bytes percent-encoded between them.
const SEGMENTS: &[&str] = &[
    "api", "v1", "sql", "catalogs", "caches", "engines", "refresh", "metrics", "healthz", "hive",
    "default", "schema", "x", "..", ".", "%FF", "%00", "%2F", "é", "",
];

/// A random path from [`SEGMENTS`] and percent-encoded random bytes.
fn random_path(rng: &mut StdRng) -> String {
    let mut path = String::new();
    for _ in 0..rng.random_range(1..8) {
        path.push('/');
        if rng.random_bool(0.8) {
            path.push_str(SEGMENTS[rng.random_range(0..SEGMENTS.len())]);
        } else {
            for _ in 0..rng.random_range(1..6) {
                path.push_str(&format!("%{:02X}", rng.random::<u8>()));
            }
        }
    }
    path
}

/// Sends one raw HTTP request (closing the connection) and returns the status and body.
fn raw_http(addr: &str, request: &[u8]) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream.write_all(request).ok()?;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply).into_owned();
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

#[test]
fn random_paths_methods_and_headers_answer_json_errors() {
    let mut rng = seeded("HTTP fuzz");
    let (_tmp, data) = data_dir();
    let mut server = Server::start(&data, &[]);
    let http_addr = server.http.trim_start_matches("http://").to_owned();
    const METHODS: &[&str] = &[
        "GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "BREW",
    ];
    const HEADERS: &[&str] = &[
        "Authorization: Bearer",
        "Authorization: Basic Zm9vOmJhcg==",
        "Content-Type: application/json",
        "Content-Type: text/html; charset=\u{1}",
        "Accept: */*",
        "Transfer-Encoding: chunked",
        "Expect: 100-continue",
        "X-Junk: \u{7f}",
    ];
    let mut json_errors = 0;
    for _ in 0..300 {
        let method = METHODS[rng.random_range(0..METHODS.len())];
        let path = random_path(&mut rng);
        let body = statement(&mut rng);
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
        for _ in 0..rng.random_range(0..4) {
            let header = HEADERS[rng.random_range(0..HEADERS.len())];
            if header.starts_with("Transfer-Encoding") {
                continue; // the body below is sent with a length
            }
            request.push_str(header);
            request.push_str("\r\n");
        }
        if rng.random_bool(0.2) {
            request.push_str(&format!(
                "X-Long: {}\r\n",
                "a".repeat(rng.random_range(0..20_000))
            ));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        let Some((status, answer)) = raw_http(&http_addr, request.as_bytes()) else {
            continue; // hyper may close a connection it cannot parse
        };
        assert!(status < 500, "{method} {path} → {status} {answer}");
        if status >= 400 && method != "HEAD" && !answer.is_empty() {
            let json: serde_json::Value = serde_json::from_str(&answer)
                .unwrap_or_else(|_| panic!("{method} {path} → {status}, not JSON: {answer}"));
            assert!(
                json["error"]["message"].is_string(),
                "{method} {path} → {answer}"
            );
            json_errors += 1;
        }
    }
    assert!(
        json_errors >= 100,
        "only {json_errors} error answers: the fuzz missed the router"
    );
    unharmed(&mut server);
}

#[test]
fn random_sql_and_bytes_never_take_the_server_down() {
    let mut rng = seeded("front-end fuzz");
    let (_tmp, data) = data_dir();
    let mut server = Server::start(&data, &[]);
    let mysql_addr = format!("127.0.0.1:{}", server.mysql_port);
    let http_addr = server.http.trim_start_matches("http://").to_owned();

    // SQL over HTTP: every answer is JSON with a client-error or success status.
    for _ in 0..400 {
        let sql = statement(&mut rng);
        let (status, body) = server.http("POST", "/api/v1/sql", Some(sql.as_bytes()), None);
        assert!(
            matches!(status, 200 | 400 | 404 | 409),
            "{sql:?} → {status} {body}"
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(&body).is_ok(),
            "{sql:?} → {body}"
        );
    }
    // SQL over the MySQL protocol with the real client.
    for _ in 0..40 {
        let sql = statement(&mut rng).replace('\0', "");
        let reply = server.mysql(&sql);
        assert!(
            reply.ok || reply.err.contains("ERROR"),
            "{sql:?}: {}",
            reply.err
        );
    }
    // Protocol bytes: garbage before the handshake, truncated and oversized packets, and
    // random commands after a valid login.
    for _ in 0..150 {
        let len = rng.random_range(0..2048);
        let junk: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        match rng.random_range(0..4) {
            0 => raw(&mysql_addr, &junk),
            1 => raw_mysql_session(&mysql_addr, &junk),
            2 => {
                let mut query = vec![0x03];
                query.extend_from_slice(statement(&mut rng).as_bytes());
                let mut p = packet(0, &query);
                p.truncate(rng.random_range(0..=p.len()));
                raw_mysql_session(&mysql_addr, &p);
            }
            _ => raw_mysql_session(&mysql_addr, &[0xff, 0xff, 0xff, 0x00, 0x03, b'S']),
        }
    }
    // HTTP bytes: garbage, truncated requests, lying content lengths.
    for _ in 0..100 {
        let sql = statement(&mut rng);
        let request = match rng.random_range(0..3) {
            0 => (0..rng.random_range(0..1024)).map(|_| rng.random::<u8>()).collect::<Vec<u8>>(),
            1 => {
                let full = format!("POST /api/v1/sql HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{sql}", sql.len());
                let cut = rng.random_range(0..=full.len());
                full.as_bytes()[..cut].to_vec()
            }
            _ => b"PUT /api/v1/catalogs/x/caches/e/n/k HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\nabc".to_vec(),
        };
        raw(&http_addr, &request);
    }
    unharmed(&mut server);
}

/// The server is still running, answers the next MySQL and HTTP clients, and never panicked.
fn unharmed(server: &mut Server) {
    assert!(server.alive(), "the server is still running");
    assert_eq!(
        server.query("SELECT 1 AS one"),
        "one\n1\n",
        "and answers the next MySQL client"
    );
    assert_eq!(
        server.http("GET", "/healthz", None, None),
        (200, "ok\n".to_owned()),
        "and the next HTTP client"
    );
    assert!(
        !server.log_text().contains("panicked"),
        "no panic:\n{}",
        server.log_text()
    );
}
