//! What `read_response` makes of the bytes it read.
//!
//! The chapter splits the response at the first blank line and decodes the
//! rest as UTF-8. A server that sends garbage, stops early or answers in
//! another encoding makes that code raise an exception in the middle of a
//! callback. We parse the status line and headers with `httparse`, so each
//! of those becomes an error with a reason, and the crawl goes on.

use std::fmt;

/// The largest response stages 1 and 2 read. The chapter reads to the end
/// whatever comes, so one endless response would fill the crawler's memory.
pub const MAX_RESPONSE: usize = 16 * 1024 * 1024;

/// A response we can use: the status, the media type, and the body.
#[derive(Debug, PartialEq, Eq)]
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header, if there was one.
    pub content_type: Option<String>,
    /// The body, as it came.
    pub body: &'a [u8],
}

/// Why a response could not be used. `Display` is the reason on the
/// crawler's `error: URL (reason)` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseError {
    /// The server closed the connection without sending a byte.
    Empty,
    /// The first bytes are not an HTTP status line and headers.
    NotHttp(String),
    /// The server closed the connection before the end of the headers.
    HeadCutShort,
    /// The body is shorter than its `Content-Length`.
    BodyCutShort {
        /// Bytes received.
        got: usize,
        /// Bytes the header promised.
        promised: usize,
    },
    /// A `Transfer-Encoding` (chunked, gzip, ...): HTTP/1.0, which we speak,
    /// has none, so the server should not have sent one.
    Encoded(String),
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseError::Empty => f.write_str("empty response"),
            ResponseError::NotHttp(why) => write!(f, "not an HTTP response: {why}"),
            ResponseError::HeadCutShort => f.write_str("response ended inside its headers"),
            ResponseError::BodyCutShort { got, promised } => {
                write!(f, "body cut short: {got} of {promised} bytes")
            }
            ResponseError::Encoded(te) => write!(
                f,
                "unexpected Transfer-Encoding: {te} (we asked for HTTP/1.0)"
            ),
        }
    }
}

impl std::error::Error for ResponseError {}

/// The most headers we accept in one response.
const MAX_HEADERS: usize = 64;

// ANCHOR: parse
/// Parses a whole response, read until the server closed the connection.
/// (We send HTTP/1.0, so the body ends where the connection does.)
pub fn parse(raw: &[u8]) -> Result<Response<'_>, ResponseError> {
    if raw.is_empty() {
        return Err(ResponseError::Empty);
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut head = httparse::Response::new(&mut headers);
    let head_len = match head.parse(raw) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Err(ResponseError::HeadCutShort),
        Err(e) => return Err(ResponseError::NotHttp(e.to_string())),
    };
    let header = |name: &str| {
        head.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    if let Some(te) = header("transfer-encoding") {
        return Err(ResponseError::Encoded(te));
    }
    let mut body = raw.get(head_len..).unwrap_or_default();
    if let Some(length) = header("content-length") {
        let promised: usize = length
            .parse()
            .map_err(|_| ResponseError::NotHttp(format!("bad Content-Length {length:?}")))?;
        if body.len() < promised {
            return Err(ResponseError::BodyCutShort {
                got: body.len(),
                promised,
            });
        }
        body = body.get(..promised).unwrap_or(body);
    }
    Ok(Response {
        // httparse sets the code whenever it returns Complete.
        status: head.code.unwrap_or_default(),
        content_type: header("content-type"),
        body,
    })
}
// ANCHOR_END: parse

/// Why a page whose [`Response::text`] is `None` was not searched for
/// links: the line reads `URL (not searched for links: body is not UTF-8)`.
pub const NOT_UTF8: &str = "body is not UTF-8";

impl Response<'_> {
    /// The body as text to search for links: stages 1 and 2 read UTF-8
    /// only, as the chapter's `decode('utf-8')` does. `None` for a body in
    /// another encoding, which they fetch but do not search.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(self.body).ok()
    }

    /// Whether the body is a document whose `href`s are links: HTML, XHTML
    /// or XML. A text file that mentions `<a href="...">` is not.
    pub fn is_markup(&self) -> bool {
        let Some(content_type) = &self.content_type else {
            return false;
        };
        let media_type = content_type.split(';').next().unwrap_or_default().trim();
        ["text/html", "application/xhtml+xml", "application/xml"]
            .iter()
            .any(|t| media_type.eq_ignore_ascii_case(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_with_headers_and_body() {
        let raw = b"HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                    Server: x\r\n\r\n<a href=\"/b\">b</a>";
        assert_eq!(
            parse(raw),
            Ok(Response {
                status: 200,
                content_type: Some("text/html; charset=utf-8".into()),
                body: b"<a href=\"/b\">b</a>",
            })
        );
    }

    #[test]
    fn error_statuses_are_responses_too() {
        let raw = b"HTTP/1.1 404 Not Found\r\n\r\n";
        let response = parse(raw).unwrap();
        assert_eq!((response.status, response.body), (404, &b""[..]));
        assert!(!response.is_markup());
    }

    #[test]
    fn only_markup_types_have_links() {
        for (content_type, markup) in [
            ("text/html", true),
            ("TEXT/HTML; charset=utf-8", true),
            ("application/xhtml+xml", true),
            ("application/xml; charset=utf-8", true),
            ("text/plain; charset=utf-8", false),
            ("text/css", false),
            ("image/png", false),
            ("text/htmlx", false),
        ] {
            let raw = format!("HTTP/1.0 200 OK\r\nContent-Type: {content_type}\r\n\r\n");
            assert_eq!(parse(raw.as_bytes()).unwrap().is_markup(), markup);
        }
    }

    #[test]
    fn content_length_trims_the_body_and_detects_a_short_one() {
        let raw = b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabcdef";
        assert_eq!(parse(raw).unwrap().body, b"abc");
        let raw = b"HTTP/1.0 200 OK\r\nContent-Length: 500\r\n\r\nabc";
        assert_eq!(
            parse(raw).unwrap_err().to_string(),
            "body cut short: 3 of 500 bytes"
        );
        let raw = b"HTTP/1.0 200 OK\r\nContent-Length: -1\r\n\r\nabc";
        assert_eq!(
            parse(raw).unwrap_err().to_string(),
            "not an HTTP response: bad Content-Length \"-1\""
        );
    }

    #[test]
    fn broken_responses_have_clear_reasons() {
        let cases: [(&[u8], &str); 4] = [
            (b"", "empty response"),
            (
                b"\xff\xfeTHIS IS NOT HTTP\r\n\r\n",
                "not an HTTP response: invalid HTTP version",
            ),
            (
                b"HTTP/1.0 200 OK\r\nContent-Ty",
                "response ended inside its headers",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\nab",
                "unexpected Transfer-Encoding: chunked (we asked for HTTP/1.0)",
            ),
        ];
        for (raw, reason) in cases {
            assert_eq!(parse(raw).unwrap_err().to_string(), reason);
        }
    }

    #[test]
    fn a_body_in_another_encoding_is_a_response_without_text() {
        let raw = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\nCaf\xe9";
        let response = parse(raw).unwrap();
        assert_eq!(response.body, b"Caf\xe9");
        assert_eq!(response.text(), None);
        assert!(response.is_markup());
        let utf8 = parse(b"HTTP/1.0 200 OK\r\n\r\nCaf\xc3\xa9").unwrap();
        assert_eq!(utf8.text(), Some("Caf\u{e9}"));
    }

    #[test]
    fn too_many_headers_is_not_http() {
        let mut raw = String::from("HTTP/1.0 200 OK\r\n");
        for i in 0..=MAX_HEADERS {
            raw.push_str(&format!("X-{i}: y\r\n"));
        }
        raw.push_str("\r\n");
        assert_eq!(
            parse(raw.as_bytes()).unwrap_err().to_string(),
            "not an HTTP response: too many headers"
        );
    }
}
