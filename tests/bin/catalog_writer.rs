//! A process that runs an endless stream of catalog statements against a data directory, for
//! the crash test: it prints `begin <op>` before each statement and `ack <op>` after the
//! statement returned (so after it is durable), until it is killed.
//!
//! Usage: `catalog-writer <data-dir> <first-index> <seed>`

use std::io::Write;
use std::sync::Arc;

use metacache_catalog::memory::{MemorySource, NodeMemory};
use metacache_catalog::{CatalogManager, CreateCatalog, FileStore, ManagerOptions, Properties};
use metacache_tests::crash::{Op, mix};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, first, seed] = args.as_slice() else {
        anyhow::bail!("usage: catalog-writer <data-dir> <first-index> <seed>");
    };
    let first: u64 = first.parse()?;
    let seed: u64 = seed.parse()?;
    let mut options = ManagerOptions::new(Arc::new(FileStore::open(dir)?));
    options.node_memory = Some(NodeMemory {
        bytes: 1 << 30,
        source: MemorySource::Configured,
    });
    let manager = CatalogManager::open(options)?;
    let mut out = std::io::stdout().lock();
    for index in first.. {
        let names: Vec<String> = manager
            .catalogs()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let op = Op::choose(index, mix(seed ^ index), &names);
        writeln!(out, "begin {}", serde_json::to_string(&op)?)?;
        out.flush()?;
        match &op {
            Op::Create { name, properties } => {
                manager.create_catalog(CreateCatalog {
                    name: name.clone(),
                    properties: Properties::from_pairs(properties.clone()),
                    ..CreateCatalog::default()
                })?;
            }
            Op::Alter { name, properties } => {
                manager.alter_catalog(name, Properties::from_pairs(properties.clone()))?;
            }
            Op::Drop { name } => {
                manager.drop_catalog(name, false)?;
            }
        }
        writeln!(out, "ack {}", serde_json::to_string(&op)?)?;
        out.flush()?;
    }
    Ok(())
}
