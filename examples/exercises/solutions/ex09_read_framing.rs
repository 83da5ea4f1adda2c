//! Exercise 09 ★★: factor a response reader out of `fill` (reference
//! solution).
//!
//! `read_head` calls `fill` until the head parses, and `read_body` calls
//! it until the body is all there; both take what they need from the
//! front of `buf` and leave the rest for whoever reads next.

use std::io;
use std::net::SocketAddr;

use runtime::TcpStream;

/// The longest response head we accept.
const MAX_HEAD: usize = 64 * 1024;

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
        loop {
            if let Some((len, head)) = parse_head(&self.buf)? {
                self.buf.drain(..len);
                return Ok(head);
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid(format!(
                    "response head longer than {MAX_HEAD} bytes"
                )));
            }
            if self.fill().await? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed before the response head was complete",
                ));
            }
        }
    }

    /// Reads a body of `len` bytes and takes it off the buffer.
    pub async fn read_body(&mut self, len: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < len {
            if self.fill().await? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "connection closed after {} of {len} body bytes",
                        self.buf.len()
                    ),
                ));
            }
        }
        Ok(self.buf.drain(..len).collect())
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

/// Parses a complete head at the start of `buf`: `None` if more bytes are
/// needed, else its length and what it says.
fn parse_head(buf: &[u8]) -> io::Result<Option<(usize, Head)>> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(invalid(format!("not an HTTP response: {e}"))),
    };
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    if let Some(encoding) = header("transfer-encoding") {
        return Err(invalid(format!("{encoding} bodies are not supported")));
    }
    let content_length = match header("content-length") {
        Some(value) => value
            .parse()
            .map_err(|_| invalid(format!("bad Content-Length {value:?}")))?,
        None => return Err(invalid("no Content-Length".to_string())),
    };
    Ok(Some((
        len,
        Head {
            status: response.code.unwrap_or_default(),
            content_length,
        },
    )))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}
