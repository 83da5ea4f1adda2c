//! The chapter's `Fetcher`: one URL's fetch, split into three callbacks.
//!
//! ```python
//! class Fetcher:
//!     def fetch(self):          # connect, then wait for writable
//!     def connected(self, key, mask):      # send the request, wait for readable
//!     def read_response(self, key, mask):  # read until EOF, then start new Fetchers
//! ```
//!
//! Nothing runs between the callbacks but the event loop, so everything a
//! fetch must remember from one callback to the next (the socket, how much of
//! the request went out, the bytes read so far) lives in the `Fetcher`, not
//! in local variables. That bookkeeping is the chapter's point about
//! callbacks, and the reason stage 2 exists.

use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};
use std::rc::Rc;

use crawl_kit::links::same_host;
use crawl_kit::report::Outcome;
use crawl_kit::response::{self, MAX_RESPONSE, NOT_UTF8};
use log::debug;
use mio::net::TcpStream;
use mio::{Interest, Token};
use runtime::TimerId;
use runtime::{EventLoop, Readiness};
use url::{Position, Url};

use crate::state::Crawl;

/// How much `read_response` reads per `read` call, as in the chapter.
const CHUNK: usize = 4096;

// ANCHOR: fetcher_struct
/// One URL's fetch. The chapter keeps its state in `self.url`, `self.sock`
/// and `self.response`; we add what the chapter leaves out: how much of the
/// request has been sent, the registration's token, and the timeout.
///
/// The callbacks the event loop holds each own an `Rc` of the fetcher, the
/// way a Python bound method `self.connected` holds `self`. The fields are
/// cells because those callbacks share it.
pub struct Fetcher {
    url: Url,
    crawl: Rc<RefCell<Crawl>>,
    sock: RefCell<Option<TcpStream>>,
    /// Names our registration with the event loop (the chapter's `key.fd`).
    token: Cell<Option<Token>>,
    request: Vec<u8>,
    /// How many bytes of `request` the socket has taken.
    sent: Cell<usize>,
    response: RefCell<Vec<u8>>,
    timer: Cell<Option<TimerId>>,
}
// ANCHOR_END: fetcher_struct

impl Fetcher {
    /// A fetcher for `url`, part of `crawl`; `fetch` starts it.
    pub fn new(url: Url, crawl: Rc<RefCell<Crawl>>) -> Rc<Fetcher> {
        let request = request_for(&url).into_bytes();
        Rc::new(Fetcher {
            url,
            crawl,
            sock: RefCell::new(None),
            token: Cell::new(None),
            request,
            sent: Cell::new(0),
            response: RefCell::new(Vec::new()),
            timer: Cell::new(None),
        })
    }

    // ANCHOR: fetch
    /// Starts connecting and returns at once; `connected` runs when the
    /// socket becomes writable, which is when the connect has finished.
    pub fn fetch(self: &Rc<Self>, event_loop: &mut EventLoop) {
        if self.url.scheme() != "http" {
            let reason = format!("{} is not supported", self.url.scheme());
            return self.fail(event_loop, reason);
        }
        let (addr, timeout) = {
            let crawl = self.crawl.borrow();
            (crawl.addr, crawl.options.timeout)
        };
        // Non-blocking: returns before the connection is made. (Python's
        // `connect` raises BlockingIOError here; mio hides that.)
        let mut sock = match TcpStream::connect(addr) {
            Ok(sock) => sock,
            Err(e) => return self.fail(event_loop, format!("connect: {e}")),
        };
        let this = Rc::clone(self);
        let registered = event_loop.register(&mut sock, Interest::WRITABLE, move |el, ready| {
            this.connected(el, ready)
        });
        match registered {
            Ok(token) => {
                self.token.set(Some(token));
                *self.sock.borrow_mut() = Some(sock);
            }
            Err(e) => return self.fail(event_loop, format!("register: {e}")),
        }
        // A slow server costs an error line after `timeout`, never a hang.
        let this = Rc::clone(self);
        let timer = event_loop.call_later(timeout, move |el| {
            this.timer.set(None); // it has fired: nothing to cancel
            this.fail(el, format!("timed out after {timeout:?}"));
        });
        self.timer.set(Some(timer));
    }
    // ANCHOR_END: fetch

    // ANCHOR: connected
    /// The socket is writable: the connect has finished, one way or the
    /// other. Sends the request, then waits for the response.
    fn connected(self: &Rc<Self>, event_loop: &mut EventLoop, _: Readiness) {
        match self.connect_result() {
            Ok(true) => {}
            Ok(false) => return, // a spurious wakeup: still connecting
            Err(e) => return self.fail(event_loop, format!("connect: {e}")),
        }
        // The chapter calls `send` once and ignores what it returns. `write`
        // may take only part of the request; then we stay registered for
        // writable, and the next call goes on from `sent`.
        while self.sent.get() < self.request.len() {
            let written = match self.sock.borrow_mut().as_mut() {
                Some(sock) => sock.write(&self.request[self.sent.get()..]),
                None => return, // closed already; `close` unregistered us
            };
            match written {
                Ok(0) => return self.fail(event_loop, "send: connection closed".into()),
                Ok(n) => self.sent.set(self.sent.get() + n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(event_loop, format!("send: {e}")),
            }
        }
        // Register the next callback: the chapter's unregister + register.
        let this = Rc::clone(self);
        let next = move |el: &mut EventLoop, ready| this.read_response(el, ready);
        if let Err(e) = self.reregister(event_loop, Interest::READABLE, next) {
            self.fail(event_loop, format!("register: {e}"));
        }
    }
    // ANCHOR_END: connected

    // ANCHOR: read_response
    /// The socket is readable: there are bytes, or the server closed the
    /// connection. Reads what is there; at EOF, the whole response is in,
    /// so parse it, start a fetcher for every new link, and stop the loop
    /// if this was the last URL.
    fn read_response(self: &Rc<Self>, event_loop: &mut EventLoop, _: Readiness) {
        let mut chunk = [0u8; CHUNK];
        loop {
            let read = match self.sock.borrow_mut().as_mut() {
                Some(sock) => sock.read(&mut chunk),
                None => return, // closed already; `close` unregistered us
            };
            match read {
                Ok(0) => break, // EOF: the server has sent everything
                // The chapter reads to EOF whatever comes; an endless body
                // would fill memory, so past the cap the URL fails.
                Ok(n) if self.response.borrow().len() + n > MAX_RESPONSE => {
                    return self.fail(
                        event_loop,
                        format!("read: response larger than {MAX_RESPONSE} bytes"),
                    );
                }
                Ok(n) => self.response.borrow_mut().extend_from_slice(&chunk[..n]),
                // Nothing more for now: wait for the next readable event.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(event_loop, format!("read: {e}")),
            }
        }
        self.close(event_loop);

        let raw = self.response.take();
        let url = self.url.clone();
        // A page is searched for links if it is HTML (or XML) in UTF-8;
        // one in another encoding is fetched, not searched, and says so.
        let (outcome, links) = match response::parse(&raw) {
            Ok(response) if response.is_markup() => match response.text() {
                Some(text) => {
                    let parse_links = self.crawl.borrow().options.parse_links;
                    (Outcome::Fetched(url), parse_links(text, &self.url))
                }
                None => (Outcome::Unsearched(url, NOT_UTF8.into()), Vec::new()),
            },
            Ok(_) => (Outcome::Fetched(url), Vec::new()),
            Err(e) => return self.fail(event_loop, e.to_string()),
        };
        self.crawl.borrow_mut().record(outcome);

        for link in links {
            // Stay on the host and port we started from.
            if !same_host(&link, &self.url) {
                continue;
            }
            let is_new = self.crawl.borrow_mut().add(&link);
            if is_new {
                Fetcher::new(link, Rc::clone(&self.crawl)).fetch(event_loop);
            }
        }
        self.done(event_loop);
    }
    // ANCHOR_END: read_response

    // ANCHOR: done
    /// This URL is finished, fetched or failed. The chapter's
    /// `urls_todo.remove(self.url)` and `if not urls_todo: stopped = True`.
    fn done(&self, event_loop: &mut EventLoop) {
        let mut crawl = self.crawl.borrow_mut();
        crawl.urls_todo.remove(&self.url);
        if crawl.urls_todo.is_empty() {
            event_loop.stop();
        }
    }
    // ANCHOR_END: done

    // ANCHOR: fail
    /// Ends the fetch with an error line. The crawl goes on.
    fn fail(&self, event_loop: &mut EventLoop, reason: String) {
        self.close(event_loop);
        self.crawl
            .borrow_mut()
            .record(Outcome::Failed(self.url.clone(), reason));
        self.done(event_loop);
    }

    /// Cancels the timeout, unregisters and closes the socket. Afterwards no
    /// callback of ours is left in the loop, so none runs again.
    fn close(&self, event_loop: &mut EventLoop) {
        if let Some(timer) = self.timer.take() {
            event_loop.cancel_timer(timer);
        }
        if let (Some(mut sock), Some(token)) = (self.sock.take(), self.token.take())
            && let Err(e) = event_loop.unregister(&mut sock, token)
        {
            debug!("unregister {}: {e}", self.url);
        }
        // `sock` is dropped here, which closes the connection.
    }
    // ANCHOR_END: fail

    /// Whether the connect has finished: `Ok(true)` connected, `Ok(false)`
    /// not yet, `Err` failed. Writable means "finished, one way or the
    /// other", so ask the socket which (as runtime/src/net.rs does).
    fn connect_result(&self) -> io::Result<bool> {
        let sock = self.sock.borrow();
        let Some(sock) = sock.as_ref() else {
            return Ok(false);
        };
        if let Some(e) = sock.take_error()? {
            return Err(e);
        }
        match sock.peer_addr() {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Watches our socket for `interest` with a new callback.
    fn reregister(
        &self,
        event_loop: &mut EventLoop,
        interest: Interest,
        callback: impl FnMut(&mut EventLoop, Readiness) + 'static,
    ) -> io::Result<()> {
        let mut sock = self.sock.borrow_mut();
        match (sock.as_mut(), self.token.get()) {
            (Some(sock), Some(token)) => event_loop.modify(sock, token, interest, callback),
            _ => Err(io::Error::new(io::ErrorKind::NotConnected, "socket closed")),
        }
    }
}

// ANCHOR: request
/// The chapter's request: `GET path HTTP/1.0` and a `Host` header. HTTP/1.0
/// means the server closes the connection after the body, so "read until
/// EOF" reads exactly one response.
fn request_for(url: &Url) -> String {
    let target = &url[Position::BeforePath..Position::AfterQuery];
    let host = &url[Position::BeforeHost..Position::AfterPort];
    format!("GET {target} HTTP/1.0\r\nHost: {host}\r\n\r\n")
}
// ANCHOR_END: request

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Options;
    use std::time::Duration;

    #[test]
    fn request_line_and_host_header() {
        let cases = [
            (
                "http://127.0.0.1:8000/",
                "GET / HTTP/1.0\r\nHost: 127.0.0.1:8000\r\n\r\n",
            ),
            (
                "http://example.com/a/b.html?q=1#frag",
                "GET /a/b.html?q=1 HTTP/1.0\r\nHost: example.com\r\n\r\n",
            ),
            (
                "http://example.com:80/",
                "GET / HTTP/1.0\r\nHost: example.com\r\n\r\n",
            ),
            (
                "http://[::1]:8080/x",
                "GET /x HTTP/1.0\r\nHost: [::1]:8080\r\n\r\n",
            ),
            ("http://user:pw@h/", "GET / HTTP/1.0\r\nHost: h\r\n\r\n"),
        ];
        for (url, request) in cases {
            assert_eq!(request_for(&Url::parse(url).unwrap()), request, "{url}");
        }
    }

    #[test]
    fn a_readable_event_with_nothing_to_read_is_not_an_error() {
        // Readiness is a hint: `read_response` may be called when a read
        // would block. It must wait, not fail and not finish.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        let crawl = Rc::new(RefCell::new(Crawl::new(addr, Options::default(), |_| {})));
        crawl.borrow_mut().add(&url);
        let mut event_loop = EventLoop::new().unwrap();
        let fetcher = Fetcher::new(url.clone(), Rc::clone(&crawl));
        fetcher.fetch(&mut event_loop);
        let (mut server, _) = listener.accept().unwrap();
        while fetcher.sent.get() < fetcher.request.len() {
            event_loop.turn(Some(Duration::from_secs(1))).unwrap();
        }

        let spurious = Readiness {
            readable: true,
            ..Readiness::default()
        };
        fetcher.read_response(&mut event_loop, spurious);
        fetcher.read_response(&mut event_loop, spurious);
        assert!(crawl.borrow().outcomes().is_empty());
        assert_eq!(event_loop.registered(), 1);
        assert_eq!(event_loop.pending_timers(), 1);

        // Now the response comes, and the real event finishes the fetch.
        // (Read the request first: closing a socket with unread data resets
        // the connection.)
        let mut request = vec![0u8; fetcher.request.len()];
        server.read_exact(&mut request).unwrap();
        assert_eq!(request, fetcher.request);
        server
            .write_all(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello")
            .unwrap();
        drop(server);
        event_loop.run().unwrap();
        assert_eq!(crawl.borrow().outcomes(), [Outcome::Fetched(url)]);
        // Finished means nothing of ours is left in the loop.
        assert_eq!(event_loop.registered(), 0);
        assert_eq!(event_loop.pending_timers(), 0);
    }
}
