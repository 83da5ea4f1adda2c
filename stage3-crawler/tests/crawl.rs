//! The crawler's behaviour against the demo site, through the library: the
//! chapter's own test suite (`test.py`), and what a real site needs beyond
//! it.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{Crawl, config, crawl, leaf_config, media_type, size};
use demo_site::{DemoSite, SiteConfig};
use regex::Regex;
use stage3_crawler::logging::Level;
use stage3_crawler::{Config, Crawler, Exception, FetchStatistic, Outcome, SkipReason};
use url::Url;

fn redirect(site: &DemoSite, path: &str, status: u16, next: &str) -> FetchStatistic {
    FetchStatistic {
        url: site.url(path),
        next_url: Some(site.url(next)),
        status: Some(status),
        exception: None,
        size: size(site, path),
        content_type: Some("text/html".into()),
        encoding: None,
        num_urls: 0,
        num_new_urls: 0,
        wire_size: size(site, path),
        protocol: Some("http/1.1"),
        recrawl: None,
    }
}

fn page(site: &DemoSite, path: &str, num_urls: usize, num_new_urls: usize) -> FetchStatistic {
    FetchStatistic {
        url: site.url(path),
        next_url: None,
        status: Some(200),
        exception: None,
        size: size(site, path),
        content_type: Some("text/html".into()),
        encoding: Some("utf-8".into()),
        num_urls,
        num_new_urls,
        wire_size: size(site, path),
        protocol: Some("http/1.1"),
        recrawl: None,
    }
}

fn failure(site: &DemoSite, path: &str, kind: &'static str, message: &str) -> FetchStatistic {
    FetchStatistic::failure(
        site.url(path),
        Exception {
            kind,
            message: message.into(),
        },
    )
}

fn sorted(mut stats: Vec<FetchStatistic>) -> Vec<FetchStatistic> {
    stats.sort_by(|a, b| a.url.cmp(&b.url));
    stats
}

// ---------------------------------------------------------------------------
// The whole site against its answer key.

#[test]
fn a_full_crawl_finds_exactly_the_expected_urls_each_fetched_once() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/")], config());
    assert_eq!(c.outcome, Outcome::Completed);
    let expected = site.expected();
    let want: BTreeSet<String> = expected.iter().map(|e| e.url.clone()).collect();
    assert_eq!(c.urls(), want);
    assert_eq!(c.stats.len(), expected.len(), "a URL was recorded twice");
    for e in &expected {
        let stat = c.stat(&e.url);
        assert_eq!(stat.status, Some(e.status), "{}", e.url);
        assert_eq!(stat.exception, None, "{}", e.url);
        assert_eq!(stat.next_url, e.location, "{}", e.url);
        // The content type as sent, without its parameters.
        assert_eq!(
            stat.content_type,
            e.content_type.as_deref().map(media_type),
            "{}",
            e.url
        );
    }
    // Every URL was requested exactly once: no duplicate fetches, even
    // where two redirects lead to one page.
    let counters = site.counters();
    assert!(
        counters.per_path.values().all(|&n| n == 1),
        "{:?}",
        counters.per_path
    );
    assert_eq!(counters.requests, expected.len() as u64);
}

#[test]
fn keep_alive_reuses_connections() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[site.url("/")],
        Config {
            max_tasks: 10,
            ..config()
        },
    );
    let connections = site.counters().connections;
    assert_eq!(c.connections, connections);
    // One connection per worker at most, for 138 requests.
    assert!((1..=10).contains(&connections), "{connections} connections");
}

#[test]
fn connection_close_is_honoured() {
    let site = DemoSite::start(SiteConfig {
        keep_alive: false,
        ..SiteConfig::default()
    })
    .unwrap();
    let c = crawl(&[site.url("/")], config());
    assert_eq!(c.stats.len(), site.expected().len());
    assert!(c.stats.iter().all(|s| s.exception.is_none()));
    // The server closes after every response, so none is reused.
    let counters = site.counters();
    assert_eq!(counters.connections, counters.requests);
    assert_eq!(c.connections, counters.connections);
}

#[test]
fn max_tasks_is_the_peak_concurrency_the_server_sees() {
    let site = DemoSite::start(SiteConfig {
        pages: 20,
        delay: Duration::from_millis(50),
        ..SiteConfig::default()
    })
    .unwrap();
    let c = crawl(
        &[site.url("/")],
        Config {
            max_tasks: 3,
            ..config()
        },
    );
    assert_eq!(c.stats.len(), site.expected().len());
    assert_eq!(site.counters().peak_in_flight, 3);
}

// ---------------------------------------------------------------------------
// The chapter's tests, one by one.

#[test]
fn a_link_to_a_missing_page() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/")], config());
    assert_eq!(
        *c.stat(&site.url("/missing.html")),
        FetchStatistic {
            status: Some(404),
            num_urls: 0,
            num_new_urls: 0,
            ..page(&site, "/missing.html", 0, 0)
        }
    );
    // Everything the index links to is new, except the index itself (it
    // links to itself as `href=""` and `#pages`).
    let index = c.stat(&site.url("/"));
    assert_eq!(index.num_new_urls, index.num_urls - 1);
}

#[test]
fn a_link_cycle_ends() {
    // Two pages that link to each other, and to nothing else we follow but
    // themselves (`#top`), which counts as a link and is never new.
    let site = DemoSite::start(SiteConfig {
        pages: 2,
        fan_out: 1,
        ..SiteConfig::default()
    })
    .unwrap();
    let c = crawl(&[site.url("/pages/a/0.html")], leaf_config());
    assert_eq!(
        sorted(c.stats.clone()),
        [
            page(&site, "/pages/a/0.html", 2, 1),
            page(&site, "/pages/b/1.html", 2, 0),
        ]
    );
}

#[test]
fn a_prohibited_host_is_not_followed() {
    let site = DemoSite::start(SiteConfig {
        pages: 2,
        fan_out: 1,
        ..SiteConfig::default()
    })
    .unwrap();
    // Page 0 links to http://example.com/pages/0.html too; it is not counted.
    let body = String::from_utf8(common::body(&site, "/pages/a/0.html")).unwrap();
    assert!(body.contains("http://example.com/"), "{body}");
    let c = crawl(&[site.url("/pages/a/0.html")], leaf_config());
    assert_eq!(c.stat(&site.url("/pages/a/0.html")).num_urls, 2);
    // A redirect off the site is recorded, not followed.
    let c = crawl(&[site.url("/redirect/offsite")], config());
    assert_eq!(
        c.stats,
        [FetchStatistic {
            next_url: Some("http://example.com/".into()),
            ..redirect(&site, "/redirect/offsite", 302, "/")
        }]
    );
}

fn allowed(roots: &[&str], config: Config, url: &str) -> bool {
    let roots = roots.iter().map(|r| Url::parse(r).unwrap()).collect();
    Crawler::new(roots, config)
        .unwrap()
        .url_allowed(&Url::parse(url).unwrap())
}

#[test]
fn strict_host_checking() {
    let root = ["http://example.com"];
    assert!(allowed(&root, config(), "http://www.example.com"));
    assert!(!allowed(&root, config(), "http://foo.example.com"));
}

#[test]
fn lenient_host_checking() {
    let root = ["http://example.com"];
    let lenient = || Config {
        strict: false,
        ..config()
    };
    assert!(allowed(&root, lenient(), "http://www.example.com"));
    assert!(allowed(&root, lenient(), "http://foo.example.com"));
    assert!(!allowed(&root, lenient(), "http://example.org"));
}

#[test]
fn ip_literal_hosts_match_exactly() {
    for strict in [true, false] {
        let c = Config { strict, ..config() };
        assert!(allowed(
            &["http://127.0.0.1:8000/"],
            c.clone(),
            "http://127.0.0.1:8000/x"
        ));
        assert!(!allowed(
            &["http://127.0.0.1:8000/"],
            c.clone(),
            "http://127.0.0.2:8000/"
        ));
        assert!(!allowed(
            &["http://127.0.0.1:8000/"],
            c,
            "http://127.0.0.1:1/"
        ));
    }
}

#[test]
fn exclude() {
    let c = || Config {
        exclude: Some(Regex::new(r".*pattern").unwrap()),
        ..config()
    };
    assert!(allowed(&["http://example.com"], c(), "http://example.com"));
    assert!(!allowed(
        &["http://example.com"],
        c(),
        "http://example.com/pattern"
    ));
    // Live: nothing matching is fetched, and everything else still is.
    let site = DemoSite::start_default().unwrap();
    let exclude = Regex::new("/charset/|/pages/").unwrap();
    let crawled = crawl(
        &[site.url("/")],
        Config {
            exclude: Some(exclude.clone()),
            ..config()
        },
    );
    let want: BTreeSet<String> = site
        .expected()
        .into_iter()
        .map(|e| e.url)
        .filter(|u| !exclude.is_match(u))
        .collect();
    assert_eq!(crawled.urls(), want);
}

#[test]
fn several_roots() {
    let roots = ["http://a", "http://b"];
    assert!(allowed(&roots, config(), "http://a/a"));
    assert!(allowed(&roots, config(), "http://b/b"));
    assert!(!allowed(&roots, config(), "http://c/c"));
    assert!(!allowed(&roots, config(), "http://127.0.0.1"));
    // Live: both roots are crawled.
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[
            site.url("/framing/empty.html"),
            site.url("/framing/empty-chunked.html"),
        ],
        leaf_config(),
    );
    let empty = |path| FetchStatistic {
        size: 0,
        ..page(&site, path, 0, 0)
    };
    assert_eq!(
        sorted(c.stats.clone()),
        [
            empty("/framing/empty-chunked.html"),
            empty("/framing/empty.html")
        ]
    );
}

#[test]
fn a_deep_root_with_a_fragment_makes_its_host_a_root() {
    assert!(allowed(&["http://a/a#fragment"], config(), "http://a/b"));
    // Live: the fragment is dropped, and the whole site is reachable.
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/redirect/target.html#frag")], config());
    assert_eq!(c.stat(&site.url("/redirect/target.html")).status, Some(200));
    // It links to the index, so the crawl covers the whole site.
    let want: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    assert_eq!(c.urls(), want);
}

#[test]
fn a_redirect_chain_through_every_status() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/redirect/chain/1")], leaf_config());
    assert_eq!(
        sorted(c.stats.clone()),
        [
            redirect(&site, "/redirect/chain/1", 301, "/redirect/chain/2"),
            redirect(&site, "/redirect/chain/2", 302, "/redirect/chain/3"),
            redirect(&site, "/redirect/chain/3", 303, "/redirect/chain/4"),
            redirect(&site, "/redirect/chain/4", 307, "/redirect/chain/5"),
            redirect(&site, "/redirect/chain/5", 308, "/redirect/target.html"),
            page(&site, "/redirect/target.html", 1, 0),
        ]
    );
    let base = site.base_url();
    assert_eq!(
        c.logged(Level::Info),
        (1..=4)
            .map(|n| format!(
                "redirect to {base}/redirect/chain/{} from {base}/redirect/chain/{n}",
                n + 1
            ))
            .chain([
                format!("redirect to {base}/redirect/target.html from {base}/redirect/chain/5"),
                format!("got 1 distinct urls from {base}/redirect/target.html"),
            ])
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_redirect_limit_stops_a_chain_and_says_so() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[site.url("/redirect/chain/1")],
        Config {
            max_redirect: 2,
            ..leaf_config()
        },
    );
    assert_eq!(
        sorted(c.stats.clone()),
        [
            redirect(&site, "/redirect/chain/1", 301, "/redirect/chain/2"),
            redirect(&site, "/redirect/chain/2", 302, "/redirect/chain/3"),
            redirect(&site, "/redirect/chain/3", 303, "/redirect/chain/4"),
        ]
    );
    assert_eq!(
        c.logged(Level::Error),
        [format!(
            "redirect limit reached for {} from {}",
            site.url("/redirect/chain/4"),
            site.url("/redirect/chain/3")
        )]
    );
}

#[test]
fn a_redirect_cycle_ends() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/redirect/loop/a")], config());
    assert_eq!(
        sorted(c.stats.clone()),
        [
            redirect(&site, "/redirect/loop/a", 302, "/redirect/loop/b"),
            redirect(&site, "/redirect/loop/b", 307, "/redirect/loop/a"),
        ]
    );
}

#[test]
fn two_redirects_to_one_target_fetch_it_once() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[
            site.url("/redirect/alias"),
            site.url("/redirect/chain/5"),
            site.url("/redirect/fragment"),
        ],
        leaf_config(),
    );
    // Read before the expected stats below fetch the pages again.
    assert_eq!(site.counters().per_path["/redirect/target.html"], 1);
    assert_eq!(
        sorted(c.stats.clone()),
        [
            redirect(&site, "/redirect/alias", 302, "/redirect/target.html"),
            redirect(&site, "/redirect/chain/5", 308, "/redirect/target.html"),
            // The Location's fragment (#landed) is dropped.
            redirect(&site, "/redirect/fragment", 301, "/redirect/target.html"),
            page(&site, "/redirect/target.html", 1, 0),
        ]
    );
}

#[test]
fn max_tries_retries_dropped_connections_and_logs_each_try() {
    let site = DemoSite::start_default().unwrap();
    let url = site.url("/fault/flaky/2");
    let c = crawl(std::slice::from_ref(&url), leaf_config());
    let stat = c.stat(&url);
    assert_eq!((stat.status, &stat.exception), (Some(200), &None));
    assert_eq!(site.counters().per_path["/fault/flaky/2"], 3);
    assert_eq!(
        c.logged(Level::Info),
        [
            format!("try 1 for {url} raised connection closed before the response"),
            format!("try 2 for {url} raised connection closed before the response"),
            format!("try 3 for {url} succeeded"),
        ]
    );
    assert!(c.logged(Level::Error).is_empty());
}

#[test]
fn after_max_tries_the_url_fails_with_the_last_error() {
    let site = DemoSite::start_default().unwrap();
    let url = site.url("/fault/drop");
    for max_tries in [1, 2] {
        site.reset_counters();
        let c = crawl(
            std::slice::from_ref(&url),
            Config {
                max_tries,
                ..config()
            },
        );
        assert_eq!(
            c.stats,
            [failure(
                &site,
                "/fault/drop",
                "closed",
                "connection closed before the response"
            )]
        );
        assert!(!c.any_root_fetched);
        assert_eq!(
            site.counters().per_path["/fault/drop"],
            u64::from(max_tries)
        );
        let tries: Vec<String> = (1..=max_tries)
            .map(|n| format!("try {n} for {url} raised connection closed before the response"))
            .collect();
        assert_eq!(c.logged(Level::Info), tries);
        assert_eq!(
            c.logged(Level::Error),
            [format!("{url} failed after {max_tries} tries")]
        );
    }
}

#[test]
fn encodings_none_utf8_ascii_and_more() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/")], config());
    let encoding = |path: &str| c.stat(&site.url(path)).encoding.clone();
    assert_eq!(encoding("/charset/none.html").as_deref(), Some("utf-8"));
    assert_eq!(
        encoding("/charset/utf8-header.html").as_deref(),
        Some("utf-8")
    );
    assert_eq!(
        encoding("/charset/meta-ascii.html").as_deref(),
        Some("ascii")
    );
    assert_eq!(
        encoding("/charset/meta-latin1.html").as_deref(),
        Some("iso-8859-1")
    );
    assert_eq!(
        encoding("/charset/header-windows-1252.html").as_deref(),
        Some("windows-1252")
    );
    // Every page we parsed records the declared charset, or utf-8.
    for e in site.expected() {
        let stat = c.stat(&e.url);
        if stat.status == Some(200) && stat.num_urls > 0 {
            assert_eq!(
                stat.encoding,
                Some(e.charset.unwrap_or("utf-8".into())),
                "{}",
                e.url
            );
        }
    }
}

#[test]
fn the_content_type_is_recorded_as_sent() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[site.url("/static/style.css"), site.url("/static/logo.png")],
        config(),
    );
    assert_eq!(
        sorted(c.stats.clone()),
        [
            FetchStatistic {
                content_type: Some("image/png".into()),
                encoding: None,
                ..page(&site, "/static/logo.png", 0, 0)
            },
            FetchStatistic {
                content_type: Some("text/css".into()),
                encoding: None,
                ..page(&site, "/static/style.css", 0, 0)
            },
        ]
    );
}

#[test]
fn only_html_and_xml_are_searched_for_links() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[
            site.url("/notes.txt"),
            site.url("/feed.xml"),
            site.url("/page.xhtml"),
        ],
        leaf_config(),
    );
    // text/plain with an <a href> in it: not parsed.
    assert_eq!(
        *c.stat(&site.url("/notes.txt")),
        FetchStatistic {
            content_type: Some("text/plain".into()),
            ..page(&site, "/notes.txt", 0, 0)
        }
    );
    // application/xml and application/xhtml+xml: parsed.
    let feed = c.stat(&site.url("/feed.xml"));
    assert_eq!(feed.content_type.as_deref(), Some("application/xml"));
    assert_eq!((feed.num_urls, feed.num_new_urls), (4, 4));
    assert_eq!(
        c.stat(&site.url("/content/from-feed.html")).status,
        Some(200)
    );
    assert_eq!(
        c.stat(&site.url("/content/from-xhtml.html")).status,
        Some(200)
    );
    assert!(!c.urls().iter().any(|u| u.contains("/not-a-link/")));
}

#[test]
fn non_http_links_are_skipped_with_their_scheme() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/")], config());
    // The index links to mailto:, ftp:, javascript: and tel: URLs (and the
    // pages to some of them again): none is fetched, each is reported once,
    // skipped for its scheme, from the page that linked it first.
    assert!(c.urls().iter().all(|u| u.starts_with(&site.base_url())));
    let index = c.stat(&site.url("/"));
    assert!(index.num_urls > 0);
    let schemes: BTreeSet<(&str, Option<&str>)> = c
        .skipped
        .iter()
        .filter(|s| s.reason == SkipReason::Scheme)
        .map(|s| (&*s.url, s.from.as_deref()))
        .collect();
    let root = site.url("/");
    let want: BTreeSet<(&str, Option<&str>)> = [
        "mailto:webmaster@example.com",
        "ftp://ftp.example.com/pub/",
        "javascript:void(0)",
        "tel:+15555550100",
    ]
    .into_iter()
    .map(|url| (url, Some(root.as_str())))
    .collect();
    assert_eq!(schemes, want);
    let scheme_skips = c.skipped.iter().filter(|s| s.reason == SkipReason::Scheme);
    assert_eq!(scheme_skips.count(), 4, "each once");
}

// ---------------------------------------------------------------------------
// Beyond the chapter.

#[test]
fn base_href_and_framings() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(&[site.url("/")], config());
    assert_eq!(
        c.stat(&site.url("/pages/b/base-target.html")).status,
        Some(200)
    );
    assert!(!c.urls().contains(&site.url("/base-target.html")));
    for path in [
        "/framing/chunked.html",
        "/framing/content-length.html",
        "/framing/empty.html",
        "/framing/empty-chunked.html",
        "/framing/large.html",
        "/",
    ] {
        assert_eq!(c.stat(&site.url(path)).size, size(&site, path), "{path}");
    }
}

#[test]
fn fault_paths_end_as_stats_with_exceptions() {
    let site = DemoSite::start_default().unwrap();
    let timeouts = Config {
        max_tries: 1,
        client: stage3_crawler::http::ClientConfig {
            read_timeout: Duration::from_millis(300),
            ..config().client
        },
        ..leaf_config()
    };
    let paths = [
        "/fault/hang",
        "/fault/close-mid-body",
        "/fault/short-body",
        "/fault/garbage",
    ];
    let c = crawl(&paths.map(|p| site.url(p)), timeouts);
    assert_eq!(
        sorted(c.stats.clone()),
        [
            failure(
                &site,
                "/fault/close-mid-body",
                "truncated",
                "connection closed in the middle of a chunked body"
            ),
            failure(
                &site,
                "/fault/garbage",
                "malformed",
                "malformed response head: invalid HTTP version"
            ),
            failure(
                &site,
                "/fault/hang",
                "timeout",
                "read timed out after 300ms"
            ),
            failure(
                &site,
                "/fault/short-body",
                "truncated",
                "connection closed after 100 of 500 body bytes"
            ),
        ]
    );
}

#[test]
fn bodies_over_the_cap_fail_with_a_reason() {
    let site = DemoSite::start_default().unwrap();
    let capped = Config {
        client: stage3_crawler::http::ClientConfig {
            max_body: 100 * 1024,
            ..config().client
        },
        ..leaf_config()
    };
    // Chunked (256 KiB) and Content-Length (about 2 KB, with a 1 KB cap).
    let c = crawl(&[site.url("/framing/large.html")], capped.clone());
    let too_large = |path: &str, limit: u64| FetchStatistic {
        status: Some(200),
        content_type: Some("text/html".into()),
        ..failure(
            &site,
            path,
            "too_large",
            &format!("body larger than the {limit}-byte limit (--max-body)"),
        )
    };
    assert_eq!(c.stats, [too_large("/framing/large.html", 102_400)]);
    let tiny = Config {
        client: stage3_crawler::http::ClientConfig {
            max_body: 1024,
            ..config().client
        },
        ..leaf_config()
    };
    let c = crawl(&[site.url("/pages/a/0.html")], tiny);
    assert_eq!(c.stats, [too_large("/pages/a/0.html", 1024)]);
    assert_eq!(
        c.logged(Level::Warn),
        [format!(
            "{} failed: body larger than the 1024-byte limit (--max-body)",
            site.url("/pages/a/0.html")
        )]
    );
}

#[test]
fn other_schemes_are_refused_clearly() {
    // Not linked from anywhere we crawl, so give it as a root through the
    // library (the command line refuses it as a usage error).
    let url = "ftp://127.0.0.1/pub/".to_string();
    let c = crawl(std::slice::from_ref(&url), config());
    assert_eq!(
        c.stats,
        [FetchStatistic::failure(
            url,
            Exception {
                kind: "unsupported",
                message: "ftp URLs are not supported".into()
            }
        )]
    );
    assert!(!c.any_root_fetched);
}

#[test]
fn a_refused_connection_is_retried_then_fails() {
    // Port 1 on localhost: nothing listens there.
    let c = crawl(
        &["http://127.0.0.1:1/".to_string()],
        Config {
            max_tries: 2,
            ..config()
        },
    );
    let stat = &c.stats[0];
    assert_eq!(c.stats.len(), 1);
    assert_eq!(stat.exception.as_ref().map(|e| e.kind), Some("connect"));
    assert!(
        stat.exception
            .as_ref()
            .unwrap()
            .message
            .starts_with("connect to 127.0.0.1:1 failed: "),
        "{stat:?}"
    );
    assert_eq!(
        c.logged(Level::Error),
        ["http://127.0.0.1:1/ failed after 2 tries"]
    );
}

#[test]
fn resolve_pins_names_to_addresses() {
    let site = DemoSite::start_default().unwrap();
    let port = site.addr().port();
    let mut config = leaf_config();
    config.client.resolve = [(("www.example.test".to_string(), port), site.addr().ip())].into();
    let root = format!("http://www.example.test:{port}/redirect/chain/4");
    let c = crawl(&[root], config);
    let urls: Vec<String> = sorted(c.stats.clone()).into_iter().map(|s| s.url).collect();
    assert_eq!(
        urls,
        [
            "/redirect/chain/4",
            "/redirect/chain/5",
            "/redirect/target.html"
        ]
        .map(|p| format!("http://www.example.test:{port}{p}"))
    );
}

#[test]
fn max_pages_caps_the_crawl() {
    let site = DemoSite::start_default().unwrap();
    let c = crawl(
        &[site.url("/")],
        Config {
            max_pages: Some(5),
            ..config()
        },
    );
    assert_eq!(c.stats.len(), 5);
    assert_eq!(site.counters().requests, 5);
}

#[test]
fn every_fetched_url_is_a_stat_even_on_failure() {
    let site = DemoSite::start_default().unwrap();
    let roots: Vec<String> = ["/", "/fault/drop", "/fault/garbage"]
        .iter()
        .map(|p| site.url(p))
        .collect();
    let c: Crawl = crawl(
        &roots,
        Config {
            max_tries: 1,
            ..config()
        },
    );
    assert_eq!(c.stats.len(), site.expected().len() + 2);
    assert_eq!(c.stats.iter().filter(|s| s.exception.is_some()).count(), 2);
}

/// Crawls the default site with `keep_records` as given; what the sinks
/// got, and the crawler.
fn crawl_with_sinks(
    site: &DemoSite,
    keep_records: bool,
) -> (
    std::rc::Rc<Crawler>,
    Vec<FetchStatistic>,
    Vec<stage3_crawler::skipped::Skipped>,
) {
    use std::cell::RefCell;
    use std::rc::Rc;
    let root = Url::parse(&site.url("/")).unwrap();
    let crawler = Rc::new(
        Crawler::new(
            vec![root],
            Config {
                keep_records,
                ..config()
            },
        )
        .unwrap(),
    );
    let stats = Rc::new(RefCell::new(Vec::new()));
    let skips = Rc::new(RefCell::new(Vec::new()));
    let (s, k) = (Rc::clone(&stats), Rc::clone(&skips));
    crawler.on_stat(move |stat| s.borrow_mut().push(stat.clone()));
    crawler.on_skip(move |skip| k.borrow_mut().push(skip.clone()));
    let runtime = runtime::Runtime::new().unwrap();
    let outcome = runtime.block_on(crawler.crawl()).unwrap();
    assert_eq!(outcome, Outcome::Completed);
    let (stats, skips) = (stats.take(), skips.take());
    (crawler, stats, skips)
}

#[test]
fn without_kept_records_the_sinks_get_everything_and_the_tally_is_exact() {
    let site = DemoSite::start_default().unwrap();
    let (kept, kept_stats, kept_skips) = crawl_with_sinks(&site, true);
    let (streamed, stats, skips) = crawl_with_sinks(&site, false);
    // Nothing kept per URL...
    assert!(streamed.done().is_empty() && streamed.skipped().is_empty());
    // ...and nothing lost: the sinks got every URL, as when records are
    // kept, and the tally (all the summary needs) is the same.
    let urls = |stats: &[FetchStatistic]| -> BTreeSet<String> {
        stats.iter().map(|s| s.url.clone()).collect()
    };
    let want: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    assert_eq!(urls(&stats), want);
    assert_eq!(urls(&kept_stats), want);
    assert_eq!(stats.len(), want.len());
    assert_eq!(skips.len(), kept_skips.len());
    assert_eq!(*kept.done(), kept_stats);
    let tally = streamed.tally();
    assert_eq!(tally, kept.tally());
    assert_eq!(
        tally,
        stage3_crawler::tally::Tally::of(&kept_stats, &kept_skips)
    );
    assert_eq!(tally.done, want.len());
    assert_eq!(streamed.done_count(), want.len());
    assert!(streamed.any_root_fetched());
    assert_eq!(streamed.seen(), kept.seen());
}

#[test]
fn the_text_report_sorted_on_disk_is_the_one_sorted_in_memory() {
    use stage3_crawler::reporting::{self, TextReport};
    let site = DemoSite::start_default().unwrap();
    let (crawler, stats, skips) = crawl_with_sinks(&site, true);
    let summary = reporting::summary(&crawler, Outcome::Completed);
    let write = |memory: usize| {
        let mut report = TextReport::with_memory(true, memory);
        for stat in &stats {
            report.stat(stat).unwrap();
        }
        for skip in &skips {
            report.skip(skip).unwrap();
        }
        let mut out = Vec::new();
        report.write(&summary, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // All but the date, which is the time of writing.
        text.lines()
            .filter(|l| !l.starts_with("Date: "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // A budget of nothing writes every line to a run of its own.
    let on_disk = write(0);
    assert_eq!(on_disk, write(usize::MAX));
    // The URL lines are the statistics' lines, in the order of their URLs.
    let mut by_url = stats.clone();
    by_url.sort_by(|a, b| a.url.cmp(&b.url));
    let want: Vec<String> = by_url
        .iter()
        .map(|stat| {
            let line = reporting::classify(stat, &mut Default::default());
            reporting::format_line(stat, line)
        })
        .collect();
    assert_eq!(on_disk[0], "*** Report ***");
    assert_eq!(on_disk[1..=want.len()], want[..]);
    assert!(
        on_disk[want.len() + 1].starts_with("Skipped ("),
        "{on_disk:?}"
    );
}
