//! Crawler traps end by themselves: a site that makes up URLs forever costs
//! a bounded crawl, and every URL it made up is in the report as skipped.

mod common;

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::thread;

use demo_site::testing::read_request;
use stage3_crawler::traps::TrapLimits;
use stage3_crawler::{Config, SkipReason};

/// A site of endless URLs: `/` links to `/q?id=1` .. `/q?id=20`, and
/// `/q?id=N` to twenty children of its own; `/a/` links to `a/` (which
/// nests forever) and to one 3,000-byte URL.
fn trap_site() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                while let Some(request) = read_request(&mut reader) {
                    let target = request.split(' ').nth(1).unwrap_or("/");
                    let body = page(target);
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn page(target: &str) -> String {
    let link = |href: String| format!("<a href=\"{href}\">x</a>");
    let children = |n: u64| -> String {
        (20 * n + 1..=20 * n + 20)
            .map(|id| link(format!("/q?id={id}")))
            .collect()
    };
    if let Some(id) = target.strip_prefix("/q?id=") {
        return children(id.parse().unwrap_or(0));
    }
    if target.starts_with("/a/") {
        return link("a/".into()) + &link(format!("/long/{}", "x".repeat(3000)));
    }
    children(0) + &link("/a/".into())
}

#[test]
fn an_endless_site_ends_with_every_made_up_url_skipped() {
    let addr = trap_site();
    let config = Config {
        traps: TrapLimits {
            max_query_variants: 50,
            ..TrapLimits::default()
        },
        ..common::config()
    };
    let root = format!("http://{addr}/");
    let c = common::crawl(&[root], config);
    let fetched = c.stats.len();
    let mut skipped: BTreeMap<SkipReason, usize> = BTreeMap::new();
    for s in &c.skipped {
        *skipped.entry(s.reason).or_default() += 1;
    }
    // `/`, 50 of the query pages, and /a/, /a/a/, /a/a/a/.
    assert_eq!(fetched, 1 + 50 + 3);
    // Seen: `/` and its 20 + /a/; 20 children of each of the 50 query
    // pages; /a/a/a/a/ and the long URL (one, however many pages link it).
    assert_eq!(
        skipped,
        BTreeMap::from([
            (SkipReason::UrlTooLong, 1),
            (SkipReason::PathRepetition, 1),
            (SkipReason::QueryVariants, 20 + 50 * 20 - 50),
        ])
    );
    assert_eq!(c.seen, fetched + 1 + 1 + 970);
}
