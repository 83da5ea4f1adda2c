//! Just enough HTTP/1.1: reading request heads and encoding responses.
//!
//! Request heads are read by the head reader every server of ours shares
//! (`runtime/http-head`, on `httparse`), with its caps and its 400, 431 and
//! 505 answers; everything about framing (Content-Length, chunked,
//! close-delimited) is written out by hand here because showing the bytes
//! on the wire is the point of a teaching server.

use std::io::{self, Read};

use crate::content::{Resource, reason};
use crate::tls::Stream;

/// Requests whose head (request line plus headers) is longer than this are
/// refused with 431, so a client cannot make us buffer without limit.
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// Requests may carry a body (we read and ignore it), up to this size.
const MAX_BODY: u64 = 1024 * 1024;

/// More header lines than this is refused with 431.
const MAX_HEADERS: usize = 64;

/// The head reader's caps.
const LIMITS: http_head::Limits = http_head::Limits {
    max_head: MAX_HEAD,
    max_headers: MAX_HEADERS,
};

/// A parsed request head. The body, if any, has already been discarded.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The request target in origin form: `/path?query`.
    pub target: String,
    /// HTTP/1.0 rather than HTTP/1.1.
    pub http10: bool,
    /// The client sent `Connection: close`.
    pub wants_close: bool,
    /// The client's `Accept-Encoding`, if it sent one.
    pub accept_encoding: Option<String>,
    /// The client's `If-None-Match`, if it sent one.
    pub if_none_match: Option<String>,
    /// The client's `If-Modified-Since`, if it sent one.
    pub if_modified_since: Option<String>,
}

/// The result of waiting for the next request on a connection.
pub(crate) enum Incoming {
    Request(Request),
    /// The client closed the connection, stayed idle past the read timeout,
    /// or the socket failed. Nothing more to do but close our end.
    Gone,
    /// The bytes received are not an acceptable request: answer with its
    /// status (400, 431, 505) and close.
    Bad(http_head::Refusal),
}

/// One client connection and the bytes read from it but not yet consumed.
/// Leftover bytes matter because a client may pipeline: send its next
/// request before it has read our response to the previous one.
pub(crate) struct Connection {
    pub stream: Stream,
    buf: Vec<u8>,
    /// Searches only new bytes for the end of a head.
    reader: http_head::HeadReader,
}

impl Connection {
    pub fn new(stream: Stream) -> Connection {
        Connection {
            stream,
            buf: Vec::new(),
            reader: http_head::HeadReader::new(LIMITS),
        }
    }

    /// Reads until a complete request head has arrived, then discards the
    /// request body (if any) so the connection is ready for the next one.
    pub fn read_request(&mut self) -> Incoming {
        loop {
            if !self.buf.is_empty() {
                match self.reader.next(&self.buf) {
                    Ok(Some(head)) => {
                        let head_len = head.len;
                        let (request, body_len) = match request_of(head) {
                            Ok(request) => request,
                            Err(refusal) => return Incoming::Bad(refusal),
                        };
                        self.buf.drain(..head_len);
                        return match self.discard_body(body_len) {
                            Ok(()) => Incoming::Request(request),
                            Err(_) => Incoming::Gone,
                        };
                    }
                    Ok(None) => {}
                    Err(refusal) => return Incoming::Bad(refusal),
                }
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Incoming::Gone,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Includes the idle timeout (WouldBlock / TimedOut).
                Err(_) => return Incoming::Gone,
            }
        }
    }

    fn discard_body(&mut self, len: u64) -> io::Result<()> {
        let buffered = usize::try_from(len).map_or(self.buf.len(), |l| l.min(self.buf.len()));
        self.buf.drain(..buffered);
        let remaining = len - buffered as u64;
        let copied = io::copy(&mut (&mut self.stream).take(remaining), &mut io::sink())?;
        if copied == remaining {
            Ok(())
        } else {
            Err(io::ErrorKind::UnexpectedEof.into())
        }
    }
}

/// What the site serves of a head: the request, and the length of the body
/// to discard; or why it is refused (400).
fn request_of(head: http_head::Head) -> Result<(Request, u64), http_head::Refusal> {
    let bad = |why: String| http_head::Refusal::new(400, why);
    let Some(target) = origin_form(&head.target) else {
        return Err(bad(format!("unsupported request target {:?}", head.target)));
    };
    if head.header("transfer-encoding").is_some() {
        // Accepting chunked request bodies would mean another parser;
        // no crawler sends request bodies, so refuse them.
        return Err(bad(
            "request bodies with Transfer-Encoding are not supported".into(),
        ));
    }
    let body_len = head.content_length()?.unwrap_or(0);
    if body_len > MAX_BODY {
        return Err(bad(format!("request body longer than {MAX_BODY} bytes")));
    }
    let text = |name| {
        head.header(name)
            .map(|value| String::from_utf8_lossy(value).into_owned())
    };
    let (accept_encoding, if_none_match, if_modified_since) = (
        text("accept-encoding"),
        text("if-none-match"),
        text("if-modified-since"),
    );
    Ok((
        Request {
            wants_close: head.has_token("connection", "close"),
            http10: head.minor_version == 0,
            method: head.method,
            target,
            accept_encoding,
            if_none_match,
            if_modified_since,
        },
        body_len,
    ))
}

/// Turns a request target into origin form (`/path?query`). Clients normally
/// send that form; proxies send absolute form (`http://host/path`), which
/// HTTP/1.1 servers must also accept.
fn origin_form(target: &str) -> Option<String> {
    if target.starts_with('/') {
        return Some(target.to_string());
    }
    let lower = target.get(..8).unwrap_or(target).to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &target[7..]
    } else if lower.starts_with("https://") {
        &target[8..]
    } else {
        return None;
    };
    Some(match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => rest[i..].to_string(),
        Some(i) => format!("/{}", &rest[i..]),
        None => "/".to_string(),
    })
}

/// How the end of a response body is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `Content-Length: N` and exactly N bytes.
    ContentLength,
    /// `Transfer-Encoding: chunked`: size-prefixed chunks, then a 0 chunk.
    Chunked,
    /// Neither header: the body ends when the server closes the connection.
    /// The only option for HTTP/1.0 clients that do not know about chunks.
    CloseDelimited,
}

/// Chunk sizes for chunked bodies: a few odd sizes first (a one-byte chunk,
/// a size whose hex has letters) to exercise client parsers, then 4 KiB.
const CHUNK_SIZES: [usize; 4] = [1, 31, 256, 2748];
const LAST_CHUNK_SIZE: usize = 4096;

/// Encodes a whole response (head and framed body) into one buffer, so it
/// goes out in as few writes as possible.
pub(crate) fn encode_response(
    res: &Resource,
    framing: Framing,
    head_only: bool,
    close: bool,
    extra_headers: &[(&str, &str)],
) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nServer: demo-site\r\n",
        res.status,
        reason(res.status)
    );
    if let Some(content_type) = res.content_type {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    if let Some(location) = &res.location {
        head.push_str(&format!("Location: {location}\r\n"));
    }
    for (name, value) in extra_headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match framing {
        Framing::ContentLength => head.push_str(&format!("Content-Length: {}\r\n", res.body.len())),
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::CloseDelimited => {}
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");

    let mut out = head.into_bytes();
    if head_only {
        return out;
    }
    match framing {
        Framing::ContentLength | Framing::CloseDelimited => out.extend_from_slice(&res.body),
        Framing::Chunked => encode_chunked(&res.body, &mut out),
    }
    out
}

fn encode_chunked(body: &[u8], out: &mut Vec<u8>) {
    let mut rest = body;
    let mut sizes = CHUNK_SIZES
        .iter()
        .copied()
        .chain(std::iter::repeat(LAST_CHUNK_SIZE));
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(LAST_CHUNK_SIZE).min(rest.len());
        out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        out.extend_from_slice(&rest[..size]);
        out.extend_from_slice(b"\r\n");
        rest = &rest[size..];
    }
    out.extend_from_slice(b"0\r\n\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request, its body's length and its head's, as the site reads
    /// them; `Ok(None)` for a head not all there.
    fn parse(s: &str) -> Result<Option<(Request, u64, usize)>, http_head::Refusal> {
        let Some(head) = http_head::parse(s.as_bytes(), &LIMITS)? else {
            return Ok(None);
        };
        let head_len = head.len;
        let (request, body_len) = request_of(head)?;
        Ok(Some((request, body_len, head_len)))
    }

    #[test]
    fn parses_a_request() {
        let head = "GET /a?b HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n";
        let (request, body_len, head_len) = parse(&format!("{head}rest")).unwrap().unwrap();
        assert_eq!(request.method, "GET");
        assert_eq!(request.target, "/a?b");
        assert!(!request.http10);
        assert!(request.wants_close);
        assert_eq!(head_len, head.len());
        assert_eq!(body_len, 0);
    }

    #[test]
    fn rejects_bad_requests() {
        for bad in [
            "GET\r\n\r\n",
            "GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
            "GET / HTTP/2.0\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET * HTTP/1.1\r\n\r\n",
            "GET ftp://x/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(matches!(parse("GET / HTTP/1.1\r\nHost:"), Ok(None)));
    }

    #[test]
    fn absolute_form_targets() {
        assert_eq!(origin_form("/x").as_deref(), Some("/x"));
        assert_eq!(origin_form("http://h:1/x?y").as_deref(), Some("/x?y"));
        assert_eq!(origin_form("HTTP://h").as_deref(), Some("/"));
        assert_eq!(origin_form("https://h?q").as_deref(), Some("/?q"));
        assert_eq!(origin_form("h/x"), None);
    }

    #[test]
    fn chunked_encoding() {
        let mut out = Vec::new();
        encode_chunked(&[b'x'; 40], &mut out);
        let expected = format!(
            "1\r\nx\r\n1f\r\n{}\r\n8\r\nxxxxxxxx\r\n0\r\n\r\n",
            "x".repeat(31)
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);

        let mut empty = Vec::new();
        encode_chunked(b"", &mut empty);
        assert_eq!(empty, b"0\r\n\r\n");
    }
}
