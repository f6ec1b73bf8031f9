//! The `metacache` service: parses flags, loads the configuration, opens the catalog store and
//! serves the MySQL and HTTP front ends until SIGINT or SIGTERM.

#[cfg(feature = "jemalloc")]
mod alloc;
mod limits;
mod sample;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use metacache_catalog::{CatalogManager, FileStore, ManagerOptions, NodeConfig};
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
    ] {
        if let Some(value) = value {
            config
                .set(key, value)
                .with_context(|| format!("--{}", key.replace('_', "-")))?;
        }
    }
    let store = FileStore::open(&config.data_dir)?;
    let fe_host = if config.fe_host.is_empty() {
        metacache_catalog::memory::host_name()
    } else {
        config.fe_host.clone()
    };
    let listeners = Listeners::bind(&config.mysql_addr, &config.http_addr).await?;
    let server_options = ServerOptions::from_config(&config)?;
    let mut options = ManagerOptions::new(Arc::new(store));
    options.config = config.clone();
    let manager =
        Arc::new(tokio::task::spawn_blocking(move || CatalogManager::open(options)).await??);
    if config.sample_catalog {
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
    let engine = SqlEngine::new(Arc::clone(&manager), &fe_host);
    let (mysql, http) = (listeners.mysql_addr()?, listeners.http_addr()?);
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
