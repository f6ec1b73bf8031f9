//! A real Lance REST namespace server for tests: pylance's `RestAdapter` over a copy of the
//! committed directory namespace (tests/fixtures/lance), started by
//! `tests/fixtures/lance/serve_namespace.py` on a free loopback port and stopped when dropped.
//!
//! `start` returns `None`, after printing why, only when Python cannot import `lance`
//! (`scripts/test-deps.sh` installs pylance); a server that is found but does not come up fails.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running REST namespace.
pub struct LanceRest {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub uri: String,
    /// The namespace root it serves (a copy of the fixture), kept as long as the server.
    #[allow(dead_code)]
    pub root: tempfile::TempDir,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/lance")
}

/// A copy of the committed namespace in a temporary directory.
pub fn namespace_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let status = Command::new("cp")
        .arg("-r")
        .arg(format!("{}/namespace/.", fixtures().display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success(), "copy the lance fixture");
    dir
}

impl LanceRest {
    /// Serves a copy of the fixture; `vend` makes describeTable vend these storage options
    /// (with an expiry).
    pub fn start(vend: &[(&str, &str)]) -> Option<LanceRest> {
        let root = namespace_copy();
        let path = root.path().display().to_string();
        Self::serve(root, &path, vend, None)
    }

    /// Serves the namespace at `root_uri` (a directory, or `s3://bucket/prefix` read with the
    /// `vend` options), vending `vend` with `expires_at_millis` = now + `lifetime_ms` (an hour
    /// if `None`). `keep` lives as long as the server.
    pub fn serve(
        keep: tempfile::TempDir,
        root_uri: &str,
        vend: &[(&str, &str)],
        lifetime_ms: Option<u64>,
    ) -> Option<LanceRest> {
        let python = std::env::var("METACACHE_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let importable = Command::new(&python)
            .args(["-c", "import lance.namespace, lance_namespace"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !importable {
            eprintln!(
                "SKIPPED: Python cannot import pylance/lance-namespace; run scripts/test-deps.sh (pip install pylance lance-namespace) for the Lance REST tests"
            );
            return None;
        }
        let root = keep;
        let mut command = Command::new(&python);
        command
            .arg(fixtures().join("serve_namespace.py"))
            .arg(root_uri);
        if let Some(lifetime) = lifetime_ms {
            command.args(["--lifetime-ms", &lifetime.to_string()]);
        }
        if !vend.is_empty() {
            command.arg("--vend");
            command.args(vend.iter().map(|(k, v)| format!("{k}={v}")));
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server's first line");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the REST namespace did not start: {line:?}"));
        Some(LanceRest {
            uri: format!("http://127.0.0.1:{port}"),
            child,
            root,
        })
    }
}

impl Drop for LanceRest {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
