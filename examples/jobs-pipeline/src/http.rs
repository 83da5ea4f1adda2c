//! Just enough HTTP/1.1 for a JSON API: requests with a `Content-Length`
//! body, read out of a buffer that may hold part of a request or several
//! (the head by the reader every server of ours shares, `runtime/http-head`,
//! with its 400, 431 and 505 answers); responses with a length and
//! keep-alive.

use std::fmt::Write as _;

/// The most header bytes we wait for before giving up on a request.
pub const MAX_HEAD: usize = 16 * 1024;
/// The largest body we accept.
pub const MAX_BODY: usize = 64 * 1024;
const MAX_HEADERS: usize = 32;

/// The head reader's caps.
const LIMITS: http_head::Limits = http_head::Limits {
    max_head: MAX_HEAD,
    max_headers: MAX_HEADERS,
};

/// A complete request.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    /// The query string, without its `?` (empty if none).
    pub query: String,
    pub body: Vec<u8>,
    /// Whether the client wants the connection closed after the response.
    pub close: bool,
    /// The `Idempotency-Key` header: a client's name for this request, so
    /// that a retry is recognised as the same job.
    pub idempotency_key: Option<String>,
}

/// The longest `Idempotency-Key` we accept (a UUID is 36 characters).
pub const MAX_KEY: usize = 255;

/// A request we refuse before routing it; the connection closes after the
/// answer, because we may not know where the next request starts.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl From<http_head::Refusal> for Refusal {
    fn from(refusal: http_head::Refusal) -> Refusal {
        refuse(refusal.status, refusal.reason)
    }
}

fn refuse(status: u16, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

/// Parses the request at the start of `buf`. `Ok(None)`: not all there yet,
/// read more. `Ok(Some((request, used)))`: `used` bytes make up the request;
/// what follows is the start of the next one.
pub fn parse(buf: &[u8]) -> Result<Option<(Request, usize)>, Refusal> {
    match parse_at(buf)? {
        Parsed::Done(request, used) => Ok(Some((request, used))),
        Parsed::Head | Parsed::Body { .. } => Ok(None),
    }
}

/// How far a request in a buffer has come.
enum Parsed {
    /// Its head is not all there.
    Head,
    /// Its head is, and the whole request will be `total` bytes. The
    /// client may be waiting for a `100 Continue` before it sends the body.
    Body {
        total: usize,
        expects_continue: bool,
    },
    /// It is all there: the request, and the bytes it took.
    Done(Request, usize),
}

/// Reads requests out of a connection's buffer as it grows, without
/// parsing the same bytes again after every read: until the blank line that
/// ends the head arrives, only the new bytes are searched for it; once the
/// head is parsed, nothing is parsed again until the body is all there. (A
/// client dripping a 16 KiB head a byte at a time cost a parse of the whole
/// head per byte.)
#[derive(Debug)]
pub struct RequestReader {
    /// Searches only new bytes for the end of the head.
    head: http_head::HeadReader,
    /// The whole request's length, once its head is parsed.
    total: Option<usize>,
    /// Heads parsed, for the tests.
    parses: usize,
    /// The head just parsed asked for `100 Continue` (`Expect:
    /// 100-continue`), and it has not been sent.
    continue_due: bool,
}

impl Default for RequestReader {
    fn default() -> Self {
        RequestReader {
            head: http_head::HeadReader::new(LIMITS),
            total: None,
            parses: 0,
            continue_due: false,
        }
    }
}

impl RequestReader {
    /// The request at the start of `buf`, as [`parse`] answers, but doing
    /// the work only when it can succeed.
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<(Request, usize)>, Refusal> {
        match self.total {
            Some(total) if buf.len() < total => return Ok(None),
            Some(_) => {}
            // Past MAX_HEAD, `ready` too: the parse refuses it with a 431.
            None if !self.head.ready(buf) => return Ok(None),
            None => {}
        }
        self.parses += 1;
        match parse_at(buf)? {
            Parsed::Head => Ok(None),
            Parsed::Body {
                total,
                expects_continue,
            } => {
                self.total = Some(total);
                self.continue_due = expects_continue;
                Ok(None)
            }
            Parsed::Done(request, used) => {
                self.head = http_head::HeadReader::new(LIMITS);
                self.total = None;
                Ok(Some((request, used)))
            }
        }
    }

    /// Whether to send `100 Continue` now: once, after a head that asked
    /// for it, while its body has not arrived. A client that sent
    /// `Expect: 100-continue` waits for it before the body (curl waits a
    /// second, then sends anyway); a server that answers at once saves the
    /// wait, and tells the client its request is being read.
    pub fn take_continue(&mut self) -> bool {
        std::mem::take(&mut self.continue_due)
    }

    /// How many times a head was parsed.
    pub fn parses(&self) -> usize {
        self.parses
    }
}

fn parse_at(buf: &[u8]) -> Result<Parsed, Refusal> {
    let Some(head) = http_head::parse(buf, &LIMITS)? else {
        return Ok(Parsed::Head);
    };
    let (method, target, head_len) = (head.method.as_str(), head.target.as_str(), head.len);
    let length = head.content_length()?;
    if head.header("transfer-encoding").is_some() {
        return Err(refuse(501, "request bodies must have a Content-Length"));
    }
    let close = !head.keep_alive();
    let mut idempotency_key = None;
    let mut expects_continue = false;
    for (name, value) in &head.headers {
        let value = std::str::from_utf8(value).unwrap_or("").trim();
        if name.eq_ignore_ascii_case("idempotency-key") {
            // Two lines are one comma-separated value (RFC 9110 §5.3),
            // which no key can be: a proxy that split or reordered them
            // must not change which job the request names.
            if idempotency_key.is_some() {
                return Err(refuse(400, "more than one Idempotency-Key"));
            }
            if value.is_empty()
                || value.len() > MAX_KEY
                || !value.bytes().all(|b| b.is_ascii_graphic())
            {
                return Err(refuse(
                    400,
                    format!("Idempotency-Key must be 1 to {MAX_KEY} visible ASCII characters"),
                ));
            }
            idempotency_key = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("expect") {
            // RFC 9110 §10.1.1: 100-continue is the one expectation.
            if !value.eq_ignore_ascii_case("100-continue") {
                return Err(refuse(
                    417,
                    format!("cannot meet the expectation {value:?}"),
                ));
            }
            // An HTTP/1.0 client does not know 100 Continue.
            expects_continue = head.minor_version == 1;
        }
    }
    if method == "POST" && length.is_none() {
        return Err(refuse(411, "a POST needs a Content-Length"));
    }
    let length = match usize::try_from(length.unwrap_or(0)) {
        Ok(length) if length <= MAX_BODY => length,
        _ => {
            return Err(refuse(
                413,
                format!("the body may be at most {MAX_BODY} bytes"),
            ));
        }
    };
    let total = head_len + length;
    let Some(body) = buf.get(head_len..total) else {
        // The body is still on its way.
        return Ok(Parsed::Body {
            total,
            expects_continue: expects_continue && length > 0,
        });
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Parsed::Done(
        Request {
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            body: body.to_vec(),
            close,
            idempotency_key,
        },
        total,
    ))
}

/// A response with a JSON body.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
    /// Extra headers, such as `Allow`.
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    pub fn json(status: u16, body: String) -> Response {
        Response {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// `{"error": message}`.
    pub fn error(status: u16, message: &str) -> Response {
        let body = serde_json::json!({ "error": message }).to_string();
        Response::json(status, body)
    }

    /// The bytes on the wire; `close` adds `Connection: close`.
    pub fn to_bytes(&self, close: bool) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            self.status,
            reason(self.status),
            self.body.len() + 1
        );
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body.as_bytes());
        // A final newline, so that `curl` leaves the prompt on a new line.
        bytes.push(b'\n');
        bytes
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        417 => "Expectation Failed",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        507 => "Insufficient Storage",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_arrives_in_pieces() {
        let full = b"POST /jobs?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcdGET";
        for cut in [0, 10, 40, full.len() - 5] {
            assert_eq!(parse(&full[..cut]), Ok(None), "cut at {cut}");
        }
        let (request, used) = parse(full).unwrap().unwrap();
        assert_eq!(
            request,
            Request {
                method: "POST".into(),
                path: "/jobs".into(),
                query: "x=1".into(),
                body: b"abcd".to_vec(),
                close: false,
                idempotency_key: None,
            }
        );
        // What follows is the next request, left for the next parse.
        assert_eq!(&full[used..], b"GET");
    }

    #[test]
    fn connection_handling_follows_the_version_and_header() {
        let close = |raw: &str| parse(raw.as_bytes()).unwrap().unwrap().0.close;
        assert!(!close("GET / HTTP/1.1\r\n\r\n"));
        assert!(close("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
        assert!(close("GET / HTTP/1.0\r\n\r\n"));
        assert!(!close("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
    }

    #[test]
    fn bad_requests_are_refused() {
        let status = |raw: &[u8]| parse(raw).unwrap_err().status;
        assert_eq!(status(b"\x00\x01 nonsense\r\n\r\n"), 400);
        assert_eq!(status(b"POST /jobs HTTP/1.1\r\n\r\n"), 411);
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            400
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            400
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            501
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nContent-Length: 65537\r\n\r\n"),
            413
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nIdempotency-Key: a b\r\n\r\n"),
            400
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nIdempotency-Key: a, b\r\n\r\n"),
            400
        );
        assert_eq!(
            status(b"POST /jobs HTTP/1.1\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n\r\n"),
            400
        );
        let key = |raw: &str| parse(raw.as_bytes()).unwrap().unwrap().0.idempotency_key;
        assert_eq!(
            key("GET / HTTP/1.1\r\nidempotency-key:  k-1 \r\n\r\n"),
            Some("k-1".into())
        );
        let mut endless = b"GET / HTTP/1.1\r\nX: ".to_vec();
        endless.resize(MAX_HEAD + 1, b'a');
        assert_eq!(status(&endless), 431);
    }

    #[test]
    fn responses_carry_length_and_close() {
        let bytes = Response::error(404, "no such path").to_bytes(true);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\
             Connection: close\r\n\r\n{\"error\":\"no such path\"}\n"
        );
    }
}

#[cfg(test)]
mod reader_tests {
    use super::*;

    /// Feeds `bytes` one at a time, as a dripping client sends them.
    fn drip(reader: &mut RequestReader, bytes: &[u8]) -> Vec<(Request, usize)> {
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for &b in bytes {
            buf.push(b);
            while let Some((request, used)) = reader.next(&buf).unwrap() {
                buf.drain(..used);
                got.push((request, used));
            }
        }
        got
    }

    #[test]
    fn a_dripped_head_is_parsed_once_and_its_body_once_more() {
        let head = format!(
            "POST /jobs HTTP/1.1\r\nHost: x\r\nX-Padding: {}\r\n",
            "a".repeat(14_000)
        );
        let body = r#"{"name": "a", "priority": 1}"#;
        let request = format!("{head}Content-Length: {}\r\n\r\n{body}", body.len());
        let mut reader = RequestReader::default();
        let got = drip(&mut reader, request.as_bytes());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.body, body.as_bytes());
        // Once when the head's blank line arrived, once when the body was
        // all there: not once per byte (14,000 times).
        assert_eq!(reader.parses(), 2);
    }

    #[test]
    fn pipelined_and_bare_newline_requests_are_all_read() {
        let two = "GET /jobs HTTP/1.1\r\nHost: x\r\n\r\nGET /jobs HTTP/1.1\nHost: x\n\n";
        let mut reader = RequestReader::default();
        let got = drip(&mut reader, two.as_bytes());
        assert_eq!(got.len(), 2);
        // The blank line split across reads at every point.
        let one = b"GET /jobs HTTP/1.1\r\nHost: x\r\n\r\n";
        for cut in 1..one.len() {
            let mut reader = RequestReader::default();
            assert!(reader.next(&one[..cut]).unwrap().is_none());
            assert!(reader.next(one).unwrap().is_some(), "cut at {cut}");
        }
        // A head that never ends is refused once it passes MAX_HEAD.
        let mut reader = RequestReader::default();
        let endless = "X".repeat(MAX_HEAD + 1);
        assert_eq!(reader.next(endless.as_bytes()).unwrap_err().status, 431);
    }

    #[test]
    fn a_client_that_expects_100_continue_is_told_once() {
        let continues = |raw: &[u8]| {
            let mut reader = RequestReader::default();
            let done = reader.next(raw).unwrap().is_some();
            (done, reader.take_continue(), reader.take_continue())
        };
        let head = b"POST /jobs HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-Continue\r\n\r\n";
        assert_eq!(continues(head), (false, true, false));
        // The body came with the head: no need to ask for it.
        assert_eq!(
            continues(&[&head[..], b"{}"].concat()),
            (true, false, false)
        );
        // HTTP/1.0 has no 100 Continue; nor has a request without a body.
        let old = b"POST /jobs HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
        assert_eq!(continues(old), (false, false, false));
        let empty = b"POST /jobs HTTP/1.1\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n";
        assert_eq!(continues(empty), (true, false, false));
        let other = parse(b"POST /jobs HTTP/1.1\r\nContent-Length: 2\r\nExpect: tea\r\n\r\n");
        assert_eq!(
            other.unwrap_err(),
            refuse(417, "cannot meet the expectation \"tea\"")
        );
    }
}
