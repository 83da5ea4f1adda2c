//! Everything that can go wrong between "GET this URL" and a complete
//! response.

use std::fmt;
use std::time::Duration;

use crate::stats::Exception;

/// Why [`Client::get`](super::Client::get) returned no response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// A scheme we do not speak (ftp, say).
    Unsupported(String),
    /// The URL has no host, or some other thing no request can be made of.
    InvalidUrl(String),
    /// The name did not resolve.
    Resolve(String),
    /// The TCP connect failed.
    Connect(String),
    /// Resolving and connecting took longer than the connect timeout.
    ConnectTimeout(Duration),
    /// The TLS handshake did not finish within what the connect timeout
    /// left.
    HandshakeTimeout(Duration),
    /// The server's certificate did not verify: unknown issuer, wrong name,
    /// expired...
    Certificate(String),
    /// TLS failed otherwise: a malformed record, an alert from the server,
    /// the connection closed during the handshake.
    Tls(String),
    /// The server sent nothing for longer than the read timeout.
    ReadTimeout(Duration),
    /// One attempt, from connect to the last byte, took longer than the
    /// fetch timeout: a server that keeps sending a little, forever.
    FetchTimeout(Duration),
    /// A socket error while writing or reading (a reset, say).
    Io(String),
    /// The server closed the connection before the response began.
    Closed,
    /// The bytes are not an HTTP/1.x response.
    Malformed(String),
    /// The server closed the connection before the response was complete.
    Truncated(String),
    /// The proxy refused the request or the tunnel (403, 407, ...).
    Proxy(String),
    /// The server broke HTTP/2's rules (a frame it may not send, a flood,
    /// more than we allowed), or reset the request's stream.
    Http2(String),
    /// The body can not be decoded: a Content-Encoding we do not speak,
    /// or a corrupt stream.
    Decode(String),
    /// The body is larger than `--max-body`, as received or decoded;
    /// reading (or decoding) stopped there.
    TooLarge {
        /// Whether it was the decoded body that passed the limit (a
        /// compression bomb, perhaps) rather than the bytes received.
        decoded: bool,
        /// The `--max-body` limit.
        limit: u64,
        /// The response's status.
        status: u16,
        /// The response's `Content-Type`, if any.
        content_type: Option<String>,
    },
}

impl FetchError {
    // ANCHOR: retryable
    /// Whether trying again might help: the chapter retries network errors,
    /// and a refused scheme, a certificate that does not verify or a body
    /// over the cap will not change.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            FetchError::Unsupported(_)
                | FetchError::InvalidUrl(_)
                | FetchError::Certificate(_)
                | FetchError::Decode(_)
                | FetchError::TooLarge { .. }
                | FetchError::Proxy(_)
        )
    }
    // ANCHOR_END: retryable

    /// Whether this failure, on a pooled connection that had received
    /// nothing, means the server had closed the connection while it sat
    /// idle: the end of the stream, or a reset. That is not the URL's fault,
    /// and a new connection is worth one silent try. A timeout is not that:
    /// the server is there and silent, and waiting again is a real try.
    pub(crate) fn is_stale_connection(&self) -> bool {
        matches!(self, FetchError::Closed | FetchError::Io(_))
    }

    /// The stable name the report counts failures by (`fail_KIND`).
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Unsupported(_) => "unsupported",
            FetchError::InvalidUrl(_) => "invalid_url",
            FetchError::Resolve(_) => "dns",
            FetchError::Connect(_) => "connect",
            FetchError::ConnectTimeout(_)
            | FetchError::HandshakeTimeout(_)
            | FetchError::ReadTimeout(_)
            | FetchError::FetchTimeout(_) => "timeout",
            FetchError::Certificate(_) => "certificate",
            FetchError::Tls(_) => "tls",
            FetchError::Io(_) => "io",
            FetchError::Closed => "closed",
            FetchError::Malformed(_) => "malformed",
            FetchError::Truncated(_) => "truncated",
            FetchError::Http2(_) => "http2",
            FetchError::Proxy(_) => "proxy",
            FetchError::Decode(_) => "decode",
            FetchError::TooLarge { .. } => "too_large",
        }
    }

    /// The form a [`FetchStatistic`](crate::FetchStatistic) keeps.
    pub fn to_exception(&self) -> Exception {
        Exception {
            kind: self.kind(),
            message: self.to_string(),
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Unsupported(msg)
            | FetchError::InvalidUrl(msg)
            | FetchError::Resolve(msg)
            | FetchError::Connect(msg)
            | FetchError::Certificate(msg)
            | FetchError::Tls(msg)
            | FetchError::Io(msg)
            | FetchError::Malformed(msg)
            | FetchError::Truncated(msg)
            | FetchError::Http2(msg)
            | FetchError::Proxy(msg)
            | FetchError::Decode(msg) => f.write_str(msg),
            FetchError::ConnectTimeout(d) => write!(f, "connect timed out after {d:?}"),
            FetchError::HandshakeTimeout(d) => write!(f, "TLS handshake timed out after {d:?}"),
            FetchError::ReadTimeout(d) => write!(f, "read timed out after {d:?}"),
            FetchError::FetchTimeout(d) => write!(
                f,
                "fetch timed out after {d:?}: the server was still sending (--fetch-timeout)"
            ),
            FetchError::Closed => f.write_str("connection closed before the response"),
            FetchError::TooLarge {
                decoded: false,
                limit,
                ..
            } => write!(f, "body larger than the {limit}-byte limit (--max-body)"),
            FetchError::TooLarge {
                decoded: true,
                limit,
                ..
            } => write!(
                f,
                "decoded body larger than the {limit}-byte limit (--max-body): \
                 a compression bomb?"
            ),
        }
    }
}

impl std::error::Error for FetchError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_one_a_statistic_can_be_read_back_with() {
        let d = Duration::ZERO;
        let s = String::new;
        for error in [
            FetchError::Unsupported(s()),
            FetchError::InvalidUrl(s()),
            FetchError::Resolve(s()),
            FetchError::Connect(s()),
            FetchError::ConnectTimeout(d),
            FetchError::HandshakeTimeout(d),
            FetchError::Certificate(s()),
            FetchError::Tls(s()),
            FetchError::ReadTimeout(d),
            FetchError::FetchTimeout(d),
            FetchError::Io(s()),
            FetchError::Closed,
            FetchError::Malformed(s()),
            FetchError::Truncated(s()),
            FetchError::Http2(s()),
            FetchError::Proxy(s()),
            FetchError::Decode(s()),
            FetchError::TooLarge {
                decoded: false,
                limit: 0,
                status: 200,
                content_type: None,
            },
        ] {
            assert_eq!(Exception::kind_named(error.kind()), error.kind());
        }
    }
}
