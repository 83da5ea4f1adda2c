//! The site's content: a pure function from a request target to a response.
//!
//! Nothing in this module does I/O. The server asks [`Site::route`] what to
//! send, and the answer key ([`crate::expected`]) asks the very same function
//! what a crawler would see, so the two can never disagree.
//!
//! Because the answer never changes, each resource is generated once and
//! kept. Generating a 100 KB page costs more CPU than sending it, and in the
//! benchmarks the site shares two cores with the crawler being measured: a
//! site that regenerated every page would take CPU from whichever crawler
//! ran. Real sites serve static pages from memory too.

mod files;
mod index;
mod pages;
pub(crate) mod polite;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::html::{Document, Head, Html};

/// Numbered pages are spread over these directories (page `n` lives in
/// `DIRS[n % 3]`) so that `../b/7.html`-style links have somewhere to go.
pub(crate) const DIRS: [&str; 3] = ["a", "b", "c"];

const HTML_UTF8: &str = "text/html; charset=utf-8";
const HTML_NO_CHARSET: &str = "text/html";

/// What the server should do for one request.
pub(crate) enum Route {
    /// Send this response.
    Resource(Arc<Resource>),
    /// Misbehave on purpose (see [`Fault`]).
    Fault(Fault),
}

/// Deliberately broken responses for testing a crawler's error handling.
/// None of these paths is linked from anywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// `/fault/hang`: read the request, never answer.
    Hang,
    /// `/fault/close-mid-body`: start a chunked body, close in the middle of
    /// a chunk.
    CloseMidBody,
    /// `/fault/short-body`: promise `Content-Length: 500`, send 100 bytes,
    /// close.
    ShortBody,
    /// `/fault/garbage`: send bytes that are not an HTTP response, close.
    Garbage,
    /// `/fault/drop`: close without sending anything.
    Drop,
    /// `/fault/flaky/N`: behave like `Drop` for the first `N` requests to
    /// this exact target, then serve a normal page.
    Flaky { failures: u64 },
}

/// A complete response plus the facts the answer key needs about it.
#[derive(Clone, Debug)]
pub(crate) struct Resource {
    pub status: u16,
    /// The exact `Content-Type` header value.
    pub content_type: Option<&'static str>,
    /// The exact `Location` header value (may be relative).
    pub location: Option<String>,
    /// Send with `Transfer-Encoding: chunked` rather than `Content-Length`
    /// (HTTP/1.0 requests always get a close-delimited body instead).
    pub chunked: bool,
    pub body: Vec<u8>,
    /// Every `href` in the body as an HTML parser reports it, excluding
    /// `<base href>`. Empty for non-markup bodies.
    pub links: Vec<String>,
    /// The `<base href>` value, if the document declares one.
    pub base: Option<String>,
    /// The `<meta charset>` value, if the document declares one.
    pub meta_charset: Option<&'static str>,
}

impl Resource {
    fn html(status: u16, content_type: &'static str, mut doc: Document, chunked: bool) -> Resource {
        let body = std::mem::take(&mut doc.text).into_bytes();
        Resource::markup(status, content_type, body, doc, chunked)
    }

    /// Markup whose body bytes were encoded separately (non-UTF-8 pages).
    fn markup(
        status: u16,
        content_type: &'static str,
        body: Vec<u8>,
        doc: Document,
        chunked: bool,
    ) -> Resource {
        Resource {
            status,
            content_type: Some(content_type),
            location: None,
            chunked,
            body,
            links: doc.links,
            base: doc.base,
            meta_charset: doc.meta_charset,
        }
    }

    fn opaque(content_type: &'static str, body: Vec<u8>) -> Resource {
        Resource {
            status: 200,
            content_type: Some(content_type),
            location: None,
            chunked: false,
            body,
            links: Vec::new(),
            base: None,
            meta_charset: None,
        }
    }

    /// A redirect. The body links to the same place as `Location`, so a
    /// crawler that ignores `Location` and only parses bodies still finds
    /// the same URLs (both resolve against the request URL).
    pub(crate) fn redirect(status: u16, location: &str) -> Resource {
        let mut h = Html::new(reason(status), Head::default());
        h.raw("<p>This resource has moved to ");
        h.a(location, location);
        h.raw(".</p>\n");
        let mut res = Resource::html(status, HTML_UTF8, h.finish(), false);
        res.location = Some(location.to_string());
        res
    }

    /// A small error page whose only link is to the index.
    pub(crate) fn error(status: u16, explanation: &str) -> Resource {
        let mut h = Html::new(&format!("{status} {}", reason(status)), Head::default());
        h.p(explanation);
        h.raw("<p>");
        h.a("/", "Back to the index");
        h.raw("</p>\n");
        Resource::html(status, HTML_UTF8, h.finish(), false)
    }
}

/// The reason phrase for every status this server sends.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        304 => "Not Modified",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        status @ (431 | 505) => http_head::phrase(status),
        _ => "Unknown",
    }
}

/// The content generator. Cheap to build; every response is generated on
/// first demand from these four numbers and the scheme.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pages: usize,
    fan_out: usize,
    page_size: usize,
    port: u16,
    /// Served over TLS: absolute links say `https`, and plain-HTTP requests
    /// on the same port are redirected there.
    tls: bool,
    /// Polite mode: robots.txt, sitemaps and the `/polite/` pages.
    polite: Option<polite::Polite>,
    /// Large mode: the index and the numbered pages, nothing kept.
    large: bool,
    /// Every resource generated so far, by path. 404s are not kept, so the
    /// cache cannot grow past the site's own size whatever clients ask for.
    generated: Arc<Mutex<HashMap<String, Arc<Resource>>>>,
}

impl Site {
    pub(crate) fn new(
        pages: usize,
        fan_out: usize,
        page_size: usize,
        port: u16,
        tls: bool,
    ) -> Site {
        Site {
            pages,
            fan_out,
            page_size,
            port,
            tls,
            polite: None,
            large: false,
            generated: Arc::default(),
        }
    }

    /// The same site in polite mode.
    pub(crate) fn with_polite(mut self, polite: polite::Polite) -> Site {
        self.polite = Some(polite);
        self
    }

    /// The same site in large mode (see `SiteConfig::large`).
    pub(crate) fn large(mut self) -> Site {
        self.large = true;
        self
    }

    /// How many numbered pages there are.
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// Whether the site is in large mode.
    pub(crate) fn is_large(&self) -> bool {
        self.large
    }

    /// Whether the site is in polite mode.
    pub(crate) fn is_polite(&self) -> bool {
        self.polite.is_some()
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `http`, or `https` in TLS mode.
    pub(crate) fn scheme(&self) -> &'static str {
        if self.tls { "https" } else { "http" }
    }

    /// `http://127.0.0.1:PORT` (`https://` in TLS mode), without a trailing
    /// slash.
    pub(crate) fn origin(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme(), self.port)
    }

    /// What a request that arrived over `scheme` gets. In TLS mode a
    /// plain-HTTP request on the TLS port is answered with a 301 to the same
    /// target over https, as servers that upgrade every visitor do. `None`
    /// for https on a plain site: that never arrives as an HTTP request.
    pub(crate) fn route_over(&self, scheme: &str, target: &str) -> Option<Route> {
        if scheme == self.scheme() {
            return Some(self.route(target));
        }
        (self.tls && scheme == "http").then(|| {
            Route::Resource(Arc::new(Resource::redirect(
                301,
                &format!("{}{target}", self.origin()),
            )))
        })
    }

    /// Decides the response for a request target (`/path?query`). Routing
    /// ignores the query, so `/pages/a/0.html?x=1` is page 0 again (but a
    /// different URL to a crawler).
    pub(crate) fn route(&self, target: &str) -> Route {
        let path = path_of(target);
        if self.large {
            // Generated each time: a million pages kept would be gigabytes.
            return Route::Resource(Arc::new(self.large_resource(path)));
        }
        if path == "/polite/calendar"
            && let Some(month) = self.calendar(target)
        {
            return Route::Resource(Arc::new(month));
        }
        match self.fault(path) {
            Some(fault) => Route::Fault(fault),
            None => Route::Resource(self.generated(path)),
        }
    }

    /// [`Site::resource`], generated once per path.
    fn generated(&self, path: &str) -> Arc<Resource> {
        let cache = || {
            self.generated
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        if let Some(resource) = cache().get(path) {
            return Arc::clone(resource);
        }
        // Generated outside the lock, so connections asking for other
        // pages are not held up. Two threads may race to generate the same
        // page; both get the same content, and the first one is kept.
        let resource = Arc::new(self.resource(path));
        if resource.status == 404 {
            return resource;
        }
        Arc::clone(cache().entry(path.to_string()).or_insert(resource))
    }

    /// Whether `resource` is the one this site keeps for `path`: what a
    /// request for `path` gets whatever its query, until the site stops.
    /// There are no more of them than the site has resources, so what is
    /// kept alongside them is bounded too.
    pub(crate) fn keeps(&self, path: &str, resource: &Arc<Resource>) -> bool {
        self.generated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .is_some_and(|kept| Arc::ptr_eq(kept, resource))
    }

    fn fault(&self, path: &str) -> Option<Fault> {
        let fault = match path {
            "/fault/hang" => Fault::Hang,
            "/fault/close-mid-body" => Fault::CloseMidBody,
            "/fault/short-body" => Fault::ShortBody,
            "/fault/garbage" => Fault::Garbage,
            "/fault/drop" => Fault::Drop,
            _ => Fault::Flaky {
                failures: canonical_number(path.strip_prefix("/fault/flaky/")?)?,
            },
        };
        Some(fault)
    }

    pub(super) fn resource(&self, path: &str) -> Resource {
        if let Some(resource) = self.polite_resource(path) {
            return resource;
        }
        match path {
            "/" => self.index(),
            "/static/logo.png" => Resource::opaque("image/png", files::LOGO_PNG.to_vec()),
            "/static/style.css" => {
                Resource::opaque("text/css", files::STYLE_CSS.as_bytes().to_vec())
            }
            "/notes.txt" => {
                Resource::opaque("text/plain; charset=utf-8", files::notes_txt().into_bytes())
            }
            "/feed.xml" => self.feed_xml(),
            "/page.xhtml" => files::page_xhtml(),
            "/base.html" => self.base_page(),
            "/redirect/chain/1" => {
                Resource::redirect(301, &format!("{}/redirect/chain/2", self.origin()))
            }
            "/redirect/chain/2" => Resource::redirect(302, "3"),
            "/redirect/chain/3" => Resource::redirect(303, "/redirect/chain/4"),
            "/redirect/chain/4" => Resource::redirect(307, "./5"),
            "/redirect/chain/5" => Resource::redirect(308, "../target.html"),
            "/redirect/alias" => Resource::redirect(302, "target.html"),
            "/redirect/fragment" => Resource::redirect(301, "/redirect/target.html#landed"),
            "/redirect/loop/a" => Resource::redirect(302, "b"),
            "/redirect/loop/b" => Resource::redirect(307, "/redirect/loop/a"),
            "/redirect/offsite" => Resource::redirect(302, "http://example.com/"),
            "/redirect/target.html" => leaf(
                "Redirect target",
                "You arrived here by following a redirect: the end of the 301-302-303-307-308 \
                 chain, /redirect/alias and /redirect/fragment all lead to this page.",
            ),
            "/error/500" => Resource::error(
                500,
                "This page always fails with 500 Internal Server Error, on purpose.",
            ),
            "/charset/utf8-header.html" => files::charset_utf8_header(),
            "/charset/meta-ascii.html" => files::charset_meta_ascii(),
            "/charset/meta-latin1.html" => files::charset_meta_latin1(),
            "/charset/header-windows-1252.html" => files::charset_header_windows_1252(),
            "/charset/none.html" => files::charset_none(),
            "/charset/from-latin1.html" => leaf(
                "Linked from the Latin-1 page",
                "The only link to this page is on /charset/meta-latin1.html, whose body is not \
                 valid UTF-8. A crawler that skips such pages never gets here.",
            ),
            "/content/from-feed.html" => leaf(
                "Linked from the XML feed",
                "The only link to this page is in /feed.xml, which is served as application/xml.",
            ),
            "/content/from-xhtml.html" => leaf(
                "Linked from the XHTML page",
                "The only link to this page is in /page.xhtml, which is served as \
                 application/xhtml+xml.",
            ),
            "/pages/b/base-target.html" => leaf(
                "Base href resolved",
                "The only link to this page is the relative link base-target.html on \
                 /base.html, which declares base href /pages/b/. Resolving it against the \
                 page URL instead would give /base-target.html, which does not exist.",
            ),
            "/framing/chunked.html" => framing_page(
                "Chunked",
                "This page is sent with Transfer-Encoding: chunked (to HTTP/1.1 clients).",
                true,
            ),
            "/framing/content-length.html" => framing_page(
                "Content-Length",
                "This page is sent with a Content-Length header (to HTTP/1.1 clients).",
                false,
            ),
            "/framing/empty.html" => Resource {
                chunked: false,
                ..Resource::opaque(HTML_UTF8, Vec::new())
            },
            "/framing/empty-chunked.html" => Resource {
                chunked: true,
                ..Resource::opaque(HTML_UTF8, Vec::new())
            },
            "/framing/large.html" => large_page(),
            _ => self.page_or_directory(path).unwrap_or_else(not_found),
        }
    }

    /// The page `/fault/flaky/N` serves once it stops failing.
    pub(crate) fn flaky_success(&self, failures: u64) -> Resource {
        let mut h = Html::new("Flaky page", Head::default());
        h.p(&format!(
            "The first {failures} requests for this path were dropped; this one got through."
        ));
        h.raw("<p>");
        h.a("/", "Back to the index");
        h.raw("</p>\n");
        Resource::html(200, HTML_UTF8, h.finish(), false)
    }
}

fn chrome() -> Head<'static> {
    Head {
        chrome: true,
        ..Head::default()
    }
}

fn not_found() -> Resource {
    Resource::error(404, "There is nothing at this address.")
}

/// A small page at the end of some trail; links only to common places.
fn leaf(title: &str, explanation: &str) -> Resource {
    let mut h = Html::new(title, chrome());
    h.p(explanation);
    Resource::html(200, HTML_UTF8, h.finish(), false)
}

fn framing_page(title: &str, explanation: &str, chunked: bool) -> Resource {
    let mut h = Html::new(title, chrome());
    h.p(explanation);
    h.p("An HTTP/1.0 client receives it without either, and the end of the body is the end of the connection.");
    Resource::html(200, HTML_UTF8, h.finish(), chunked)
}

fn large_page() -> Resource {
    let mut h = Html::new("A large page", chrome());
    h.p("This page is 256 KiB long, so no client reads it in a single read.");
    h.padding_here();
    Resource::html(200, HTML_UTF8, h.finish_padded(256 * 1024, 256), true)
}

/// Parses a decimal number written the one canonical way (no sign, no
/// leading zeros), so that `/pages/a/03.html` is not another name for page 3.
fn canonical_number(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical { s.parse().ok() } else { None }
}

/// The path of a request target (`/path?query`): what routing looks at.
pub(crate) fn path_of(target: &str) -> &str {
    target.split_once('?').map_or(target, |(path, _)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site::new(100, 5, 2_000, 8000, false)
    }

    fn resource(site: &Site, target: &str) -> Arc<Resource> {
        match site.route(target) {
            Route::Resource(r) => r,
            Route::Fault(f) => panic!("{target} is a fault: {f:?}"),
        }
    }

    #[test]
    fn numbered_pages_live_in_their_directory() {
        let s = site();
        assert_eq!(resource(&s, "/pages/a/0.html").status, 200);
        assert_eq!(resource(&s, "/pages/b/1.html").status, 200);
        assert_eq!(resource(&s, "/pages/a/99.html").status, 200);
        for bad in [
            "/pages/b/0.html",
            "/pages/a/100.html",
            "/pages/a/03.html",
            "/pages/a/+3.html",
            "/pages/a/3",
            "/pages/d/3.html",
            "/pages/",
            "/pages/a",
            "/pages/a/x.html",
            "/pages/a/99999999999999999999999.html",
        ] {
            assert_eq!(resource(&s, bad).status, 404, "{bad}");
        }
    }

    #[test]
    fn numbered_pages_are_told_from_the_rest() {
        let s = site();
        for page in ["/pages/a/0.html", "/pages/b/1.html", "/pages/a/99.html"] {
            assert!(s.is_numbered_page(page), "{page}");
        }
        for other in [
            "/",
            "/pages/a/",
            "/pages/b/0.html",
            "/pages/a/100.html",
            "/pages/a/03.html",
            "/pages/b/base-target.html",
            "/pages/d/3.html",
            "/redirect/chain/1",
            "/feed.xml",
        ] {
            assert!(!s.is_numbered_page(other), "{other}");
        }
    }

    #[test]
    fn query_is_ignored_for_routing() {
        let s = site();
        assert_eq!(
            resource(&s, "/pages/a/0.html?x=1").body,
            resource(&s, "/pages/a/0.html").body
        );
    }

    #[test]
    fn faults() {
        let s = site();
        let fault = |t| match s.route(t) {
            Route::Fault(f) => Some(f),
            Route::Resource(_) => None,
        };
        assert_eq!(fault("/fault/hang"), Some(Fault::Hang));
        assert_eq!(fault("/fault/flaky/3"), Some(Fault::Flaky { failures: 3 }));
        assert_eq!(
            fault("/fault/flaky/3?x"),
            Some(Fault::Flaky { failures: 3 })
        );
        assert_eq!(fault("/fault/flaky/"), None);
        assert_eq!(fault("/fault/flaky/x"), None);
        assert_eq!(fault("/fault/other"), None);
    }

    #[test]
    fn plain_http_on_the_tls_port_is_sent_to_https() {
        let tls = Site::new(10, 3, 0, 8443, true);
        let Some(Route::Resource(res)) = tls.route_over("http", "/pages/a/0.html?x=1") else {
            panic!("no redirect");
        };
        assert_eq!(res.status, 301);
        assert_eq!(
            res.location.as_deref(),
            Some("https://127.0.0.1:8443/pages/a/0.html?x=1")
        );
        assert!(matches!(
            tls.route_over("https", "/fault/hang"),
            Some(Route::Fault(Fault::Hang))
        ));
        assert!(site().route_over("https", "/").is_none());
        assert!(matches!(
            site().route_over("http", "/fault/drop"),
            Some(Route::Fault(Fault::Drop))
        ));
    }

    #[test]
    fn tiny_sites_have_no_dangling_page_links() {
        // With fewer pages than the fan-out, every link from a page that
        // lists pages (the index, the base page, the feed, the pages
        // themselves) to a page on this site must still resolve.
        for pages in 0..4 {
            let s = Site::new(pages, 3, 0, 8000, false);
            let origin = url::Url::parse(&s.origin()).unwrap();
            let mut docs = vec![
                ("/".to_string(), s.index()),
                ("/base.html".to_string(), s.base_page()),
                ("/feed.xml".to_string(), s.feed_xml()),
            ];
            docs.extend((0..pages).map(|n| (s.page_path(n), s.page(n))));
            let mut numbered = 0;
            for (path, doc) in &docs {
                let base = origin.join(doc.base.as_deref().unwrap_or(path)).unwrap();
                for link in &doc.links {
                    let url = base.join(link).unwrap();
                    if url.origin() != origin.origin() || !url.path().starts_with("/pages/") {
                        continue;
                    }
                    let status = resource(&s, url.path()).status;
                    assert_eq!(status, 200, "{pages} pages: {link} from {path}");
                    numbered += usize::from(s.is_numbered_page(url.path()));
                }
            }
            // A site with pages links to them; one without, to none.
            assert_eq!(numbered > 0, pages > 0, "{pages} pages");
        }
    }
}
