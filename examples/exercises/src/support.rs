//! Helpers the exercises share. You do not need to edit this file, but do
//! read it: each helper is a small, finished example of the chapter it
//! belongs to.
//!
//! | helper | used by | shows |
//! |---|---|---|
//! | [`callback_get`] | ex03 | a whole HTTP/1.0 fetch as event-loop callbacks |
//! | [`parse_response`] | ex03 | splitting a close-delimited response |
//! | [`fetch_links`] | ex13, ex16 | one crawler step on stage 3's HTTP client |

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::rc::Rc;

use crawl_kit::links::same_host;
use mio::net::TcpStream;
use mio::{Interest, Token};
use runtime::{EventLoop, Readiness};
use stage3_crawler::charset::{charset_param, media_type};
use stage3_crawler::http::{Client, FetchError};
use stage3_crawler::parsing::parse_page;
use url::Url;

/// Whether a body of this media type is searched for links (stage 3's rule).
pub fn is_markup(content_type: &str) -> bool {
    ["text/html", "application/xhtml+xml", "application/xml"]
        .iter()
        .any(|t| media_type(content_type).eq_ignore_ascii_case(t))
}

/// One step of a crawl: fetches `url` with stage 3's client and returns the
/// links in its body that stay on `root`'s host and port, in page order.
///
/// Any status counts (a redirect's body links to its target, so a crawler
/// built on this never needs to read `Location`), and a body that is not
/// HTML, XHTML or XML has no links.
pub async fn fetch_links(client: &Client, url: &Url, root: &Url) -> Result<Vec<Url>, FetchError> {
    let response = client.get(url).await?;
    let content_type = response.header("content-type").unwrap_or_default();
    if !is_markup(content_type) {
        return Ok(Vec::new());
    }
    let page = parse_page(&response.body, charset_param(content_type), url);
    Ok(page
        .links
        .into_iter()
        .filter(|link| link.scheme() == "http" && same_host(link, root))
        .collect())
}

/// A response read until the server closed the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawResponse {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// Splits a close-delimited HTTP/1.0 response into status, content type and
/// body. Errors say what is wrong with the bytes.
pub fn parse_response(raw: &[u8]) -> Result<RawResponse, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut head = httparse::Response::new(&mut headers);
    let head_len = match head.parse(raw) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Err("the response head is cut short".into()),
        Err(e) => return Err(format!("not an HTTP response: {e}")),
    };
    let content_type = head
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| String::from_utf8_lossy(h.value).trim().to_string());
    Ok(RawResponse {
        status: head.code.unwrap_or_default(),
        content_type,
        body: raw.get(head_len..).unwrap_or_default().to_vec(),
    })
}

/// Called once when a [`callback_get`] finishes: the raw response, or why
/// there is none.
pub type OnResponse = Box<dyn FnOnce(&mut EventLoop, io::Result<Vec<u8>>)>;

/// What one callback fetch keeps between its callbacks: stage 1's `Fetcher`
/// in miniature.
struct Get {
    sock: TcpStream,
    token: Token,
    request: Vec<u8>,
    sent: usize,
    response: Vec<u8>,
    on_done: Option<OnResponse>,
}

/// Fetches `target` (a path, like `/pages/a/0.html`) from `addr` with an
/// HTTP/1.0 GET, entirely in event-loop callbacks, and calls `on_done` with
/// the whole raw response once the server closes the connection.
///
/// If the fetch cannot even start, `on_done` runs on the next loop turn,
/// never inside this call, so a caller's state is not borrowed twice.
pub fn callback_get(
    event_loop: &mut EventLoop,
    addr: SocketAddr,
    target: &str,
    on_done: impl FnOnce(&mut EventLoop, io::Result<Vec<u8>>) + 'static,
) {
    let request = format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").into_bytes();
    let mut sock = match TcpStream::connect(addr) {
        Ok(sock) => sock,
        Err(e) => {
            event_loop.call_later(std::time::Duration::ZERO, move |el| on_done(el, Err(e)));
            return;
        }
    };
    let get: Rc<RefCell<Option<Get>>> = Rc::new(RefCell::new(None));
    let theirs = Rc::clone(&get);
    let registered = event_loop.register(
        &mut sock,
        Interest::READABLE | Interest::WRITABLE,
        move |el, ready| step(&theirs, el, ready),
    );
    match registered {
        Ok(token) => {
            *get.borrow_mut() = Some(Get {
                sock,
                token,
                request,
                sent: 0,
                response: Vec::new(),
                on_done: Some(Box::new(on_done)),
            })
        }
        Err(e) => {
            event_loop.call_later(std::time::Duration::ZERO, move |el| on_done(el, Err(e)));
        }
    }
}

/// The one callback: send what is left of the request, then read until EOF.
/// Readiness is only a hint, so every step tolerates `WouldBlock`.
fn step(get: &Rc<RefCell<Option<Get>>>, event_loop: &mut EventLoop, _: Readiness) {
    let result = {
        let mut slot = get.borrow_mut();
        let Some(g) = slot.as_mut() else { return };
        match advance(g) {
            Ok(false) => return, // not finished: wait for the next event
            Ok(true) => Ok(std::mem::take(&mut g.response)),
            Err(e) => Err(e),
        }
    };
    let Some(mut g) = get.borrow_mut().take() else {
        return;
    };
    // Unregister before the callback runs: it may start new fetches.
    let _ = event_loop.unregister(&mut g.sock, g.token);
    if let Some(on_done) = g.on_done.take() {
        on_done(event_loop, result);
    }
}

/// Moves the fetch forward as far as the socket allows. `Ok(true)` at EOF.
fn advance(g: &mut Get) -> io::Result<bool> {
    if let Some(e) = g.sock.take_error()? {
        return Err(e);
    }
    while g.sent < g.request.len() {
        match g.sock.write(&g.request[g.sent..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => g.sent += n,
            // Still connecting, or the send buffer is full.
            Err(e) if would_block(&e) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut chunk = [0u8; 4096];
    loop {
        match g.sock.read(&mut chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => g.response.extend_from_slice(&chunk[..n]),
            Err(e) if would_block(&e) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// `WouldBlock`, or `NotConnected` from a socket whose connect is still
/// under way: both mean "not yet".
fn would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::NotConnected
    )
}
