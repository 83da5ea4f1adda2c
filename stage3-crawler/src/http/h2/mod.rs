//! HTTP/2 (RFC 9113): many requests on one connection. A server that
//! offers `h2` in the TLS handshake (ALPN) gets one connection per origin,
//! and each request is a stream on it; a server that does not gets
//! HTTP/1.1, as before.
//!
//! `frame.rs` reads and writes frames; `connection.rs` is the task that
//! owns the socket and hands each frame to its stream; this file turns a
//! GET into a stream's header fields, and its answer into a [`Response`].
//! `hpack.rs` and `huffman.rs` are the header compression (RFC 7541).

mod connection;
mod frame;
mod hpack;
mod huffman;

use std::time::Duration;

use url::{Position, Url};

pub(crate) use connection::{Connection, StreamError};

use super::conditional::Validators;
use super::decode::{ACCEPT_ENCODING, Cap};
use super::error::FetchError;
use super::response::{Protocol, Response};

/// How to ask: what the client sends with every request, and its limits.
#[derive(Clone, Copy)]
pub(crate) struct Asking<'a> {
    pub(crate) user_agent: &'a str,
    /// The `Cookie` header's value, if the jar has one for the URL.
    pub(crate) cookie: Option<&'a str>,
    /// In a recrawl, the validators of the page's last version.
    pub(crate) validators: Option<&'a Validators>,
    pub(crate) read_timeout: Duration,
    pub(crate) max_body: u64,
    pub(crate) cap: Cap,
    /// Keep the head, written as HTTP/1.1, for the archive.
    pub(crate) keep_head: bool,
}

// ANCHOR: get
/// Sends a GET for `url` on `conn` and waits for the whole response, each
/// silence bounded by the read timeout, the body by `--max-body`.
pub(crate) async fn get(
    conn: &Connection,
    url: &Url,
    asking: &Asking<'_>,
) -> Result<Response, StreamError> {
    let Asking {
        user_agent,
        cookie,
        validators,
        read_timeout,
        max_body,
        cap,
        keep_head,
    } = *asking;
    let authority = &url[Position::BeforeHost..Position::AfterPort];
    let path = &url[Position::BeforePath..Position::AfterQuery];
    let mut fields: Vec<(&[u8], &[u8])> = vec![
        (b":method", b"GET"),
        (b":scheme", url.scheme().as_bytes()),
        (b":authority", authority.as_bytes()),
        (b":path", path.as_bytes()),
        (b"user-agent", user_agent.as_bytes()),
        (b"accept", b"*/*"),
        (b"accept-encoding", ACCEPT_ENCODING.as_bytes()),
    ];
    if let Some(cookie) = cookie {
        fields.push((b"cookie", cookie.as_bytes()));
    }
    for (name, value) in validators.iter().flat_map(|v| v.fields()) {
        fields.push((name.as_bytes(), value.as_bytes()));
    }
    let request = conn.open(&fields, max_body, read_timeout).await?;
    let answer = request.response(read_timeout).await?;
    let failed = |e| StreamError::Failed(e, 1);
    let mut response = Response {
        status: answer.head.status,
        version: 1,
        protocol: Protocol::H2,
        headers: answer.head.headers,
        wire_size: answer.body.len() as u64,
        body: answer.body,
        peer: conn.peer(),
        ..Response::default()
    };
    if answer.over {
        match cap {
            Cap::Fail => {
                return Err(failed(FetchError::TooLarge {
                    decoded: false,
                    limit: max_body,
                    status: response.status,
                    content_type: response.header("content-type").map(str::to_string),
                }));
            }
            Cap::Cut | Cap::CutNoSooner(_) => response.truncated = true,
        }
    } else {
        check_length(&response).map_err(failed)?;
    }
    if keep_head {
        response.raw_head = head_as_http1(&response);
    }
    Ok(response)
}
// ANCHOR_END: get

/// A body shorter or longer than its Content-Length is malformed in HTTP/2
/// (RFC 9113 section 8.1.1): DATA frames, not the header, frame it.
fn check_length(response: &Response) -> Result<(), FetchError> {
    let Some(declared) = response.header("content-length") else {
        return Ok(());
    };
    if matches!(response.status, 204 | 304) {
        return Ok(());
    }
    let got = response.body.len() as u64;
    match declared.trim().parse::<u64>() {
        Ok(n) if n == got => Ok(()),
        Ok(n) if n > got => Err(FetchError::Truncated(format!(
            "the stream ended after {got} of the {n} bytes its Content-Length announced"
        ))),
        _ => Err(FetchError::Malformed(format!(
            "a body of {got} bytes under Content-Length {declared:?}"
        ))),
    }
}

// ANCHOR: head_as_http1
/// The response head written as HTTP/1.1 would have sent it, for the WARC
/// archive: that is how Common Crawl and Heritrix record an HTTP/2
/// exchange (with `WARC-Protocol: h2` to say what really crossed the wire).
pub(crate) fn head_as_http1(response: &Response) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason_phrase(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}
// ANCHOR_END: head_as_http1

/// HTTP/2 sends no reason phrase; the archive's status line gets the
/// usual one for the codes a crawl meets, and none for the others.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_h2_head_is_archived_as_http1_would_send_it() {
        let response = Response {
            status: 404,
            headers: vec![("content-type".into(), "text/html".into())],
            ..Response::default()
        };
        assert_eq!(
            head_as_http1(&response),
            b"HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\n\r\n"
        );
    }

    #[test]
    fn content_length_must_match_the_data() {
        let with = |len: &str, body: &[u8]| Response {
            status: 200,
            headers: vec![("content-length".into(), len.into())],
            body: body.to_vec(),
            ..Response::default()
        };
        assert_eq!(check_length(&with("3", b"abc")), Ok(()));
        assert_eq!(
            check_length(&with("5", b"abc")).unwrap_err().to_string(),
            "the stream ended after 3 of the 5 bytes its Content-Length announced"
        );
        assert_eq!(
            check_length(&with("2", b"abc")).unwrap_err().to_string(),
            "a body of 3 bytes under Content-Length \"2\""
        );
    }
}
