//! Exercise 09 ★★: factor a response reader out of `fill`.
//!
//! The chapter factors `read_all` out of `fetch`, and `read` out of
//! `read_all`, with `yield from`. Do the same with `.await` for a harder
//! reader: HTTP/1.1 with keep-alive, where the server does not close the
//! connection after a response, so "read until EOF" no longer finds its
//! end. `Content-Length` says where the body ends, and whatever comes after
//! it belongs to the next response.
//!
//! `fill` is the one place that reads the socket. Write `read_head` (call
//! `fill` until the buffer holds a complete head, parse it with `httparse`,
//! take it off the front of the buffer) and `read_body` (call `fill` until
//! the buffer holds the body, take it off the front). A connection that
//! closes too early is an `UnexpectedEof` error; a chunked response (no
//! `Content-Length`) is an `InvalidData` error that says "chunked".
//!
//! Read first: the book's "Factoring With .await", then
//! stage2-coroutines/src/async_fetch.rs (`read`, `read_all`), and `fill`
//! in stage3-crawler/src/http/conn.rs, which this is a small copy of.
//! Check: `cargo run -p exercises -- check 09`. Stuck: `... -- hint 09`.

use std::io;
use std::net::SocketAddr;

use runtime::TcpStream;

/// What `read_head` learns from a response head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub content_length: usize,
}

/// One HTTP/1.1 keep-alive connection: the socket, and bytes received that
/// no response has claimed yet.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> io::Result<Conn> {
        Ok(Conn {
            stream: TcpStream::connect(addr).await?,
            buf: Vec::new(),
        })
    }

    /// Sends `bytes`, all of them.
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Reads whatever arrives next onto the end of the buffer. Returns how
    /// many bytes came; 0 means the server closed the connection.
    pub async fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 4096];
        let n = self.stream.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads one response head and takes it off the buffer; the bytes after
    /// it stay there. Only `Content-Length` bodies are supported.
    pub async fn read_head(&mut self) -> io::Result<Head> {
        // TODO: `self.fill().await` until `httparse` finds a whole head.
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "read_head is not written yet",
        ))
    }

    /// Reads a body of `len` bytes and takes it off the buffer.
    pub async fn read_body(&mut self, len: usize) -> io::Result<Vec<u8>> {
        // TODO: `self.fill().await` until the buffer holds `len` bytes.
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("read_body({len}) is not written yet"),
        ))
    }

    /// One request and its response, on this connection.
    pub async fn get(&mut self, host: &str, path: &str) -> io::Result<(Head, Vec<u8>)> {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
            .await?;
        let head = self.read_head().await?;
        let body = self.read_body(head.content_length).await?;
        Ok((head, body))
    }
}
