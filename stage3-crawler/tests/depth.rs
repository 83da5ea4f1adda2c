//! `--max-depth`: exact depths even when the long path is found first.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use common::static_site::{Answer, StaticSite};
use redis_client::RedisServer;
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

/// / links a slow /a and a fast /b; /b -> /c -> /d, and /a -> /d. The
/// fast path finds /d at depth 3 long before the slow /a says it is at
/// depth 2.
fn long_path_site() -> StaticSite {
    StaticSite::start(vec![
        ("/", links(FAST, &["/a", "/b"])),
        ("/a", links(SLOW, &["/d"])),
        ("/b", links(FAST, &["/c"])),
        ("/c", links(FAST, &["/d"])),
        ("/d", links(FAST, &["/e"])),
        ("/e", links(FAST, &["/f"])),
        ("/f", links(FAST, &[])),
    ])
}

/// /r (slow) redirects to /x; /p (fast) links /x one level deeper.
/// Through the redirect /x is at depth 1, so /y is at 2, and /z at 3.
fn redirect_site() -> StaticSite {
    StaticSite::start(vec![
        ("/", links(FAST, &["/r", "/p"])),
        ("/r", Answer::redirect(302, "/x").after(SLOW)),
        ("/p", links(FAST, &["/x"])),
        ("/x", links(FAST, &["/y"])),
        ("/y", links(FAST, &["/z"])),
        ("/z", links(FAST, &[])),
    ])
}

#[test]
fn a_url_found_first_by_a_long_path_gets_its_short_depth() {
    let addr = long_path_site().addr;
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
    let addr = redirect_site().addr;
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

/// A crawl of the site at `addr` shared by two processes through `redis`
/// (`--frontier`), with `--max-depth max`: what the whole crawl's report
/// says was fetched, and what it skipped and why.
fn shared_crawl(
    addr: SocketAddr,
    redis: &RedisServer,
    max: u32,
) -> (BTreeSet<String>, BTreeSet<(String, String)>) {
    use std::process::Stdio;
    let frontier = redis
        .url(&format!("depth-{}-{max}", addr.port()))
        .to_string();
    let crawler = |args: &[&str]| {
        let mut command = common::stage3();
        command
            .args([
                "--report",
                "json",
                "--max-tasks",
                "3",
                "--frontier",
                &frontier,
            ])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    };
    let root = format!("http://{addr}/");
    let first = crawler(&[&root, "--max-depth", &max.to_string()])
        .spawn()
        .unwrap();
    let joiner = crawler(&[]).spawn().unwrap();
    for process in [first, joiner] {
        let out = process.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    }
    let out = crawler(&["--report-only"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let prefix = format!("http://{addr}");
    let (mut fetched, mut skipped) = (BTreeSet::new(), BTreeSet::new());
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(url) = v["url"].as_str() else {
            continue; // the summary
        };
        let path = url.strip_prefix(&prefix).unwrap().to_string();
        match v["skipped"].as_str() {
            Some(reason) => assert!(skipped.insert((path, reason.to_string()))),
            None => assert!(fetched.insert(path)),
        }
    }
    (fetched, skipped)
}

/// The same crawl alone, in the same terms.
fn alone(addr: SocketAddr, max: u32) -> (BTreeSet<String>, BTreeSet<(String, String)>) {
    let crawl = crawl(addr, max);
    let skipped = skipped(addr, &crawl)
        .into_iter()
        .map(|(path, reason)| (path, reason.name().to_string()))
        .collect();
    (fetched(addr, &crawl), skipped)
}

#[test]
fn shared_through_redis_the_depths_are_those_of_one_process() {
    // Both sites above: the long path found first, and the redirect that
    // brings a URL a level closer (and, at depth 1, back from too deep).
    let (long_path, redirect) = (long_path_site(), redirect_site());
    let redis = RedisServer::start();
    for (addr, depths) in [(long_path.addr, 0..=3), (redirect.addr, 1..=2)] {
        for max in depths {
            let want = alone(addr, max);
            assert!(!want.1.is_empty(), "each case skips something");
            assert_eq!(shared_crawl(addr, &redis, max), want, "--max-depth {max}");
        }
    }
}
