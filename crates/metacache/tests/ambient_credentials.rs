//! The node's own AWS credentials (its `AWS_*` environment) are lent only to a catalog that asks
//! for them with `s3.use_environment_credentials = true` (issue 12), end to end: the binary with
//! keys in its environment, against SeaweedFS that serves reads only to those keys.

mod common;
#[path = "../../metacache-sources/tests/common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use std::path::Path;

use common::*;
use seaweed::Seaweed;

const ACCESS_KEY: &str = "AKIDNODEOWN";
const SECRET_KEY: &str = "secret-key-of-the-node";

/// Anonymous clients may list and write (the fixture is uploaded unsigned), not read; the
/// node's keys may do everything.
fn identities() -> String {
    format!(
        r#"{{"identities":[
            {{"name":"anonymous","actions":["List","Write"]}},
            {{"name":"node","credentials":[{{"accessKey":"{ACCESS_KEY}","secretKey":"{SECRET_KEY}"}}],
              "actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
    )
}

#[test]
fn the_node_credentials_are_lent_only_to_a_catalog_that_asks() {
    let Some(s3) = Seaweed::start_with_identities(&["lake"], &identities()) else {
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hive/warehouse");
    assert!(upload(&s3.s3_endpoint, "lake", "wh", &fixture) > 20);
    let (_tmp, data) = data_dir();
    let server = Server::start(
        &data,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    let create = |name: &str, extra: &str| {
        server.query(&format!(
            r#"CREATE CATALOG {name} PROPERTIES ("type" = "hms", "warehouse" = "s3://lake/wh", "s3.endpoint" = "{}"{extra})"#,
            s3.s3_endpoint
        ))
    };
    create("unsigned", "");
    create("lent", r#", "s3.use_environment_credentials" = "true""#);

    // Without asking, the catalog reads unsigned: it may list (anonymous List) but not read.
    assert!(
        server
            .query("SHOW DATABASES FROM unsigned")
            .contains("sales")
    );
    let reply = server.mysql("DESC unsigned.sales.orders");
    assert!(
        !reply.ok
            && reply.err.contains("lacked the necessary privileges")
            && reply.err.contains("403"),
        "{}",
        reply.err
    );
    // Asking lends the node's keys: the same read is signed and succeeds.
    let described = server.query("DESC lent.sales.orders");
    assert!(described.contains("amount"), "{described}");
    // The keys never show, in SHOW CREATE CATALOG or the log.
    let shown = server.query("SHOW CREATE CATALOG lent");
    assert!(
        !shown.contains(SECRET_KEY) && !shown.contains(ACCESS_KEY),
        "{shown}"
    );
    assert!(!server.log_text().contains(SECRET_KEY));
}
