//! `--max-depth`: exact depths even when the long path is found first.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use common::static_site::{Answer, StaticSite};
use stage3_crawler::{Config, SkipReason};

fn links(delay: Duration, to: &[&str]) -> Answer {
    Answer::links(to).after(delay)
}

const SLOW: Duration = Duration::from_millis(300);
const FAST: Duration = Duration::ZERO;

fn crawl(addr: SocketAddr, max_depth: u32) -> common::Crawl {
    let config = Config {
        max_depth: Some(max_depth),
        ..common::config()
    };
    common::crawl(&[format!("http://{addr}/")], config)
}

fn fetched(addr: SocketAddr, crawl: &common::Crawl) -> BTreeSet<String> {
    let prefix = format!("http://{addr}");
    crawl
        .urls()
        .into_iter()
        .map(|u| u.strip_prefix(&prefix).unwrap().to_string())
        .collect()
}

fn skipped(addr: SocketAddr, crawl: &common::Crawl) -> BTreeSet<(String, SkipReason)> {
    let prefix = format!("http://{addr}");
    crawl
        .skipped
        .iter()
        .map(|s| (s.url.strip_prefix(&prefix).unwrap().to_string(), s.reason))
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

#[test]
fn a_url_found_first_by_a_long_path_gets_its_short_depth() {
    // / links a slow /a and a fast /b; /b -> /c -> /d, and /a -> /d. The
    // fast path finds /d at depth 3 long before the slow /a says it is at
    // depth 2.
    let addr = StaticSite::start(vec![
        ("/", links(FAST, &["/a", "/b"])),
        ("/a", links(SLOW, &["/d"])),
        ("/b", links(FAST, &["/c"])),
        ("/c", links(FAST, &["/d"])),
        ("/d", links(FAST, &["/e"])),
        ("/e", links(FAST, &["/f"])),
        ("/f", links(FAST, &[])),
    ])
    .addr;
    // Fetched at depth 3 through /c, /d would give /e depth 4; it is 3.
    let three = crawl(addr, 3);
    assert_eq!(
        fetched(addr, &three),
        set(&["/", "/a", "/b", "/c", "/d", "/e"])
    );
    assert_eq!(
        skipped(addr, &three),
        BTreeSet::from([("/f".to_string(), SkipReason::Depth)])
    );
    assert_eq!(three.seen, 7);
    // Refused at depth 3, /d comes back when /a finds it at depth 2.
    let two = crawl(addr, 2);
    assert_eq!(fetched(addr, &two), set(&["/", "/a", "/b", "/c", "/d"]));
    assert_eq!(
        skipped(addr, &two),
        BTreeSet::from([("/e".to_string(), SkipReason::Depth)])
    );
    assert_eq!(two.seen, 6);
    let one = crawl(addr, 1);
    assert_eq!(fetched(addr, &one), set(&["/", "/a", "/b"]));
    assert_eq!(
        skipped(addr, &one),
        BTreeSet::from([
            ("/c".to_string(), SkipReason::Depth),
            ("/d".to_string(), SkipReason::Depth)
        ])
    );
    let zero = crawl(addr, 0);
    assert_eq!(fetched(addr, &zero), set(&["/"]));
    assert_eq!(skipped(addr, &zero).len(), 2);
}

#[test]
fn a_redirect_target_has_the_depth_of_the_redirect() {
    // /r (slow) redirects to /x; /p (fast) links /x one level deeper.
    // Through the redirect /x is at depth 1, so /y is at 2, and /z at 3.
    let addr = StaticSite::start(vec![
        ("/", links(FAST, &["/r", "/p"])),
        ("/r", Answer::redirect(302, "/x").after(SLOW)),
        ("/p", links(FAST, &["/x"])),
        ("/x", links(FAST, &["/y"])),
        ("/y", links(FAST, &["/z"])),
        ("/z", links(FAST, &[])),
    ])
    .addr;
    let two = crawl(addr, 2);
    assert_eq!(fetched(addr, &two), set(&["/", "/r", "/p", "/x", "/y"]));
    assert_eq!(
        skipped(addr, &two),
        BTreeSet::from([("/z".to_string(), SkipReason::Depth)])
    );
    // With depth 1, /x is still fetched: /p's link would have refused it.
    let one = crawl(addr, 1);
    assert_eq!(fetched(addr, &one), set(&["/", "/r", "/p", "/x"]));
    assert_eq!(
        skipped(addr, &one),
        BTreeSet::from([("/y".to_string(), SkipReason::Depth)])
    );
}
