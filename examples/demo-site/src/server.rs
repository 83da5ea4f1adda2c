//! The server: one thread accepting connections, one thread per connection.
//!
//! Deliberately the simplest design that works. The crawlers in this project
//! are about *avoiding* a thread per connection; the site they crawl is
//! allowed to use one, because it only has to be correct, predictable and
//! easy to shut down.
//!
//! Shutting down a thread-per-connection server is the interesting part:
//! threads blocked in `accept`, `read`, `write` or a delay must all be woken.
//! - `accept` is woken by connecting to ourselves (see `DemoSite::stop`).
//! - `read`/`write` are woken by `shutdown(Both)` on every live socket, which
//!   is why each connection registers a clone of its socket in `streams`.
//! - delays wait on a condition variable that shutdown signals.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::Counters;
use crate::compress::{self, Coding};
use crate::content::{Fault, Resource, Route, Site, path_of};
use crate::http::{Connection, Framing, Incoming, Request, encode_response};
use crate::revisions::{self, Revisions};
use crate::tls::{self, ServerConfig, Stream};

/// An idle keep-alive connection is closed after this long, so threads of
/// clients that vanish without closing do not pile up.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// A client that stops reading cannot block a thread for longer than this.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a closing connection waits for the client to close its end.
const LINGER_TIMEOUT: Duration = Duration::from_secs(2);
/// How much a closing connection is willing to read and throw away.
const LINGER_LIMIT: u64 = 64 * 1024;

/// How long to wait before answering: see the fields of the same names in
/// [`crate::SiteConfig`].
pub(crate) struct Delays {
    pub delay: Duration,
    pub page_delay: Option<Duration>,
    pub path_delays: Vec<(String, Duration)>,
}

/// State shared by the accept thread, connection threads and `DemoSite`.
pub(crate) struct Shared {
    pub site: Site,
    delays: Delays,
    keep_alive: bool,
    /// Set in TLS mode.
    tls: Option<Arc<ServerConfig>>,
    stats: Mutex<Stats>,
    /// Signalled whenever `stats` changes, for [`Shared::wait_until`].
    stats_changed: Condvar,
    stopping: Mutex<bool>,
    /// Signalled once, when `stopping` becomes true.
    stop_signal: Condvar,
    /// A clone of every open connection's socket, by connection id.
    streams: Mutex<HashMap<u64, TcpStream>>,
    /// When the site started: `request_log` times count from here.
    started: Instant,
    /// Compressed bodies, by path and coding, in polite mode: the content
    /// never changes, so each is compressed once. Only the resources the
    /// site keeps are here, so there are never more than three (codings)
    /// for each of them.
    compressed: Mutex<CompressedBodies>,
    /// Validators, and the pages revised while the site runs.
    pub revisions: Revisions,
}

/// Compressed bodies by request path (no query) and coding.
type CompressedBodies = HashMap<(String, Coding), Arc<Vec<u8>>>;

#[derive(Default)]
struct Stats {
    counters: Counters,
    /// Requests between "parsed" and "response written", right now.
    in_flight: u64,
}

/// Locks a mutex, ignoring poisoning. Our critical sections never leave
/// data half-updated, so a panic elsewhere must not take the server down.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new(
        site: Site,
        delays: Delays,
        keep_alive: bool,
        tls: Option<Arc<ServerConfig>>,
        revisions: Revisions,
    ) -> Shared {
        Shared {
            site,
            delays,
            keep_alive,
            tls,
            stats: Mutex::default(),
            stats_changed: Condvar::new(),
            stopping: Mutex::new(false),
            stop_signal: Condvar::new(),
            streams: Mutex::default(),
            started: Instant::now(),
            compressed: Mutex::default(),
            revisions,
        }
    }

    pub fn is_stopping(&self) -> bool {
        *lock(&self.stopping)
    }

    pub fn begin_stopping(&self) {
        *lock(&self.stopping) = true;
        self.stop_signal.notify_all();
    }

    /// Sleeps for `duration` unless the server starts stopping first.
    /// Returns `false` if it was interrupted.
    fn pause(&self, duration: Duration) -> bool {
        let stopping = lock(&self.stopping);
        let (stopping, _) = self
            .stop_signal
            .wait_timeout_while(stopping, duration, |stopping| !*stopping)
            .unwrap_or_else(PoisonError::into_inner);
        !*stopping
    }

    /// Unblocks every connection thread: their reads return end-of-stream
    /// and their writes fail.
    pub fn close_all_connections(&self) {
        for stream in lock(&self.streams).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    pub(crate) fn delay_for(&self, target: &str) -> Duration {
        let path = path_of(target);
        let paths = &self.delays.path_delays;
        if let Some((_, delay)) = paths
            .iter()
            .find(|(p, _)| p == target)
            .or_else(|| paths.iter().find(|(p, _)| p == path))
        {
            return *delay;
        }
        match self.delays.page_delay {
            Some(delay) if self.site.is_numbered_page(path) => delay,
            _ => self.delays.delay,
        }
    }

    fn update_stats(&self, update: impl FnOnce(&mut Stats)) {
        update(&mut lock(&self.stats));
        self.stats_changed.notify_all();
    }

    fn count_connection(&self) {
        self.update_stats(|s| s.counters.connections += 1);
    }

    /// Counts a request and marks it in flight until the guard is dropped.
    /// Returns how many requests this exact target has had, including this
    /// one (`/fault/flaky/N` uses it). Malformed requests have no target.
    fn begin_request(&self, target: Option<&str>) -> (InFlight<'_>, u64) {
        let mut nth = 0;
        let since_start = self.started.elapsed();
        self.update_stats(|s| {
            s.counters.requests += 1;
            // Large mode keeps no per-request memory: a million requests
            // would make the site, not the crawler, the thing that grows.
            if let Some(target) = target.filter(|_| !self.site.is_large()) {
                s.counters
                    .request_log
                    .push((since_start, target.to_string()));
                let count = s.counters.per_path.entry(target.to_string()).or_default();
                *count += 1;
                nth = *count;
            }
            s.in_flight += 1;
            s.counters.peak_in_flight = s.counters.peak_in_flight.max(s.in_flight);
        });
        (InFlight(self), nth)
    }

    pub fn counters(&self) -> Counters {
        lock(&self.stats).counters.clone()
    }

    pub fn reset_counters(&self) {
        self.update_stats(|s| {
            s.counters = Counters {
                // Requests in flight right now are still concurrent with
                // whatever comes next.
                peak_in_flight: s.in_flight,
                ..Counters::default()
            };
        });
    }

    pub fn wait_until(
        &self,
        timeout: Duration,
        mut condition: impl FnMut(&Counters) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut stats = lock(&self.stats);
        loop {
            if condition(&stats.counters) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            stats = self
                .stats_changed
                .wait_timeout(stats, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Marks one request as in flight for as long as it lives. A guard rather
/// than a manual decrement, so that every early return is covered.
struct InFlight<'a>(&'a Shared);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0
            .update_stats(|s| s.in_flight = s.in_flight.saturating_sub(1));
    }
}

/// Removes a connection's socket from the registry when its thread ends.
struct Registration<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        lock(&self.shared.streams).remove(&self.id);
    }
}

/// Accepts connections until the server stops, handing each to a new
/// thread. Returns the handles of connection threads that may still run.
pub(crate) fn accept_loop(listener: TcpListener, shared: Arc<Shared>) -> Vec<JoinHandle<()>> {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    for incoming in listener.incoming() {
        if shared.is_stopping() {
            break;
        }
        let stream = match incoming {
            Ok(stream) => stream,
            Err(e) => {
                // Usually transient (a client gave up) or resource
                // exhaustion (out of file descriptors): back off a little
                // instead of spinning, and keep serving.
                log::warn!("accept failed: {e}");
                shared.pause(Duration::from_millis(10));
                continue;
            }
        };
        // Join finished threads so the list does not grow forever.
        let (finished, running): (Vec<_>, Vec<_>) =
            workers.into_iter().partition(|w| w.is_finished());
        for worker in finished {
            let _ = worker.join();
        }
        workers = running;

        shared.count_connection();
        let id = next_id;
        next_id += 1;
        // Register before spawning, so shutdown can always reach the socket.
        match stream.try_clone() {
            Ok(clone) => lock(&shared.streams).insert(id, clone),
            Err(e) => {
                log::warn!("dropping connection: cannot clone socket: {e}");
                continue;
            }
        };
        let worker_shared = Arc::clone(&shared);
        let spawned = thread::Builder::new()
            .name(format!("demo-site-conn-{id}"))
            .spawn(move || serve_connection(&worker_shared, stream, id));
        match spawned {
            Ok(worker) => workers.push(worker),
            Err(e) => {
                log::warn!("dropping connection: cannot spawn thread: {e}");
                lock(&shared.streams).remove(&id);
            }
        }
    }
    workers
}

/// What to do with a connection after answering one request.
enum After {
    /// Wait for the next request.
    KeepAlive,
    /// Close gracefully: everything written so far reaches the client.
    Close,
    /// Just drop the socket (the client is gone or we are shutting down).
    Abort,
}

fn serve_connection(shared: &Shared, tcp: TcpStream, id: u64) {
    let _registration = Registration { shared, id };
    // Responses are written with one write_all; no need for Nagle to batch.
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = tcp.set_write_timeout(Some(WRITE_TIMEOUT));
    let peer = tcp.peer_addr().ok();
    // In TLS mode one port serves both schemes: the first byte tells a TLS
    // handshake from a plain-HTTP request, which gets a redirect to https.
    let (stream, scheme) = match &shared.tls {
        None => (Stream::Plain(tcp), "http"),
        Some(config) => match tls::starts_with_tls(&tcp) {
            None => return,
            Some(false) => (Stream::Plain(tcp), "http"),
            Some(true) => match Stream::tls(config, tcp) {
                Ok(stream) => (stream, "https"),
                Err(e) => {
                    log::warn!("{peer:?}: cannot start TLS: {e}");
                    return;
                }
            },
        },
    };
    let mut conn = Connection::new(stream);
    loop {
        if shared.is_stopping() {
            return;
        }
        let after = match conn.read_request() {
            Incoming::Gone => return,
            Incoming::Bad(refusal) => {
                log::debug!("{peer:?}: {refusal}");
                bad_request(shared, &mut conn, &refusal)
            }
            Incoming::Request(request) => {
                log::debug!("{peer:?}: {scheme} {} {}", request.method, request.target);
                handle(shared, &mut conn, request, scheme)
            }
        };
        match after {
            After::KeepAlive => {}
            After::Close => return linger_close(&mut conn.stream),
            After::Abort => return,
        }
    }
}

fn bad_request(shared: &Shared, conn: &mut Connection, refusal: &http_head::Refusal) -> After {
    let (in_flight, _) = shared.begin_request(None);
    let res = Resource::error(
        refusal.status,
        &format!(
            "The server could not serve the request: {}.",
            refusal.reason
        ),
    );
    send(
        conn,
        in_flight,
        &res,
        Framing::ContentLength,
        false,
        true,
        &[],
    )
}

/// Answers one request that arrived over `scheme` (`http` or `https`).
fn handle(shared: &Shared, conn: &mut Connection, request: Request, scheme: &str) -> After {
    let (in_flight, nth) = shared.begin_request(Some(&request.target));
    if !shared.pause(shared.delay_for(&request.target)) {
        return After::Abort;
    }
    // HTTP/1.0 bodies are close-delimited, so those connections always close.
    let close = request.http10 || request.wants_close || !shared.keep_alive || shared.is_stopping();
    let head_only = request.method == "HEAD";
    let framing = |res: &Resource| match (request.http10, res.chunked) {
        (true, _) => Framing::CloseDelimited,
        (false, true) => Framing::Chunked,
        (false, false) => Framing::ContentLength,
    };
    if request.method != "GET" && !head_only {
        let res = Resource::error(405, "This site only answers GET and HEAD requests.");
        return send(
            conn,
            in_flight,
            &res,
            framing(&res),
            false,
            close,
            &[("Allow", "GET, HEAD")],
        );
    }
    // A plain site never starts TLS, so `None` (https on a plain site)
    // cannot happen here; answer 400 rather than panic.
    let changes = (path_of(&request.target) == revisions::CHANGES)
        .then(|| shared.revisions.changes_page())
        .flatten();
    let route = match changes {
        Some(page) => Route::Resource(Arc::new(page)),
        None => shared
            .site
            .route_over(scheme, &request.target)
            .unwrap_or_else(|| Route::Resource(Arc::new(Resource::error(400, "Wrong scheme.")))),
    };
    let res = match route {
        Route::Resource(res) => res,
        Route::Fault(Fault::Flaky { failures }) if nth > failures => {
            Arc::new(shared.site.flaky_success(failures))
        }
        Route::Fault(fault) => return misbehave(shared, &mut conn.stream, fault),
    };
    // With validators: the page as revised, and its tag and date.
    let version = shared.revisions.version(path_of(&request.target), &res);
    let res = version.as_ref().map_or(res, |v| Arc::clone(&v.res));
    let mut headers: Vec<(&str, String)> = Vec::new();
    let mut coded = None;
    let res = match shared.compressed(&request, &res) {
        Some((coding, body)) => {
            coded = Some(coding.token());
            headers.push(("Content-Encoding", coding.token().into()));
            headers.push(("Vary", "Accept-Encoding".into()));
            Arc::new(Resource {
                body: body.to_vec(),
                ..Resource::clone(&res)
            })
        }
        None => res,
    };
    let mut status = res.status;
    if let Some(version) = &version {
        let etag = version.tag(coded);
        if revisions::not_modified(&request, &etag, version.last_modified) {
            status = 304;
        }
        headers.push(("ETag", etag));
        headers.push(("Last-Modified", version.last_modified.into()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    if status == 304 {
        // The head a 200 would have had, with no body (RFC 9110 section
        // 15.4.5); its Content-Length is the page's.
        shared.update_stats(|stats| stats.counters.not_modified += 1);
        let res = Resource {
            status,
            ..Resource::clone(&res)
        };
        let framing = match framing(&res) {
            Framing::Chunked => Framing::ContentLength,
            other => other,
        };
        return send(conn, in_flight, &res, framing, true, close, &headers);
    }
    send(
        conn,
        in_flight,
        &res,
        framing(&res),
        head_only,
        close,
        &headers,
    )
}

impl Shared {
    /// In polite mode, the body to send compressed, and how, if the client
    /// accepts a coding and the type is worth it. `/polite/bomb.html` asked
    /// for with gzip is the bomb.
    fn compressed(&self, request: &Request, res: &Arc<Resource>) -> Option<(Coding, Arc<Vec<u8>>)> {
        if !self.site.is_polite() || !compress::compressible(res.content_type) {
            return None;
        }
        let accept = request.accept_encoding.as_deref();
        // The bomb is made of gzip members: only for a client that takes gzip.
        if request.target == "/polite/bomb.html" {
            let bomb = Arc::new(compress::bomb().to_vec());
            return compress::accepts(accept, Coding::Gzip).then_some((Coding::Gzip, bomb));
        }
        let coding = compress::choose(accept)?;
        // Keyed by target, a client asking for `/?n=1`, `/?n=2`, ... would
        // grow this cache forever. The body depends on the path alone
        // (routing ignores the query) when it is one the site keeps; all
        // else (404s for any path, redirects from http to https, flaky
        // pages, calendar months) is made per request and is not kept
        // either, so it is compressed per request.
        let path = path_of(&request.target);
        if !self.site.keeps(path, res) {
            return Some((coding, Arc::new(compress::compress(coding, &res.body))));
        }
        let key = (path.to_string(), coding);
        if let Some(body) = lock(&self.compressed).get(&key) {
            return Some((coding, Arc::clone(body)));
        }
        let body = Arc::new(compress::compress(coding, &res.body));
        lock(&self.compressed).insert(key, Arc::clone(&body));
        Some((coding, body))
    }
}

/// Writes one response. The request stops counting as in flight just
/// before its first byte goes
/// out. After that the client may read the whole response and send its
/// next request before this thread, preempted, gets as far as marking the
/// first one done; counted until then, one client's requests in sequence
/// could look concurrent. So every request counted here is one whose
/// client is still waiting for it, and a peak is never more than a
/// client really had going at once.
#[allow(clippy::too_many_arguments)]
fn send(
    conn: &mut Connection,
    in_flight: InFlight<'_>,
    res: &Resource,
    framing: Framing,
    head_only: bool,
    close: bool,
    extra_headers: &[(&str, &str)],
) -> After {
    let bytes = encode_response(res, framing, head_only, close, extra_headers);
    drop(in_flight);
    match conn
        .stream
        .write_all(&bytes)
        .and_then(|()| conn.stream.flush())
    {
        Ok(()) if close => After::Close,
        Ok(()) => After::KeepAlive,
        Err(_) => After::Abort,
    }
}

/// The first 100 bytes of a page that the broken responses never finish.
fn truncated_body() -> Vec<u8> {
    let mut body =
        b"<!DOCTYPE html>\n<html><head><title>Cut short</title></head><body><p>This body never ends properly"
            .repeat(2);
    body.truncate(100);
    body
}

/// Answers a fault path. See [`Fault`] for what each one does.
fn misbehave(shared: &Shared, stream: &mut Stream, fault: Fault) -> After {
    let mut bytes = Vec::new();
    match fault {
        Fault::Hang => {
            hang(shared, stream);
            return After::Abort;
        }
        Fault::CloseMidBody => {
            bytes.extend_from_slice(
                b"HTTP/1.1 200 OK\r\nServer: demo-site\r\nContent-Type: text/html; charset=utf-8\r\n\
                  Transfer-Encoding: chunked\r\n\r\n3e8\r\n",
            );
            bytes.extend_from_slice(&truncated_body());
        }
        Fault::ShortBody => {
            bytes.extend_from_slice(
                b"HTTP/1.1 200 OK\r\nServer: demo-site\r\nContent-Type: text/html; charset=utf-8\r\n\
                  Content-Length: 500\r\n\r\n",
            );
            bytes.extend_from_slice(&truncated_body());
        }
        Fault::Garbage => {
            bytes.extend_from_slice(b"\xff\xfeTHIS IS NOT HTTP\r\n\x00\x01\x02 garbage \r\n\r\n");
        }
        Fault::Drop | Fault::Flaky { .. } => {}
    }
    match stream.write_all(&bytes).and_then(|()| stream.flush()) {
        Ok(()) => After::Close,
        Err(_) => After::Abort,
    }
}

/// Never answers: reads and ignores whatever the client sends until it
/// closes the connection or the server shuts down (which makes the read
/// return end-of-stream). Read timeouts are ignored, so the hang outlasts
/// the idle timeout.
fn hang(shared: &Shared, stream: &mut Stream) {
    let mut sink = [0u8; 1024];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                if shared.is_stopping() {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

/// Closes a connection without destroying the response we just wrote.
///
/// If a socket is closed while unread bytes from the client sit in its
/// receive buffer, the kernel answers with a reset (RST), and the client may
/// lose response bytes it had not read yet. That matters most for
/// close-delimited bodies. So: end TLS with `close_notify`, half-close our
/// side (the client sees end-of-stream right after the last byte), then read
/// and discard until the client closes too, with a time and size limit.
fn linger_close(stream: &mut Stream) {
    stream.close_notify();
    let stream = stream.tcp();
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(LINGER_TIMEOUT));
    let _ = io::copy(&mut stream.take(LINGER_LIMIT), &mut io::sink());
}

#[cfg(test)]
impl Shared {
    /// How many compressed bodies are kept.
    fn compressed_len(&self) -> usize {
        lock(&self.compressed).len()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};

    use crate::{DemoSite, SiteConfig};

    /// The response to a GET of `target` that accepts gzip, as text up to
    /// the body (which is gzip).
    fn get_gzip_head(addr: SocketAddr, target: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: test\r\nAccept-Encoding: gzip\r\n\
             Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        String::from_utf8(response[..end].to_vec()).unwrap()
    }

    #[test]
    fn compressed_bodies_are_kept_once_per_page_whatever_clients_ask() {
        let site = DemoSite::start(SiteConfig {
            polite: true,
            ..SiteConfig::default()
        })
        .unwrap();
        for n in 0..50 {
            for target in [
                format!("/?n={n}"),
                format!("/missing-{n}.html"),
                format!("/fault/flaky/0?n={n}"),
                format!("/polite/calendar?month=2000-{:02}", n % 12 + 1),
            ] {
                let head = get_gzip_head(site.addr(), &target);
                assert!(head.contains("\r\nContent-Encoding: gzip\r\n"), "{head}");
            }
        }
        // Only the index is a page the site keeps.
        assert_eq!(site.shared.compressed_len(), 1);
    }

    #[cfg(feature = "tls")]
    #[test]
    fn redirects_to_https_are_not_kept_in_place_of_the_page() {
        let site = DemoSite::start(SiteConfig {
            polite: true,
            tls: true,
            ..SiteConfig::default()
        })
        .unwrap();
        // The answer key fetches every page over https, so the site keeps
        // its index. Plain http on the TLS port then gets a redirect for
        // the same path, which must not be kept as the index's body.
        site.expected();
        for n in 0..5 {
            let head = get_gzip_head(site.addr(), &format!("/?n={n}"));
            assert!(head.starts_with("HTTP/1.1 301 "), "{head}");
            assert!(head.contains("\r\nContent-Encoding: gzip\r\n"), "{head}");
        }
        assert_eq!(site.shared.compressed_len(), 0);
    }
}
