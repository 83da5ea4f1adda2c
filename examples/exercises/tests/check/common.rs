//! What the exercise tests share: a guard against hangs, refused ports,
//! small socket buffers, and an independent way to crawl the demo site.

#![allow(dead_code)] // each exercise's tests use a different part

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use runtime::EventLoop;
use url::Url;

/// How long a test may run before it is declared stuck. No correct
/// solution comes near it: it only turns a hang (a lost wakeup, a deadlock)
/// into a failure with a message, instead of a test run that never ends.
pub const GUARD: Duration = Duration::from_secs(30);

/// Runs `future` on a new runtime, failing the test if it is not done
/// within [`GUARD`]. A hang is reported at the test's line, not here.
#[track_caller]
pub fn block_on<F: Future>(what: &str, future: F) -> F::Output {
    match runtime::run_until_complete(runtime::timeout(GUARD, future)) {
        Ok(Ok(output)) => output,
        Ok(Err(_)) => {
            panic!("{what}: still not finished after {GUARD:?} (a lost wakeup, or a deadlock?)")
        }
        Err(e) => panic!("{what}: the runtime failed: {e}"),
    }
}

/// Turns the event loop until `done()` holds, failing the test if that
/// takes longer than [`GUARD`] (reported at the test's line).
#[track_caller]
pub fn turn_until(event_loop: &mut EventLoop, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + GUARD;
    while !done() {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "{what}: still not finished after {GUARD:?} (a deadlock, or a callback that never ran?)"
        );
        event_loop.turn(Some(left)).expect("the event loop failed");
    }
}

pub use runtime::yield_now;

/// A socket bound to a port but not listening: connects to that port are
/// refused for as long as the socket lives. Call `listen` on it to start
/// accepting.
pub fn refusing_socket() -> (socket2::Socket, SocketAddr) {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket
        .bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .expect("bind");
    let addr = socket
        .local_addr()
        .expect("local_addr")
        .as_socket()
        .expect("an IPv4 address");
    (socket, addr)
}

/// Shrinks a socket's kernel buffers, so that two megabytes cannot fit in them and a
/// single write is sure to be partial.
pub fn small_buffers(socket: &impl std::os::fd::AsFd) {
    let socket = socket2::SockRef::from(socket);
    socket.set_send_buffer_size(32 * 1024).expect("SO_SNDBUF");
    socket.set_recv_buffer_size(32 * 1024).expect("SO_RCVBUF");
}

/// Deterministic bytes that make a misplaced or repeated chunk visible.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// A blocking HTTP/1.0 GET with plain std sockets: the tests' own client,
/// independent of everything the exercises build. Returns status, content
/// type and body.
pub fn blocking_get(url: &Url) -> (u16, Option<String>, Vec<u8>) {
    let addr = url.socket_addrs(|| None).expect("resolve")[0];
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    write!(stream, "GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let response = exercises::support::parse_response(&raw).expect("an HTTP response");
    (response.status, response.content_type, response.body)
}

/// The same-host http links in the page at `url`, fetched with
/// [`blocking_get`], in page order.
pub fn links_of(url: &Url, root: &Url) -> Vec<Url> {
    let (_, content_type, body) = blocking_get(url);
    let content_type = content_type.unwrap_or_default();
    if !exercises::support::is_markup(&content_type) {
        return Vec::new();
    }
    let charset = stage3_crawler::charset::charset_param(&content_type);
    stage3_crawler::parsing::parse_page(&body, charset, url)
        .links
        .into_iter()
        .filter(|l| l.scheme() == "http" && crawl_kit::links::same_host(l, root))
        .collect()
}

/// Every URL reachable from `root` within `max_depth` links, with its
/// depth (the length of the shortest chain of links to it), found by a
/// plain breadth-first search on the test thread.
pub fn depths(root: &Url, max_depth: usize) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::from([(root.to_string(), 0)]);
    let mut todo = VecDeque::from([(root.clone(), 0)]);
    while let Some((url, depth)) = todo.pop_front() {
        if depth == max_depth {
            continue;
        }
        for link in links_of(&url, root) {
            if !found.contains_key(link.as_str()) {
                found.insert(link.to_string(), depth + 1);
                todo.push_back((link, depth + 1));
            }
        }
    }
    found
}

/// The demo site's answer key, as a sorted list of URLs.
pub fn expected_urls(site: &demo_site::DemoSite) -> Vec<String> {
    site.expected().into_iter().map(|e| e.url).collect()
}

/// A waker that counts its wakes: `counter.0.load(SeqCst)`.
pub struct Counter(pub std::sync::atomic::AtomicUsize);

impl std::task::Wake for Counter {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A fresh counting waker and its counter.
pub fn counting_waker() -> (std::sync::Arc<Counter>, std::task::Waker) {
    let counter = std::sync::Arc::new(Counter(std::sync::atomic::AtomicUsize::new(0)));
    (
        std::sync::Arc::clone(&counter),
        std::task::Waker::from(counter),
    )
}
