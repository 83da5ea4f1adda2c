//! Reading one HTTP/1.1 response: the head with `httparse`, then the body in
//! whichever of the three framings the head announces.

use std::time::Duration;

use super::conn::Connection;
use super::decode::{self, Cap};
use super::error::FetchError;

/// A response head may not be larger than this.
const MAX_HEAD: usize = 64 * 1024;
/// Nor have more header lines than this. Browsers and curl count bytes,
/// not lines (Chrome allows a 256 KiB head, curl 100 KB); real pages send
/// 200 headers and more (cookies, CSP, tracking), so the count only keeps
/// the parser's table from growing without end, well past them: the 64 KiB
/// limit is what binds.
const MAX_HEADERS: usize = 1024;
/// Interim (1xx) responses accepted before the real one.
const MAX_INTERIM: usize = 8;
/// A chunk-size line (with extensions) or trailer line may not be longer.
const MAX_LINE: usize = 4 * 1024;

/// A complete response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The minor version: 1 for HTTP/1.1, 0 for HTTP/1.0 (1 over HTTP/2).
    pub version: u8,
    /// The protocol that carried it.
    pub protocol: Protocol,
    /// Names as sent; values decoded as Latin-1 would be (bytes above 127
    /// are rare and meaningless in the headers we read).
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked, and once [`Client::get`](super::Client::get)
    /// returns it, with any Content-Encoding undone.
    pub body: Vec<u8>,
    /// The body's length as received: de-chunked, but still compressed.
    pub wire_size: u64,
    /// The status line and headers exactly as received, when the client
    /// keeps them for whoever hears exchanges (the WARC archive); empty otherwise.
    pub raw_head: Vec<u8>,
    /// Whether the body came chunked.
    pub chunked: bool,
    /// Whether `body` is only the first `--max-body` bytes of a longer
    /// one: a response read with [`Cap::Cut`], which never fails for size.
    pub truncated: bool,
    /// The transfer codings still on `body` once it is de-chunked (`gzip`
    /// in `Transfer-Encoding: gzip, chunked`), in the order they were
    /// applied; [`Client::get`](super::Client::get) undoes them first.
    pub transfer_codings: Vec<String>,
    /// The address of the server that sent it, if the socket knew it.
    pub peer: Option<std::net::IpAddr>,
}

impl Response {
    /// The first header called `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every header called `name`: field lines with the same name form
    /// one list (RFC 9110 section 5.3), so a list-valued header is read
    /// from all of them, never the first alone.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    // ANCHOR: retry_after
    /// How long the server asks us to wait before asking again
    /// (`Retry-After`, RFC 9110 section 10.2.3): a number of seconds, or a
    /// date, counted from `now` (a date gone by is no wait). `None`
    /// without the header, or with one that is neither.
    pub fn retry_after(&self, now: std::time::SystemTime) -> Option<Duration> {
        let value = self.header("retry-after")?.trim();
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            // More digits than a u64 holds is a very long wait.
            return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
        }
        let at = crawl_kit::dates::parse_http_date(value)?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    }
    // ANCHOR_END: retry_after

    /// Whether the connection may carry another request after this
    /// response: HTTP/1.1 unless the server said `close`, HTTP/1.0 only if
    /// it said `keep-alive`.
    fn keep_alive(&self) -> bool {
        let says = |token: &str| {
            self.headers_named("connection")
                .flat_map(|v| v.split(','))
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        if self.version >= 1 {
            !says("close")
        } else {
            says("keep-alive")
        }
    }
}

/// The protocol a response came over, by its ALPN name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// HTTP/1.0.
    Http10,
    /// HTTP/1.1.
    #[default]
    Http11,
    /// HTTP/2.
    H2,
}

impl Protocol {
    /// The name the report and the WARC archive give it: `http/1.0`,
    /// `http/1.1` or `h2`, as ALPN spells them.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http10 => "http/1.0",
            Protocol::Http11 => "http/1.1",
            Protocol::H2 => "h2",
        }
    }

    /// The protocol called `name` (as [`as_str`](Self::as_str) writes it).
    pub fn named(name: &str) -> Option<Protocol> {
        [Protocol::Http10, Protocol::Http11, Protocol::H2]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

impl serde::Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A body read whole, or cut at the limit.
enum Body {
    Whole(Vec<u8>),
    Over(Vec<u8>),
}

/// How the end of the body is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// No body at all (204, 304).
    Empty,
    Length(u64),
    Chunked,
    /// The body ends when the server closes the connection.
    Close,
}

// ANCHOR: read_response
/// Reads one response from `conn`. Returns it, and whether the connection
/// can be reused for another request.
pub(crate) async fn read_response(
    conn: &mut Connection,
    read_timeout: Duration,
    max_body: u64,
    keep_head: bool,
    cap: Cap,
) -> Result<(Response, bool), FetchError> {
    let mut interim = 0;
    let mut response = loop {
        let head = read_head(conn, read_timeout, keep_head).await?;
        // 1xx responses are interim (100 Continue, 103 Early Hints): the real
        // one follows on the same connection. A few, not an endless stream.
        if !(100..200).contains(&head.status) {
            break head;
        }
        interim += 1;
        if head.status == 101 || interim > MAX_INTERIM {
            return Err(FetchError::Malformed(format!(
                "unexpected interim response {}",
                head.status
            )));
        }
    };
    let framing = framing(&response)?;
    let too_large = |response: &Response| FetchError::TooLarge {
        decoded: false,
        limit: max_body,
        status: response.status,
        content_type: response.header("content-type").map(str::to_string),
    };
    let body = match framing {
        Framing::Empty => Body::Whole(Vec::new()),
        Framing::Length(len) if len > max_body => {
            Body::Over(read_length(conn, max_body, read_timeout).await?)
        }
        Framing::Length(len) => Body::Whole(read_length(conn, len, read_timeout).await?),
        Framing::Chunked => read_chunked(conn, read_timeout, max_body).await?,
        Framing::Close => read_to_close(conn, read_timeout, max_body).await?,
    };
    response.body = match (body, cap) {
        (Body::Whole(body), _) => body,
        (Body::Over(_), Cap::Fail) => return Err(too_large(&response)),
        (Body::Over(body), Cap::Cut | Cap::CutNoSooner(_)) => {
            response.truncated = true;
            body
        }
    };
    response.wire_size = response.body.len() as u64;
    response.chunked = framing == Framing::Chunked;
    response.transfer_codings = transfer_codings(&response, framing);
    // The rest of a cut body is still on the wire: the connection is done.
    let reusable = framing != Framing::Close && response.keep_alive() && !response.truncated;
    Ok((response, reusable))
}
// ANCHOR_END: read_response

/// Reads a proxy's answer to `CONNECT`: a head, whose body (if a refusal
/// has one) is never read, since the connection is given up then.
pub(crate) async fn read_connect_answer(
    conn: &mut Connection,
    read_timeout: Duration,
) -> Result<Response, FetchError> {
    read_head(conn, read_timeout, false).await
}

/// Reads until a complete head is in `conn.buf`, parses it, and consumes it.
async fn read_head(
    conn: &mut Connection,
    read_timeout: Duration,
    keep_head: bool,
) -> Result<Response, FetchError> {
    loop {
        if let Some(head) = parse_head(conn, keep_head)? {
            return Ok(head);
        }
        if conn.buf.len() > MAX_HEAD {
            return Err(FetchError::Malformed(format!(
                "response head larger than {MAX_HEAD} bytes"
            )));
        }
        if conn.fill(read_timeout).await? == 0 {
            return Err(if conn.buf.is_empty() {
                FetchError::Closed
            } else {
                FetchError::Truncated("connection closed in the middle of the response head".into())
            });
        }
    }
}

/// A header value as text. Servers send UTF-8 more often than the Latin-1
/// the old RFCs name (a `Location: /café` in UTF-8 bytes is common), so
/// UTF-8 is tried first; bytes that are not UTF-8 are read as Latin-1, which
/// never fails.
fn header_text(value: &[u8]) -> String {
    match std::str::from_utf8(value) {
        Ok(text) => text.to_string(),
        Err(_) => value.iter().map(|&b| char::from(b)).collect(),
    }
}

/// Parses the head at the front of `conn.buf`, if it is all there.
fn parse_head(conn: &mut Connection, keep_head: bool) -> Result<Option<Response>, FetchError> {
    // On the heap: a table of 1,024 is 32 KB, too much for a stack frame.
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Response::new(&mut headers);
    // Real servers bend the grammar: a space before the colon, a header
    // folded onto a second line, a stray invalid header. Browsers accept
    // them, and so do we; a bad status line is still an error.
    let len = match httparse::ParserConfig::default()
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .ignore_invalid_headers_in_responses(true)
        .parse_response(&mut parsed, &conn.buf)
    {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(FetchError::Malformed(format!(
                "malformed response head: {e}"
            )));
        }
    };
    let (Some(status), Some(version)) = (parsed.code, parsed.version) else {
        return Err(FetchError::Malformed(
            "response head without a status".into(),
        ));
    };
    let response = Response {
        status,
        version,
        protocol: if version == 0 {
            Protocol::Http10
        } else {
            Protocol::Http11
        },
        headers: parsed
            .headers
            .iter()
            .map(|h| (h.name.to_string(), header_text(h.value)))
            .collect(),
        body: Vec::new(),
        wire_size: 0,
        raw_head: if keep_head {
            conn.buf[..len].to_vec()
        } else {
            Vec::new()
        },
        chunked: false,
        truncated: false,
        transfer_codings: Vec::new(),
        peer: None,
    };
    conn.buf.drain(..len);
    Ok(Some(response))
}

/// Decides the framing from the head, as RFC 9112 section 6.3 orders it.
fn framing(response: &Response) -> Result<Framing, FetchError> {
    if response.status == 204 || response.status == 304 {
        return Ok(Framing::Empty);
    }
    let te = decode::codings(response.headers_named("transfer-encoding"));
    if response.headers_named("transfer-encoding").next().is_some() {
        // Chunked must be the last coding (of every Transfer-Encoding line
        // together); without it, the body ends at close.
        return Ok(if te.last().is_some_and(|c| c == "chunked") {
            Framing::Chunked
        } else {
            Framing::Close
        });
    }
    let mut length = None;
    for value in response.headers_named("content-length") {
        for part in value.split(',') {
            let part = part.trim();
            let parsed = (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse::<u64>().ok())
                .flatten();
            match (parsed, length) {
                (None, _) => {
                    return Err(FetchError::Malformed(format!(
                        "invalid Content-Length {value:?}"
                    )));
                }
                (Some(n), Some(m)) if n != m => {
                    return Err(FetchError::Malformed(
                        "conflicting Content-Length headers".into(),
                    ));
                }
                (Some(n), _) => length = Some(n),
            }
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

/// The transfer codings left on the body once its framing is undone: all
/// of `Transfer-Encoding` but a final `chunked`, which the framing undid.
/// Whatever is left is undone with the content codings, or the URL fails
/// with the coding's name: a body is never parsed with a coding still on.
fn transfer_codings(response: &Response, framing: Framing) -> Vec<String> {
    let mut codings = decode::codings(response.headers_named("transfer-encoding"));
    if framing == Framing::Chunked {
        codings.pop();
    }
    codings
}

async fn read_length(
    conn: &mut Connection,
    len: u64,
    read_timeout: Duration,
) -> Result<Vec<u8>, FetchError> {
    // `len` is at most max_body, which the caller chose, so it fits memory.
    let want = usize::try_from(len).unwrap_or(usize::MAX);
    let mut body = Vec::with_capacity(want.min(1 << 20));
    loop {
        let take = (want - body.len()).min(conn.buf.len());
        body.extend(conn.buf.drain(..take));
        if body.len() == want {
            return Ok(body);
        }
        if conn.fill(read_timeout).await? == 0 {
            return Err(FetchError::Truncated(format!(
                "connection closed after {} of {len} body bytes",
                body.len()
            )));
        }
    }
}

/// Reads to end of stream, or its first `max_body` bytes when it is longer.
async fn read_to_close(
    conn: &mut Connection,
    read_timeout: Duration,
    max_body: u64,
) -> Result<Body, FetchError> {
    loop {
        if conn.buf.len() as u64 > max_body {
            let mut body = std::mem::take(&mut conn.buf);
            body.truncate(usize::try_from(max_body).unwrap_or(usize::MAX));
            return Ok(Body::Over(body));
        }
        if conn.fill(read_timeout).await? == 0 {
            return Ok(Body::Whole(std::mem::take(&mut conn.buf)));
        }
    }
}

// ANCHOR: read_chunked
/// Decodes a chunked body: `SIZE-IN-HEX[;ext]\r\n DATA \r\n`, repeated,
/// ending with a zero size and optional trailer lines. A body that passes
/// `max_body` is cut there.
async fn read_chunked(
    conn: &mut Connection,
    read_timeout: Duration,
    max_body: u64,
) -> Result<Body, FetchError> {
    let mut body = Vec::new();
    loop {
        let line = read_line(conn, read_timeout).await?;
        let size = parse_chunk_size(&line)?;
        if size == 0 {
            read_trailers(conn, read_timeout).await?;
            return Ok(Body::Whole(body));
        }
        let over = (body.len() as u64).saturating_add(size) > max_body;
        // Fits in usize: bounded by max_body.
        let mut left =
            usize::try_from(size.min(max_body - body.len() as u64)).unwrap_or(usize::MAX);
        while left > 0 {
            if conn.buf.is_empty() {
                fill_or_truncated(conn, read_timeout).await?;
                continue;
            }
            let take = left.min(conn.buf.len());
            body.extend(conn.buf.drain(..take));
            left -= take;
        }
        if over {
            return Ok(Body::Over(body));
        }
        if !read_line(conn, read_timeout).await?.is_empty() {
            return Err(FetchError::Malformed(
                "chunk data longer than its size".into(),
            ));
        }
    }
}
// ANCHOR_END: read_chunked

/// Skips the trailer lines after the last chunk, up to an empty line, with
/// the limits a head has: an endless stream of small trailers is as much an
/// attack as an endless head.
async fn read_trailers(conn: &mut Connection, read_timeout: Duration) -> Result<(), FetchError> {
    let (mut count, mut bytes) = (0, 0);
    loop {
        let line = read_line(conn, read_timeout).await?;
        if line.is_empty() {
            return Ok(());
        }
        count += 1;
        bytes += line.len() + 2;
        if count > MAX_HEADERS || bytes > MAX_HEAD {
            return Err(FetchError::Malformed(format!(
                "trailers longer than {MAX_HEADERS} lines or {MAX_HEAD} bytes"
            )));
        }
    }
}

/// Reads more; an end of stream inside a chunked body is an error.
async fn fill_or_truncated(
    conn: &mut Connection,
    read_timeout: Duration,
) -> Result<(), FetchError> {
    match conn.fill(read_timeout).await? {
        0 => Err(FetchError::Truncated(
            "connection closed in the middle of a chunked body".into(),
        )),
        _ => Ok(()),
    }
}

/// Reads one CRLF-terminated line from the front of `conn.buf`, without the
/// CRLF. (A bare LF is accepted too, as most clients do.)
async fn read_line(conn: &mut Connection, read_timeout: Duration) -> Result<Vec<u8>, FetchError> {
    loop {
        if let Some(end) = conn.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = conn.buf.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(line);
        }
        if conn.buf.len() > MAX_LINE {
            return Err(FetchError::Malformed("chunk line too long".into()));
        }
        fill_or_truncated(conn, read_timeout).await?;
    }
}

fn parse_chunk_size(line: &[u8]) -> Result<u64, FetchError> {
    let digits = line.split(|&b| b == b';').next().unwrap_or(&[]);
    let digits = std::str::from_utf8(digits).unwrap_or("").trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(FetchError::Malformed(format!(
            "invalid chunk size {:?}",
            String::from_utf8_lossy(line)
        )));
    }
    u64::from_str_radix(digits, 16)
        .map_err(|_| FetchError::Malformed("chunk size too large".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        use std::time::{Duration, UNIX_EPOCH};
        let with = |value: &str| Response {
            headers: vec![("Retry-After".into(), value.into())],
            ..Response::default()
        };
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06 08:49:37
        assert_eq!(with("120").retry_after(now), Some(Duration::from_secs(120)));
        assert_eq!(
            with("Sun, 06 Nov 1994 08:50:07 GMT").retry_after(now),
            Some(Duration::from_secs(30))
        );
        // A date gone by is no wait; a number too big is a very long one.
        assert_eq!(
            with("Sun, 06 Nov 1994 08:00:00 GMT").retry_after(now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            with("99999999999999999999999").retry_after(now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(with("soon").retry_after(now), None);
        assert_eq!(Response::default().retry_after(now), None);
    }

    fn head(status: u16, version: u8, headers: &[(&str, &str)]) -> Response {
        Response {
            status,
            version,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..Response::default()
        }
    }

    #[test]
    fn framing_follows_the_rfc_order() {
        let f = |status, headers: &[(&str, &str)]| framing(&head(status, 1, headers));
        assert_eq!(f(200, &[]), Ok(Framing::Close));
        assert_eq!(f(200, &[("Content-Length", "12")]), Ok(Framing::Length(12)));
        assert_eq!(
            f(200, &[("Content-Length", "7"), ("content-length", "7")]),
            Ok(Framing::Length(7))
        );
        assert_eq!(
            f(200, &[("Content-Length", "7, 7")]),
            Ok(Framing::Length(7))
        );
        assert_eq!(
            f(
                200,
                &[
                    ("Transfer-Encoding", "gzip, chunked"),
                    ("Content-Length", "3")
                ]
            ),
            Ok(Framing::Chunked)
        );
        assert_eq!(f(200, &[("Transfer-Encoding", "gzip")]), Ok(Framing::Close));
        assert_eq!(f(304, &[("Content-Length", "10")]), Ok(Framing::Empty));
        assert_eq!(f(204, &[]), Ok(Framing::Empty));
        for bad in ["", "-1", "+3", "1 2", "0x10", "99999999999999999999999"] {
            assert!(matches!(
                f(200, &[("Content-Length", bad)]),
                Err(FetchError::Malformed(_))
            ));
        }
        assert_eq!(
            f(200, &[("Content-Length", "1"), ("Content-Length", "2")]),
            Err(FetchError::Malformed(
                "conflicting Content-Length headers".into()
            ))
        );
    }

    #[test]
    fn keep_alive_by_version_and_connection_header() {
        assert!(head(200, 1, &[]).keep_alive());
        assert!(!head(200, 1, &[("Connection", "Close")]).keep_alive());
        assert!(!head(200, 1, &[("Connection", "upgrade, close")]).keep_alive());
        assert!(!head(200, 0, &[]).keep_alive());
        assert!(head(200, 0, &[("Connection", "Keep-Alive")]).keep_alive());
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(parse_chunk_size(b"1a"), Ok(26));
        assert_eq!(parse_chunk_size(b"FF;name=value"), Ok(255));
        assert_eq!(parse_chunk_size(b"0"), Ok(0));
        assert!(parse_chunk_size(b"").is_err());
        assert!(parse_chunk_size(b"xyz").is_err());
        assert!(parse_chunk_size(b"-1").is_err());
        assert!(parse_chunk_size(b"fffffffffffffffffffff").is_err());
    }
}
