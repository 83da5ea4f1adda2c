//! The crawler against the demo site: exactly the URLs the site says a
//! crawler finds.

mod common;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use common::{crawl_from, url};
use demo_site::{DemoSite, SiteConfig};
use stage1_callbacks::{Options, Outcome, crawl};

#[test]
fn crawls_exactly_the_demo_site() {
    let site = DemoSite::start_default().unwrap();
    let expected = site.expected();
    // The two pages whose bodies are not UTF-8 are fetched and not searched
    // for links, each with this reason; the PNG (not UTF-8 either) is not a
    // page, and is only fetched.
    let unsearched: BTreeSet<Outcome> = [
        "/charset/header-windows-1252.html",
        "/charset/meta-latin1.html",
    ]
    .into_iter()
    .map(|path| Outcome::Unsearched(url(&site.url(path)), "body is not UTF-8".into()))
    .collect();
    assert_eq!(expected.iter().filter(|e| !e.body_is_utf8).count(), 3);
    // Only the Latin-1 page links here, and we cannot read the Latin-1 page
    // as UTF-8, so a crawler that skips such pages never finds this URL.
    let unreachable = site.url("/charset/from-latin1.html");
    let fetched: BTreeSet<String> = expected
        .iter()
        .filter(|e| e.url != unreachable)
        .map(|e| e.url.clone())
        .collect();
    assert_eq!(fetched.len() + 1, expected.len());

    let root = site.url("/");
    let report = crawl_from(&root, Duration::from_secs(10));
    let (got_fetched, got_failed) = report.split();
    assert_eq!(got_fetched, fetched);
    assert_eq!(got_failed, BTreeSet::new());
    let got_unsearched: BTreeSet<Outcome> = report
        .outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Unsearched(..)))
        .cloned()
        .collect();
    assert_eq!(got_unsearched, unsearched);
    // Every URL once, and `seen_urls` is exactly the URLs we fetched.
    assert_eq!(report.outcomes.len(), fetched.len());
    assert_eq!(report.seen_urls, report.outcomes.len());
    // The root finishes first: every other URL is found through it.
    assert_eq!(report.outcomes[0], Outcome::Fetched(url(&root)));
    // The root's links were all in `urls_todo` at once.
    assert!(report.concurrency > 1, "{}", report.concurrency);
    // One request per URL, each on its own connection (HTTP/1.0).
    let counters = site.counters();
    assert_eq!(counters.requests, report.outcomes.len() as u64);
    assert_eq!(counters.connections, report.outcomes.len() as u64);
    assert!(counters.per_path.values().all(|&n| n == 1));
}

#[test]
fn every_fetcher_is_started_at_once() {
    // With every response delayed, the root's links are all in flight
    // together: no limit, as in the chapter. The server saw them at once.
    let site = DemoSite::start(SiteConfig {
        pages: 20,
        fan_out: 2,
        delay: Duration::from_millis(50),
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl_from(&site.url("/"), Duration::from_secs(10));
    let expected = site.expected().len() as u64;
    assert_eq!(report.seen_urls as u64, expected - 1);
    assert!(site.counters().peak_in_flight > 1);
    assert!(report.concurrency > 1);
}

#[test]
fn on_outcome_sees_each_outcome_as_it_finishes() {
    let site = DemoSite::start_default().unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seen2 = Rc::clone(&seen);
    let report = crawl(url(&site.url("/")), Options::default(), move |outcome| {
        seen2.borrow_mut().push(outcome.clone())
    })
    .unwrap();
    assert_eq!(*seen.borrow(), report.outcomes);
}

#[test]
fn a_page_with_no_same_host_links_is_the_whole_crawl() {
    let site = DemoSite::start_default().unwrap();
    // notes.txt is text/plain: the href in it is not a link.
    let notes = site.url("/notes.txt");
    let report = crawl_from(&notes, Duration::from_secs(10));
    assert_eq!(report.outcomes, [Outcome::Fetched(url(&notes))]);
    assert_eq!((report.seen_urls, report.concurrency), (1, 1));
    // A redirect to another host: its body links only there.
    let offsite = site.url("/redirect/offsite");
    let report = crawl_from(&offsite, Duration::from_secs(10));
    assert_eq!(report.outcomes, [Outcome::Fetched(url(&offsite))]);
}

#[test]
fn base_href_and_xml_links_are_followed() {
    let site = DemoSite::start_default().unwrap();
    let (fetched, _) = crawl_from(&site.url("/"), Duration::from_secs(10)).split();
    for path in [
        "/pages/b/base-target.html",
        "/content/from-feed.html",
        "/content/from-xhtml.html",
    ] {
        assert!(fetched.contains(&site.url(path)), "{path}");
    }
    assert!(!fetched.iter().any(|u| u.contains("/not-a-link/")));
}
