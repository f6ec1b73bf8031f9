//! TLS on both front ends (issue 12), with a certificate made by `openssl` and checked by the
//! real clients: `curl` for HTTPS, the `mysql` client for MySQL's switch to TLS.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// A self-signed certificate for 127.0.0.1 and its key, as PEM files in `dir`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (cert, key)
}

/// Client arguments that demand TLS with the server's certificate checked against `ca`, and
/// that forbid it; the two client families spell them differently.
fn client_tls_args(ca: &Path) -> (Vec<String>, Vec<String>) {
    let version = Command::new(mysql_client())
        .arg("--version")
        .output()
        .expect("mysql --version");
    let ca = ca.display();
    if String::from_utf8_lossy(&version.stdout).contains("MariaDB") {
        (
            vec![
                "--ssl".into(),
                format!("--ssl-ca={ca}"),
                "--ssl-verify-server-cert".into(),
            ],
            vec!["--skip-ssl".into()],
        )
    } else {
        (
            vec![
                "--ssl-mode=VERIFY_IDENTITY".into(),
                format!("--ssl-ca={ca}"),
            ],
            vec!["--ssl-mode=DISABLED".into()],
        )
    }
}

/// A server with a new certificate in `dir` and `extra` environment; the certificate's path.
fn start_with_tls(dir: &Path, data: &Path, extra: &[(&str, &str)]) -> (Server, PathBuf) {
    let (cert, key) = certificate(dir);
    let mut env = vec![
        ("METACACHE_TLS_CERT_FILE", cert.to_str().expect("utf-8")),
        ("METACACHE_TLS_KEY_FILE", key.to_str().expect("utf-8")),
    ];
    env.extend_from_slice(extra);
    (Server::start(data, &env), cert)
}

fn run(server: &Server, tls: &[String], sql: &str) -> Reply {
    let mut args: Vec<&str> = vec!["-u", "root"];
    args.extend(tls.iter().map(String::as_str));
    server.mysql_as(&args, sql)
}

#[test]
fn both_front_ends_speak_tls_with_one_certificate() {
    let (tmp, data) = data_dir();
    let (server, cert) = start_with_tls(tmp.path(), &data, &[]);
    let https = server.http.replacen("http://", "https://", 1);
    let curl = |url: &str, extra: &[&str]| {
        Command::new("curl")
            .args(["-sS", "--max-time", "10"])
            .args(extra)
            .arg(url)
            .output()
            .expect("curl runs")
    };
    let ca = cert.to_str().expect("utf-8");
    let answer = curl(&format!("{https}/healthz"), &["--cacert", ca]);
    assert!(
        answer.status.success(),
        "{}",
        String::from_utf8_lossy(&answer.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&answer.stdout), "ok\n");
    let answer = curl(
        &format!("{https}/api/v1/sql"),
        &["--cacert", ca, "--data-binary", "SELECT 41 + 1 AS answer"],
    );
    assert!(
        String::from_utf8_lossy(&answer.stdout).contains("42"),
        "{}",
        String::from_utf8_lossy(&answer.stdout)
    );
    // The HTTP port serves HTTPS only; an unverified certificate is refused by the client.
    assert!(
        !curl(&format!("{}/healthz", server.http), &[])
            .status
            .success()
    );
    assert!(!curl(&format!("{https}/healthz"), &[]).status.success());
    // A client that stalls in its handshake does not hold up the others.
    let stalled =
        std::net::TcpStream::connect(server.http.trim_start_matches("http://")).expect("connect");
    assert!(
        curl(&format!("{https}/healthz"), &["--cacert", ca])
            .status
            .success()
    );
    drop(stalled);

    let (secure, plain) = client_tls_args(&cert);
    let reply = run(&server, &secure, "SELECT 1 AS one");
    assert!(reply.ok && reply.out == "one\n1\n", "{}", reply.err);
    // Not required: a client that does not switch is served too.
    let reply = run(&server, &plain, "SELECT 2 AS two");
    assert!(reply.ok && reply.out == "two\n2\n", "{}", reply.err);
}

#[test]
fn mysql_can_require_tls() {
    let (tmp, data) = data_dir();
    let (server, cert) = start_with_tls(
        tmp.path(),
        &data,
        &[("METACACHE_MYSQL_REQUIRE_SECURE_TRANSPORT", "true")],
    );
    let (secure, plain) = client_tls_args(&cert);
    let reply = run(&server, &plain, "SELECT 1");
    assert!(!reply.ok);
    assert!(
        reply.err.contains("ERROR 1045")
            && reply
                .err
                .contains("Connections using insecure transport are prohibited"),
        "{}",
        reply.err
    );
    let reply = run(&server, &secure, "SELECT 1 AS one");
    assert!(reply.ok, "{}", reply.err);
}

#[test]
fn unusable_tls_settings_stop_the_start_with_a_clear_message() {
    let (tmp, data) = data_dir();
    let (cert, key) = certificate(tmp.path());
    let (cert, key) = (cert.to_str().expect("utf-8"), key.to_str().expect("utf-8"));
    let start = |env: &[(&str, &str)]| start_refused(&data, env);
    let stderr = start(&[("METACACHE_TLS_CERT_FILE", cert)]);
    assert!(
        stderr.contains("TLS needs both tls_cert_file and tls_key_file"),
        "{stderr}"
    );
    let missing = tmp.path().join("missing.pem");
    let missing = missing.to_str().expect("utf-8");
    let stderr = start(&[
        ("METACACHE_TLS_CERT_FILE", cert),
        ("METACACHE_TLS_KEY_FILE", missing),
    ]);
    assert!(stderr.contains("tls_key_file = '"), "{stderr}");
    // A certificate given as the key: the file names the problem, its bytes are not echoed.
    let stderr = start(&[
        ("METACACHE_TLS_CERT_FILE", key),
        ("METACACHE_TLS_KEY_FILE", cert),
    ]);
    assert!(stderr.contains("TLS: tls_"), "{stderr}");
    assert!(!stderr.contains("BEGIN"), "{stderr}");
    let stderr = start(&[("METACACHE_MYSQL_REQUIRE_SECURE_TRANSPORT", "true")]);
    assert!(
        stderr.contains("mysql_require_secure_transport = true needs"),
        "{stderr}"
    );
}
