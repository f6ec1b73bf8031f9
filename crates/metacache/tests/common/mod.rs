//! Starts the real `metacache` binary on free ports and talks to it with the real `mysql`
//! client and HTTP.
#![allow(dead_code)]

pub mod hms;
pub mod postgres;

/// A look-aside engine of one entry (a feature store: values the caller `PUT`s after a miss),
/// for the quota advisor's tests: a TTL of an hour and room for 100,000 values, so that only
/// a byte limit, if any, binds.
pub const FEATURE_STORE_ENGINE: &str = r#"{
    "catalog_types": ["feature_store"],
    "entries": [{"token": "features", "defaults": {"enable": true, "ttl": {"seconds": 3600}, "capacity": 100000}}],
    "caches": [{"entry_name": "fs-features", "source": {"entry": "features"}}]
}"#;

/// The look-aside path of the feature store's entry in catalog `fs`.
pub const FEATURE_STORE_BASE: &str = "/api/v1/catalogs/fs/caches/feature_store/fs-features";

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on now (for a helper server, or a dead address).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A running server.
pub struct Server {
    child: Child,
    /// The MySQL port.
    pub mysql_port: u16,
    /// `http://127.0.0.1:<port>`.
    pub http: String,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// Its log file.
    pub log: PathBuf,
}

/// The `mysql` (or `mariadb`) client on this machine.
pub fn mysql_client() -> &'static str {
    for candidate in ["mysql", "mariadb"] {
        if Command::new(candidate)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return candidate;
        }
    }
    panic!("no mysql client found: run `make test-deps` (scripts/test-deps.sh) first");
}

/// `metacache serve` on free loopback ports with `data_dir`.
fn serve_command(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_metacache"));
    command
        .args(["serve", "--mysql-addr", "127.0.0.1:0"])
        .args(["--http-addr", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir);
    command
}

/// Runs `metacache serve` with extra environment, expecting it to refuse to start: its stderr.
pub fn start_refused(data_dir: &Path, env: &[(&str, &str)]) -> String {
    let mut command = serve_command(data_dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("metacache runs");
    assert!(
        !output.status.success(),
        "metacache started with {env:?}; it should have refused"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What the client printed.
pub struct Reply {
    /// Standard output.
    pub out: String,
    /// Standard error.
    pub err: String,
    /// Exit status zero.
    pub ok: bool,
}

impl Server {
    /// Starts the binary with `data_dir` and extra environment.
    pub fn start(data_dir: &Path, env: &[(&str, &str)]) -> Server {
        let log = data_dir.with_extension("log");
        let log_file = std::fs::File::create(&log).expect("log file");
        let mut command = serve_command(data_dir);
        command
            .stdout(Stdio::piped())
            .stderr(log_file)
            .stdin(Stdio::null())
            // Tests start from empty catalogs unless they ask for the sample one.
            .env("METACACHE_SAMPLE_CATALOG", "false");
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("metacache starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        let mut reader = BufReader::new(stdout);
        let started = Instant::now();
        while !line.starts_with("metacache ready") {
            line.clear();
            if reader.read_line(&mut line).expect("read") == 0 {
                let log_text = std::fs::read_to_string(&log).unwrap_or_default();
                panic!("metacache exited before it was ready:\n{log_text}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "not ready in a minute"
            );
        }
        let field = |name: &str| -> String {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
                .expect("address")
                .to_owned()
        };
        let mysql_port = field("mysql")
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port");
        let http = format!("http://{}", field("http"));
        Server {
            child,
            mysql_port,
            http,
            data_dir: data_dir.to_path_buf(),
            log,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of the server's `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`: the peak).
    pub fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }

    /// CPU time the server has used, user and system, in clock ticks (`/proc/<pid>/stat`).
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("the server's /proc stat");
        // Fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        // utime and stime are the 14th and 15th fields; the 3rd is fields[0] here.
        let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
        ticks(11)
            .zip(ticks(12))
            .map(|(user, system)| user + system)
            .expect("utime and stime in /proc stat")
    }

    /// Runs `sql` with the mysql client as `root` (no password), tab-separated output.
    pub fn mysql(&self, sql: &str) -> Reply {
        self.mysql_as(&["-u", "root"], sql)
    }

    /// Runs `sql` with extra client arguments.
    pub fn mysql_as(&self, args: &[&str], sql: &str) -> Reply {
        let output = Command::new(mysql_client())
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &self.mysql_port.to_string(),
                "--batch",
                "--raw",
                "--connect-timeout=10",
            ])
            .args(args)
            .args(["-e", sql])
            .stdin(Stdio::null())
            .output()
            .expect("mysql client runs");
        Reply {
            out: String::from_utf8_lossy(&output.stdout).into_owned(),
            err: String::from_utf8_lossy(&output.stderr).into_owned(),
            ok: output.status.success(),
        }
    }

    /// Runs the statements of `sql` through the client's standard input (no command-line
    /// length limit), with extra client arguments.
    pub fn mysql_stdin(&self, args: &[&str], sql: &str) -> Reply {
        use std::io::Write;
        let mut client = Command::new(mysql_client())
            .args(["-h", "127.0.0.1", "-P", &self.mysql_port.to_string()])
            .args(["-u", "root", "--batch"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mysql client runs");
        let mut stdin = client.stdin.take().expect("stdin");
        // Written from a thread: the client may answer before it has read everything.
        let sql = sql.to_owned();
        let writer = std::thread::spawn(move || stdin.write_all(sql.as_bytes()));
        let output = client.wait_with_output().expect("mysql client ends");
        let _ = writer.join();
        Reply {
            out: String::from_utf8_lossy(&output.stdout).into_owned(),
            err: String::from_utf8_lossy(&output.stderr).into_owned(),
            ok: output.status.success(),
        }
    }

    /// Runs `sql` and returns its output; panics with the error otherwise.
    pub fn query(&self, sql: &str) -> String {
        let reply = self.mysql(sql);
        assert!(reply.ok, "{sql}: {}", reply.err);
        reply.out
    }

    /// The statistics row of `entry` in `catalog`: `columns` (comma-separated) as text fields.
    pub fn cache_row(&self, catalog: &str, entry: &str, columns: &str) -> Vec<String> {
        let out = self.query(&format!(
            "SELECT {columns} FROM information_schema.catalog_meta_cache_statistics \
             WHERE catalog_name = '{catalog}' AND entry_name = '{entry}'"
        ));
        let row = out
            .lines()
            .nth(1)
            .unwrap_or_else(|| panic!("no row for {catalog}/{entry}: {out}"));
        row.split('\t').map(str::to_owned).collect()
    }

    /// Runs `sql`, which must fail, and returns the client's error line.
    pub fn fails(&self, sql: &str) -> String {
        let reply = self.mysql(sql);
        assert!(!reply.ok, "{sql} should fail but printed {}", reply.out);
        // The client echoes the failed statement before the error line in batch mode.
        reply
            .err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_owned()
    }

    /// Registers engine `name` over HTTP from its JSON `definition` (no token).
    pub fn define_engine(&self, name: &str, definition: &str) {
        let path = format!("/api/v1/engines/{name}");
        let (status, body) = self.http("PUT", &path, Some(definition.as_bytes()), None);
        assert_eq!(status, 200, "{body}");
    }

    /// An HTTP request: method, path, optional body, optional bearer token → status and body.
    pub fn http(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        token: Option<&str>,
    ) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let url = format!("{}{path}", self.http);
        let auth = token.map(|t| format!("Bearer {t}"));
        macro_rules! send {
            ($builder:expr) => {{
                let mut b = $builder;
                if let Some(a) = &auth {
                    b = b.header("Authorization", a);
                }
                b.send(body.unwrap_or_default())
            }};
        }
        macro_rules! call {
            ($builder:expr) => {{
                let mut b = $builder;
                if let Some(a) = &auth {
                    b = b.header("Authorization", a);
                }
                b.call()
            }};
        }
        let response = match method {
            "GET" => call!(agent.get(&url)),
            "DELETE" => call!(agent.delete(&url)),
            "POST" => send!(agent.post(&url)),
            "PUT" => send!(agent.put(&url)),
            "PATCH" => send!(agent.patch(&url)),
            other => panic!("method {other}"),
        };
        let mut response = response.expect("HTTP request");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, text)
    }

    /// SIGTERM and wait: the graceful path.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// SIGKILL and wait.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh data directory.
pub fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    (dir, data)
}

/// The fixture Hive warehouse of the repository.
pub fn fixture_warehouse() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hive/warehouse")
}

/// `promtool check metrics` of an exposition: `Ok` when it passes without a complaint, else
/// what promtool said.
pub fn promtool_check(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool: run `make test-deps` (scripts/test-deps.sh) first");
    promtool
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let output = promtool.wait_with_output().expect("promtool");
    let complaints = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() && complaints.trim().is_empty() {
        Ok(())
    } else {
        Err(complaints)
    }
}

/// Uploads every file below `dir` to `<endpoint>/<bucket>/<prefix>/…`, unsigned.
pub fn upload(endpoint: &str, bucket: &str, prefix: &str, dir: &Path) -> usize {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut stack = vec![dir.to_path_buf()];
    let mut uploaded = 0;
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read fixture dir") {
            let path = entry.expect("fixture entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).expect("below the fixture");
            // Partition directories hold `=` and `:`; S3 keys take them percent-encoded in URLs.
            let key: Vec<String> = relative
                .iter()
                .map(|part| {
                    part.to_str()
                        .expect("utf-8 name")
                        .replace('%', "%25")
                        .replace(':', "%3A")
                        .replace(' ', "%20")
                })
                .collect();
            let url = format!("{endpoint}/{bucket}/{prefix}/{}", key.join("/"));
            let bytes = std::fs::read(&path).expect("fixture file");
            agent.put(&url).send(&bytes[..]).expect("unsigned upload");
            uploaded += 1;
        }
    }
    uploaded
}

/// A size as the dashboard writes it in a statement: the largest unit that divides it exactly
/// (`64KB`, `212B`).
pub fn exact_size(bytes: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB"];
    let (mut value, mut unit) = (bytes, 0);
    while unit < units.len() - 1 && value >= 1024 && value % 1024 == 0 {
        value /= 1024;
        unit += 1;
    }
    format!("{value}{}", units[unit])
}

/// The statement that applies a point of a catalog's advice curve (`GET …/advice`, its
/// `catalog.points[i]`) as the dashboard writes it for that point's size: the catalog's limit,
/// and each cache with a limit of its own set to its share of the best split, or disabled when
/// its share is nothing (its limit then the catalog's, as no entry's may exceed it).
/// `catalog` is the name as the statement quotes it.
pub fn split_statement(catalog: &str, point: &serde_json::Value) -> String {
    let bytes = point["cache_bytes"].as_u64().expect("cache_bytes");
    let mut pairs = vec![format!("'meta.cache.max-weight' = '{}'", exact_size(bytes))];
    for share in point["split"].as_array().expect("split") {
        let property = share["property"].as_str().expect("property");
        let Some(entry) = property.strip_suffix(".max-weight") else {
            continue;
        };
        if property == "meta.cache.max-weight" {
            continue;
        }
        let (enable, limit) = match share["bytes"].as_u64().expect("bytes") {
            0 => (false, bytes),
            share => (true, share),
        };
        pairs.push(format!("'{entry}.enable' = '{enable}'"));
        pairs.push(format!("'{property}' = '{}'", exact_size(limit)));
    }
    format!(
        "ALTER CATALOG {catalog} SET PROPERTIES ({})",
        pairs.join(", ")
    )
}
