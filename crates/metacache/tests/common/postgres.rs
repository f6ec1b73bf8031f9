//! A private PostgreSQL for tests: its own data directory and a free loopback port, started
//! with the distribution's binaries (`/usr/lib/postgresql/<version>/bin`, which
//! `scripts/test-deps.sh` installs), stopped and removed when dropped. Independent of any server
//! already running. As root, `initdb` and `postgres` run as the `postgres` user.
//!
//! `start` returns `None`, after printing why, only when no PostgreSQL binaries are installed.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running private PostgreSQL.
pub struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

fn binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// Initialises and starts a new instance.
    pub fn start() -> Option<Postgres> {
        let Some(bin) = binaries() else {
            eprintln!(
                "SKIPPED: no PostgreSQL binaries under /usr/lib/postgresql; run scripts/test-deps.sh (apt-get install postgresql) for the cluster tests"
            );
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("metacache-pg")
            .tempdir()
            .expect("temp dir");
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(status.success(), "chown the PostgreSQL directory");
        }
        let pg = Postgres {
            bin,
            port: super::free_port(),
            dir,
        };
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(pg.data())
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.resume();
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        command.stdin(Stdio::null());
        command
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Runs `statement` with `psql` as `postgres`; its output.
    pub fn sql(&self, statement: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", "postgres", "-At", "-c", statement])
            .stdin(Stdio::null())
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "{statement}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops the server (fast shutdown: sessions are ended).
    pub fn pause(&self) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "stop"])
            .output()
            .expect("pg_ctl stop");
        assert!(
            out.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts it again (also the first start).
    pub fn resume(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(&log)
            .args(["-o", &options, "-w", "-t", "60", "start"])
            .output()
            .expect("pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "PostgreSQL did not listen on {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
