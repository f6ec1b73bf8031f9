//! Scan scopes over HTTP (§8.2, issue 18) against the real binary, real vending servers and a
//! real S3 server (SeaweedFS): pylance's Lance REST namespace vending SeaweedFS credentials
//! with `expires_at_millis`, and an Iceberg REST catalog (a fixture speaking the public
//! protocol, tests/fixtures/iceberg/vending_rest.py) vending SeaweedFS identities through
//! `storage-credentials` and renewing them through `/credentials`. Each handed-out credential is
//! used: pylance opens the dataset with it, curl signs an S3 GET with it.

mod common;
#[allow(dead_code)]
#[path = "../../metacache-sources/tests/common/lance_rest.rs"]
mod lance_rest;
#[allow(dead_code)]
#[path = "../../metacache-sources/tests/common/seaweed.rs"]
mod seaweed;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, data_dir, upload};
use lance_rest::{LanceRest, namespace_copy};
use seaweed::Seaweed;
use serde_json::Value;

/// SeaweedFS with the anonymous identity (uploads, readiness) and two read-only identities a
/// vending server hands out.
const IDENTITIES: &str = r#"{"identities":[
 {"name":"anonymous","actions":["Admin","Read","Write","List","Tagging"]},
 {"name":"scan-a","credentials":[{"accessKey":"SCANKEYA0000001","secretKey":"scan-secret-a-0001"}],"actions":["Read","List"]},
 {"name":"scan-b","credentials":[{"accessKey":"SCANKEYB0000002","secretKey":"scan-secret-b-0002"}],"actions":["Read","List"]}
]}"#;
const SECRETS: [&str; 2] = ["scan-secret-a-0001", "scan-secret-b-0002"];

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn open_scope(server: &Server, body: &str) -> (u16, Value) {
    let (status, text) = server.http("POST", "/api/v1/scopes", Some(body.as_bytes()), None);
    (status, json(&text))
}

fn access(
    server: &Server,
    scope: &str,
    catalog: &str,
    table: (&str, &str),
    min: u64,
) -> (u16, Value) {
    let path = format!(
        "/api/v1/scopes/{scope}/catalogs/{catalog}/databases/{}/tables/{}/access?min_remaining_ms={min}",
        table.0, table.1
    );
    let (status, text) = server.http("GET", &path, None, None);
    (status, json(&text))
}

/// Nothing an admin or a scraper sees holds a vended secret.
fn assert_no_secret_outside_access(server: &Server) {
    let scopes = server.query("SELECT * FROM information_schema.catalog_meta_cache_scopes");
    let (_, listed) = server.http("GET", "/api/v1/scopes", None, None);
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    let log = server.log_text();
    for secret in SECRETS {
        for (what, text) in [
            ("scopes table", &scopes),
            ("GET /api/v1/scopes", &listed),
            ("/metrics", &metrics),
            ("log", &log),
        ] {
            assert!(
                !text.contains(secret),
                "{what} shows a vended secret:\n{text}"
            );
        }
    }
}

/// The Lance REST namespace of pylance, rooted on SeaweedFS, vending read-only SeaweedFS
/// credentials that live 4 s (refresh window: 1 s, the floor).
#[test]
fn lance_rest_scopes_share_refresh_and_isolate_vended_credentials() {
    let Some(s3) = Seaweed::start_with_identities(&["lance"], IDENTITIES) else {
        return;
    };
    let fixture = namespace_copy();
    assert!(upload(&s3.s3_endpoint, "lance", "ns", fixture.path()) > 0);
    let vend = [
        ("aws_endpoint", s3.s3_endpoint.as_str()),
        ("aws_access_key_id", "SCANKEYA0000001"),
        ("aws_secret_access_key", SECRETS[0]),
        ("aws_region", "us-east-1"),
        ("allow_http", "true"),
    ];
    let Some(namespace) = LanceRest::serve(fixture, "s3://lance/ns", &vend, Some(4000)) else {
        return;
    };
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG lr PROPERTIES ('type' = 'lance', 'lance.namespace.type' = 'rest', \
         'uri' = '{}')",
        namespace.uri
    ));

    let (status, opened) = open_scope(
        &server,
        r#"{"catalog": "lr", "label": "scan-42", "idle_timeout_ms": 60000}"#,
    );
    assert_eq!(status, 201, "{opened}");
    let scope = opened["scope_id"].as_str().expect("scope_id").to_owned();
    assert_eq!(scope.len(), 32, "128 random bits: {scope}");
    assert!(opened["expires_at_millis"].as_u64().expect("expiry") > now_ms() + 50_000);

    // 8 tasks at once: one describe, one credential, shared.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (http, scope) = (server.http.clone(), scope.clone());
            std::thread::spawn(move || {
                let url = format!(
                    "{http}/api/v1/scopes/{scope}/catalogs/lr/databases/sales/tables/orders/access"
                );
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut response = agent.get(&url).call().expect("access");
                let status = response.status().as_u16();
                let body = response.body_mut().read_to_string().expect("body");
                assert_eq!(status, 200, "{body}");
                json(&body)
            })
        })
        .collect();
    let answers: Vec<Value> = tasks.into_iter().map(|t| t.join().expect("task")).collect();
    let first = &answers[0];
    for answer in &answers {
        assert_eq!(
            answer["expires_at_millis"], first["expires_at_millis"],
            "shared: {answer}"
        );
    }
    let location = first["location"].as_str().expect("location").to_owned();
    assert!(
        location.starts_with("s3://lance/ns/") && location.ends_with("_sales$orders"),
        "{location}"
    );
    assert_eq!(first["vended"], true);
    assert_eq!(
        first["storage_options"]["aws_access_key_id"],
        "SCANKEYA0000001"
    );
    let expires = first["expires_at_millis"].as_u64().expect("vended expiry");
    assert!(expires > now_ms() && expires <= now_ms() + 4000, "{first}");
    assert_eq!(
        first["refresh_at_millis"].as_u64(),
        Some(expires - 1000),
        "window: the 1 s floor"
    );

    // The handed-out options open the dataset in a real Lance reader.
    let options = first["storage_options"].to_string();
    let rows = Command::new("python3")
        .args([
            "-c",
            "import json, sys, lance; print(lance.dataset(sys.argv[1], storage_options=json.loads(sys.argv[2])).count_rows())",
            &location,
            &options,
        ])
        .output()
        .expect("python3");
    assert!(
        rows.status.success(),
        "{}",
        String::from_utf8_lossy(&rows.stderr)
    );
    assert!(
        String::from_utf8_lossy(&rows.stdout)
            .trim()
            .parse::<u64>()
            .expect("a count")
            > 0
    );

    // Another scope resolves on its own.
    let (_, other) = open_scope(&server, r#"{"catalog": "lr", "label": "scan-43"}"#);
    let other_id = other["scope_id"].as_str().expect("id").to_owned();
    let (status, _) = access(&server, &other_id, "lr", ("sales", "orders"), 0);
    assert_eq!(status, 200);
    let resolves = |id: &str| {
        server.query(&format!(
            "SELECT RESOLVE_COUNT FROM information_schema.catalog_meta_cache_scopes WHERE SCOPE_ID = '{id}'"
        )).lines().nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(resolves(&scope), "1", "8 tasks, one call");
    assert_eq!(resolves(&other_id), "1", "the other scope made its own");

    // Past the refresh point: a caller asking for 2 s of life never gets less.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut refreshed = None;
    while Instant::now() < deadline {
        let (status, answer) = access(&server, &scope, "lr", ("sales", "orders"), 2000);
        assert_eq!(status, 200, "{answer}");
        let left = answer["expires_at_millis"]
            .as_u64()
            .expect("expiry")
            .saturating_sub(now_ms());
        assert!(left + 50 >= 2000, "handed out {left} ms of life");
        if answer["expires_at_millis"].as_u64() != Some(expires) {
            refreshed = Some(answer);
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(refreshed.is_some(), "the credential was never refreshed");

    // More life than the source ever vends: a clear 422, no call.
    let (status, error) = access(&server, &scope, "lr", ("sales", "orders"), 60_000);
    assert_eq!(status, 422, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("min_remaining_ms")
    );

    // An unknown table, a scope of another catalog, bad input: errors, nothing opened.
    let (status, _) = access(&server, &scope, "lr", ("sales", "nope"), 0);
    assert_eq!(status, 404);
    let (status, error) = access(&server, &scope, "other", ("sales", "orders"), 0);
    assert_eq!(status, 400, "{error}");
    for (body, want) in [
        (r#"{"catalog": "nope"}"#, 404),
        (r#"{"catalog": "lr", "idle_timeout_ms": 5}"#, 400),
        (r#"{"catalog": "lr", "extra": 1}"#, 400),
        ("not json", 400),
    ] {
        let (status, error) = open_scope(&server, body);
        assert_eq!(status, want, "{body}: {error}");
    }
    let (status, _) = server.http("GET", &format!("/api/v1/scopes/{scope}/catalogs/lr/databases/sales/tables/orders/access?min_remaining_ms=soon"), None, None);
    assert_eq!(status, 400);

    // The system table: one row per scope, counts only.
    let row = server.query(&format!(
        "SELECT CATALOG_NAME, LABEL, ENTRY_COUNT, LEASE_COUNT, REFRESH_COUNT >= 1, \
         EARLIEST_CREDENTIAL_EXPIRY <> '' FROM information_schema.catalog_meta_cache_scopes \
         WHERE SCOPE_ID = '{scope}'"
    ));
    assert_eq!(row.lines().nth(1), Some("lr\tscan-42\t2\t0\t1\t1"), "{row}");
    let (_, metrics) = server.http("GET", "/metrics", None, None);
    assert!(metrics.contains("metacache_scopes_open 2"), "{metrics}");
    common::promtool_check(&metrics).expect("promtool");
    assert_no_secret_outside_access(&server);

    // Bounds: the node's limit, changed live.
    server.query("ADMIN SET FRONTEND CONFIG ('external_meta_cache_scope_max_count' = '2')");
    let (status, error) = open_scope(&server, r#"{"catalog": "lr"}"#);
    assert_eq!(status, 429, "{error}");

    // Closing: the scope's id stops working; DROP CATALOG closes the rest.
    let (status, closed) = server.http("DELETE", &format!("/api/v1/scopes/{scope}"), None, None);
    assert_eq!(status, 200, "{closed}");
    let (status, _) = access(&server, &scope, "lr", ("sales", "orders"), 0);
    assert_eq!(status, 404);
    server.query("DROP CATALOG lr");
    let (_, listed) = server.http("GET", "/api/v1/scopes", None, None);
    assert_eq!(
        json(&listed)["scopes"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
}

/// The Iceberg REST fixture: runs until dropped.
struct VendingRest {
    child: Child,
    uri: String,
}

impl VendingRest {
    fn start(metadata: &str, s3: &str, lifetime_ms: u64) -> VendingRest {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/iceberg/vending_rest.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args([metadata, s3, &lifetime_ms.to_string()])
            .args([
                "SCANKEYA0000001:scan-secret-a-0001",
                "SCANKEYB0000002:scan-secret-b-0002",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("PORT line");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("fixture did not start: {line:?}"));
        VendingRest {
            uri: format!("http://127.0.0.1:{port}"),
            child,
        }
    }

    fn calls(&self) -> Value {
        json(
            &ureq::get(&format!("{}/_calls", self.uri))
                .call()
                .expect("calls")
                .into_body()
                .read_to_string()
                .expect("body"),
        )
    }
}

impl Drop for VendingRest {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A signed S3 GET with the given key (curl's SigV4): the HTTP status.
fn signed_get(url: &str, key: &str, secret: &str) -> u16 {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "--user",
        ])
        .arg(format!("{key}:{secret}"))
        .arg(url)
        .output()
        .expect("curl");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

#[test]
fn iceberg_rest_scopes_renew_through_the_credentials_endpoint_and_keep_the_snapshot() {
    let Some(s3) = Seaweed::start_with_identities(&["warehouse"], IDENTITIES) else {
        return;
    };
    let warehouse =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/iceberg/warehouse");
    assert!(upload(&s3.s3_endpoint, "warehouse", "wh", &warehouse) > 0);
    let metadata_file = std::fs::read_dir(warehouse.join("shop/trips/metadata"))
        .expect("metadata dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".metadata.json"))
        .max()
        .expect("a metadata file");
    let metadata = format!("s3://warehouse/wh/shop/trips/metadata/{metadata_file}");
    // 3-second credentials: window 1 s.
    let rest = VendingRest::start(&metadata, &s3.s3_endpoint, 3000);
    let (_dir, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query(&format!(
        "CREATE CATALOG ice PROPERTIES ('type' = 'iceberg', 'iceberg.catalog.type' = 'rest', \
         'uri' = '{}', 's3.endpoint' = '{}', 's3.region' = 'us-east-1')",
        rest.uri, s3.s3_endpoint
    ));
    let (status, opened) = open_scope(&server, r#"{"catalog": "ice", "label": "q1"}"#);
    assert_eq!(status, 201, "{opened}");
    let scope = opened["scope_id"].as_str().expect("id").to_owned();

    let (status, first) = access(&server, &scope, "ice", ("shop", "trips"), 0);
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["metadata_location"], metadata.as_str());
    assert_eq!(first["location"], "s3://warehouse/wh/shop/trips");
    assert_eq!(
        first["storage_options"]["s3.endpoint"],
        s3.s3_endpoint.as_str()
    );
    let key = first["storage_options"]["s3.access-key-id"]
        .as_str()
        .expect("key")
        .to_owned();
    let secret = first["storage_options"]["s3.secret-access-key"]
        .as_str()
        .expect("secret")
        .to_owned();
    let expires = first["expires_at_millis"].as_u64().expect("expiry");
    assert_eq!(
        first["storage_options"]["s3.session-token-expires-at-ms"].as_str(),
        Some(expires.to_string().as_str())
    );
    // The credential is a real SeaweedFS identity; a made-up one is refused.
    let object = format!(
        "{}/warehouse/wh/shop/trips/metadata/{metadata_file}",
        s3.s3_endpoint
    );
    assert_eq!(
        signed_get(&object, &key, &secret),
        200,
        "the vended key reads the table"
    );
    assert_eq!(
        signed_get(&object, &key, "wrong-secret"),
        403,
        "SeaweedFS checks signatures"
    );

    // Renewal goes through /credentials and keeps the metadata file the scan started on.
    let deadline = Instant::now() + Duration::from_secs(20);
    let renewed = loop {
        assert!(Instant::now() < deadline, "never renewed: {}", rest.calls());
        let (status, answer) = access(&server, &scope, "ice", ("shop", "trips"), 1000);
        assert_eq!(status, 200, "{answer}");
        if answer["expires_at_millis"].as_u64() != Some(expires) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(renewed["metadata_location"], metadata.as_str());
    assert_ne!(
        renewed["storage_options"]["s3.access-key-id"],
        key.as_str(),
        "the next identity"
    );
    let calls = rest.calls();
    assert_eq!(calls["load_table"], 1, "{calls}");
    assert!(calls["credentials"].as_u64() >= Some(1), "{calls}");

    // The vending server fails: the still-valid credential is served and says so; once it has
    // expired, callers get a 503 with Retry-After and the server is not hammered.
    ureq::post(&format!("{}/_fail/1000", rest.uri))
        .send_empty()
        .expect("fail mode");
    let renewed_expiry = renewed["expires_at_millis"].as_u64().expect("expiry");
    let mut flagged = false;
    while now_ms() < renewed_expiry {
        let (status, answer) = access(&server, &scope, "ice", ("shop", "trips"), 0);
        if status == 200 && !answer["refresh_failed"].is_null() {
            flagged = true;
            assert!(
                answer["refresh_failed"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("503"),
                "{answer}"
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        flagged,
        "the failed refresh was never reported with the old credential"
    );
    let before = rest.calls()["credentials"].as_u64().unwrap_or(0);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!(
        "{}/api/v1/scopes/{scope}/catalogs/ice/databases/shop/tables/trips/access",
        server.http
    );
    let mut unavailable = 0;
    for _ in 0..200 {
        let response = agent.get(&url).call().expect("access");
        if response.status().as_u16() == 503 || response.status().as_u16() == 502 {
            assert!(
                response.headers().get("retry-after").is_some(),
                "Retry-After"
            );
            unavailable += 1;
        }
    }
    let after = rest.calls()["credentials"].as_u64().unwrap_or(0);
    assert!(
        unavailable > 150,
        "{unavailable} of 200 refused while the source is down"
    );
    assert!(
        after - before <= 3,
        "200 callers made {} calls to a failing source",
        after - before
    );
    assert_no_secret_outside_access(&server);
}
