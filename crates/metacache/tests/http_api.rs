//! The HTTP front end of the real binary: SQL as JSON, catalogs, engines, the look-aside
//! caches with their admission outcome, metrics checked by promtool, auth and body limits.

mod common;

use std::io::Write;

use common::*;
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn sql_over_http() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let (status, body) = server.http(
        "POST",
        "/api/v1/sql",
        Some(b"CREATE CATALOG c PROPERTIES ('type'='hms')"),
        None,
    );
    assert_eq!(
        (status, json(&body)),
        (200, json(r#"{"affected": 1, "warnings": []}"#))
    );
    let (status, body) = server.http(
        "POST",
        "/api/v1/sql",
        Some(b"SELECT catalog_name, count(*) AS caches, max(ttl_second) AS ttl FROM catalog_meta_cache_statistics GROUP BY catalog_name"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(
        json(&body),
        json(
            r#"{"columns": [{"name": "catalog_name", "type": "STRING"}, {"name": "caches", "type": "BIGINT"}, {"name": "ttl", "type": "BIGINT"}], "rows": [["c", 19, 86400]]}"#
        )
    );
    for (sql, status, code, message) in [
        (
            "SELEC 1",
            400,
            1064,
            "Syntax error: Expected: CREATE, ALTER, DROP, SHOW or REFRESH CATALOG, ADMIN, SHOW, DESC, USE, SET or SELECT, found: SELEC at Line: 1, Column: 1",
        ),
        (
            "CREATE CATALOG d PROPERTIES ('type'='hms', 'meta.cache.max-weight'='8EB')",
            400,
            1105,
            "Invalid cache weight for 'meta.cache.max-weight': 8EB",
        ),
        ("DROP CATALOG nosuch", 404, 1049, "Unknown catalog 'nosuch'"),
        (
            "CREATE CATALOG c PROPERTIES ('type'='hms')",
            409,
            1007,
            "Catalog 'c' already exists",
        ),
    ] {
        let (got, body) = server.http("POST", "/api/v1/sql", Some(sql.as_bytes()), None);
        assert_eq!(got, status, "{sql}: {body}");
        assert_eq!(
            json(&body),
            serde_json::json!({"error": {"code": code, "message": message}}),
            "{sql}"
        );
    }
    let (status, _) = server.http("POST", "/api/v1/sql", Some(&[0xff, 0xfe, 0x00]), None);
    assert_eq!(status, 400, "non-UTF-8 statements are refused");
    assert_eq!(
        server.http("GET", "/healthz", None, None),
        (200, "ok\n".to_owned())
    );
}

#[test]
fn catalogs_as_json() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let (status, body) = server.http(
        "POST",
        "/api/v1/catalogs",
        Some(br#"{"name": "ice", "comment": "lake", "properties": {"type": "iceberg", "s3.secret_key": "hunter2", "meta.cache.max-weight": "2GB"}}"#),
        None,
    );
    assert_eq!(status, 201, "{body}");
    let created = json(&body);
    assert_eq!(created["catalog"]["properties"]["s3.secret_key"], "*XXX");
    assert_eq!(created["catalog"]["max_weight"], 2_i64 << 30);
    let (status, body) = server.http(
        "POST",
        "/api/v1/catalogs",
        Some(br#"{"name": "bad", "properties": {"type": "hms", "meta.cache.max-weight": "0"}}"#),
        None,
    );
    assert_eq!(
        (status, json(&body)["error"]["message"].clone()),
        (400, Value::from("meta.cache.max-weight must be positive"))
    );
    let (status, body) = server.http("POST", "/api/v1/catalogs", Some(b"{not json"), None);
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.http(
        "PATCH",
        "/api/v1/catalogs/ice",
        Some(br#"{"properties": {"meta.cache.iceberg.manifest.enable": "true"}}"#),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json(&body)["dropped_caches_of"],
        serde_json::json!(["iceberg"])
    );
    let (_, list) = server.http("GET", "/api/v1/catalogs", None, None);
    assert_eq!(json(&list)["catalogs"].as_array().map(Vec::len), Some(1));
    assert!(!list.contains("hunter2"));
    assert_eq!(
        server
            .http("POST", "/api/v1/catalogs/ice/refresh", None, None)
            .0,
        200
    );
    assert_eq!(
        server.http("DELETE", "/api/v1/catalogs/ice", None, None).0,
        204
    );
    assert_eq!(
        server.http("GET", "/api/v1/catalogs/ice", None, None).0,
        404
    );
    assert_eq!(
        server.http("DELETE", "/api/v1/catalogs/ice", None, None).0,
        404
    );
}

const ENGINE: &str = r#"{
    "catalog_types": ["feature_store"],
    "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 300}, "capacity": 100}}],
    "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]
}"#;

/// Registers [`ENGINE`] as `feature_store` over HTTP.
fn define_feature_store(server: &Server) {
    server.define_engine("feature_store", ENGINE);
}

#[test]
fn remote_engines_and_look_aside_caches() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    define_feature_store(&server);
    assert_eq!(
        server
            .http("PUT", "/api/v1/engines/hive", Some(ENGINE.as_bytes()), None)
            .0,
        400,
        "built-ins stay"
    );
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store', 'meta.cache.feature_store.features.max-weight'='4KB')");
    let base = "/api/v1/catalogs/fs/caches/feature_store/fs-features";
    let (status, body) = server.http(
        "PUT",
        &format!("{base}/user%2F42"),
        Some(&[7u8; 1000]),
        None,
    );
    assert_eq!(
        (status, json(&body)),
        // The blob (32 inline, 1,000 bytes in jemalloc's 1,024 class, 32 for the shared header
        // a GET adds) + the key `user/42` (a String: 24 + 7 in the 8 class) + 512 of overhead.
        (200, json(r#"{"retained": true, "charge": 1632}"#))
    );
    let (status, body) = server.http("GET", &format!("{base}/user%2F42"), None, None);
    assert_eq!((status, body.len()), (200, 1000));
    let (status, body) = server.http("PUT", &format!("{base}/big"), Some(&[1u8; 5000]), None);
    assert_eq!(
        (status, json(&body)),
        (
            200,
            json(r#"{"retained": false, "reason": "entry_too_large"}"#)
        )
    );
    assert_eq!(
        server.http("GET", &format!("{base}/big"), None, None).0,
        404
    );
    assert_eq!(
        server.query("SELECT entry_name, estimated_size, estimated_weight, weight_reject_count, last_weight_reject_reason FROM catalog_meta_cache_statistics WHERE engine_name = 'feature_store'"),
        "entry_name\testimated_size\testimated_weight\tweight_reject_count\tlast_weight_reject_reason\nfs-features\t1\t1632\t1\tentry_too_large\n"
    );
    let (status, body) = server.http("DELETE", &format!("{base}/user%2F42"), None, None);
    assert_eq!((status, json(&body)), (200, json(r#"{"removed": true}"#)));
    assert_eq!(
        server
            .http("GET", &format!("{base}/user%2F42"), None, None)
            .0,
        404
    );
    assert_eq!(
        server
            .http(
                "GET",
                "/api/v1/catalogs/fs/caches/feature_store/nosuch/k",
                None,
                None
            )
            .0,
        404
    );
    assert_eq!(
        server
            .http(
                "GET",
                "/api/v1/catalogs/nosuch/caches/feature_store/fs-features/k",
                None,
                None
            )
            .0,
        404
    );
    // The engine survives a restart, and so does its catalog.
    server.stop();
    let server = Server::start(&data, &[]);
    let (status, body) = server.http("GET", "/api/v1/engines/feature_store", None, None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        server.query(
            "SELECT count(*) AS n FROM catalog_meta_cache_statistics WHERE catalog_name = 'fs'"
        ),
        "n\n2\n"
    );
}

#[test]
fn metrics_pass_promtool() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let warehouse = fixture_warehouse();
    server.query(&format!(
        "CREATE CATALOG hive_prod PROPERTIES ('type'='hms', 'warehouse'='{}', 'meta.cache.max-weight'='1GB')",
        warehouse.display()
    ));
    server.query("CREATE CATALOG idle PROPERTIES ('type'='hms', 'meta.cache.max-weight'='1GB')");
    server.query("DESC hive_prod.sales.orders");
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_max_weight' = '2GB')");
    let (status, text) = server.http("GET", "/metrics", None, None);
    assert_eq!(status, 200);
    for series in [
        "metacache_cache_misses_total{catalog=\"hive_prod\",engine=\"hive\",entry=\"hive-table\"} 1",
        "metacache_cache_info{catalog=\"hive_prod\",engine=\"hive\",entry=\"hive-table\",ttl_seconds=\"86400\",",
        "metacache_cache_max_weight_bytes{catalog=\"hive_prod\",engine=\"hive\",entry=\"hive-table\"} 1073741824",
        "metacache_node_max_weight_bytes 2147483648",
        "metacache_catalogs 2",
    ] {
        assert!(text.contains(series), "{series} in\n{text}");
    }
    // No ratio gauges, and rare events have no series until they happen.
    for absent in [
        "metacache_cache_hit_ratio",
        "metacache_cache_requests_total",
        "metacache_cache_ttl_seconds",
        "metacache_cache_load_failures_total{",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    // Only caches that exist have series: not hive_prod's unbuilt ones, nothing of `idle`.
    assert!(!text.contains("entry=\"hive-file\""), "{text}");
    assert!(!text.contains("catalog=\"idle\""), "{text}");
    assert!(
        server
            .query("SELECT count(*) AS n FROM catalog_meta_cache_statistics WHERE catalog_name = 'idle'")
            .lines()
            .nth(1)
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 0),
        "the statistics table still lists unbuilt caches"
    );
    assert!(text.contains("metacache_process_resident_memory_bytes "));
    // The allocator's truth, next to the ledger's estimate.
    let gauge = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in\n{text}"))
    };
    let allocated = gauge("metacache_allocator_allocated_bytes");
    let resident = gauge("metacache_allocator_resident_bytes");
    assert!(
        allocated > 0.0 && resident >= allocated,
        "{allocated} / {resident}"
    );
    assert!(gauge("metacache_allocator_fragmentation_ratio") >= 1.0);
    assert!(gauge("metacache_node_reserved_to_allocated_ratio") >= 0.0);
    let row = server.query(
        "SELECT ALLOCATED_BYTES, ALLOCATOR_RESIDENT_BYTES, FRAGMENTATION, RESERVED_TO_ALLOCATED \
         FROM information_schema.catalog_meta_cache_nodes",
    );
    let fields: Vec<f64> = row
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("a node row in {row}"))
        .split('\t')
        .map(|f| {
            f.parse()
                .unwrap_or_else(|_| panic!("a number, not {f:?}, in {row}"))
        })
        .collect();
    assert!(
        fields[0] > 0.0 && fields[1] >= fields[0] && fields[2] >= 1.0,
        "{row}"
    );
    if let Err(complaints) = promtool_check(&text) {
        panic!("promtool: {complaints}");
    }
}

#[test]
fn bearer_token_and_body_limit() {
    let (_tmp, data) = data_dir();
    let server = Server::start(
        &data,
        &[
            ("METACACHE_HTTP_TOKEN", "t0ken"),
            ("METACACHE_HTTP_BODY_LIMIT", "1KB"),
        ],
    );
    assert_eq!(
        server.http("GET", "/healthz", None, None).0,
        200,
        "health needs no token"
    );
    let (status, body) = server.http("GET", "/metrics", None, None);
    assert_eq!(status, 401, "{body}");
    assert_eq!(server.http("GET", "/metrics", None, Some("wrong")).0, 401);
    assert_eq!(server.http("GET", "/metrics", None, Some("t0ken")).0, 200);
    assert_eq!(
        server
            .http("POST", "/api/v1/sql", Some(b"SELECT 1"), None)
            .0,
        401
    );
    assert_eq!(
        server
            .http("POST", "/api/v1/sql", Some(b"SELECT 1"), Some("t0ken"))
            .0,
        200
    );
    let big = format!("SELECT '{}'", "x".repeat(2048));
    assert_eq!(
        server
            .http("POST", "/api/v1/sql", Some(big.as_bytes()), Some("t0ken"))
            .0,
        413
    );
    assert!(
        server
            .query("ADMIN SHOW FRONTEND CONFIG LIKE 'http_token'")
            .contains("http_token\t*XXX")
    );
}

/// Sends a `PUT` whose body is chunked (no `Content-Length`) and returns the status line.
fn put_chunked(server: &Server, path: &str, body: &[u8]) -> String {
    use std::io::Read;
    let addr = server.http.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    let mut request = format!(
        "PUT {path} HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(3000) {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    stream.write_all(&request).expect("send");
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn look_aside_bodies_are_read_exactly_and_within_the_body_limit() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_HTTP_BODY_LIMIT", "64KB")]);
    define_feature_store(&server);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store')");
    let base = "/api/v1/catalogs/fs/caches/feature_store/fs-features";
    let value: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();

    // Declared length: read into one exact allocation.
    let (status, body) = server.http("PUT", &format!("{base}/a"), Some(&value), None);
    assert_eq!(
        (status, json(&body)["retained"].clone()),
        (200, Value::Bool(true)),
        "{body}"
    );
    // Chunked: no length declared, the same bytes arrive.
    let status_line = put_chunked(&server, &format!("{base}/b"), &value);
    assert!(status_line.contains(" 200 "), "{status_line}");
    for key in ["a", "b"] {
        let (status, body) = server.http("GET", &format!("{base}/{key}"), None, None);
        assert_eq!(status, 200);
        assert_eq!(body.as_bytes(), value.as_slice(), "value of {key}");
    }

    // Over the limit, declared or chunked: 413, and nothing is stored.
    let big = vec![1u8; 100_000];
    let (status, body) = server.http("PUT", &format!("{base}/big"), Some(&big), None);
    assert_eq!(status, 413, "{body}");
    let status_line = put_chunked(&server, &format!("{base}/big2"), &big);
    assert!(status_line.contains(" 413 "), "{status_line}");
    for key in ["big", "big2"] {
        assert_eq!(
            server.http("GET", &format!("{base}/{key}"), None, None).0,
            404
        );
    }
    assert_eq!(
        server.cache_row("fs", "fs-features", "estimated_size")[0],
        "2",
        "only the two values within the limit are cached"
    );
}

#[test]
fn a_full_look_aside_cache_keeps_what_is_asked_for_most() {
    // Values of 8 KiB under an entry limit that holds about 20 of them, read in a loop over 24
    // keys: get, and put after a miss, as a remote engine does.
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    define_feature_store(&server);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store', 'meta.cache.feature_store.features.max-weight'='180KB')");
    let base = "/api/v1/catalogs/fs/caches/feature_store/fs-features";
    let value = vec![7u8; 8192];
    let (passes, keys) = (8, 24);
    let (mut late_hits, mut declined) = (0, 0);
    for pass in 0..passes {
        for k in 0..keys {
            let path = format!("{base}/k{k:02}");
            if server.http("GET", &path, None, None).0 == 200 {
                if pass >= passes / 2 {
                    late_hits += 1;
                }
                continue;
            }
            let (status, body) = server.http("PUT", &path, Some(&value), None);
            assert_eq!(status, 200, "{body}");
            match json(&body)["reason"].as_str() {
                None => {}
                Some("less_frequent_than_residents") => declined += 1,
                Some(other) => panic!("pass {pass}, k{k:02}: {other}"),
            }
        }
    }
    let accesses = keys * (passes - passes / 2);
    // Keeping a fixed 20 of the 24 hits 0.83 of the accesses; cycling all of them out, 0.
    assert!(
        late_hits * 100 >= accesses * 75,
        "{late_hits} hits of {accesses} ({declined} declined)"
    );
    assert!(declined > 0, "no put was declined");
    let row = server.cache_row("fs", "fs-features", "estimated_weight");
    assert!(row[0].parse::<u64>().expect("a number") <= 180 * 1024);
}

#[test]
fn a_refused_put_drops_the_value_it_would_have_replaced() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    define_feature_store(&server);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store', 'meta.cache.feature_store.features.max-weight'='4KB')");
    let path = "/api/v1/catalogs/fs/caches/feature_store/fs-features/k";
    let (status, body) = server.http("PUT", path, Some(&[1u8; 1000]), None);
    assert_eq!(
        (status, json(&body)["retained"].clone()),
        (200, Value::Bool(true))
    );
    let (status, body) = server.http("PUT", path, Some(&[2u8; 5000]), None);
    assert_eq!(
        (status, json(&body)),
        (
            200,
            json(r#"{"retained": false, "reason": "entry_too_large"}"#)
        )
    );
    assert_eq!(
        server.http("GET", path, None, None).0,
        404,
        "v1 must not answer after v2 was offered"
    );
}

#[test]
fn every_error_answers_the_json_shape() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_HTTP_BODY_LIMIT", "64KB")]);
    define_feature_store(&server);
    server.query("CREATE CATALOG fs PROPERTIES ('type'='feature_store')");
    let base = "/api/v1/catalogs/fs/caches/feature_store/fs-features";
    let long_uri = format!("{base}/{}", "k".repeat(20_000));
    let big = vec![b'x'; 100_000];
    let cases: Vec<(&str, String, Option<&[u8]>, u16)> = vec![
        ("PUT", format!("{base}/big"), Some(&big), 413),
        ("POST", "/api/v1/sql".to_owned(), Some(&big), 413),
        ("GET", format!("{base}/%FF"), None, 400),
        ("GET", "/nosuch".to_owned(), None, 404),
        ("DELETE", "/api/v1/sql".to_owned(), None, 405),
        ("GET", long_uri, None, 414),
        ("GET", format!("{base}/missing"), None, 404),
    ];
    for (method, path, body, status) in cases {
        let (got, text) = server.http(method, &path, body, None);
        let shown = &path[..path.len().min(60)];
        assert_eq!(got, status, "{method} {shown}: {text}");
        let answer = json(&text);
        assert!(
            answer["error"]["code"].is_u64() && answer["error"]["message"].is_string(),
            "{method} {shown}: {text}"
        );
    }
}

#[test]
fn look_aside_routes_leave_built_in_caches_alone() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_SAMPLE_CATALOG", "true")]);
    let path = "/api/v1/catalogs/sample/caches/default/schema/k";
    for method in ["PUT", "GET", "DELETE"] {
        let body: Option<&[u8]> = (method == "PUT").then_some(b"v".as_slice());
        let (status, text) = server.http(method, path, body, None);
        assert_eq!(status, 409, "{method}: {text}");
        assert!(
            json(&text)["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("built-in engine 'default'")),
            "{text}"
        );
    }
    // The catalog's own schema cache still works.
    let out = server.query("DESC sample.sales.orders");
    assert!(out.lines().count() > 1, "{out}");
}

#[test]
fn secrets_inside_values_are_masked_everywhere_they_are_shown() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(
        "CREATE CATALOG h PROPERTIES ('type'='hms', \
         'uri'='thrift://alice:hunter2@metastore:9083', \
         'jdbc_url'='jdbc:postgresql://db/meta?user=alice&password=hunter3', \
         'fs.azure.account.key.acct.dfs.core.windows.net'='hunter4', 'passwd'='hunter5')",
    );
    let shown = server.query("SHOW CREATE CATALOG h");
    let (status, api) = server.http("GET", "/api/v1/catalogs/h", None, None);
    assert_eq!(status, 200, "{api}");
    for text in [&shown, &api] {
        for secret in ["hunter2", "hunter3", "hunter4", "hunter5"] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
        }
        assert!(
            text.contains("thrift://alice:*XXX@metastore:9083"),
            "{text}"
        );
        assert!(text.contains("user=alice&password=*XXX"), "{text}");
    }
}
