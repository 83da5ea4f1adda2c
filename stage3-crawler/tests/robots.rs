//! robots.txt against real servers: fetched first and once per origin,
//! obeyed to the letter (a disallowed path is never requested), each kind
//! of answer meaning what RFC 9309 says, and Crawl-delay honoured.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::static_site::{Answer, StaticSite};
use stage3_crawler::politeness::PoliteConfig;
use stage3_crawler::{Config, SkipReason};

fn polite() -> Config {
    Config {
        polite: PoliteConfig {
            per_host: 8,
            robots: true,
            ..PoliteConfig::default()
        },
        ..common::config()
    }
}

fn skipped_paths(site: &StaticSite, crawl: &common::Crawl) -> BTreeSet<(String, SkipReason)> {
    let prefix = site.url("");
    crawl
        .skipped
        .iter()
        .map(|s| (s.url.strip_prefix(&prefix).unwrap().to_string(), s.reason))
        .collect()
}

fn fetched_paths(site: &StaticSite, crawl: &common::Crawl) -> BTreeSet<String> {
    let prefix = site.url("");
    crawl
        .urls()
        .iter()
        .map(|u| u.strip_prefix(&prefix).unwrap().to_string())
        .collect()
}

fn paths(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|p| p.to_string()).collect()
}

const ROBOTS: &str = "\
User-agent: *
Disallow: /

User-agent: stage3-crawler
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
";

#[test]
fn disallowed_urls_are_never_requested_and_each_is_reported() {
    let site = StaticSite::start(vec![
        ("/robots.txt", Answer::text(200, ROBOTS)),
        (
            "/",
            Answer::links(&[
                "/a",
                "/private/secret",
                "/private/open",
                "/f.pdf",
                "/f.pdf?x",
            ]),
        ),
        ("/a", Answer::links(&["/private/secret", "/b.pdf"])),
        ("/private/open", Answer::links(&[])),
        ("/f.pdf?x", Answer::text(200, "pdf")),
    ]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert_eq!(
        fetched_paths(&site, &crawl),
        paths(&["/", "/a", "/private/open", "/f.pdf?x"])
    );
    assert_eq!(
        skipped_paths(&site, &crawl),
        BTreeSet::from([
            ("/private/secret".to_string(), SkipReason::Robots),
            ("/f.pdf".to_string(), SkipReason::Robots),
            ("/b.pdf".to_string(), SkipReason::Robots),
        ])
    );
    // robots.txt first, once; then only allowed paths, each once.
    let requests = site.requests();
    assert_eq!(requests[0], "/robots.txt");
    let mut rest = requests[1..].to_vec();
    rest.sort();
    assert_eq!(rest, ["/", "/a", "/f.pdf?x", "/private/open"]);
    assert_eq!(crawl.seen, 7);
}

#[test]
fn each_answer_means_what_the_rfc_says() {
    // 5xx: complete disallow, even for the root.
    let site = StaticSite::start(vec![
        ("/robots.txt", Answer::text(503, "busy")),
        ("/", Answer::links(&["/a"])),
    ]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert!(crawl.stats.is_empty());
    assert_eq!(
        skipped_paths(&site, &crawl),
        BTreeSet::from([("/".to_string(), SkipReason::Robots)])
    );
    assert_eq!(site.requests(), ["/robots.txt"]);

    // 4xx: no rules at all (a robots.txt request is not a statistic).
    let site = StaticSite::start(vec![("/", Answer::links(&["/a"]))]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert_eq!(fetched_paths(&site, &crawl), paths(&["/", "/a"]));
    assert_eq!(site.requests()[0], "/robots.txt");

    // Redirects are followed, here to another origin's file.
    let other = StaticSite::start(vec![(
        "/rules.txt",
        Answer::text(200, "User-agent: *\nDisallow: /a\n"),
    )]);
    let site = StaticSite::start(vec![
        (
            "/robots.txt",
            Answer::redirect(301, &other.url("/rules.txt")),
        ),
        ("/", Answer::links(&["/a", "/b"])),
    ]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert_eq!(fetched_paths(&site, &crawl), paths(&["/", "/b"]));
    assert_eq!(other.requests(), ["/rules.txt"]);

    // More than five redirects: no robots.txt, so no rules.
    let site = StaticSite::start(vec![
        ("/robots.txt", Answer::redirect(302, "/robots.txt")),
        ("/", Answer::links(&[])),
    ]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert_eq!(fetched_paths(&site, &crawl), paths(&["/"]));
    assert_eq!(site.requests().len(), 6 + 1);
}

#[test]
fn an_unreachable_robots_txt_fails_the_origins_urls_with_its_error() {
    // Nothing listens: robots.txt cannot be fetched, and the root fails
    // with that same error, not a made-up "disallowed".
    let (_socket, addr) = demo_site::testing::refusing_addr().unwrap();
    let root = format!("http://{addr}/");
    let crawl = common::crawl(std::slice::from_ref(&root), polite());
    let stat = crawl.stat(&root);
    let exception = stat.exception.as_ref().expect("a failure");
    assert_eq!(exception.kind, "connect");
    assert!(exception.message.contains("refused"), "{exception:?}");
    assert!(crawl.skipped.is_empty());
    let [outcome] = crawl.robots.as_slice() else {
        panic!("{:?}", crawl.robots)
    };
    assert_eq!(outcome.status, None);
    assert!(outcome.verdict.starts_with("unreachable: "), "{outcome:?}");
}

#[test]
fn crawl_delay_spaces_the_requests() {
    let site = StaticSite::start(vec![
        (
            "/robots.txt",
            Answer::text(200, "User-agent: *\nCrawl-delay: 0.15\n"),
        ),
        ("/", Answer::links(&["/a", "/b", "/c"])),
        ("/a", Answer::links(&[])),
        ("/b", Answer::links(&[])),
        ("/c", Answer::links(&[])),
    ]);
    let crawl = common::crawl(&[site.url("/")], polite());
    assert_eq!(crawl.urls().len(), 4);
    let starts: Vec<_> = site.arrivals().into_iter().map(|(at, _)| at).collect();
    assert_eq!(starts.len(), 5);
    for gap in starts.windows(2).map(|w| w[1] - w[0]) {
        assert!(gap >= Duration::from_millis(150), "{gap:?}");
    }
}

#[test]
fn a_huge_crawl_delay_is_cut_to_the_maximum_and_said_so() {
    let site = StaticSite::start(vec![
        (
            "/robots.txt",
            Answer::text(200, "User-agent: *\nCrawl-delay: 99999999\n"),
        ),
        ("/", Answer::links(&["/a"])),
        ("/a", Answer::links(&[])),
    ]);
    let mut config = polite();
    config.polite.max_crawl_delay = Duration::from_millis(100);
    let roots = [site.url("/")];
    let crawl = common::crawl(&roots, config);
    assert_eq!(crawl.urls().len(), 2);
    let starts: Vec<_> = site.arrivals().into_iter().map(|(at, _)| at).collect();
    for gap in starts.windows(2).map(|w| w[1] - w[0]) {
        assert!(gap >= Duration::from_millis(100), "{gap:?}");
    }
    let [outcome] = crawl.robots.as_slice() else {
        panic!("{:?}", crawl.robots)
    };
    assert_eq!(outcome.crawl_delay, Some(Duration::from_secs(99_999_999)));
    assert!(outcome.capped);
    assert_eq!(outcome.status, Some(200));
}
