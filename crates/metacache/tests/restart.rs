//! Catalogs survive restarts of the real binary: a graceful stop, and SIGKILL in the middle of
//! a stream of statements sent by the real mysql client.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use rand::{RngExt, SeedableRng};

#[test]
fn catalogs_come_back_after_a_graceful_restart() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    server.query("CREATE CATALOG a COMMENT 'first' PROPERTIES ('type'='hms', 'password'='pw', 'meta.cache.max-weight'='4GB')");
    server.query("CREATE CATALOG b PROPERTIES ('type'='iceberg')");
    server.query("ALTER CATALOG a SET PROPERTIES ('meta.cache.hive.file.ttl-second'='60')");
    let before = server.query("SHOW CREATE CATALOG a");
    server.stop();
    let server = Server::start(&data, &[]);
    assert_eq!(server.query("SHOW CREATE CATALOG a"), before);
    assert_eq!(
        server.query("SELECT catalog_name FROM catalogs ORDER BY 1"),
        "catalog_name\na\nb\n"
    );
    assert_eq!(
        server.query("SELECT ttl_second FROM catalog_meta_cache_statistics WHERE catalog_name='a' AND entry_name='hive-file' AND engine_name='hive'"),
        "ttl_second\n60\n"
    );
}

#[test]
fn acknowledged_catalogs_survive_sigkill_of_the_server() {
    let seed: u64 = rand::rng().random();
    eprintln!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (_tmp, data) = data_dir();
    let mut acknowledged: Vec<String> = Vec::new();
    let mut next = 0;
    for round in 0..5 {
        let server = Server::start(&data, &[]);
        let mut client = Command::new(mysql_client())
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &server.mysql_port.to_string(),
                "-u",
                "root",
                "--batch",
                "--skip-column-names",
                "--unbuffered",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mysql client");
        let mut stdin = client.stdin.take().expect("stdin");
        let stdout = client.stdout.take().expect("stdout");
        let writer = std::thread::spawn(move || {
            for i in next..next + 400 {
                let sql = format!(
                    "CREATE CATALOG c{i} PROPERTIES ('type'='hms', 'password'='pw{i}', 'meta.cache.max-weight'='{}MB');\nSELECT 'ack c{i}';\n",
                    i + 1
                );
                if stdin.write_all(sql.as_bytes()).is_err() {
                    break;
                }
            }
        });
        let kill_after = rng.random_range(5..60);
        let mut lines = BufReader::new(stdout).lines();
        let mut acked_this_round = 0;
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(name) = line.strip_prefix("ack ") {
                acknowledged.push(name.to_owned());
                acked_this_round += 1;
                if acked_this_round == kill_after {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_micros(rng.random_range(0..2000)));
        server.kill9();
        for line in lines.map_while(Result::ok) {
            if let Some(name) = line.strip_prefix("ack ") {
                acknowledged.push(name.to_owned());
            }
        }
        let _ = client.wait();
        let _ = writer.join();
        next += 400;
        let server = Server::start(&data, &[]);
        let listed = server.query("SELECT catalog_name FROM catalogs");
        let present: std::collections::HashSet<&str> = listed.lines().skip(1).collect();
        for name in &acknowledged {
            assert!(
                present.contains(name.as_str()),
                "round {round}: acknowledged {name} is missing"
            );
        }
        let create = server.query(&format!(
            "SHOW CREATE CATALOG {}",
            acknowledged[acknowledged.len() - 1]
        ));
        assert!(create.contains("\"type\" = \"hms\""), "{create}");
        server.stop();
    }
    eprintln!(
        "{} acknowledged catalogs survived 5 kills",
        acknowledged.len()
    );
}
