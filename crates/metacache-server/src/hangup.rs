//! Noticing that a MySQL client went away while its statement runs (issue 12), so the
//! statement is cancelled instead of running on, with its memory and a core, for nobody.
//!
//! While a statement runs, `opensrv-mysql` does not read the socket, so a hang-up would go
//! unseen until the answer is written. A [`Hangup`] holds a second descriptor of the same
//! socket (`dup`) and waits for the kernel to report that the peer closed its side
//! (`EPOLLRDHUP`, tokio's `Ready::READ_CLOSED`). It never reads: the bytes stay for the
//! protocol. A client that sends more bytes while its statement runs (pipelining, which the
//! MySQL clients do not do) keeps the socket readable; the watch then looks again every
//! [`RECHECK`] instead of spinning.
//!
//! # Invariants
//! - The watch never consumes a byte of the connection.
//! - It is dropped with its connection, so it never keeps a closed connection's socket open.
//! - Off Unix (no `dup` of a tokio socket here) it never fires: statements run to their end or
//!   their time limit, as before.

use std::time::Duration;

use tokio::net::TcpStream;

/// How often the watch looks again while unread bytes keep the socket readable.
pub const RECHECK: Duration = Duration::from_millis(200);

/// Watches one connection's socket for the client hanging up.
pub struct Hangup {
    #[cfg(unix)]
    socket: Option<TcpStream>,
}

impl Hangup {
    /// A watch on `stream`'s socket; one that never fires if the socket cannot be duplicated
    /// (out of descriptors), which costs only the early cancel.
    pub fn watch(stream: &TcpStream) -> Self {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd as _;
            let socket = stream
                .as_fd()
                .try_clone_to_owned()
                .map(std::net::TcpStream::from)
                .and_then(TcpStream::from_std);
            match socket {
                Ok(socket) => Self {
                    socket: Some(socket),
                },
                Err(error) => {
                    tracing::debug!("no hang-up watch for this connection: {error}");
                    Self { socket: None }
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = stream;
            Self {}
        }
    }

    /// Resolves when the client has closed its side of the connection (or the socket failed);
    /// pending forever while it is connected.
    pub async fn closed(&self) {
        #[cfg(unix)]
        if let Some(socket) = &self.socket {
            loop {
                match socket.ready(tokio::io::Interest::READABLE).await {
                    Ok(ready) if ready.is_read_closed() => return,
                    Ok(_) => tokio::time::sleep(RECHECK).await,
                    Err(_) => return,
                }
            }
        }
        std::future::pending::<()>().await;
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = TcpStream::connect(addr).await.expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        (server, client)
    }

    #[tokio::test]
    async fn a_hang_up_is_seen_and_pending_bytes_are_left_for_the_protocol() {
        let (mut server, mut client) = pair().await;
        let watch = Hangup::watch(&server);
        client.write_all(b"next").await.expect("write");
        let early = tokio::time::timeout(Duration::from_millis(600), watch.closed()).await;
        assert!(early.is_err(), "a connected client with bytes in flight");
        drop(client);
        tokio::time::timeout(Duration::from_secs(10), watch.closed())
            .await
            .expect("the hang-up is seen within 10 s");
        let mut bytes = Vec::new();
        server.read_to_end(&mut bytes).await.expect("read");
        assert_eq!(bytes, b"next", "the watch consumed nothing");
    }
}
