//! The HTTP client, our counterpart of aiohttp's `ClientSession`: one
//! `get` at a time per caller, keep-alive connections shared through a
//! `pool`, http and https (TLS in `tls.rs`), HTTP/2 where the server offers
//! it (`h2/`), and every way a server can misbehave turned into a
//! [`FetchError`] instead of a hang or a panic.
//!
//! It does not follow redirects: the crawler does that itself, as the
//! chapter's does with `allow_redirects=False`.

mod conditional;
mod conn;
mod cookies;
mod decode;
mod error;
mod exchange;
mod h2;
mod pool;
mod proxy;
mod response;
mod stream;
mod tls;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::poll_fn;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::{Duration, SystemTime};

use log::debug;
use runtime::TcpStream;
use runtime::resolve;
use runtime::timeout;
use rustls::pki_types::CertificateDer;
use url::{Position, Url};

pub use conditional::Validators;
use conn::Connection;
pub use cookies::Jar;
pub use decode::Cap;
pub use decode::{ACCEPT_ENCODING, DecodeError, Layer, decode_body};
pub use error::FetchError;
pub use exchange::{Exchange, HearExchanges};
use h2::StreamError;
use pool::{Origin, Pool};
pub use proxy::{NoProxy, Proxies, Proxy};
pub use response::{Protocol, Response};
use stream::Stream;
use tls::TlsStream;

/// What the client needs to know; [`crate::Config`] fills it in.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// For resolving the name, connecting, and the TLS handshake, together.
    pub connect_timeout: Duration,
    /// For each read: how long the server may stay silent.
    pub read_timeout: Duration,
    /// For one attempt as a whole, from connect to the last byte: how long
    /// a server that keeps sending a little may take.
    pub fetch_timeout: Duration,
    /// The largest body we read; past it, the fetch fails and the
    /// connection is closed.
    pub max_body: u64,
    /// Fixed addresses for `(host, port)`, bypassing DNS (curl's
    /// `--resolve`). Hosts are lower-case.
    pub resolve: HashMap<(String, u16), IpAddr>,
    /// Idle connections to keep per origin.
    pub max_idle: usize,
    /// Roots trusted for https besides the bundled ones (`--ca-file`).
    pub ca_certs: Vec<CertificateDer<'static>>,
    /// The `User-Agent` header; its product token (up to the first `/`)
    /// is the name robots.txt groups are matched against.
    pub user_agent: String,
    /// Offer HTTP/2 in the TLS handshake, and speak it where the server
    /// chooses it (`--http2 auto`, the default); `false` is `--http2 never`.
    pub http2: bool,
    /// Speak HTTP/2 to `http` URLs from the first byte, without asking
    /// (`--http2-prior-knowledge`, curl's name): for servers that speak
    /// h2c.
    pub http2_prior_knowledge: bool,
    /// The proxies requests go through (`--proxy`, or the environment's
    /// `http_proxy` and the rest); none by default.
    pub proxies: Proxies,
    /// Keep the cookies servers set, and send them back (on by default;
    /// `--no-cookies` turns it off).
    pub cookies: bool,
}

/// The User-Agent sent unless `--user-agent` says otherwise: the crawler's
/// name and version.
pub const DEFAULT_USER_AGENT: &str = concat!("stage3-crawler/", env!("CARGO_PKG_VERSION"));

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            // aiohttp's `total` default.
            fetch_timeout: Duration::from_secs(5 * 60),
            max_body: 10 * 1024 * 1024,
            resolve: HashMap::new(),
            max_idle: 100,
            ca_certs: Vec::new(),
            user_agent: DEFAULT_USER_AGENT.to_string(),
            http2: true,
            http2_prior_knowledge: false,
            proxies: Proxies::default(),
            cookies: true,
        }
    }
}

/// The HTTP client: one per crawl, shared by the workers.
pub struct Client {
    config: ClientConfig,
    /// TLS settings shared by every https connection.
    tls: Arc<rustls::ClientConfig>,
    pool: Pool,
    /// Names already resolved. A crawl talks to a handful of hosts over
    /// many connections; each lookup costs a helper thread.
    resolved: RefCell<HashMap<(String, u16), Vec<SocketAddr>>>,
    /// Where every exchange goes, with `--warc`.
    listener: RefCell<Option<Rc<dyn HearExchanges>>>,
    /// What we know of each origin's HTTP/2: its one connection, or that
    /// it speaks HTTP/1.1 only.
    h2: RefCell<HashMap<Origin, H2Origin>>,
    /// The crawl's cookies (none with `--no-cookies`).
    jar: Option<RefCell<Jar>>,
    /// Who hears each `Set-Cookie` line: with `--state`, the journal.
    cookie_listener: RefCell<Option<CookieListener>>,
    /// In a recrawl (`--recrawl`), the validators of each page the last
    /// crawl fetched: its requests ask for the page only if it changed.
    revalidate: RefCell<HashMap<String, Validators>>,
    /// Who hears the validators of each `200 OK`: with `--state`, the
    /// journal, for the next recrawl.
    validators_listener: RefCell<Option<ValidatorsListener>>,
    /// The URLs answered 429 or 503 lately, with the `Retry-After` each
    /// asked for, until the politeness layer takes them
    /// ([`take_slow_down`](Client::take_slow_down)).
    slow_downs: RefCell<HashMap<String, Option<Duration>>>,
    /// Every HTTP/2 connection started and not yet ended, with its task,
    /// for `close`: the origins' map holds only the current one of each.
    h2_started: RefCell<Vec<(h2::Connection, runtime::JoinHandle<()>)>>,
    /// HTTP/2 connection attempts made, to number them.
    h2_attempts: Cell<u64>,
}

// ANCHOR: h2_origin
/// Who hears each `Set-Cookie` line: its URL, the line, when it came.
pub type CookieListener = Box<dyn Fn(&Url, &str, SystemTime)>;

/// Who hears the validators of each `200 OK`, with its URL.
pub type ValidatorsListener = Box<dyn Fn(&Url, &Validators)>;

/// An origin, as far as HTTP/2 goes.
enum H2Origin {
    /// A request is connecting (attempt number, waiting requests); the
    /// others wait for it, so that the origin gets one connection, not one
    /// per request.
    Connecting(u64, Vec<Waker>),
    /// That attempt failed: the requests that waited for it fail with it,
    /// rather than each trying in turn (eight connect timeouts, one after
    /// another, to a host that does not answer). A later request tries
    /// again.
    Failed(u64, FetchError),
    /// Its connection, which every request to the origin shares.
    Ready(h2::Connection),
    /// The server chose HTTP/1.1: the pool of keep-alive connections, as
    /// for plain http.
    Http1,
}
// ANCHOR_END: h2_origin

impl Client {
    /// A client with `config`, and an empty pool.
    pub fn new(config: ClientConfig) -> Client {
        let pool = Pool::new(config.max_idle);
        let jar = config.cookies.then(|| RefCell::new(Jar::default()));
        Client {
            tls: tls::client_config(&config.ca_certs, config.http2),
            config,
            pool,
            resolved: RefCell::new(HashMap::new()),
            listener: RefCell::new(None),
            h2: RefCell::new(HashMap::new()),
            h2_started: RefCell::new(Vec::new()),
            slow_downs: RefCell::new(HashMap::new()),
            jar,
            cookie_listener: RefCell::new(None),
            revalidate: RefCell::new(HashMap::new()),
            validators_listener: RefCell::new(None),
            h2_attempts: Cell::new(0),
        }
    }

    /// Tells `listener` every exchange from now on: each response,
    /// whatever its status (robots.txt, sitemaps and redirects included),
    /// with the request that asked for it. With `--warc`, the archive.
    pub fn hear_exchanges(&self, listener: Rc<dyn HearExchanges>) {
        *self.listener.borrow_mut() = Some(listener);
    }

    // ANCHOR: get
    /// Fetches `url` with a GET request. Any status is a response; only a
    /// failure to get one is an error. The read timeout bounds each silence;
    /// the fetch timeout bounds the whole attempt, so that a server sending
    /// one byte a second cannot hold a worker forever.
    pub async fn get(&self, url: &Url) -> Result<Response, FetchError> {
        self.get_capped(url, Cap::Fail).await
    }

    /// [`get`](Self::get), where `cap` says what a body over `--max-body`
    /// comes to: a failure, or the body cut there ([`Cap::Cut`]).
    pub async fn get_capped(&self, url: &Url, cap: Cap) -> Result<Response, FetchError> {
        let limit = self.config.fetch_timeout;
        // An http URL through a proxy is asked of the proxy, in full.
        let proxy = self.plain_proxy(url);
        let lines = self.lines_for(url);
        let request = match proxy {
            Some(proxy) => request_via(url, &self.config.user_agent, &lines, proxy),
            None => request(url, &self.config.user_agent, &lines),
        };
        let sent = SystemTime::now();
        let mut response = timeout(limit, self.attempt(url, &request, cap))
            .await
            .unwrap_or(Err(FetchError::FetchTimeout(limit)))?;
        if let Some(proxy) = proxy
            && response.status == 407
        {
            // No server sends 407: it is the proxy's, not the site's.
            return Err(proxy::refusal(proxy, 407, &format!("GET {url}")));
        }
        if matches!(response.status, 429 | 503) {
            self.note_slow_down(url, response.retry_after(SystemTime::now()));
        }
        if let Some(jar) = &self.jar {
            let mut jar = jar.borrow_mut();
            let listener = self.cookie_listener.borrow();
            for line in response.headers_named("set-cookie") {
                jar.store(url, line, sent);
                if let Some(listener) = listener.as_ref() {
                    listener(url, line, sent);
                }
            }
        }
        if let Some(listener) = self.validators_listener.borrow().as_ref()
            && let Some(validators) = Validators::of(&response)
        {
            listener(url, &validators);
        }
        let listener = self.listener.borrow().clone();
        if let Some(listener) = listener {
            listener
                .exchange(as_exchange(url, sent, request, &mut response))
                .await;
        }
        decoded(response, cap.limit(self.config.max_body), cap)
    }

    /// [`get`](Self::get), trying again on a network error, up to
    /// `max_tries` tries in all, as the crawler's own requests do
    /// (robots.txt, sitemaps).
    pub async fn get_retrying(
        &self,
        url: &Url,
        max_tries: u32,
        cap: Cap,
    ) -> Result<Response, FetchError> {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.get_capped(url, cap).await {
                Err(error) if error.is_retryable() && tries < max_tries => {
                    debug!("try {tries} for {url} raised {error}");
                }
                result => return result,
            }
        }
    }

    async fn attempt(&self, url: &Url, request: &[u8], cap: Cap) -> Result<Response, FetchError> {
        let origin = origin(url)?;
        if self.may_speak_h2(&origin)
            && let Some(response) = self.attempt_h2(url, &origin, cap).await?
        {
            return Ok(response);
        }
        // A pooled connection the server closed a moment ago fails before a
        // single byte of the response arrives. That is not the URL's fault:
        // try once more on a new connection, as browsers do. Only then: a
        // timeout on it was a real wait, and counts as the try it was.
        if let Some(conn) = self.pool.take(&origin) {
            match self.exchange(conn, &origin, request, cap).await {
                Err((e, 0)) if e.is_stale_connection() => {
                    debug!("reused connection failed ({e}); retrying on a new one")
                }
                Err((e, _)) => return Err(e),
                Ok(response) => return Ok(response),
            }
        }
        let conn = self.connect(&origin).await?;
        if conn.is_h2() {
            // The server chose h2 after all (its configuration changed
            // during the crawl): the origin's connection from now on,
            // unless another request has just made one.
            let current = matches!(
                self.h2.borrow().get(&origin),
                Some(H2Origin::Ready(c)) if c.is_usable()
            );
            if !current {
                self.set_h2(&origin, H2Origin::Ready(self.start_h2(&origin, conn)));
            }
            return match self.attempt_h2(url, &origin, cap).await? {
                Some(response) => Ok(response),
                None => Err(FetchError::Http2("the HTTP/2 connection went away".into())),
            };
        }
        self.exchange(conn, &origin, request, cap)
            .await
            .map_err(|(e, _)| e)
    }
    // ANCHOR_END: get

    /// Whether requests to `origin` may go over HTTP/2: https when we offer
    /// it (through a proxy's tunnel too), http with prior knowledge (but
    /// not through a proxy, which speaks HTTP/1.1 to us).
    fn may_speak_h2(&self, origin: &Origin) -> bool {
        match origin.scheme.as_str() {
            "https" => self.config.http2,
            _ => {
                self.config.http2_prior_knowledge
                    && self.config.proxies.for_origin(origin).is_none()
            }
        }
    }

    /// The proxy an http URL is asked of, if any. (An https URL's proxy
    /// only opens a tunnel; the request inside it is the usual one.)
    fn plain_proxy(&self, url: &Url) -> Option<&Proxy> {
        let origin = origin(url).ok()?;
        (origin.scheme == "http")
            .then(|| self.config.proxies.for_origin(&origin))
            .flatten()
    }

    // ANCHOR: attempt_h2
    /// One attempt over the origin's HTTP/2 connection; `None` when the
    /// origin speaks HTTP/1.1 only. A request the server did not process
    /// (GOAWAY, REFUSED_STREAM), or one on a reused connection that closed
    /// before answering, is sent once more without counting as a try.
    async fn attempt_h2(
        &self,
        url: &Url,
        origin: &Origin,
        cap: Cap,
    ) -> Result<Option<Response>, FetchError> {
        let mut again = false;
        loop {
            let Some((conn, fresh)) = self.h2_connection(origin).await? else {
                return Ok(None);
            };
            let cookie = self.cookie_value(url);
            let validators = self.revalidate.borrow().get(url.as_str()).cloned();
            let asking = h2::Asking {
                user_agent: &self.config.user_agent,
                cookie: cookie.as_deref(),
                validators: validators.as_ref(),
                read_timeout: self.config.read_timeout,
                max_body: cap.limit(self.config.max_body),
                cap,
                keep_head: self.listener.borrow().is_some(),
            };
            let result = h2::get(&conn, url, &asking).await;
            match result {
                Ok(response) => return Ok(Some(response)),
                Err(StreamError::Refused(why)) if !again => {
                    debug!("{url}: {why}; sending it again");
                }
                Err(StreamError::Refused(why)) => {
                    return Err(FetchError::Http2(format!("{why} (twice in a row)")));
                }
                Err(StreamError::Failed(e, 0)) if e.is_stale_connection() && !fresh && !again => {
                    debug!("reused HTTP/2 connection failed ({e}); retrying on a new one");
                }
                Err(StreamError::Failed(e, _)) => return Err(e),
            }
            again = true;
        }
    }
    // ANCHOR_END: attempt_h2

    // ANCHOR: h2_connection
    /// The origin's HTTP/2 connection, opening it if there is none (and
    /// saying whether it is new); `None` if the server chose HTTP/1.1.
    async fn h2_connection(
        &self,
        origin: &Origin,
    ) -> Result<Option<(h2::Connection, bool)>, FetchError> {
        // The attempt this request waited for, if it waited.
        let mut waited = None;
        loop {
            let attempt = {
                let mut map = self.h2.borrow_mut();
                match map.get(origin) {
                    Some(H2Origin::Ready(conn)) if conn.is_usable() => {
                        return Ok(Some((conn.clone(), false)));
                    }
                    Some(H2Origin::Http1) => return Ok(None),
                    Some(H2Origin::Failed(attempt, error)) if waited == Some(*attempt) => {
                        return Err(error.clone());
                    }
                    Some(H2Origin::Connecting(attempt, _)) => {
                        waited = Some(*attempt);
                        None
                    }
                    _ => {
                        let attempt = self.h2_attempts.get() + 1;
                        self.h2_attempts.set(attempt);
                        map.insert(origin.clone(), H2Origin::Connecting(attempt, Vec::new()));
                        Some(attempt)
                    }
                }
            };
            let Some(attempt) = attempt else {
                // Another request is connecting: wait for its outcome.
                poll_fn(|cx| match self.h2.borrow_mut().get_mut(origin) {
                    Some(H2Origin::Connecting(_, waiting)) => {
                        waiting.push(cx.waker().clone());
                        Poll::Pending
                    }
                    _ => Poll::Ready(()),
                })
                .await;
                continue;
            };
            // Ours to open. Should this future be dropped halfway (a
            // timeout), the guard lets the waiting requests try in turn.
            let guard = Connecting {
                client: self,
                origin,
                attempt,
            };
            let conn = match self.connect(origin).await {
                Ok(conn) => conn,
                Err(error) => {
                    guard.settle(H2Origin::Failed(attempt, error.clone()));
                    return Err(error);
                }
            };
            let plain_h2 = origin.scheme == "http" && self.config.http2_prior_knowledge;
            if conn.is_h2() || plain_h2 {
                let h2 = self.start_h2(origin, conn);
                guard.settle(H2Origin::Ready(h2.clone()));
                return Ok(Some((h2, true)));
            }
            guard.settle(H2Origin::Http1);
            // The connection is good for HTTP/1.1: the request takes it.
            self.pool.put(origin.clone(), conn);
            return Ok(None);
        }
    }
    // ANCHOR_END: h2_connection

    fn start_h2(&self, origin: &Origin, conn: Connection) -> h2::Connection {
        debug!("HTTP/2 with {}:{}", origin.host, origin.port);
        let (h2, task) = h2::Connection::start(conn.into_stream(), &origin.host);
        let mut started = self.h2_started.borrow_mut();
        started.retain(|(_, task)| !task.is_finished());
        started.push((h2.clone(), task));
        h2
    }

    /// Records what `origin` speaks, waking the requests that waited to
    /// know.
    fn set_h2(&self, origin: &Origin, state: H2Origin) {
        let before = self.h2.borrow_mut().insert(origin.clone(), state);
        if let Some(H2Origin::Connecting(_, waiting)) = before {
            waiting.into_iter().for_each(Waker::wake);
        }
    }

    /// Sends the request and reads the response; a connection that can
    /// carry another request goes back to the pool. An error comes with the
    /// number of response bytes that had arrived.
    async fn exchange(
        &self,
        mut conn: Connection,
        origin: &Origin,
        request: &[u8],
        cap: Cap,
    ) -> Result<Response, (FetchError, u64)> {
        let keep_raw = self.listener.borrow().is_some();
        let result = match conn.send(request).await {
            Ok(()) => {
                response::read_response(
                    &mut conn,
                    self.config.read_timeout,
                    cap.limit(self.config.max_body),
                    keep_raw,
                    cap,
                )
                .await
            }
            Err(e) => Err(e),
        };
        match result {
            Ok((mut response, reusable)) => {
                response.peer = conn.peer_addr().ok().map(|addr| addr.ip());
                if reusable {
                    self.pool.put(origin.clone(), conn);
                }
                Ok(response)
            }
            // A failed connection is never reused: who knows where in the
            // stream it stopped.
            Err(e) => Err((e, conn.received)),
        }
    }

    // ANCHOR: connect
    /// Opens a new connection, resolving the name off the loop thread
    /// unless `--resolve` pinned it, and for https doing the TLS handshake.
    /// The connect timeout covers all three.
    async fn connect(&self, origin: &Origin) -> Result<Connection, FetchError> {
        // Through a proxy, the socket goes to the proxy.
        let proxy = self.config.proxies.for_origin(origin);
        let first_hop = proxy.map_or_else(|| origin.clone(), Proxy::origin);
        let key = (first_hop.host.clone(), first_hop.port);
        let known = match self.config.resolve.get(&key) {
            Some(ip) => Some(vec![SocketAddr::new(*ip, first_hop.port)]),
            None => self.resolved.borrow().get(&key).cloned(),
        };
        // Set once the socket is connected, to tell which step timed out.
        let handshaking = Cell::new(false);
        let attempt = async {
            let addrs = match known {
                Some(addrs) => addrs,
                None => {
                    let addrs = resolve(&first_hop.host, first_hop.port)
                        .await
                        .map_err(|e| FetchError::Resolve(e.to_string()))?;
                    self.resolved.borrow_mut().insert(key, addrs.clone());
                    addrs
                }
            };
            let mut tcp = connect_any(&first_hop.host, addrs).await?;
            // Requests are small and written in one go; don't let Nagle
            // hold them back waiting for an ACK.
            let _ = tcp.set_nodelay(true);
            self.pool.note_opened();
            if origin.scheme != "https" {
                return Ok(Stream::Plain(tcp));
            }
            if let Some(proxy) = proxy {
                let mut conn = Connection::new(Stream::Plain(tcp));
                proxy::tunnel(&mut conn, proxy, origin, self.config.read_timeout).await?;
                tcp = conn.into_tcp()?;
            }
            handshaking.set(true);
            let mut tls = TlsStream::new(Arc::clone(&self.tls), &origin.host, tcp)?;
            tls.handshake(&origin.host).await?;
            Ok(Stream::Tls(Box::new(tls)))
        };
        let limit = self.config.connect_timeout;
        let stream = timeout(limit, attempt).await.map_err(|_| {
            if handshaking.get() {
                FetchError::HandshakeTimeout(limit)
            } else {
                FetchError::ConnectTimeout(limit)
            }
        })??;
        let conn = Connection::new(stream);
        if let Ok(local) = conn.local_addr() {
            debug!(
                "connected to {}://{}:{} from {local}",
                origin.scheme, origin.host, origin.port
            );
        }
        Ok(conn)
    }
    // ANCHOR_END: connect

    /// Closes the client's connections, as the chapter's crawler closes its
    /// aiohttp session when the crawl is done: each HTTP/2 connection says
    /// GOAWAY, and its task ends before this returns. (Idle HTTP/1.1
    /// connections need no goodbye; they close when the client is dropped.)
    pub async fn close(&self) {
        let started = std::mem::take(&mut *self.h2_started.borrow_mut());
        for (conn, _) in &started {
            conn.close();
        }
        for (_, task) in started {
            // A connection task never panics on what a server sends; if it
            // did, the crawl is over anyway.
            let _ = task.await;
        }
    }

    /// The header lines a request to `url` carries for that URL alone: its
    /// cookies, and in a recrawl its validators.
    fn lines_for(&self, url: &Url) -> String {
        let mut lines = self
            .cookie_value(url)
            .map_or_else(String::new, |value| format!("Cookie: {value}\r\n"));
        if let Some(validators) = self.revalidate.borrow().get(url.as_str()) {
            lines.push_str(&validators.lines());
        }
        lines
    }

    /// Asks for `url` only if it changed since the response these
    /// `validators` came with (a recrawl): `304 Not Modified` if not.
    pub fn revalidate(&self, url: &Url, validators: Validators) {
        self.revalidate
            .borrow_mut()
            .insert(url.to_string(), validators);
    }

    /// Tells `listener` the validators of every `200 OK` from now on: with
    /// `--state`, the journal keeps them for the next recrawl.
    pub fn hear_validators(&self, listener: ValidatorsListener) {
        *self.validators_listener.borrow_mut() = Some(listener);
    }

    /// The cookies to send with a request to `url`, if any.
    fn cookie_value(&self, url: &Url) -> Option<String> {
        self.jar
            .as_ref()?
            .borrow()
            .header_for(url, SystemTime::now())
    }

    /// Tells `listener` every `Set-Cookie` line from now on, with its URL
    /// and when it came: with `--state`, the journal keeps them.
    pub fn hear_cookies(&self, listener: CookieListener) {
        *self.cookie_listener.borrow_mut() = Some(listener);
    }

    /// Plays a `Set-Cookie` line heard at `at` by an earlier run of the
    /// crawl (from its journal) into the jar again.
    pub fn restore_cookie(&self, url: &Url, line: &str, at: SystemTime) {
        if let Some(jar) = &self.jar {
            jar.borrow_mut().store(url, line, at);
        }
    }

    /// Cookies kept right now.
    pub fn cookies_kept(&self) -> usize {
        self.jar.as_ref().map_or(0, |jar| jar.borrow().len())
    }

    /// Remembers that `url` was answered with a slow-down, and the wait
    /// its `Retry-After` asked for. A crawl whose politeness never takes
    /// them (a library user's, without `Turns`) keeps at most a few
    /// thousand.
    fn note_slow_down(&self, url: &Url, retry_after: Option<Duration>) {
        let mut slow_downs = self.slow_downs.borrow_mut();
        if slow_downs.len() >= 4096 {
            slow_downs.clear();
        }
        slow_downs.insert(url.to_string(), retry_after);
    }

    /// Whether `url` was last answered with a 429 or 503, and if so, the
    /// `Retry-After` it came with (`Some(None)` for none); forgets it.
    pub fn take_slow_down(&self, url: &Url) -> Option<Option<Duration>> {
        let mut slow_downs = self.slow_downs.borrow_mut();
        if slow_downs.is_empty() {
            return None;
        }
        slow_downs.remove(url.as_str())
    }

    /// Connections opened so far.
    pub fn connections_opened(&self) -> u64 {
        self.pool.opened()
    }

    /// Idle connections in the pool right now.
    pub fn idle_connections(&self) -> usize {
        self.pool.idle()
    }
}

impl Drop for Client {
    /// Lets each HTTP/2 connection say GOAWAY and stop.
    fn drop(&mut self) {
        for (conn, _) in self.h2_started.get_mut().iter() {
            conn.close();
        }
    }
}

// ANCHOR: connecting
/// The request that is opening an origin's HTTP/2 connection. Settled, it
/// records the outcome (the connection, HTTP/1.1, or the failure) and
/// wakes the requests that waited for it; dropped unsettled (its future
/// was dropped mid-connect, by the fetch timeout or Ctrl-C), it forgets
/// the attempt and wakes them, and the next to run tries again.
struct Connecting<'a> {
    client: &'a Client,
    origin: &'a Origin,
    attempt: u64,
}

impl Connecting<'_> {
    /// Records the outcome, if the origin still waits for this attempt
    /// (another path may have set it meanwhile; then it stays).
    fn settle(self, state: H2Origin) {
        if self.is_current() {
            self.client.set_h2(self.origin, state);
        }
        std::mem::forget(self);
    }

    fn is_current(&self) -> bool {
        matches!(
            self.client.h2.borrow().get(self.origin),
            Some(H2Origin::Connecting(attempt, _)) if *attempt == self.attempt
        )
    }
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        if !self.is_current() {
            return;
        }
        let before = self.client.h2.borrow_mut().remove(self.origin);
        if let Some(H2Origin::Connecting(_, waiting)) = before {
            waiting.into_iter().for_each(Waker::wake);
        }
    }
}
// ANCHOR_END: connecting

/// Connects to each address in turn until one accepts.
async fn connect_any(host: &str, addrs: Vec<SocketAddr>) -> Result<TcpStream, FetchError> {
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(format!("connect to {addr} failed: {e}")),
        }
    }
    Err(FetchError::Connect(
        last.unwrap_or_else(|| format!("{host} has no addresses")),
    ))
}

/// The origin a URL's request goes to, or why there is none.
fn origin(url: &Url) -> Result<Origin, FetchError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(FetchError::Unsupported(format!(
                "{other} URLs are not supported"
            )));
        }
    }
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err(FetchError::InvalidUrl(format!("{url} has no host")));
    };
    Ok(Origin {
        scheme: url.scheme().to_string(),
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
    })
}

/// The exchange, for its listener: the request as sent, and the response
/// as received (its head moves out of `response`; its body is copied,
/// since the crawler decodes its own).
fn as_exchange(url: &Url, sent: SystemTime, request: Vec<u8>, response: &mut Response) -> Exchange {
    Exchange {
        protocol: response.protocol,
        url: url.to_string(),
        date: sent,
        peer: response.peer,
        request,
        head: std::mem::take(&mut response.raw_head),
        chunked: response.chunked,
        body: response.body.clone(),
        truncated: response.truncated,
    }
}

/// The response with its transfer codings undone, then its content
/// codings (the server applied them the other way round), within
/// `max_body` at every step: stacking codings builds no bigger bomb.
/// With [`Cap::Cut`], what decodes within `max_body` is kept instead.
fn decoded(mut response: Response, max_body: u64, cap: Cap) -> Result<Response, FetchError> {
    // A 204 or a 304 has no content (RFC 9110 section 6.4.1): the
    // Content-Encoding a 304 may carry names the page's, not an empty
    // body's, which no decoder would take.
    if matches!(response.status, 204 | 304) {
        response.transfer_codings.clear();
        return Ok(response);
    }
    let content = decode::codings(response.headers_named("content-encoding"));
    let transfer = std::mem::take(&mut response.transfer_codings);
    let body = std::mem::take(&mut response.body);
    let body = decode::undo(Layer::Transfer, &transfer, body, max_body, cap)
        .and_then(|body| decode::undo(Layer::Content, &content, body, max_body, cap));
    match body {
        Ok(body) => {
            response.body = body;
            Ok(response)
        }
        Err(DecodeError::TooLarge { limit }) => Err(FetchError::TooLarge {
            decoded: true,
            limit,
            status: response.status,
            content_type: response.header("content-type").map(str::to_string),
        }),
        Err(e) => Err(FetchError::Decode(e.to_string())),
    }
}

/// The request bytes. The target is the path and query; the fragment never
/// leaves the client. `Host` carries the port only when it is not the
/// default, as browsers send it.
fn request(url: &Url, user_agent: &str, lines: &str) -> Vec<u8> {
    let target = &url[Position::BeforePath..Position::AfterQuery];
    let host = &url[Position::BeforeHost..Position::AfterPort];
    format!(
        "GET {target} HTTP/1.1\r\n\
         Host: {host}\r\n\
         User-Agent: {user_agent}\r\n\
         Accept: */*\r\n\
         Accept-Encoding: {ACCEPT_ENCODING}\r\n\
         {lines}\
         \r\n"
    )
    .into_bytes()
}

/// The request for an http URL through a proxy: the whole URL on the
/// request line (absolute form, RFC 9112 section 3.2.2), and the proxy's
/// credentials.
fn request_via(url: &Url, user_agent: &str, lines: &str, proxy: &Proxy) -> Vec<u8> {
    let target = &url[..Position::AfterQuery];
    let host = &url[Position::BeforeHost..Position::AfterPort];
    format!(
        "GET {target} HTTP/1.1\r\n\
         Host: {host}\r\n\
         {}\
         User-Agent: {user_agent}\r\n\
         Accept: */*\r\n\
         Accept-Encoding: {ACCEPT_ENCODING}\r\n\
         {lines}\
         \r\n",
        proxy.authorization_line()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_through_a_proxy_names_the_whole_url() {
        let url = Url::parse("http://example.com:8080/a?b#frag").unwrap();
        let proxy = Proxy::parse("http://u:p@127.0.0.1:3128").unwrap();
        let text = String::from_utf8(request_via(&url, "ua", "", &proxy)).unwrap();
        assert!(
            text.starts_with(
                "GET http://example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\n\
                 Proxy-Authorization: Basic dTpw\r\nUser-Agent: ua\r\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn request_line_and_host() {
        let url = Url::parse("http://Example.COM:8080/a/b?x=1#frag").unwrap();
        let o = origin(&url).unwrap();
        assert_eq!((o.host.as_str(), o.port), ("example.com", 8080));
        let text = String::from_utf8(request(&url, DEFAULT_USER_AGENT, "")).unwrap();
        assert!(
            text.starts_with("GET /a/b?x=1 HTTP/1.1\r\nHost: example.com:8080\r\n"),
            "{text}"
        );
        let url = Url::parse("http://example.com").unwrap();
        let text = String::from_utf8(request(&url, DEFAULT_USER_AGENT, "")).unwrap();
        assert!(
            text.starts_with("GET / HTTP/1.1\r\nHost: example.com\r\n"),
            "{text}"
        );
        let url = Url::parse("http://[::1]:81/").unwrap();
        assert_eq!(origin(&url).unwrap().host, "::1");
    }

    #[test]
    fn origins_and_unsupported_schemes() {
        let https = Url::parse("https://Example.com/").unwrap();
        let http = Url::parse("http://example.com:443/").unwrap();
        let o = origin(&https).unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("https", "example.com", 443)
        );
        // Same host and port, another scheme: another pool.
        assert_ne!(origin(&http).unwrap(), o);
        let ftp = Url::parse("ftp://example.com/").unwrap();
        assert_eq!(
            origin(&ftp).unwrap_err().to_string(),
            "ftp URLs are not supported"
        );
    }

    /// A server that answers each connection's first request with the next
    /// canned response, then closes it.
    fn serve(responses: Vec<&'static [u8]>) -> (SocketAddr, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let thread = std::thread::spawn(move || {
            for response in responses {
                let (mut s, _) = listener.accept().unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).unwrap() {
                        0 => break,
                        n => got.extend_from_slice(&buf[..n]),
                    }
                }
                s.write_all(response).unwrap();
            }
        });
        (addr, thread)
    }

    fn get_all(addr: SocketAddr, n: usize) -> (Vec<Result<Response, FetchError>>, u64) {
        let client = Client::new(ClientConfig::default());
        let url = Url::parse(&format!("http://{addr}/")).unwrap();
        let results = runtime::run_until_complete(async {
            let mut results = Vec::new();
            for _ in 0..n {
                results.push(client.get(&url).await);
            }
            results
        })
        .unwrap();
        (results, client.connections_opened())
    }

    #[test]
    fn a_pooled_connection_the_server_closed_is_replaced() {
        // Keep-alive is announced, but the server closes after each answer.
        let ok: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let (addr, server) = serve(vec![ok, ok]);
        let (results, opened) = get_all(addr, 2);
        server.join().unwrap();
        for r in results {
            assert_eq!(r.unwrap().body, b"ok");
        }
        assert_eq!(opened, 2);
    }

    #[test]
    fn close_delimited_interim_and_folded_responses() {
        let (addr, server) = serve(vec![
            b"HTTP/1.1 200 OK\r\n\r\nuntil close",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length : 1\r\nConnection: close\r\n\r\n!",
        ]);
        let (results, opened) = get_all(addr, 3);
        server.join().unwrap();
        let results: Vec<Response> = results.into_iter().map(Result::unwrap).collect();
        assert_eq!(results[0].body, b"until close");
        assert_eq!(results[1].status, 204);
        assert_eq!(results[2].body, b"!");
        assert_eq!(opened, 3);
    }
}
