//! A sitemap bomb (issue 33): an index of 100,000 sitemaps of 60,000 URLs
//! each, read with `--max-pages 1000`. The crawl takes what it can use (the
//! sitemap budget is `--max-pages` here), reads no more sitemaps once it is
//! spent, ends, and stays within 200 MB. The crawl runs in a child process
//! (this test binary, run again), so that the peak of the process (`VmHWM`)
//! is the crawl's alone.

mod common;

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use demo_site::testing::read_request;
use stage3_crawler::{Crawler, Outcome, SkipReason};
use url::Url;

const CHILD: &str = "SITEMAP_BOMB_CHILD";

/// Serves the bomb, counting requests by kind of path.
fn bomb() -> (String, Arc<Mutex<BTreeMap<String, usize>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(BTreeMap::new()));
    let counts = Arc::clone(&seen);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counts = Arc::clone(&counts);
            thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let line = read_request(&mut reader).unwrap_or_default();
                let path = line.split(' ').nth(1).unwrap_or_default().to_string();
                let kind = match path.as_str() {
                    "/" | "/robots.txt" | "/sitemap.xml" => path.clone(),
                    p if p.starts_with("/sm/") => "/sm/".into(),
                    _ => "/p/".into(),
                };
                *counts.lock().unwrap().entry(kind.clone()).or_insert(0) += 1;
                let (status, kind_header, body) = match kind.as_str() {
                    "/robots.txt" => ("404 Not Found", "text/plain", String::new()),
                    "/" => ("200 OK", "text/html", "<p>no links".to_string()),
                    "/sitemap.xml" => {
                        let mut xml = String::from("<sitemapindex>");
                        for n in 0..100_000 {
                            xml.push_str(&format!(
                                "<sitemap><loc>http://{addr}/sm/{n}.xml</loc></sitemap>"
                            ));
                        }
                        xml.push_str("</sitemapindex>");
                        ("200 OK", "application/xml", xml)
                    }
                    "/sm/" => {
                        let mut xml = String::from("<urlset>");
                        for n in 0..60_000 {
                            xml.push_str(&format!(
                                "<url><loc>http://{addr}/p{path}-{n}</loc></url>"
                            ));
                        }
                        xml.push_str("</urlset>");
                        ("200 OK", "application/xml", xml)
                    }
                    _ => ("200 OK", "text/plain", "ok".to_string()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: {kind_header}\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (format!("http://{addr}/"), seen)
}

/// The child: crawls the bomb and prints what came of it.
fn child() {
    let (root, seen) = bomb();
    let mut config = common::config();
    config.sitemaps = true;
    config.max_pages = Some(1000);
    config.polite.robots = true;
    // One request at a time to the host: which sitemaps are read before
    // the budget is spent is then the queue's order, not a race (with
    // eight at a time, up to eight are in flight when the first one spends
    // it).
    config.polite.per_host = 1;
    let runtime = runtime::Runtime::new().unwrap();
    let crawler = Rc::new(Crawler::new(vec![Url::parse(&root).unwrap()], config).unwrap());
    let bounded = runtime::timeout(Duration::from_secs(20), crawler.crawl());
    let outcome = runtime.block_on(bounded).unwrap();
    if outcome.is_err() {
        println!(
            "DEBUG done={} todo={} inflight={} outcomes={} seen={} skipped={} reqs={:?}",
            crawler.done_count(),
            crawler.todo(),
            crawler.in_flight(),
            crawler.sitemap_outcomes().len(),
            crawler.seen(),
            crawler.skipped().len(),
            seen.lock().unwrap()
        );
    }
    let outcome = outcome.expect("the crawl ended");
    assert_eq!(outcome, Outcome::Completed);
    let tally = crawler.tally();
    let skipped: BTreeMap<SkipReason, usize> =
        crawler.skipped().iter().fold(BTreeMap::new(), |mut m, s| {
            *m.entry(s.reason).or_default() += 1;
            m
        });
    let outcomes = crawler.sitemap_outcomes();
    let not_read = outcomes
        .iter()
        .filter(|o| o.outcome == "not read: the sitemap budget is spent")
        .count();
    let read: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.outcome != "not read: the sitemap budget is spent")
        .map(|o| o.outcome.as_str())
        .collect();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap();
    println!("\nbomb done: {}", tally.done);
    println!("bomb skipped: {skipped:?}");
    println!("bomb read: {read:?}");
    println!("bomb not read: {not_read}");
    println!("bomb requests: {:?}", seen.lock().unwrap());
    println!("bomb peak: {peak}");
}

#[test]
fn a_sitemap_bomb_is_read_only_as_far_as_max_pages_needs() {
    if std::env::var(CHILD).is_ok() {
        return child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "a_sitemap_bomb_is_read_only_as_far_as_max_pages_needs",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |name: &str| {
        let prefix = format!("bomb {name}: ");
        stdout
            .lines()
            .find_map(|l| l.split_once(&prefix).map(|(_, rest)| rest.to_string()))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"))
    };
    // The root and 999 pages of the first sitemap: --max-pages counts the
    // roots. The budget of 1,000 sitemap URLs took the root again (seen
    // already) and 999 new ones; the 1,000th sitemap URL is over max-pages.
    assert_eq!(line("done"), "1000");
    assert_eq!(line("skipped"), "{MaxPages: 1}");
    assert_eq!(
        line("read"),
        r#"["an index of 50000 sitemaps, 50000 past the limit dropped", "50000 URLs, 49000 past the sitemap budget dropped, 10000 past the limit dropped"]"#
    );
    // 1,000 sitemaps queued at most, the index among them: 998 not read.
    assert_eq!(line("not read"), "998");
    assert_eq!(
        line("requests"),
        r#"{"/": 1, "/p/": 999, "/robots.txt": 1, "/sitemap.xml": 1, "/sm/": 1}"#
    );
    let peak_kb: u64 = line("peak").parse().unwrap();
    assert!(peak_kb < 200 * 1024, "peak {peak_kb} kB");
}
