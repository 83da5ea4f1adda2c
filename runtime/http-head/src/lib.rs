//! The HTTP/1.1 request head, read on the server's side, without I/O: the
//! demo site (blocking threads), the jobs pipeline's api and the snake (our
//! runtime) each read bytes their own way and hand them here.
//!
//! | item | does |
//! |---|---|
//! | [`parse`] | the head at the start of a buffer, or more needed, or a refusal |
//! | [`HeadReader`] | the same as bytes arrive, parsing only once the blank line is in |
//! | [`Head`] | the request line and headers, and what they say about the body and the connection |
//! | [`Refusal`] | 400, 431 or 505, and why: what to answer before closing |
//!
//! The caps are the server's ([`Limits`]): without them a client could make
//! a server buffer a head without end, or parse one with a million lines.
//! What each server does with a body, or with a header it does not serve,
//! stays its own.

/// How much of a head a server will read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes of a head: the request line, the headers and the
    /// blank line.
    pub max_head: usize,
    /// The most header lines.
    pub max_headers: usize,
}

impl Default for Limits {
    /// 16 KiB and 64 lines: far more than any browser or crawler sends.
    fn default() -> Self {
        Limits {
            max_head: 16 * 1024,
            max_headers: 64,
        }
    }
}

/// A request's head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// `GET`, `POST`...: a token, as httparse checked.
    pub method: String,
    /// The request target, as sent (`/path?query`, or absolute form).
    pub target: String,
    /// 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub minor_version: u8,
    /// Every header line, in order: its name as sent, and its value.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The bytes the head took: what follows is its body, or the next
    /// request.
    pub len: usize,
}

/// A request refused before it is served: the status to answer with and
/// why. The server closes the connection after the answer, since it may
/// not know where the next request starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 400, 431 or 505 (or a server's own, for what it does not serve).
    pub status: u16,
    /// What was wrong, for the answer's body and the log.
    pub reason: String,
}

impl Refusal {
    /// A refusal with `status` and `reason`.
    pub fn new(status: u16, reason: impl Into<String>) -> Refusal {
        Refusal {
            status,
            reason: reason.into(),
        }
    }

    /// The status's reason phrase, for the status line.
    pub fn phrase(&self) -> &'static str {
        phrase(self.status)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.phrase(), self.reason)
    }
}

impl std::error::Error for Refusal {}

/// The reason phrase of the statuses a head reader and its servers refuse
/// with.
pub fn phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        411 => "Length Required",
        413 => "Content Too Large",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// The head at the start of `buf`: `Ok(None)` if it is not all there yet
/// (read more), or why it is refused. A head that is not complete after
/// `max_head` bytes is refused then, not read further.
pub fn parse(buf: &[u8], limits: &Limits) -> Result<Option<Head>, Refusal> {
    let mut headers = vec![httparse::EMPTY_HEADER; limits.max_headers];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > limits.max_head => {
            return Err(too_large(limits));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Refusal::new(
                431,
                format!("more than {} header lines", limits.max_headers),
            ));
        }
        Err(httparse::Error::Version) => {
            return Err(Refusal::new(505, "HTTP/1.0 and HTTP/1.1 only"));
        }
        Err(e) => return Err(Refusal::new(400, format!("malformed request: {e}"))),
    };
    if len > limits.max_head {
        return Err(too_large(limits));
    }
    // httparse fills all three in a complete head.
    let (Some(method), Some(target), Some(minor_version)) =
        (request.method, request.path, request.version)
    else {
        return Err(Refusal::new(400, "malformed request line"));
    };
    Ok(Some(Head {
        method: method.to_string(),
        target: target.to_string(),
        minor_version,
        headers: request
            .headers
            .iter()
            .map(|h| (h.name.to_string(), h.value.to_vec()))
            .collect(),
        len,
    }))
}

fn too_large(limits: &Limits) -> Refusal {
    Refusal::new(
        431,
        format!("request head longer than {} bytes", limits.max_head),
    )
}

impl Head {
    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.values(name).next()
    }

    /// Every value of the header `name` (any case), in order.
    pub fn values<'h, 'n>(&'h self, name: &'n str) -> impl Iterator<Item = &'h [u8]> + use<'h, 'n> {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Whether the header `name` has the comma-separated `token` (any case),
    /// on any of its lines: `Connection: keep-alive, Upgrade`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.values(name).any(|value| {
            String::from_utf8_lossy(value)
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    }

    /// Whether the client may send another request on this connection:
    /// HTTP/1.1 unless it said `Connection: close`, HTTP/1.0 only if it
    /// said `Connection: keep-alive` (RFC 9112, 9.3).
    pub fn keep_alive(&self) -> bool {
        if self.has_token("connection", "close") {
            return false;
        }
        self.minor_version == 1 || self.has_token("connection", "keep-alive")
    }

    /// The body's length, from `Content-Length`: none if there is none.
    /// Refused (400): a value that is not digits alone (`+5`, `5, 6`,
    /// `lots`), and two lines that disagree. Lines that agree are one.
    pub fn content_length(&self) -> Result<Option<u64>, Refusal> {
        let mut length = None;
        for value in self.values("content-length") {
            let text = String::from_utf8_lossy(value);
            let digits = text.trim();
            let parsed = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse::<u64>().ok())
                .flatten();
            let Some(n) = parsed else {
                return Err(Refusal::new(400, format!("bad Content-Length {text:?}")));
            };
            if length.is_some_and(|m| m != n) {
                return Err(Refusal::new(400, "conflicting Content-Length headers"));
            }
            length = Some(n);
        }
        Ok(length)
    }
}

/// Reads heads out of a connection's buffer as it grows, without parsing
/// the same bytes again after every read. [`next`](HeadReader::next)
/// parses at a head's first bytes (what is not HTTP at all, a TLS hello
/// say, is refused at once), when a line is complete (a broken line is
/// refused when it ends), and when the blank line that ends the head is in;
/// otherwise only the new bytes are searched. (A client dripping a 16 KiB
/// head a byte at a time cost the jobs api a parse of the whole head per
/// byte; now it costs one per line.)
#[derive(Clone, Debug, Default)]
pub struct HeadReader {
    limits: Limits,
    /// Bytes of the buffer searched for the end of the head.
    scanned: usize,
    /// Heads parsed, for the tests.
    parses: usize,
}

impl HeadReader {
    /// A reader with these limits.
    pub fn new(limits: Limits) -> HeadReader {
        HeadReader {
            limits,
            scanned: 0,
            parses: 0,
        }
    }

    /// Whether a parse of `buf` can end the wait: the blank line is in, or
    /// the head is over its limit (and a parse refuses it). Only the bytes
    /// not searched before are searched, and the three before them.
    pub fn ready(&mut self, buf: &[u8]) -> bool {
        // `\r\n\r\n`, or `\n\n` from a sloppy client: `\r\n\r` then `\n`
        // ends it in the window `\n\r\n`.
        let from = self.scanned.saturating_sub(3).min(buf.len());
        let new = &buf[from..];
        let ended = new.windows(2).any(|w| w == b"\n\n") || new.windows(3).any(|w| w == b"\n\r\n");
        self.scanned = buf.len();
        ended || buf.len() > self.limits.max_head
    }

    /// The head at the start of `buf`, as [`parse`] answers, but doing the
    /// work only when it can end the wait. Once it returns a head, the
    /// next call reads the next head: call it with the buffer from where
    /// that head (and its body) ended.
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<Head>, Refusal> {
        let first = self.scanned == 0;
        let line_ended = buf
            .get(self.scanned..)
            .is_some_and(|new| new.contains(&b'\n'));
        if !(self.ready(buf) || first || line_ended) {
            return Ok(None);
        }
        self.parses += 1;
        let head = parse(buf, &self.limits)?;
        if head.is_some() {
            self.scanned = 0;
        }
        Ok(head)
    }

    /// How many times a head was parsed.
    pub fn parses(&self) -> usize {
        self.parses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    fn status(request: &[u8]) -> u16 {
        match parse(request, &limits()) {
            Ok(Some(_)) => 200,
            Ok(None) => 0,
            Err(refusal) => refusal.status,
        }
    }

    #[test]
    fn a_head_its_length_and_what_follows() {
        let request = b"GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-Two: 1\r\nx-two: 2\r\n\r\nNEXT";
        let head = parse(request, &limits()).unwrap().unwrap();
        assert_eq!(
            (
                head.method.as_str(),
                head.target.as_str(),
                head.minor_version
            ),
            ("GET", "/a?b=c", 1)
        );
        assert_eq!(&request[head.len..], b"NEXT");
        assert_eq!(head.header("HOST"), Some(&b"x"[..]));
        assert_eq!(head.values("x-two").collect::<Vec<_>>(), [b"1", b"2"]);
        assert!(head.keep_alive());
        assert_eq!(parse(&request[..20], &limits()), Ok(None));
    }

    #[test]
    fn keep_alive_follows_the_version_and_the_connection_header() {
        let head = |text: &str| parse(text.as_bytes(), &limits()).unwrap().unwrap();
        assert!(head("GET / HTTP/1.1\r\n\r\n").keep_alive());
        assert!(!head("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive());
        assert!(!head("GET / HTTP/1.0\r\n\r\n").keep_alive());
        assert!(head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive());
        assert!(!head("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n").keep_alive());
        assert!(
            head("GET / HTTP/1.1\r\nConnection: Upgrade\r\n\r\n")
                .has_token("connection", "upgrade")
        );
    }

    // The hostile heads each server met, now every server's.

    #[test]
    fn garbage_and_broken_lines_are_400() {
        for request in [
            &b"NONSENSE\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nThis header has no colon\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
            b"G\xffT / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(
                status(request),
                400,
                "{:?}",
                String::from_utf8_lossy(request)
            );
        }
    }

    #[test]
    fn another_version_is_505() {
        assert_eq!(status(b"GET / HTTP/9.9\r\n\r\n"), 505);
        assert_eq!(status(b"GET / HTTP/2.0\r\n\r\n"), 505);
    }

    #[test]
    fn a_head_too_long_or_with_too_many_lines_is_431() {
        let long = format!(
            "GET / HTTP/1.1\r\nX-Long: {}\r\n\r\n",
            "x".repeat(20 * 1024)
        );
        assert_eq!(status(long.as_bytes()), 431, "complete, but too long");
        let endless = "X".repeat(limits().max_head + 1);
        assert_eq!(status(endless.as_bytes()), 431, "never ends");
        let unfinished = format!(
            "GET / HTTP/1.1\r\nX-Long: {}",
            "x".repeat(limits().max_head)
        );
        assert_eq!(
            status(unfinished.as_bytes()),
            431,
            "unfinished past the cap"
        );
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(100));
        assert_eq!(status(many.as_bytes()), 431);
        let tight = Limits {
            max_head: 64,
            max_headers: 2,
        };
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", &tight)
                .unwrap_err()
                .status,
            431
        );
    }

    #[test]
    fn content_length_is_digits_and_agrees_with_itself() {
        let length = |lines: &str| {
            let text = format!("POST / HTTP/1.1\r\n{lines}\r\n");
            parse(text.as_bytes(), &limits())
                .unwrap()
                .unwrap()
                .content_length()
                .map_err(|r| r.status)
        };
        assert_eq!(length(""), Ok(None));
        assert_eq!(length("Content-Length: 28\r\n"), Ok(Some(28)));
        assert_eq!(
            length("Content-Length: 5\r\ncontent-length: 5\r\n"),
            Ok(Some(5))
        );
        for bad in [
            "+28",
            "5, 6",
            "5, 5",
            "lots",
            "-1",
            "",
            "99999999999999999999999",
        ] {
            assert_eq!(
                length(&format!("Content-Length: {bad}\r\n")),
                Err(400),
                "{bad:?}"
            );
        }
        assert_eq!(
            length("Content-Length: 5\r\nContent-Length: 6\r\n"),
            Err(400),
            "two that disagree"
        );
    }

    #[test]
    fn a_head_dripped_a_byte_at_a_time_is_parsed_once_a_line() {
        let request = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X-Filler: abcdefghijklmnop\r\n".repeat(60)
        );
        let mut reader = HeadReader::new(limits());
        let mut buf = Vec::new();
        let mut got = None;
        for &byte in request.as_bytes() {
            buf.push(byte);
            if let Some(head) = reader.next(&buf).unwrap() {
                got = Some(head);
            }
        }
        assert_eq!(got.map(|h| h.len), Some(request.len()));
        // At the first byte, and at each of the 62 line ends: not at each
        // of the 1,820 bytes.
        assert_eq!(reader.parses(), 63);
        // A sloppy client's bare `\n\n` ends a head too.
        let mut reader = HeadReader::new(limits());
        assert!(
            reader
                .next(b"GET / HTTP/1.1\nHost: x\n\n")
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_dripped_head_that_never_ends_is_refused_at_the_cap() {
        let mut reader = HeadReader::new(Limits {
            max_head: 100,
            max_headers: 8,
        });
        let mut buf = b"GET / HTTP/1.1\r\nX: ".to_vec();
        let refusal = loop {
            buf.push(b'a');
            match reader.next(&buf) {
                Ok(None) => assert!(buf.len() <= 100),
                Ok(Some(_)) => panic!("a head with no end"),
                Err(refusal) => break refusal,
            }
        };
        assert_eq!((refusal.status, buf.len()), (431, 101));
        assert_eq!(reader.parses(), 2, "at the first bytes, and past the cap");
    }

    #[test]
    fn what_is_not_http_is_refused_at_its_first_bytes_and_a_broken_line_at_its_end() {
        // A TLS hello has no line end to wait for: a client that sent it
        // waits for the server's answer, and gets 400 at once.
        let mut reader = HeadReader::new(limits());
        let hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
        assert_eq!(reader.next(hello).unwrap_err().status, 400);
        let mut reader = HeadReader::new(limits());
        let mut buf = b"GET / HTTP/1.1\r\n".to_vec();
        assert_eq!(reader.next(&buf), Ok(None));
        buf.extend_from_slice(b"This header has no colon");
        assert_eq!(reader.next(&buf), Ok(None), "the line is not over");
        buf.extend_from_slice(b"\r\n");
        assert_eq!(reader.next(&buf).unwrap_err().status, 400);
    }
}
