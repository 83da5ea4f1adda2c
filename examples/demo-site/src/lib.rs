//! A small, deterministic website for testing web crawlers.
//!
//! Every crawler in this project crawls this site by default. It runs on
//! plain `std` threads (no async runtime, so it cannot share bugs with the
//! runtime under test) and binds to `127.0.0.1`. With [`SiteConfig::tls`]
//! it serves the same site over https, with a certificate made at start.
//!
//! ```no_run
//! use demo_site::{DemoSite, SiteConfig};
//!
//! let site = DemoSite::start(SiteConfig { pages: 20, ..SiteConfig::default() })?;
//! println!("crawl {}/", site.base_url());
//! // ... run a crawler against site.url("/") ...
//! let found: Vec<String> = Vec::new(); // the crawler's result
//! let expected: Vec<String> = site.expected().into_iter().map(|e| e.url).collect();
//! assert_eq!(found, expected);
//! println!("{} requests", site.counters().requests);
//! site.shutdown();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The content (see the README for the route table) is a pure function of
//! the [`SiteConfig`] and the port, and [`DemoSite::expected`] derives the
//! exact set of URLs a correct same-host crawler finds by crawling that same
//! function in memory.
//!
//! The modules (the README has the site's routes):
//!
//! | module | holds |
//! |---|---|
//! | `server` | one thread accepting, one thread per connection; the counters |
//! | `http` | just enough HTTP/1.1: request heads read, responses encoded |
//! | `content` | the site as a pure function from a request target to a response (`content/files`: fixed resources; `content/index`: the index page) |
//! | `html` | a tiny HTML writer that remembers every link it writes |
//! | `prose` | filler prose, and the site's only source of "randomness" |
//! | `compress` | gzip, deflate and br responses in polite mode, and one body no client should decode |
//! | `expected` | the answer key: the site crawled in memory, by a crawler's rules |
//! | `revisions` | validators (`ETag`, `Last-Modified`, `304 Not Modified`) and pages revised while the site runs |
//! | `testing` | what the crawlers' tests share besides the site: peers that refuse, reset or never answer |

#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

mod compress;
mod content;
mod expected;
mod html;
mod http;
mod prose;
mod revisions;
mod server;
mod tls;

pub mod testing;

pub use content::polite::CRAWLER_TOKEN;

use server::Shared;

/// The most numbered pages a site has outside large mode
/// ([`SiteConfig::pages`]). Such a site keeps every page it generates, and
/// [`DemoSite::expected`] generates them all: at the default page size,
/// 100,000 pages take about 550 MB and a few seconds. Bigger sites are
/// what large mode is for.
pub const MAX_PAGES: usize = 100_000;
/// The most numbered pages a site has in large mode: a thousand times the
/// million the scale benchmark crawls. Small enough that no sum of page
/// numbers overflows, even where `usize` has 32 bits.
pub const MAX_LARGE_PAGES: usize = 1_000_000_000;
/// The most links a numbered page has to other numbered pages
/// ([`SiteConfig::fan_out`]): twenty times the CPU-bound benchmark's 50,
/// and a list of about 90 KB on each page.
pub const MAX_FAN_OUT: usize = 1_000;
/// The largest average page size ([`SiteConfig::page_size`]), 10 MB: a
/// hundred times the CPU-bound benchmark's pages. Pages vary to 150% of
/// it, so the biggest is 15 MB of generated prose.
pub const MAX_PAGE_SIZE: usize = 10_000_000;
/// The most bytes of pages a site outside large mode may keep, counted as
/// `pages` times `page_size`: each limit above is sane alone, but 100,000
/// pages of 10 MB would be a terabyte.
pub const MAX_KEPT_BYTES: usize = 1_000_000_000;

/// How the site is generated and served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteConfig {
    /// Number of numbered pages (`/pages/{a,b,c}/N.html`), at most
    /// [`MAX_PAGES`] ([`MAX_LARGE_PAGES`] in large mode). Default 100.
    pub pages: usize,
    /// Links from each numbered page to other numbered pages, at most
    /// [`MAX_FAN_OUT`]. Default 5.
    pub fan_out: usize,
    /// Average size of a numbered page in bytes, reached by padding with
    /// prose (a page is never smaller than its links need), at most
    /// [`MAX_PAGE_SIZE`]. Default 2000.
    pub page_size: usize,
    /// Delay before every response. Default zero.
    pub delay: Duration,
    /// Delay before each numbered page (`/pages/{dir}/N.html`), overriding
    /// `delay`. With this alone, a site of N pages costs a crawler with T
    /// tasks at least N / T page delays: everything that leads to the pages
    /// answers at once. Default `None`.
    pub page_delay: Option<Duration>,
    /// Per-path delays overriding `delay` and `page_delay`. A path matches a request whose
    /// target is exactly that string, or whose target without the query is.
    pub path_delays: Vec<(String, Duration)>,
    /// Keep HTTP/1.1 connections open between requests. With `false`, every
    /// response carries `Connection: close` and the connection is closed.
    /// Default true.
    pub keep_alive: bool,
    /// Port on 127.0.0.1; 0 picks a free one. Default 0.
    pub port: u16,
    /// Serve the site over https, with a self-signed certificate made at
    /// start (see [`DemoSite::cert_pem`]). Plain-HTTP requests on the same
    /// port get a `301` to the same path over https. Default false.
    pub tls: bool,
    /// Polite mode: a robots.txt with rules for `stage3-crawler` (and a
    /// `*` group that disallows everything), a sitemap index pointing at a
    /// gzipped sitemap, responses compressed when the client asks
    /// (br, gzip, deflate), a compression bomb, a calendar trap, and the
    /// `/polite/` pages they concern, linked from the index. Default
    /// false: the default site answers `/robots.txt` with 404.
    pub polite: bool,
    /// In polite mode, the Crawl-delay of the `stage3-crawler` group.
    /// Default `None`.
    pub crawl_delay: Option<Duration>,
    /// Large mode, for crawls of up to millions of pages: the site is the
    /// index (`/`, one link, to page 0) and the numbered pages, which link
    /// to each other and off the site as usual but not to their directory
    /// (whose listing would be a page of a third of the site). Each page is
    /// generated for each request and never kept, and the server counts
    /// connections and requests but keeps no `per_path` counts or
    /// `request_log`, so its memory stays flat however many pages it
    /// serves. Everything else answers 404. Default false.
    pub large: bool,
    /// Validators: every `200 OK` carries an `ETag` and a `Last-Modified`,
    /// and a request that sends them back for a page that has not changed
    /// gets `304 Not Modified`. With [`DemoSite::revise_pages`], pages
    /// change while the site runs. For testing a crawler that crawls a
    /// site again. Default false.
    pub validators: bool,
}

impl SiteConfig {
    /// Checks the numbers against their limits, so that no configuration
    /// can make page generation overflow or allocate without bound.
    fn check(&self) -> io::Result<()> {
        let max_pages = if self.large {
            MAX_LARGE_PAGES
        } else {
            MAX_PAGES
        };
        for (field, value, max) in [
            ("pages", self.pages, max_pages),
            ("fan_out", self.fan_out, MAX_FAN_OUT),
            ("page_size", self.page_size, MAX_PAGE_SIZE),
        ] {
            if value > max {
                let mode = if field == "pages" && !self.large {
                    " outside large mode"
                } else {
                    ""
                };
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("SiteConfig::{field} must be at most {max}{mode}, not {value}"),
                ));
            }
        }
        let kept = self.pages.saturating_mul(self.page_size);
        if !self.large && kept > MAX_KEPT_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "SiteConfig::pages times page_size must be at most {MAX_KEPT_BYTES} \
                     outside large mode, not {kept}"
                ),
            ));
        }
        Ok(())
    }
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            pages: 100,
            fan_out: 5,
            page_size: 2_000,
            delay: Duration::ZERO,
            page_delay: None,
            path_delays: Vec::new(),
            keep_alive: true,
            port: 0,
            tls: false,
            polite: false,
            crawl_delay: None,
            large: false,
            validators: false,
        }
    }
}

/// A snapshot of what the server has seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Connections accepted.
    pub connections: u64,
    /// Requests received and handled, whatever the outcome: normal answers,
    /// error responses (including `400 Bad Request`) and fault paths.
    pub requests: u64,
    /// The most requests ever being handled at the same time, counting from
    /// "request head parsed" to "response about to be written" (delays
    /// included): every request counted is one whose client still waits for
    /// it, so a client that never has two going at once never shows 2.
    pub peak_in_flight: u64,
    /// Requests per request target, query included (`/a.html?x=1` and
    /// `/a.html` are counted separately). Malformed requests are not here.
    pub per_path: BTreeMap<String, u64>,
    /// Every request, in order of arrival: when its head was read (since
    /// the site started), and its target. Tests measure the gaps between
    /// request starts here (a Crawl-delay), and what came first.
    pub request_log: Vec<(Duration, String)>,
    /// Requests answered `304 Not Modified` (with
    /// [`SiteConfig::validators`]): every other request got a body.
    pub not_modified: u64,
}

/// One URL a correct crawler discovers, and what the server answers there.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedUrl {
    /// Absolute and fragment-free, serialized by the `url` crate.
    pub url: String,
    /// The response status.
    pub status: u16,
    /// For redirects: the `Location` resolved against `url`, fragment
    /// removed (what the crawler enqueues).
    pub location: Option<String>,
    /// The exact `Content-Type` header value.
    pub content_type: Option<String>,
    /// The declared charset, lower-cased: the header's `charset` parameter,
    /// else the page's `<meta charset>`, else `None`.
    pub charset: Option<String>,
    /// Whether the body is valid UTF-8 (false for the PNG and two charset
    /// pages).
    pub body_is_utf8: bool,
}

/// A running demo site. Stops when dropped or [`DemoSite::shutdown`].
pub struct DemoSite {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// The certificate, in TLS mode.
    cert_pem: Option<String>,
    /// `None` once stopped. The accept thread returns the connection
    /// threads that were still running when it stopped, for joining.
    accept_thread: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

impl DemoSite {
    /// Binds `127.0.0.1:config.port` and starts serving in the background.
    /// Fails with [`io::ErrorKind::InvalidInput`] if `pages`, `fan_out` or
    /// `page_size` is over its limit ([`MAX_PAGES`] and the others).
    pub fn start(config: SiteConfig) -> io::Result<DemoSite> {
        config.check()?;
        let identity = config.tls.then(tls::self_signed).transpose()?;
        let listener = listen((Ipv4Addr::LOCALHOST, config.port).into())?;
        let addr = listener.local_addr()?;
        let mut site = content::Site::new(
            config.pages,
            config.fan_out,
            config.page_size,
            addr.port(),
            config.tls,
        );
        if config.large {
            site = site.large();
        }
        if config.polite {
            site = site.with_polite(content::polite::Polite {
                crawl_delay: config.crawl_delay,
            });
        }
        let (tls_config, cert_pem) = match identity {
            Some(identity) => (Some(identity.config), Some(identity.cert_pem)),
            None => (None, None),
        };
        let shared = Arc::new(Shared::new(
            site,
            server::Delays {
                delay: config.delay,
                page_delay: config.page_delay,
                path_delays: config.path_delays,
            },
            config.keep_alive,
            tls_config,
            revisions::Revisions::new(config.validators),
        ));
        let accept_shared = Arc::clone(&shared);
        let accept_thread = thread::Builder::new()
            .name("demo-site-accept".to_string())
            .spawn(move || server::accept_loop(listener, accept_shared))?;
        Ok(DemoSite {
            addr,
            shared,
            cert_pem,
            accept_thread: Some(accept_thread),
        })
    }

    /// [`DemoSite::start`] with [`SiteConfig::default`].
    pub fn start_default() -> io::Result<DemoSite> {
        DemoSite::start(SiteConfig::default())
    }

    /// The crawlers' embedded default: `given`, if the user gave a root;
    /// else the default site, started, with its root URL (and a line on
    /// stderr saying where it is). Keep the site alive until the crawl is
    /// over.
    pub fn root_or_start(given: Option<url::Url>) -> io::Result<(url::Url, Option<DemoSite>)> {
        if let Some(root) = given {
            return Ok((root, None));
        }
        let site = DemoSite::start_default()?;
        let root = url::Url::parse(&site.url("/")).map_err(io::Error::other)?;
        eprintln!("crawling the demo site at {root}");
        Ok((root, Some(site)))
    }

    /// How long the site waits before answering `target` (a path, with or
    /// without a query): a path delay, else the page delay for a numbered
    /// page, else the global delay. Tests check the rule here, where no
    /// clock is involved, and that it is applied with one timed request.
    pub fn delay_for(&self, target: &str) -> Duration {
        self.shared.delay_for(target)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (`https://` in TLS mode), without a trailing
    /// slash.
    pub fn base_url(&self) -> String {
        self.shared.site.origin()
    }

    /// In TLS mode, the site's self-signed certificate in PEM: the one root
    /// a client must trust to reach it (the crawler's `--ca-file`). It is
    /// valid for `127.0.0.1` and `localhost`. `None` for a plain site.
    pub fn cert_pem(&self) -> Option<&str> {
        self.cert_pem.as_deref()
    }

    /// The absolute URL of `path`, which should start with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> Counters {
        self.shared.counters()
    }

    /// Sets every counter back to zero (the peak to the number of requests
    /// in flight right now). This also re-arms `/fault/flaky/N` paths,
    /// which count failures in `per_path`.
    pub fn reset_counters(&self) {
        self.shared.reset_counters();
    }

    /// With [`SiteConfig::validators`]: from now on, numbered pages `0..n`
    /// are revised (a paragraph more, a later `Last-Modified`, a new
    /// `ETag`, and a link to `/changes.html`, which lists them), and the
    /// others are as they were.
    pub fn revise_pages(&self, n: usize) {
        self.shared.revisions.revise(n);
    }

    /// Blocks until `condition` holds for the counters or `timeout` passes;
    /// returns whether it holds. Lets tests wait for the server to reach a
    /// state (say, "3 requests received") without sleeping.
    pub fn wait_until(&self, timeout: Duration, condition: impl FnMut(&Counters) -> bool) -> bool {
        self.shared.wait_until(timeout, condition)
    }

    /// Every URL a same-host crawler starting at `/` discovers, sorted by
    /// URL. The crawler follows every `href` in HTML, XHTML and XML bodies
    /// (resolved against `<base href>` if present), drops fragments, stays on
    /// 127.0.0.1 and this port (over http or https), and follows `Location`
    /// headers. In polite mode it also obeys the robots.txt group for
    /// [`CRAWLER_TOKEN`] (a disallowed URL is neither fetched nor
    /// followed), does not follow the calendar trap past its first month,
    /// and does not read the sitemaps.
    pub fn expected(&self) -> Vec<ExpectedUrl> {
        expected::crawl(&self.shared.site).found
    }

    /// Whether the site is in large mode ([`SiteConfig::large`]).
    pub fn is_large(&self) -> bool {
        self.shared.site.is_large()
    }

    /// In large mode, how many URLs [`expected`](Self::expected) has,
    /// worked out without crawling: the index, the two files every page's
    /// head links, and the numbered pages. A test checks it against the
    /// crawl for small sites.
    pub fn expected_large_len(&self) -> usize {
        // `start` bounds the pages far below overflow; saturating all the
        // same, so that this sum cannot wrap whatever changes there.
        self.shared.site.pages().saturating_add(3)
    }

    /// In polite mode, the URLs linked from the pages of
    /// [`expected`](Self::expected) that robots.txt disallows for
    /// [`CRAWLER_TOKEN`], sorted; empty otherwise.
    pub fn expected_disallowed(&self) -> Vec<String> {
        expected::crawl(&self.shared.site).disallowed
    }

    /// In polite mode, every URL the sitemaps list (the sitemap index
    /// `/sitemap.xml` points at one gzipped sitemap), sorted; empty
    /// otherwise.
    pub fn expected_from_sitemaps(&self) -> Vec<String> {
        let site = &self.shared.site;
        let mut urls = if site.is_polite() {
            site.sitemap_urls()
        } else {
            Vec::new()
        };
        urls.sort();
        urls
    }

    /// Stops the server: stops accepting, closes every connection (even one
    /// stuck on `/fault/hang` or in a delay) and joins all threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(accept_thread) = self.accept_thread.take() else {
            return;
        };
        self.shared.begin_stopping();
        // The accept thread is blocked in accept(); the simplest portable way
        // to wake it is to be the client it is waiting for. It then sees the
        // stop flag and returns.
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        let workers = if woke {
            accept_thread.join().unwrap_or_default()
        } else {
            // Could not connect (out of file descriptors?). Leave the accept
            // thread detached rather than hang; it exits on its next accept.
            log::warn!("demo-site: could not wake the accept thread; leaving it detached");
            Vec::new()
        };
        // No new connections can be registered now; wake every existing one.
        self.shared.close_all_connections();
        for worker in workers {
            let _ = worker.join();
        }
    }
}

/// Connections the kernel queues for us before `accept`. std uses 128; a
/// crawler with hundreds of fetches in flight connects faster than that in a
/// burst, and connections beyond the queue are dropped and retried a second
/// later, which would show up as mysterious one-second stalls in benchmarks.
const LISTEN_BACKLOG: i32 = 1024;

/// `TcpListener::bind` with a bigger backlog.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Like std on Unix: lets a restarted server bind its old port at once,
    // even while connections from the previous run linger in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

impl Drop for DemoSite {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::fmt::Debug for DemoSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoSite")
            .field("addr", &self.addr)
            .field("tls", &self.cert_pem.is_some())
            .field("running", &self.accept_thread.is_some())
            .finish()
    }
}
