//! One keep-alive connection: a socket (maybe with TLS on it) and the bytes
//! read from it that no response has claimed yet.

use std::io;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use runtime::timeout;

use super::error::FetchError;
use super::stream::Stream;

/// How much one read asks the kernel for.
const READ_CHUNK: usize = 16 * 1024;

pub(crate) struct Connection {
    stream: Stream,
    /// Received and not yet consumed. A response reads its head and body
    /// from the front; whatever is left belongs to the next response.
    pub(crate) buf: Vec<u8>,
    /// Bytes received since the current request was sent. Zero after a
    /// failure means the server never started answering, which on a reused
    /// connection usually means it had already closed it (see `Client::get`).
    pub(crate) received: u64,
}

impl Connection {
    pub(crate) fn new(stream: Stream) -> Connection {
        Connection {
            stream,
            buf: Vec::new(),
            received: 0,
        }
    }

    pub(crate) async fn send(&mut self, request: &[u8]) -> Result<(), FetchError> {
        self.received = 0;
        self.stream
            .write_all(request)
            .await
            .map_err(|e| FetchError::Io(format!("write failed: {e}")))
    }

    // ANCHOR: fill
    /// Reads whatever arrives next onto the end of `buf`; `Ok(0)` is the end
    /// of the stream. Each read gets the whole read timeout: a slow server
    /// that keeps sending is fine, a silent one is not.
    pub(crate) async fn fill(&mut self, read_timeout: Duration) -> Result<usize, FetchError> {
        let start = self.buf.len();
        self.buf.resize(start + READ_CHUNK, 0);
        let read = timeout(read_timeout, self.stream.read(&mut self.buf[start..])).await;
        let n = match read {
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                self.buf.truncate(start);
                return Err(read_error(&e));
            }
            Err(_) => {
                self.buf.truncate(start);
                return Err(FetchError::ReadTimeout(read_timeout));
            }
        };
        self.buf.truncate(start + n);
        self.received += n as u64;
        Ok(n)
    }
    // ANCHOR_END: fill

    // ANCHOR: is_reusable
    /// Whether an idle connection still looks usable. Servers close idle
    /// keep-alive connections whenever they like; if this one has, and the
    /// event loop has heard of it, the socket reads as end-of-stream right
    /// now, without waiting. Any bytes are just as bad: nobody asked for
    /// them. A close that came after the loop last looked goes unseen here
    /// (after a short read the socket is not read again before an event);
    /// the request then fails as sent on a stale connection, and the
    /// client retries it on a new one (`FetchError::is_stale_connection`).
    pub(crate) fn is_reusable(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let mut probe = [0u8; 1];
        // A waker that does nothing: we only want to know whether a read
        // would succeed now. If it would block, that is the answer we hope
        // for, and the next real read replaces this waker.
        let mut cx = Context::from_waker(Waker::noop());
        match self.stream.poll_read(&mut cx, &mut probe) {
            Poll::Pending => true,
            Poll::Ready(Ok(_)) | Poll::Ready(Err(_)) => false,
        }
    }
    // ANCHOR_END: is_reusable

    /// Whether TLS chose HTTP/2 for this connection.
    pub(crate) fn is_h2(&self) -> bool {
        self.stream.is_h2()
    }

    /// The stream, for HTTP/2 to take over; nothing has been read from it.
    pub(crate) fn into_stream(self) -> Stream {
        self.stream
    }

    /// The socket, for TLS to start on: a tunnel through a proxy, whose
    /// answer to CONNECT has been read to its end.
    pub(crate) fn into_tcp(self) -> Result<runtime::TcpStream, FetchError> {
        match self.stream {
            Stream::Plain(tcp) if self.buf.is_empty() => Ok(tcp),
            _ => Err(FetchError::Proxy(
                "the proxy sent bytes after its answer to CONNECT, before TLS began".into(),
            )),
        }
    }

    pub(crate) fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.stream.local_addr()
    }

    pub(crate) fn peer_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.stream.peer_addr()
    }
}

/// A failed read: a socket error, or (over TLS) a record rustls refused.
fn read_error(e: &io::Error) -> FetchError {
    match e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
        Some(tls) => FetchError::Tls(format!("TLS error while reading: {tls}")),
        None => FetchError::Io(format!("read failed: {e}")),
    }
}
