//! What the client tells whoever listens: each request and its response,
//! as they crossed the wire. The client does not know who listens; with
//! `--warc` it is the WARC archive.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::time::SystemTime;

use super::response::Protocol;

/// One HTTP request and its response, as they crossed the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The URL requested.
    pub url: String,
    /// When the request was sent.
    pub date: SystemTime,
    /// The server's address, when the connection knew it.
    pub peer: Option<IpAddr>,
    /// The protocol that carried it. Over HTTP/2, `request` and `head` are
    /// written as HTTP/1.1 would have sent them.
    pub protocol: Protocol,
    /// The request, exactly as sent.
    pub request: Vec<u8>,
    /// The response's status line and headers, exactly as received, up
    /// to and including the blank line.
    pub head: Vec<u8>,
    /// Whether the body arrived chunked.
    pub chunked: bool,
    /// The body: de-chunked, and still content-encoded (compressed) if
    /// the server compressed it.
    pub body: Vec<u8>,
    /// Whether `body` is only the first `--max-body` bytes of a longer one
    /// (a robots.txt over the cap is read in part).
    pub truncated: bool,
}

// ANCHOR: hear_exchanges
/// Who hears every exchange: one call per response, whatever its status
/// (robots.txt, sitemaps and redirects included), before the client
/// decodes it. The future may wait, to slow the crawl down to a listener
/// that is behind.
pub trait HearExchanges {
    /// Takes one exchange.
    fn exchange(&self, exchange: Exchange) -> Pin<Box<dyn Future<Output = ()> + '_>>;
}
// ANCHOR_END: hear_exchanges
