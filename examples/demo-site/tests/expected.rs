//! The answer key: `DemoSite::expected()` is exactly what a crawler finds.
//!
//! Two independent checks. First, the exact list for the default
//! configuration, written out by hand. Second, a real crawl over HTTP that
//! parses every body with html5ever (instead of trusting the link lists the
//! site records while generating pages) must agree with `expected()` for
//! several configurations and several reasonable crawling rules.

mod common;

use std::collections::{BTreeSet, HashSet, VecDeque};

use demo_site::{DemoSite, ExpectedUrl, SiteConfig};
use url::{Position, Url};

/// Every URL of the default site, sorted as strings (so `/pages/a/12.html`
/// comes before `/pages/a/3.html`).
const DEFAULT_PATHS: [&str; 138] = [
    "/",
    "/base.html",
    "/charset/from-latin1.html",
    "/charset/header-windows-1252.html",
    "/charset/meta-ascii.html",
    "/charset/meta-latin1.html",
    "/charset/none.html",
    "/charset/utf8-header.html",
    "/content/from-feed.html",
    "/content/from-xhtml.html",
    "/error/500",
    "/feed.xml",
    "/framing/chunked.html",
    "/framing/content-length.html",
    "/framing/empty-chunked.html",
    "/framing/empty.html",
    "/framing/large.html",
    "/missing.html",
    "/notes.txt",
    "/page.xhtml",
    "/pages/a/",
    "/pages/a/0.html",
    "/pages/a/0.html?from=index&lang=en",
    "/pages/a/12.html",
    "/pages/a/15.html",
    "/pages/a/18.html",
    "/pages/a/21.html",
    "/pages/a/24.html",
    "/pages/a/27.html",
    "/pages/a/3.html",
    "/pages/a/30.html",
    "/pages/a/33.html",
    "/pages/a/36.html",
    "/pages/a/39.html",
    "/pages/a/42.html",
    "/pages/a/45.html",
    "/pages/a/48.html",
    "/pages/a/51.html",
    "/pages/a/54.html",
    "/pages/a/57.html",
    "/pages/a/6.html",
    "/pages/a/60.html",
    "/pages/a/63.html",
    "/pages/a/66.html",
    "/pages/a/69.html",
    "/pages/a/72.html",
    "/pages/a/75.html",
    "/pages/a/78.html",
    "/pages/a/81.html",
    "/pages/a/84.html",
    "/pages/a/87.html",
    "/pages/a/9.html",
    "/pages/a/90.html",
    "/pages/a/93.html",
    "/pages/a/96.html",
    "/pages/a/99.html",
    "/pages/b/",
    "/pages/b/1.html",
    "/pages/b/10.html",
    "/pages/b/13.html",
    "/pages/b/16.html",
    "/pages/b/19.html",
    "/pages/b/22.html",
    "/pages/b/25.html",
    "/pages/b/28.html",
    "/pages/b/31.html",
    "/pages/b/34.html",
    "/pages/b/37.html",
    "/pages/b/4.html",
    "/pages/b/40.html",
    "/pages/b/43.html",
    "/pages/b/46.html",
    "/pages/b/49.html",
    "/pages/b/52.html",
    "/pages/b/55.html",
    "/pages/b/58.html",
    "/pages/b/61.html",
    "/pages/b/64.html",
    "/pages/b/67.html",
    "/pages/b/7.html",
    "/pages/b/70.html",
    "/pages/b/73.html",
    "/pages/b/76.html",
    "/pages/b/79.html",
    "/pages/b/82.html",
    "/pages/b/85.html",
    "/pages/b/88.html",
    "/pages/b/91.html",
    "/pages/b/94.html",
    "/pages/b/97.html",
    "/pages/b/base-target.html",
    "/pages/c/",
    "/pages/c/11.html",
    "/pages/c/14.html",
    "/pages/c/17.html",
    "/pages/c/2.html",
    "/pages/c/20.html",
    "/pages/c/23.html",
    "/pages/c/26.html",
    "/pages/c/29.html",
    "/pages/c/32.html",
    "/pages/c/35.html",
    "/pages/c/38.html",
    "/pages/c/41.html",
    "/pages/c/44.html",
    "/pages/c/47.html",
    "/pages/c/5.html",
    "/pages/c/50.html",
    "/pages/c/53.html",
    "/pages/c/56.html",
    "/pages/c/59.html",
    "/pages/c/62.html",
    "/pages/c/65.html",
    "/pages/c/68.html",
    "/pages/c/71.html",
    "/pages/c/74.html",
    "/pages/c/77.html",
    "/pages/c/8.html",
    "/pages/c/80.html",
    "/pages/c/83.html",
    "/pages/c/86.html",
    "/pages/c/89.html",
    "/pages/c/92.html",
    "/pages/c/95.html",
    "/pages/c/98.html",
    "/redirect/alias",
    "/redirect/chain/1",
    "/redirect/chain/2",
    "/redirect/chain/3",
    "/redirect/chain/4",
    "/redirect/chain/5",
    "/redirect/fragment",
    "/redirect/loop/a",
    "/redirect/loop/b",
    "/redirect/offsite",
    "/redirect/target.html",
    "/static/logo.png",
    "/static/style.css",
];

#[test]
fn default_site_has_exactly_these_urls() {
    let site = DemoSite::start_default().unwrap();
    let origin = site.base_url();
    let paths: Vec<String> = site
        .expected()
        .into_iter()
        .map(|e| e.url.strip_prefix(&origin).unwrap().to_string())
        .collect();
    assert_eq!(paths, DEFAULT_PATHS);
}

/// (path, status, Location (resolved), Content-Type, charset, valid UTF-8)
type Details = (
    &'static str,
    u16,
    Option<&'static str>,
    &'static str,
    Option<&'static str>,
    bool,
);

#[test]
fn default_site_details() {
    let site = DemoSite::start_default().unwrap();
    let origin = site.base_url();
    let html = "text/html; charset=utf-8";
    // Every URL that is not a plain UTF-8 HTML page with status 200.
    #[rustfmt::skip]
    let special: Vec<Details> = vec![
        ("/charset/header-windows-1252.html", 200, None, "text/html; charset=windows-1252", Some("windows-1252"), false),
        ("/charset/meta-ascii.html", 200, None, "text/html", Some("ascii"), true),
        ("/charset/meta-latin1.html", 200, None, "text/html", Some("iso-8859-1"), false),
        ("/charset/none.html", 200, None, "text/html", None, true),
        ("/error/500", 500, None, html, Some("utf-8"), true),
        ("/feed.xml", 200, None, "application/xml; charset=utf-8", Some("utf-8"), true),
        ("/missing.html", 404, None, html, Some("utf-8"), true),
        ("/notes.txt", 200, None, "text/plain; charset=utf-8", Some("utf-8"), true),
        ("/page.xhtml", 200, None, "application/xhtml+xml; charset=utf-8", Some("utf-8"), true),
        ("/redirect/alias", 302, Some("/redirect/target.html"), html, Some("utf-8"), true),
        ("/redirect/chain/1", 301, Some("/redirect/chain/2"), html, Some("utf-8"), true),
        ("/redirect/chain/2", 302, Some("/redirect/chain/3"), html, Some("utf-8"), true),
        ("/redirect/chain/3", 303, Some("/redirect/chain/4"), html, Some("utf-8"), true),
        ("/redirect/chain/4", 307, Some("/redirect/chain/5"), html, Some("utf-8"), true),
        ("/redirect/chain/5", 308, Some("/redirect/target.html"), html, Some("utf-8"), true),
        ("/redirect/fragment", 301, Some("/redirect/target.html"), html, Some("utf-8"), true),
        ("/redirect/loop/a", 302, Some("/redirect/loop/b"), html, Some("utf-8"), true),
        ("/redirect/loop/b", 307, Some("/redirect/loop/a"), html, Some("utf-8"), true),
        ("/redirect/offsite", 302, Some("http://example.com/"), html, Some("utf-8"), true),
        ("/static/logo.png", 200, None, "image/png", None, false),
        ("/static/style.css", 200, None, "text/css", None, true),
    ];
    let absolute = |path: &str| {
        if path.starts_with('/') {
            format!("{origin}{path}")
        } else {
            path.to_string()
        }
    };
    for e in site.expected() {
        let path = e.url.strip_prefix(&origin).unwrap();
        let want = special.iter().find(|s| s.0 == path).copied().unwrap_or((
            path,
            200,
            None,
            html,
            Some("utf-8"),
            true,
        ));
        let want = ExpectedUrl {
            url: e.url.clone(),
            status: want.1,
            location: want.2.map(absolute),
            content_type: Some(want.3.to_string()),
            charset: want.4.map(str::to_string),
            body_is_utf8: want.5,
        };
        assert_eq!(e, want);
    }
}

/// How the independent test crawler decides what to follow.
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// Every `href` on any element (including `<base>`) plus `Location`.
    EveryHref,
    /// Only `<a href>` plus `Location`.
    AnchorsOnly,
    /// Every `href`, but never `Location`: redirect bodies must suffice.
    BodiesOnly,
}

fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap()
        .trim()
        .to_ascii_lowercase()
}

fn header_charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        (name.trim().eq_ignore_ascii_case("charset")).then(|| value.trim().to_ascii_lowercase())
    })
}

/// A plain breadth-first crawler over real HTTP (and https, in TLS mode),
/// one keep-alive connection per scheme.
fn crawl_over_http(site: &DemoSite, rule: Rule) -> Vec<ExpectedUrl> {
    let start = Url::parse(&site.url("/")).unwrap();
    let port = site.addr().port();
    let mut client = common::Client::connect(site.addr());
    let mut tls_client = site
        .cert_pem()
        .map(|pem| common::Client::connect_tls(site.addr(), "127.0.0.1", pem));
    let mut seen = HashSet::from([start.to_string()]);
    let mut queue = VecDeque::from([start]);
    let mut found = Vec::new();
    while let Some(url) = queue.pop_front() {
        let target = &url[Position::BeforePath..Position::AfterQuery];
        let response = match (url.scheme(), &mut tls_client) {
            ("https", Some(tls_client)) => tls_client.get(target),
            ("http", _) => client.get(target),
            (scheme, _) => panic!("{url}: no client for {scheme} on this site"),
        };
        let content_type = response.header("content-type").map(str::to_string);
        let mut links = Vec::new();
        let location = response.header("location").map(|l| {
            let mut target = url.join(l).unwrap();
            target.set_fragment(None);
            target
        });
        if let (Some(location), false) = (&location, matches!(rule, Rule::BodiesOnly)) {
            links.push(location.clone());
        }
        let mut meta_charset = None;
        let markup = ["text/html", "application/xhtml+xml", "application/xml"];
        if content_type
            .as_deref()
            .is_some_and(|ct| markup.contains(&essence(ct).as_str()))
        {
            let parsed = common::parse_html(&response.body);
            meta_charset = parsed.meta_charset.map(|c| c.to_ascii_lowercase());
            let base = parsed.base.and_then(|b| url.join(&b).ok());
            if let (Some(base), false) = (&base, matches!(rule, Rule::AnchorsOnly)) {
                links.push(base.clone());
            }
            let base = base.unwrap_or_else(|| url.clone());
            for (element, href) in parsed.hrefs {
                if element == "a" || !matches!(rule, Rule::AnchorsOnly) {
                    links.extend(base.join(&href).ok());
                }
            }
        }
        for mut link in links {
            link.set_fragment(None);
            let same_site = matches!(link.scheme(), "http" | "https")
                && link.host_str() == Some("127.0.0.1")
                && link.port_or_known_default() == Some(port);
            if same_site && seen.insert(link.to_string()) {
                queue.push_back(link);
            }
        }
        found.push(ExpectedUrl {
            url: url.to_string(),
            status: response.status,
            location: location.map(|l| l.to_string()),
            charset: content_type
                .as_deref()
                .and_then(header_charset)
                .or(meta_charset),
            content_type,
            body_is_utf8: std::str::from_utf8(&response.body).is_ok(),
        });
    }
    found.sort();
    found
}

fn urls(list: &[ExpectedUrl]) -> BTreeSet<&str> {
    list.iter().map(|e| e.url.as_str()).collect()
}

#[test]
fn expected_matches_a_real_crawl_parsed_with_html5ever() {
    let configs = [
        SiteConfig::default(),
        SiteConfig {
            pages: 0,
            ..SiteConfig::default()
        },
        SiteConfig {
            pages: 1,
            fan_out: 0,
            ..SiteConfig::default()
        },
        SiteConfig {
            pages: 10,
            fan_out: 1,
            ..SiteConfig::default()
        },
        SiteConfig {
            pages: 60,
            fan_out: 12,
            page_size: 500,
            ..SiteConfig::default()
        },
    ];
    for config in configs {
        let label = format!("pages {} fan-out {}", config.pages, config.fan_out);
        let site = DemoSite::start(config).unwrap();
        let expected = site.expected();
        assert_eq!(crawl_over_http(&site, Rule::EveryHref), expected, "{label}");
        // The crawl fetched every expected URL exactly once, on one
        // keep-alive connection.
        let counters = site.counters();
        assert_eq!(counters.requests, expected.len() as u64, "{label}");
        assert!(counters.per_path.values().all(|&n| n == 1), "{label}");
        assert_eq!(counters.connections, 1, "{label}");
    }
}

// Needs the site's TLS mode (the default feature `tls`).
#[cfg(feature = "tls")]
#[test]
fn the_tls_site_has_the_same_paths_and_its_plain_http_door() {
    let site = DemoSite::start(SiteConfig {
        tls: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let origin = site.base_url();
    let port = site.addr().port();
    assert_eq!(origin, format!("https://127.0.0.1:{port}"));
    let expected = site.expected();
    let (over_https, over_http): (Vec<_>, Vec<_>) =
        expected.iter().partition(|e| e.url.starts_with(&origin));
    let paths: Vec<&str> = over_https
        .iter()
        .map(|e| e.url.strip_prefix(&origin).unwrap())
        .collect();
    assert_eq!(paths, DEFAULT_PATHS);
    // The index links to the site over plain http, which redirects back.
    assert_eq!(
        over_http,
        [&ExpectedUrl {
            url: format!("http://127.0.0.1:{port}/"),
            status: 301,
            location: Some(format!("{origin}/")),
            content_type: Some("text/html; charset=utf-8".into()),
            charset: Some("utf-8".into()),
            body_is_utf8: true,
        }]
    );
    // An independent crawl over TLS (and plain http for that one URL)
    // agrees, one request per URL and one connection per scheme.
    assert_eq!(crawl_over_http(&site, Rule::EveryHref), expected);
    let counters = site.counters();
    assert_eq!(counters.requests, expected.len() as u64);
    assert_eq!(counters.per_path["/"], 2);
    assert_eq!(counters.connections, 2);
}

#[test]
fn other_crawling_rules_find_the_same_urls() {
    // Whether a crawler follows only <a href> or every href, and whether it
    // follows Location headers or only redirect bodies, it finds the same
    // URLs: every non-<a> href also appears in an <a>, and every redirect
    // body links to its Location.
    let site = DemoSite::start_default().unwrap();
    let expected = site.expected();
    for rule in [Rule::AnchorsOnly, Rule::BodiesOnly] {
        let found = crawl_over_http(&site, rule);
        assert_eq!(urls(&found), urls(&expected), "{rule:?}");
    }
}

#[test]
fn a_large_site_is_the_index_its_files_and_every_page_and_keeps_nothing() {
    for (pages, fan_out) in [(1, 0), (40, 1), (300, 5)] {
        let site = DemoSite::start(SiteConfig {
            pages,
            fan_out,
            large: true,
            ..SiteConfig::default()
        })
        .unwrap();
        let origin = site.base_url();
        let expected = site.expected();
        let mut paths: BTreeSet<String> = ["/", "/static/logo.png", "/static/style.css"]
            .map(String::from)
            .into();
        paths.extend((0..pages).map(|n| format!("/pages/{}/{n}.html", ["a", "b", "c"][n % 3])));
        let found: BTreeSet<String> = expected
            .iter()
            .map(|e| e.url.strip_prefix(&origin).unwrap().to_string())
            .collect();
        assert_eq!(found, paths, "{pages} pages");
        assert_eq!(expected.len(), site.expected_large_len());
        assert!(expected.iter().all(|e| e.status == 200));
        // A real crawl agrees; the server counted its requests and
        // nothing per request.
        assert_eq!(crawl_over_http(&site, Rule::EveryHref), expected);
        let counters = site.counters();
        assert_eq!(counters.requests, expected.len() as u64);
        assert!(counters.per_path.is_empty() && counters.request_log.is_empty());
    }
}
