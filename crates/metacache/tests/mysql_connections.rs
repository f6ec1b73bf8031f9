//! Idle and silent MySQL sockets never lock the admins out (issue 12): a node holding 1,100
//! idle logged-in connections still lets `root` in, refuses the next application connection
//! with 1040, and drops clients that never log in.

mod common;
// The binary's own open-file raise: the test holds 1,100 sockets too.
#[path = "../src/limits.rs"]
mod limits;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

/// One MySQL packet's payload.
fn read_packet(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header)?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}

/// Logs in as `user` without a password (the server has no users configured: loopback
/// clients need none) and returns the open connection, idle.
fn log_in(port: u16, user: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let greeting = read_packet(&mut stream).expect("greeting");
    assert_eq!(greeting.first(), Some(&10), "protocol 10 greeting");
    // HandshakeResponse41: PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | LONG_PASSWORD.
    let capabilities: u32 = 0x0000_0200 | 0x0000_8000 | 0x0008_0000 | 0x0000_0001;
    let mut payload = Vec::new();
    payload.extend(capabilities.to_le_bytes());
    payload.extend((16u32 << 20).to_le_bytes());
    payload.push(33);
    payload.extend([0u8; 23]);
    payload.extend(user.as_bytes());
    payload.push(0);
    payload.push(0); // empty auth response
    payload.extend(b"mysql_native_password\0");
    let len = payload.len();
    let mut packet = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, 1];
    packet.extend(payload);
    stream.write_all(&packet).expect("login");
    let reply = read_packet(&mut stream).expect("login reply");
    assert_eq!(reply.first(), Some(&0), "OK packet, got {reply:?}");
    stream
}

#[test]
fn idle_connections_never_lock_an_admin_out() {
    let open_files = limits::raise_open_files().unwrap_or(u64::MAX);
    assert!(
        open_files > 1_200,
        "this test holds 1,100 sockets; raise the hard open-file limit (ulimit -Hn {open_files})"
    );
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let idle: Vec<TcpStream> = (0..1_100)
        .map(|_| log_in(server.mysql_port, "app"))
        .collect();
    let started = Instant::now();
    assert_eq!(server.query("SELECT 1 AS one"), "one\n1\n", "root gets in");
    assert!(started.elapsed() < Duration::from_secs(5), "at once");
    let refused = server.mysql_as(&["-u", "app"], "SELECT 1");
    assert!(!refused.ok);
    assert!(
        refused.err.contains("ERROR 1040")
            && refused
                .err
                .contains("Too many connections (mysql_max_connections = 1024); 4 more are kept for root and admin"),
        "{}",
        refused.err
    );
    drop(idle);
    // The slots come back once the clients leave.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = server.mysql_as(&["-u", "app"], "SELECT 1 AS one");
        if reply.ok {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "slots not given back: {}",
            reply.err
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn clients_that_never_log_in_are_dropped() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[("METACACHE_MYSQL_HANDSHAKE_TIMEOUT_SECONDS", "1")]);
    // More silent sockets than there are handshake slots.
    let mut silent: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(("127.0.0.1", server.mysql_port)).expect("connect"))
        .collect();
    let started = Instant::now();
    assert_eq!(server.query("SELECT 1 AS one"), "one\n1\n", "root gets in");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "waited {:?}",
        started.elapsed()
    );
    // The first ones got a greeting and were then dropped for their silence.
    let first = &mut silent[0];
    first
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut everything = Vec::new();
    let _ = first.read_to_end(&mut everything);
    assert!(
        !everything.is_empty(),
        "a greeting, then the end of the stream"
    );
}

#[test]
fn a_packet_over_max_allowed_packet_closes_the_connection_before_it_is_buffered() {
    let (_tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let mut stream = log_in(server.mysql_port, "app");
    // A COM_QUERY continued over two packets: 2^24 - 1 bytes, then 100 more (16 MiB + 99).
    let chunk = 0xff_ffff_usize;
    let mut first = vec![0xff, 0xff, 0xff, 0];
    first.push(0x03); // COM_QUERY
    first.extend(std::iter::repeat_n(b' ', chunk - 1));
    stream.write_all(&first).expect("first part");
    let mut second = vec![100, 0, 0, 1];
    second.extend([b' '; 100]);
    // The server may close while this is in flight.
    let _ = stream.write_all(&second);
    let answer = read_packet(&mut stream);
    assert!(
        answer.is_err(),
        "the connection is closed, not answered: {answer:?}"
    );
    assert!(
        server.log_text().contains("over max_allowed_packet"),
        "{}",
        server.log_text()
    );
    // A statement of a megabyte is fine, and the server is up.
    let big = format!("SELECT length('{}') AS n", "x".repeat(1 << 20));
    let reply = server.mysql_stdin(&["--max-allowed-packet=64M"], &big);
    assert_eq!(reply.out, "n\n1048576\n", "{}", reply.err);
}
