//! The crawler against the demo site: exactly the URLs the site says a
//! crawler finds, with both fetchers.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::crawl_from;
use demo_site::DemoSite;
use stage2_coroutines::{Outcome, Style};

#[test]
fn both_styles_crawl_exactly_the_demo_site() {
    let site = DemoSite::start_default().unwrap();
    let expected = site.expected();
    // We search only UTF-8 pages, as stage 1 does: the two others are
    // fetched and not searched, with this reason; the PNG is only fetched.
    let unsearched: BTreeSet<Outcome> = [
        "/charset/header-windows-1252.html",
        "/charset/meta-latin1.html",
    ]
    .into_iter()
    .map(|path| Outcome::Unsearched(common::url(&site.url(path)), "body is not UTF-8".into()))
    .collect();
    assert_eq!(expected.iter().filter(|e| !e.body_is_utf8).count(), 3);
    // Only the Latin-1 page links here, and we cannot read the Latin-1
    // page, so no crawler that skips non-UTF-8 bodies ever sees this URL.
    let unreachable = site.url("/charset/from-latin1.html");
    let fetched: BTreeSet<String> = expected
        .iter()
        .filter(|e| e.url != unreachable)
        .map(|e| e.url.clone())
        .collect();
    let root = site.url("/");

    let mut reports = Vec::new();
    for style in Style::ALL {
        let report = crawl_from(&root, style, Duration::from_secs(10));
        let (got_fetched, got_failed) = report.split();
        assert_eq!(got_fetched, fetched, "{style}");
        assert_eq!(got_failed, BTreeSet::new(), "{style}");
        let got_unsearched: BTreeSet<Outcome> = report
            .outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Unsearched(..)))
            .cloned()
            .collect();
        assert_eq!(got_unsearched, unsearched, "{style}");
        assert_eq!(report.outcomes.len(), fetched.len());
        assert_eq!(report.seen_urls, report.outcomes.len());
        // The root finishes first: every other URL is found through it.
        assert_eq!(report.outcomes[0], Outcome::Fetched(common::url(&root)));
        assert!(report.fetched(&common::url(&root)));
        // The root's links were all in `urls_todo` at once.
        assert!(report.concurrency > 1, "{}", report.concurrency);
        reports.push((got_fetched, got_failed));
    }
    assert_eq!(reports[0], reports[1]);
    // One request per URL: we fetched every URL once, never twice.
    let counters = site.counters();
    assert_eq!(counters.requests, 2 * fetched.len() as u64);
    assert!(
        counters.per_path.values().all(|&n| n == 2),
        "{:?}",
        counters.per_path
    );
}

#[test]
fn a_crawl_of_one_page_with_no_same_host_links_fetches_just_it() {
    let site = DemoSite::start_default().unwrap();
    // notes.txt is text/plain: its one href must not be followed.
    let notes = site.url("/notes.txt");
    for style in Style::ALL {
        let report = crawl_from(&notes, style, Duration::from_secs(10));
        assert_eq!(report.outcomes, [Outcome::Fetched(common::url(&notes))]);
        assert_eq!((report.seen_urls, report.concurrency), (1, 1));
    }
}

#[test]
fn at_most_max_tasks_fetchers_run_at_once() {
    // A site of a thousand pages, each answered after a pause, so that
    // fetchers overlap as much as the limit lets them.
    let site = DemoSite::start(demo_site::SiteConfig {
        pages: 1000,
        page_delay: Some(Duration::from_millis(2)),
        ..demo_site::SiteConfig::default()
    })
    .unwrap();
    let root = site.url("/");
    let want: BTreeSet<String> = site
        .expected()
        .iter()
        .filter(|e| e.url != site.url("/charset/from-latin1.html"))
        .map(|e| e.url.clone())
        .collect();
    for style in Style::ALL {
        site.reset_counters();
        let options = stage2_coroutines::Options {
            style,
            timeout: Duration::from_secs(30),
            max_tasks: 5,
        };
        let report = runtime::run_until_complete(stage2_coroutines::crawl(
            common::url(&root),
            options,
            |_| {},
        ))
        .unwrap();
        let (fetched, _) = report.split();
        assert_eq!(fetched, want, "{style}");
        // Five ran at once (the root's links are many), never more.
        assert_eq!(report.concurrency, 5, "{style}");
        assert!(site.counters().peak_in_flight <= 5, "{style}");
        assert_eq!(site.counters().requests as usize, report.outcomes.len());
    }
}
