//! Exercise 04 ★★: write the state machine that `async fn` writes for you.
//!
//! `get_async` below connects, sends a request and reads the response: three
//! `.await`s. The compiler turns it into an enum with a variant for each
//! place it can stop, holding the locals alive there, and a `poll` that
//! runs from one stop to the next. Write that enum yourself: `Get`, with a
//! `Future` impl whose output is the same bytes, built on the socket's
//! `poll_connect`, `poll_write` and `poll_read` (the `async fn`s cannot be
//! called from `poll`).
//!
//! Read first: the book's "How Rust Futures Work", then
//! stage2-coroutines/src/machines/connect.rs and read_all.rs (the same
//! pattern), and `TcpStream` in runtime/src/net.rs.
//! Check: `cargo run -p exercises -- check 04`. Stuck: `... -- hint 04`.

use std::future::Future;
use std::io;
use std::mem;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use runtime::TcpStream;

/// The request both versions send: HTTP/1.0, so the server closes the
/// connection after the body, and "read to the end" reads one response.
pub fn request(addr: SocketAddr, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").into_bytes()
}

/// The function to translate: three `.await`s, so three places to stop.
pub async fn get_async(addr: SocketAddr, path: &str) -> io::Result<Vec<u8>> {
    let request = request(addr, path);
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(&request).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    Ok(response)
}

/// [`get_async`], by hand.
pub enum Get {
    /// Created, not polled yet: nothing has happened, as with an `async fn`
    /// before its first poll.
    Start { addr: SocketAddr, request: Vec<u8> },
    // TODO: a variant for each `.await`, holding the locals alive there.
    /// Returned its output. Polling again is a bug.
    Done,
}

impl Get {
    pub fn new(addr: SocketAddr, path: &str) -> Get {
        Get::Start {
            addr,
            request: request(addr, path),
        }
    }
}

impl Future for Get {
    type Output = io::Result<Vec<u8>>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        match mem::replace(&mut *self, Get::Done) {
            // TODO: connect, send, receive, as `get_async` does.
            Get::Start { addr, request } => Poll::Ready(Err(io::Error::other(format!(
                "Get is not written yet (would send {} bytes to {addr})",
                request.len()
            )))),
            Get::Done => panic!("Get polled after it returned its output"),
        }
    }
}
