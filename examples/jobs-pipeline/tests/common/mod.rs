//! A small blocking HTTP client for the tests, and temporary stores.

#![allow(dead_code)] // each test file uses its own part of this

pub mod postgres;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

/// A safety net for a broken server, so that a failing test ends instead of
/// hanging. Not a timing assertion: a working server answers at once.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A fresh, empty path for a store file.
pub fn temp_store(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "jobs-pipeline-test-{}-{name}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// A response: status, body, and whether the server will close.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub close: bool,
}

/// One connection that can carry several requests.
pub struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        Ok(Client {
            reader: BufReader::new(stream),
        })
    }

    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&str>,
        close: bool,
    ) -> io::Result<Reply> {
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: test\r\n");
        if let Some(body) = body {
            request.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        if close {
            request.push_str("Connection: close\r\n");
        }
        request.push_str("\r\n");
        request.push_str(body.unwrap_or(""));
        self.reader.get_mut().write_all(request.as_bytes())?;
        self.read_reply()
    }

    pub fn read_reply(&mut self) -> io::Result<Reply> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad(&line))?;
        let (mut length, mut close) = (0, false);
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(": ").ok_or_else(|| bad(header))?;
            match name {
                "Content-Length" => length = value.parse().map_err(|_| bad(header))?,
                "Connection" => close = value == "close",
                _ => {}
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(Reply {
            status,
            body: String::from_utf8(body)
                .map_err(|_| bad("body"))?
                .trim_end()
                .to_string(),
            close,
        })
    }

    /// Writes raw bytes, for requests the well-behaved `send` cannot make.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.reader.get_mut().write_all(bytes)
    }
}

/// One request on its own connection.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> io::Result<Reply> {
    Client::connect(addr)?.send(method, path, body, true)
}

/// Polls until `addr` refuses connections: the service has dropped its
/// listener, which it does just before it starts closing connections.
pub fn wait_until_refused(addr: SocketAddr) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while TcpStream::connect(addr).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "{addr} still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(10)); // polling, with a deadline
    }
}
