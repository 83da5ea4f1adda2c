//! The chapter's blocking fetch, with std's blocking sockets.
//!
//! thread-per-fetch includes this file too (`#[path]`), so both examples run
//! the very same fetch: one calls it in a loop, the other on a thread per URL.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::links;

// ANCHOR: fetch
/// Fetches `path` from the server at `addr`, which calls itself `host`, and
/// returns the whole response. Every call blocks the thread: `connect` until
/// the connection is made, `write_all` until the request is sent, `read`
/// until bytes arrive. `timeout` bounds each of those waits.
pub fn fetch(addr: SocketAddr, host: &str, path: &str, timeout: Duration) -> io::Result<Vec<u8>> {
    let mut sock = TcpStream::connect_timeout(&addr, timeout)?;
    sock.set_read_timeout(Some(timeout))?;
    sock.set_write_timeout(Some(timeout))?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n");
    sock.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk)?;
        if n == 0 {
            break; // HTTP/1.0: the server closes the connection after the body
        }
        response.extend_from_slice(&chunk[..n]);
    }
    Ok(response)
}
// ANCHOR_END: fetch

/// The parts of a response the crawl needs.
#[derive(Debug, PartialEq, Eq)]
pub struct Page<'a> {
    pub content_type: Option<&'a str>,
    pub body: &'a str,
}

/// Splits a response into headers and body, or says why it cannot be used.
/// Deliberately small: stage 1 parses responses with `httparse`.
pub fn parse(response: &[u8]) -> Result<Page<'_>, String> {
    let split = response.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, body) = match split {
        Some(at) => (&response[..at], &response[at + 4..]),
        None if response.is_empty() => return Err("empty response".into()),
        None => return Err("not an HTTP response".into()),
    };
    let head = std::str::from_utf8(head).map_err(|_| "not an HTTP response".to_string())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    if !status_line.starts_with("HTTP/1.") {
        return Err("not an HTTP response".into());
    }
    let content_type = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-type")
            .then_some(value.trim())
    });
    let body = std::str::from_utf8(body).map_err(|_| "body is not UTF-8".to_string())?;
    Ok(Page { content_type, body })
}

impl Page<'_> {
    /// Whether the body is markup whose `href`s are links.
    pub fn is_markup(&self) -> bool {
        let media_type = self
            .content_type
            .and_then(|ct| ct.split(';').next())
            .unwrap_or_default()
            .trim();
        ["text/html", "application/xhtml+xml", "application/xml"]
            .iter()
            .any(|t| media_type.eq_ignore_ascii_case(t))
    }
}

// ANCHOR: visit
/// Fetches `path` from `origin` (`http://host:port`, served at `addr`) and
/// returns the page's same-origin links, or why it could not.
pub fn visit(
    addr: SocketAddr,
    origin: &str,
    path: &str,
    timeout: Duration,
) -> Result<Vec<String>, String> {
    let host = origin.strip_prefix("http://").unwrap_or(origin);
    let response = fetch(addr, host, path, timeout).map_err(|e| match e.kind() {
        // A read or write that waited `timeout` for nothing.
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("timed out after {timeout:?}")
        }
        _ => e.to_string(),
    })?;
    let page = parse(&response)?;
    Ok(if page.is_markup() {
        links::site_links(page.body, origin, path)
    } else {
        Vec::new()
    })
}
// ANCHOR_END: visit

#[cfg(test)]
mod fetch_tests {
    use super::*;

    #[test]
    fn responses_are_split_and_checked() {
        let page = parse(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi").unwrap();
        assert_eq!(
            page,
            Page {
                content_type: Some("text/html"),
                body: "<p>hi"
            }
        );
        assert!(page.is_markup());
        let text = parse(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n").unwrap();
        assert!(!text.is_markup());
        assert_eq!(parse(b""), Err("empty response".into()));
        assert_eq!(
            parse(b"garbage\r\n\r\n"),
            Err("not an HTTP response".into())
        );
        assert_eq!(
            parse(b"HTTP/1.0 200 OK\r\n"),
            Err("not an HTTP response".into())
        );
        assert_eq!(
            parse(b"HTTP/1.0 200 OK\r\n\r\nCaf\xe9"),
            Err("body is not UTF-8".into())
        );
    }
}
