//! The `metacache` service: parses flags, loads the configuration, opens the catalog store and
//! serves the MySQL and HTTP front ends until SIGINT or SIGTERM.

#[cfg(feature = "jemalloc")]
mod alloc;
mod limits;
mod peers;
mod sample;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use metacache_catalog::{CatalogManager, CatalogStore, FileStore, ManagerOptions, NodeConfig};
use metacache_cluster::{Advertised, PgStore};
use metacache_server::{Listeners, ServerOptions, serve};
use metacache_sql::SqlEngine;

/// Caches the metadata of external catalogs for query engines, within a node / catalog /
/// entry memory budget. Admins use any MySQL client; monitoring scrapes /metrics.
#[derive(Parser)]
#[command(name = "metacache", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (MySQL protocol and HTTP) until SIGINT or SIGTERM.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Configuration file (TOML; see config/metacache.example.toml). Without it, built-in
    /// defaults and METACACHE_* environment variables apply.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Directory of the catalog store [default: ./data]; overrides `data_dir`.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<String>,
    /// MySQL protocol address [default: 127.0.0.1:9030]; overrides `mysql_addr`. Port 0 picks one.
    #[arg(long, value_name = "HOST:PORT")]
    mysql_addr: Option<String>,
    /// HTTP address [default: 127.0.0.1:8030]; overrides `http_addr`. Port 0 picks one.
    #[arg(long, value_name = "HOST:PORT")]
    http_addr: Option<String>,
    /// Shared catalog store of a cluster, `postgres://user@host:port/db` [default: the file in
    /// the data directory]; overrides `store` (env METACACHE_STORE). docs/cluster.md.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// This node's name, its `FE_HOST` [default: host name and MySQL port in a cluster, host
    /// name alone]; overrides `fe_host`.
    #[arg(long, value_name = "NAME")]
    node_name: Option<String>,
    /// The address other nodes reach this node's HTTP API at [default: the bound address];
    /// overrides `advertise_http`.
    #[arg(long, value_name = "HOST:PORT")]
    advertise_http: Option<String>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    #[cfg(feature = "jemalloc")]
    alloc::install_probe();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match limits::raise_open_files() {
        Some(open_files) if open_files < 4096 => tracing::warn!(
            open_files,
            "the open-file limit is low for a server: raise the hard limit (ulimit -Hn)"
        ),
        Some(open_files) => tracing::debug!(open_files, "open-file limit"),
        None => {}
    }
    let Command::Serve(args) = cli.command;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("metacache")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run(args))
}

async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = NodeConfig::load(args.config.as_deref(), std::env::vars())?;
    for (key, value) in [
        ("data_dir", &args.data_dir),
        ("mysql_addr", &args.mysql_addr),
        ("http_addr", &args.http_addr),
        ("store", &args.store),
        ("fe_host", &args.node_name),
        ("advertise_http", &args.advertise_http),
    ] {
        if let Some(value) = value {
            config
                .set(key, value)
                .with_context(|| format!("--{}", key.replace('_', "-")))?;
        }
    }
    let listeners = Listeners::bind(&config.mysql_addr, &config.http_addr).await?;
    let (mysql, http) = (listeners.mysql_addr()?, listeners.http_addr()?);
    let clustered = !config.store.is_empty();
    let fe_host = match (config.fe_host.is_empty(), clustered) {
        (false, _) => config.fe_host.clone(),
        // Several nodes may share a host: the MySQL port tells them apart.
        (true, true) => format!(
            "{}:{}",
            metacache_catalog::memory::host_name(),
            mysql.port()
        ),
        (true, false) => metacache_catalog::memory::host_name(),
    };
    let (store, cluster): (Arc<dyn CatalogStore>, Option<Arc<PgStore>>) = if clustered {
        let (url, node) = (config.store.clone(), fe_host.clone());
        let pg = tokio::task::spawn_blocking(move || PgStore::open(&url, &node))
            .await?
            .context("cannot open the cluster store")?;
        let pg = Arc::new(pg);
        (Arc::clone(&pg) as Arc<dyn CatalogStore>, Some(pg))
    } else {
        (Arc::new(FileStore::open(&config.data_dir)?), None)
    };
    let server_options = ServerOptions::from_config(&config)?;
    let mut options = ManagerOptions::new(store);
    options.config = config.clone();
    let manager =
        Arc::new(tokio::task::spawn_blocking(move || CatalogManager::open(options)).await??);
    if let Some(pg) = &cluster {
        let advertised = if config.advertise_http.is_empty() {
            http.to_string()
        } else {
            config.advertise_http.clone()
        };
        metacache_cluster::follow::spawn(
            pg,
            Arc::clone(&manager),
            Advertised {
                http: advertised,
                mysql: mysql.to_string(),
            },
        );
        tracing::info!(store = %pg.describe(), node = %fe_host, "joined the cluster");
    }
    // The sample catalogs are a single node's first start; a cluster defines its own.
    if config.sample_catalog && !clustered {
        let (manager, data_dir) = (Arc::clone(&manager), config.data_dir.clone());
        let created =
            tokio::task::spawn_blocking(move || sample::create_on_first_start(&manager, &data_dir))
                .await??;
        if created {
            tracing::info!(
                catalogs = %[sample::NAME, sample::ICEBERG_NAME, sample::PAIMON_NAME, sample::LANCE_NAME].join(", "),
                "created the sample catalogs (first start)"
            );
        }
    }
    let peers = cluster.as_ref().map(|pg| {
        Arc::new(peers::ClusterPeers::new(
            Arc::clone(pg),
            Some(config.http_token.clone()),
        )) as Arc<dyn metacache_sql::system::peers::Peers>
    });
    let engine = SqlEngine::with_peers(Arc::clone(&manager), &fe_host, peers);
    tracing::info!(%mysql, %http, data_dir = %config.data_dir.display(), catalogs = manager.catalogs().len(), "metacache ready");
    // One machine-readable line on stdout: scripts and tests read the bound ports from it.
    #[allow(clippy::print_stdout)]
    {
        println!("metacache ready mysql={mysql} http={http}");
    }
    serve(listeners, engine, server_options, shutdown_signal()).await?;
    tracing::info!("metacache stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(error) => {
                    tracing::warn!("cannot listen for SIGTERM: {error}");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("shutting down");
}
