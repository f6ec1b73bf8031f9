//! What a MySQL connection may hold, and for how long: so that idle or hostile sockets can
//! never lock the admins out or make the server buffer without bound (issue 12).
//!
//! - **Handshake slots** ([`HANDSHAKE_SLOTS`]): a connection takes one before it is accepted
//!   and holds it until it has logged in. A client that does not complete its login within
//!   `mysql_handshake_timeout_seconds` is dropped, and may not send more than
//!   [`HANDSHAKE_BYTES`] before it has: a flood of silent or slow sockets costs at most that
//!   many slots, each for that long.
//! - **Session slots**: `mysql_max_connections` for everyone, plus [`ADMIN_RESERVE`] that only
//!   the admin users ([`ADMIN_USERS`], Doris's two built-in admins) may take when the others are
//!   gone. A client that logs in when no slot is left for it is answered
//!   `1040 Too many connections` at its first statement and closed; until then it keeps its
//!   handshake slot and the handshake timeout.
//! - **Packet size**: a logged-in client's packets (a statement, a prepare, an execute's values)
//!   may be at most [`MAX_PACKET`] (MySQL's `max_allowed_packet`): the protocol library buffers a
//!   whole packet before handing it over, so this is what bounds one statement's text. The
//!   limit is read off the packet headers of the plain stream; a connection that switches to
//!   TLS is not framed here (its bytes are encrypted), and keeps only the other limits.
//! - **Idle timeout**: a logged-in client that sends nothing for
//!   `mysql_idle_timeout_seconds` (MySQL's `wait_timeout`, 8 hours by default) is closed. Time
//!   spent running its statements does not count: only time waiting for its next packet.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

/// Connections that may be logging in at once.
pub const HANDSHAKE_SLOTS: usize = 128;
/// Session slots kept for the admin users beyond `mysql_max_connections`.
pub const ADMIN_RESERVE: usize = 4;
/// Users that may take a reserved slot.
pub const ADMIN_USERS: &[&str] = &["root", "admin"];
/// Bytes a client may send before it has logged in (a login packet is a few hundred).
pub const HANDSHAKE_BYTES: u64 = 64 << 10;
/// Largest packet a logged-in client may send (`max_allowed_packet`).
pub const MAX_PACKET: u64 = 16 << 20;

/// The node's MySQL connection limits.
pub struct Slots {
    handshakes: Arc<Semaphore>,
    sessions: Arc<Semaphore>,
    reserve: Arc<Semaphore>,
    /// `mysql_max_connections`, for the refusal message.
    pub max_connections: usize,
    /// `mysql_handshake_timeout_seconds`.
    pub handshake_timeout: Duration,
    /// `mysql_idle_timeout_seconds`.
    pub idle_timeout: Duration,
}

impl Slots {
    /// Limits for `max_connections` sessions.
    pub fn new(
        max_connections: usize,
        handshake_timeout: Duration,
        idle_timeout: Duration,
    ) -> Self {
        Self {
            handshakes: Arc::new(Semaphore::new(HANDSHAKE_SLOTS)),
            sessions: Arc::new(Semaphore::new(max_connections)),
            reserve: Arc::new(Semaphore::new(ADMIN_RESERVE)),
            max_connections,
            handshake_timeout,
            idle_timeout,
        }
    }

    /// Waits for a handshake slot (`None` only if its semaphore was closed, which nothing
    /// does: the accept loop stops on its own signal).
    pub async fn handshake(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.handshakes).acquire_owned().await.ok()
    }

    /// A session slot for `user`, if one is left for them.
    fn session(&self, user: &str) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.sessions)
            .try_acquire_owned()
            .ok()
            .or_else(|| {
                ADMIN_USERS
                    .contains(&user)
                    .then(|| Arc::clone(&self.reserve).try_acquire_owned().ok())
                    .flatten()
            })
    }
}

/// One connection's standing: its slots and whether it has logged in.
pub struct Standing {
    slots: Arc<Slots>,
    handshake: Mutex<Option<OwnedSemaphorePermit>>,
    session: Mutex<Option<OwnedSemaphorePermit>>,
    logged_in: AtomicBool,
    refused: AtomicBool,
}

impl Standing {
    /// A connection accepted under `handshake`.
    pub fn new(slots: Arc<Slots>, handshake: OwnedSemaphorePermit) -> Arc<Self> {
        Arc::new(Self {
            slots,
            handshake: Mutex::new(Some(handshake)),
            session: Mutex::new(None),
            logged_in: AtomicBool::new(false),
            refused: AtomicBool::new(false),
        })
    }

    /// `user` logged in: takes a session slot and gives the handshake slot back, or, with no
    /// slot left for them, marks the connection refused (it keeps its handshake slot).
    pub fn logged_in(&self, user: &str) {
        match self.slots.session(user) {
            Some(permit) => {
                *self.session.lock() = Some(permit);
                self.handshake.lock().take();
            }
            None => {
                tracing::warn!(
                    user,
                    max = self.slots.max_connections,
                    "mysql connection refused: too many connections"
                );
                self.refused.store(true, SeqCst);
            }
        }
        self.logged_in.store(true, SeqCst);
    }

    /// The refusal to answer the first statement with, if the connection got no slot.
    pub fn refusal(&self) -> Option<String> {
        self.refused.load(SeqCst).then(|| {
            format!(
                "Too many connections (mysql_max_connections = {}); {} more are kept for {}",
                self.slots.max_connections,
                ADMIN_RESERVE,
                ADMIN_USERS.join(" and ")
            )
        })
    }

    /// How long the connection may wait for its next packet now.
    fn patience(&self) -> Duration {
        if self.logged_in.load(SeqCst) && !self.refused.load(SeqCst) {
            self.slots.idle_timeout
        } else {
            self.slots.handshake_timeout
        }
    }
}

/// The read half of a connection, cut off when the client keeps the server waiting too long
/// ([`Standing::patience`]) or sends too much before logging in.
pub struct GuardedReader<R> {
    inner: R,
    standing: Arc<Standing>,
    /// Armed when a read finds nothing to read; disarmed when bytes arrive.
    deadline: Option<Pin<Box<Sleep>>>,
    before_login: u64,
    framing: Framing,
}

impl<R> GuardedReader<R> {
    /// Guards `inner` for the connection of `standing`.
    pub fn new(inner: R, standing: Arc<Standing>) -> Self {
        Self {
            inner,
            standing,
            deadline: None,
            before_login: 0,
            framing: Framing::default(),
        }
    }
}

/// Where the reader is in the client's packets: headers are 3 bytes of length (little-endian)
/// and a sequence byte; a payload of 2^24 - 1 bytes continues in the next packet.
#[derive(Debug, Default)]
struct Framing {
    header: [u8; 4],
    /// Header bytes seen of the packet being read.
    have: usize,
    /// Payload bytes of the current packet not yet seen.
    remaining: usize,
    /// The current packet continues in the next one.
    continued: bool,
    /// Payload bytes of the logical packet so far (its continued parts summed).
    logical: u64,
    /// Packets seen; the first client packet tells whether TLS follows.
    packets: u64,
    /// Not framing any more (the stream turned to TLS).
    off: bool,
}

/// Payload length of a client's SSL request (a login packet is always longer).
const SSL_REQUEST_LEN: usize = 32;
/// A payload of this length continues in the next packet.
const CONTINUED: usize = 0xff_ffff;

impl Framing {
    /// Takes `bytes` of the stream; the size of a logical packet over `limit`, if one is.
    fn feed(&mut self, mut bytes: &[u8], limit: u64) -> Option<u64> {
        while !self.off && !bytes.is_empty() {
            if self.remaining == 0 && self.have < 4 {
                let take = (4 - self.have).min(bytes.len());
                self.header[self.have..self.have + take].copy_from_slice(&bytes[..take]);
                self.have += take;
                bytes = &bytes[take..];
                if self.have < 4 {
                    return None;
                }
                let len = usize::from(self.header[0])
                    | usize::from(self.header[1]) << 8
                    | usize::from(self.header[2]) << 16;
                self.packets += 1;
                if self.packets == 1 && len == SSL_REQUEST_LEN {
                    // An SSL request: what follows is TLS.
                    self.off = true;
                }
                self.logical += len as u64;
                if self.logical > limit {
                    return Some(self.logical);
                }
                self.continued = len == CONTINUED;
                self.remaining = len;
                if len == 0 {
                    self.end_packet();
                }
                continue;
            }
            let take = self.remaining.min(bytes.len());
            self.remaining -= take;
            bytes = &bytes[take..];
            if self.remaining == 0 {
                self.end_packet();
            }
        }
        None
    }

    fn end_packet(&mut self) {
        self.have = 0;
        if !self.continued {
            self.logical = 0;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for GuardedReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                self.deadline = None;
                let limit = if self.standing.logged_in.load(SeqCst) {
                    MAX_PACKET
                } else {
                    HANDSHAKE_BYTES
                };
                let this = &mut *self;
                if let Some(size) = this.framing.feed(&buf.filled()[before..], limit) {
                    tracing::warn!(
                        size,
                        "mysql client sent a packet over max_allowed_packet; closed"
                    );
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "a packet of {size} bytes or more is over max_allowed_packet ({MAX_PACKET})"
                        ),
                    )));
                }
                if !self.standing.logged_in.load(SeqCst) {
                    self.before_login += (buf.filled().len() - before) as u64;
                    if self.before_login > HANDSHAKE_BYTES {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "more than 64 KiB sent before logging in",
                        )));
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                let patience = self.standing.patience();
                let deadline = self
                    .deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(patience)));
                match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no packet for {} s", patience.as_secs()),
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(max: usize) -> Arc<Slots> {
        Arc::new(Slots::new(
            max,
            Duration::from_secs(1),
            Duration::from_secs(60),
        ))
    }

    async fn connection(slots: &Arc<Slots>) -> Arc<Standing> {
        Standing::new(Arc::clone(slots), slots.handshake().await.expect("open"))
    }

    #[tokio::test]
    async fn admins_keep_a_reserve_when_everyone_else_is_in() {
        let slots = slots(2);
        let mut held = Vec::new();
        for _ in 0..2 {
            let c = connection(&slots).await;
            c.logged_in("app");
            assert!(c.refusal().is_none());
            held.push(c);
        }
        let late = connection(&slots).await;
        late.logged_in("app");
        assert_eq!(
            late.refusal().as_deref(),
            Some(
                "Too many connections (mysql_max_connections = 2); 4 more are kept for root and admin"
            )
        );
        for _ in 0..ADMIN_RESERVE {
            let admin = connection(&slots).await;
            admin.logged_in("root");
            assert!(admin.refusal().is_none());
            held.push(admin);
        }
        let one_too_many = connection(&slots).await;
        one_too_many.logged_in("admin");
        assert!(one_too_many.refusal().is_some());
        // A slot given back is anyone's again.
        held.remove(0);
        let next = connection(&slots).await;
        next.logged_in("app");
        assert!(next.refusal().is_none());
    }

    #[tokio::test]
    async fn a_silent_client_is_cut_off_and_a_chatty_one_before_login_too() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let slots = slots(2);
        let (client, server) = tokio::io::duplex(1 << 20);
        let mut reader = GuardedReader::new(server, connection(&slots).await);
        let mut buf = [0u8; 16];
        let started = tokio::time::Instant::now();
        let error = reader.read(&mut buf).await.expect_err("timed out");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(900));
        drop(client);

        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut reader = GuardedReader::new(server, connection(&slots).await);
        client
            .write_all(&vec![0u8; 100 << 10])
            .await
            .expect("write");
        let mut sink = vec![0u8; 200 << 10];
        let mut error = None;
        for _ in 0..100 {
            if let Err(e) = reader.read(&mut sink).await {
                error = Some(e);
                break;
            }
        }
        assert_eq!(error.map(|e| e.kind()), Some(io::ErrorKind::InvalidData));
    }

    fn header(len: usize, seq: u8) -> Vec<u8> {
        vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq]
    }

    #[test]
    fn packets_are_measured_across_reads_and_continuations() {
        let mut framing = Framing::default();
        // A login-sized first packet, fed a byte at a time, then a small statement.
        let mut stream = header(100, 1);
        stream.extend(vec![7u8; 100]);
        stream.extend(header(5, 0));
        stream.extend(b"\x03SELE");
        for byte in &stream {
            assert_eq!(framing.feed(std::slice::from_ref(byte), 1000), None);
        }
        // A statement continued over three packets: 2 × (2^24 - 1) + 10 bytes.
        let mut framing = Framing::default();
        assert_eq!(framing.feed(&header(CONTINUED, 0), u64::MAX), None);
        assert_eq!(framing.feed(&vec![0u8; CONTINUED], u64::MAX), None);
        assert_eq!(framing.feed(&header(CONTINUED, 1), u64::MAX), None);
        assert_eq!(framing.feed(&vec![0u8; CONTINUED], u64::MAX), None);
        let mut last = header(10, 2);
        last.extend([0u8; 10]);
        assert_eq!(framing.feed(&last, u64::MAX), None);
        assert_eq!(framing.logical, 0, "the logical packet ended");
        // Over the limit: refused at the header, before its payload is buffered.
        let mut framing = Framing::default();
        assert_eq!(framing.feed(&header(CONTINUED, 0), MAX_PACKET), None);
        assert_eq!(framing.feed(&vec![0u8; CONTINUED], MAX_PACKET), None);
        assert_eq!(
            framing.feed(&header(10, 1), MAX_PACKET),
            Some(CONTINUED as u64 + 10)
        );
        // An SSL request turns framing off: TLS bytes are not packets.
        let mut framing = Framing::default();
        let mut ssl = header(SSL_REQUEST_LEN, 1);
        ssl.extend([0u8; SSL_REQUEST_LEN]);
        ssl.extend([0xffu8; 64]);
        assert_eq!(framing.feed(&ssl, 1000), None);
        assert!(framing.off);
    }
}
