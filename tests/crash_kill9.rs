//! Catalogs survive `kill -9` at any point of a statement: a writer process runs a stream of
//! CREATE / ALTER / DROP CATALOG statements and is killed with SIGKILL at a random moment,
//! over and over; after each kill the store holds every acknowledged statement, and the one
//! in flight either entirely or not at all.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use metacache_catalog::{CatalogStore, FileStore};
use metacache_tests::crash::{Model, Op, mix};

const ROUNDS: u64 = 40;

fn stored(dir: &std::path::Path) -> Model {
    let store = FileStore::open(dir).expect("the store opens after a crash");
    store
        .load()
        .expect("load")
        .catalogs
        .into_iter()
        .map(|c| {
            let properties = c.properties.map().clone();
            (c.name, properties)
        })
        .collect()
}

#[test]
fn acknowledged_catalogs_survive_sigkill_mid_statement() {
    let seed = std::env::var("METACACHE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("crash test seed {seed} (METACACHE_FUZZ_SEED to replay)");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut model = Model::new();
    let mut next_index = 0u64;
    let (mut in_flight_kept, mut in_flight_lost) = (0, 0);
    for round in 0..ROUNDS {
        let random = mix(seed ^ (round << 32));
        let mut child = Command::new(env!("CARGO_BIN_EXE_catalog-writer"))
            .arg(dir.path())
            .arg(next_index.to_string())
            .arg(seed.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("writer starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let kill_after = 1 + random % 40;
        let mut acks = 0;
        let mut begun = 0;
        let mut in_flight: Option<Op> = None;
        let mut apply = |line: &str, model: &mut Model, in_flight: &mut Option<Op>| -> bool {
            if let Some(op) = line.strip_prefix("begin ") {
                *in_flight = Some(serde_json::from_str(op).expect("op"));
                begun += 1;
                false
            } else if let Some(op) = line.strip_prefix("ack ") {
                let op: Op = serde_json::from_str(op).expect("op");
                assert_eq!(in_flight.as_ref(), Some(&op));
                op.apply(model);
                *in_flight = None;
                true
            } else {
                panic!("unexpected line {line}");
            }
        };
        for line in lines.by_ref() {
            let line = line.expect("line");
            if apply(&line, &mut model, &mut in_flight) {
                acks += 1;
                if acks == kill_after {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_micros(random % 3000));
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("reaped");
        assert_eq!(
            status.code(),
            None,
            "round {round}: the writer died of the kill, not of an error"
        );
        // Lines written before the kill are still in the pipe: those acks count too.
        for line in lines {
            let Ok(line) = line else { break };
            apply(&line, &mut model, &mut in_flight);
        }
        let on_disk = stored(dir.path());
        match in_flight {
            None => assert_eq!(
                on_disk, model,
                "round {round}: every acknowledged statement"
            ),
            Some(op) => {
                let mut with = model.clone();
                op.apply(&mut with);
                if on_disk == with {
                    in_flight_kept += 1;
                    model = with;
                } else {
                    in_flight_lost += 1;
                    assert_eq!(
                        on_disk, model,
                        "round {round}: acknowledged state, or it plus {op:?}"
                    );
                }
            }
        }
        // The writer numbers its statements; the next one starts after the last it began.
        next_index += begun;
    }
    eprintln!(
        "{ROUNDS} kills: {} catalogs at the end; in-flight statement kept {in_flight_kept}, lost {in_flight_lost}",
        model.len()
    );
    assert!(!model.is_empty());
}
