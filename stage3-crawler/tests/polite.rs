//! Per-host limits: the most requests one server sees at once, and no
//! head-of-line blocking: a busy host never holds up the others.

mod common;

use std::collections::BTreeSet;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use demo_site::testing::read_request;
use demo_site::{DemoSite, SiteConfig};
use stage3_crawler::politeness::PoliteConfig;
use stage3_crawler::{Config, SkipReason};

fn per_host(n: usize) -> PoliteConfig {
    PoliteConfig {
        per_host: n,
        ..PoliteConfig::default()
    }
}

fn expected_urls(site: &DemoSite) -> BTreeSet<String> {
    site.expected().into_iter().map(|e| e.url).collect()
}

#[test]
fn one_host_never_sees_more_than_per_host_requests_at_once() {
    // Every page takes a moment, so twenty workers would all be at the
    // server at once if nothing held them back.
    let site = DemoSite::start(SiteConfig {
        page_delay: Some(Duration::from_millis(20)),
        ..SiteConfig::default()
    })
    .unwrap();
    for limit in [1, 3] {
        site.reset_counters();
        let config = Config {
            max_tasks: 20,
            polite: per_host(limit),
            ..common::config()
        };
        let crawl = common::crawl(&[site.url("/")], config);
        assert_eq!(crawl.urls(), expected_urls(&site), "per-host {limit}");
        let counters = site.counters();
        assert_eq!(counters.peak_in_flight, limit as u64, "per-host {limit}");
        // Parking a URL never costs a second request for it.
        assert_eq!(counters.requests, expected_urls(&site).len() as u64);
    }
    site.shutdown();
}

/// A server whose `/` links to `/1` ... `/5`, each of which it answers
/// only once `release` is dropped or sent to. Each request's path goes to
/// the returned channel as it arrives.
fn held_site() -> (SocketAddr, mpsc::Receiver<String>, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (seen_tx, seen_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release = Arc::new(Mutex::new(Some(release_rx)));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (seen, release) = (seen_tx.clone(), Arc::clone(&release));
            thread::spawn(move || serve_held(stream, &seen, &release));
        }
    });
    (addr, seen_rx, release_tx)
}

type Release = Arc<Mutex<Option<mpsc::Receiver<()>>>>;

fn serve_held(stream: TcpStream, seen: &mpsc::Sender<String>, release: &Release) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    while let Some(request) = read_request(&mut reader) {
        let path = request.split(' ').nth(1).unwrap_or("").to_string();
        let _ = seen.send(path.clone());
        let body = if path == "/" {
            (1..=5).map(|n| format!("<a href=/{n}>{n}</a>")).collect()
        } else {
            // Held until the test lets go; then every page answers at once.
            if let Some(rx) = release.lock().unwrap().take() {
                let _ = rx.recv();
            }
            String::new()
        };
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    }
}

#[test]
fn a_busy_host_does_not_hold_up_the_others() {
    // Two servers, and two workers. The held host's first page hangs, and
    // its other four URLs wait for its one slot. With a semaphore taken
    // after `get`, the second worker would wait on that host too, and the
    // demo site would never be crawled: this test would time out.
    let (held, seen, release) = held_site();
    let site = DemoSite::start(SiteConfig {
        pages: 20,
        ..SiteConfig::default()
    })
    .unwrap();
    let roots = [format!("http://{held}/"), site.url("/")];
    let crawler = thread::spawn(move || {
        let config = Config {
            max_tasks: 2,
            polite: per_host(1),
            ..common::config()
        };
        common::crawl(&roots, config)
    });
    // The held host's `/` and one page; the page hangs and holds the slot.
    let first_two: Vec<String> = (0..2)
        .map(|_| seen.recv_timeout(Duration::from_secs(60)).unwrap())
        .collect();
    assert_eq!(first_two[0], "/");
    let expected = expected_urls(&site);
    let everything_served = site.wait_until(Duration::from_secs(60), |c| {
        c.per_path.values().sum::<u64>() >= expected.len() as u64
    });
    // Meanwhile the held host got nothing more: its other four URLs wait.
    let more: Vec<String> = seen.try_iter().collect();
    drop(release);
    assert!(everything_served, "the demo site was held up");
    assert_eq!(more, Vec::<String>::new());
    let crawl = crawler.join().unwrap();
    let held_pages: BTreeSet<String> = (1..=5).map(|n| format!("http://{held}/{n}")).collect();
    let mut all = expected.clone();
    all.insert(format!("http://{held}/"));
    all.extend(held_pages);
    assert_eq!(crawl.urls(), all);
    site.shutdown();
}

fn polite_site(crawl_delay: Option<Duration>) -> DemoSite {
    DemoSite::start(SiteConfig {
        polite: true,
        crawl_delay,
        ..SiteConfig::default()
    })
    .unwrap()
}

/// The command line's politeness, with fewer slots per host than workers.
fn polite_config() -> Config {
    let mut config = Config {
        sitemaps: true,
        polite: PoliteConfig {
            per_host: 4,
            robots: true,
            ..PoliteConfig::default()
        },
        ..common::config()
    };
    // The calendar trap ends after three months: the one linked, and the
    // two it links.
    config.traps.max_query_variants = 3;
    config
}

#[test]
fn the_polite_demo_site_is_crawled_as_its_robots_txt_says() {
    let site = polite_site(None);
    let crawl = common::crawl(&[site.url("/")], polite_config());
    let mut want = expected_urls(&site);
    for path in [
        "/polite/sitemap-only.html",
        "/polite/sitemap-only-child.html",
        "/polite/calendar?month=2026-10",
        "/polite/calendar?month=2026-12",
        "/polite/deep/a/a/",
        "/polite/deep/a/a/a/",
    ] {
        want.insert(site.url(path));
    }
    assert_eq!(crawl.urls(), want);
    let skipped = |reason| -> BTreeSet<String> {
        crawl
            .skipped
            .iter()
            .filter(|s| s.reason == reason)
            .map(|s| s.url.clone())
            .collect()
    };
    let disallowed: BTreeSet<String> = site.expected_disallowed().into_iter().collect();
    assert_eq!(skipped(SkipReason::Robots), disallowed);
    assert_eq!(
        skipped(SkipReason::QueryVariants),
        BTreeSet::from([
            site.url("/polite/calendar?month=2026-09"),
            site.url("/polite/calendar?month=2027-01")
        ])
    );
    assert_eq!(
        skipped(SkipReason::PathRepetition),
        BTreeSet::from([site.url("/polite/deep/a/a/a/a/")])
    );
    // The sitemap's off-host URL is seen, and skipped for its host.
    assert!(skipped(SkipReason::OffHost).contains("http://example.invalid/x.html"));

    let counters = site.counters();
    // robots.txt first and once; a disallowed path never, not even once.
    assert_eq!(counters.request_log[0].1, "/robots.txt");
    assert_eq!(counters.per_path["/robots.txt"], 1);
    for url in &disallowed {
        let target = url.strip_prefix(&site.base_url()).unwrap();
        assert_eq!(
            counters.per_path.get(target),
            None,
            "{target} was requested"
        );
    }
    assert!(counters.peak_in_flight <= 4, "{}", counters.peak_in_flight);

    // Bodies came compressed, and are reported decoded.
    let index = crawl.stat(&site.url("/"));
    assert!(index.wire_size * 2 < index.size, "{index:?}");
    assert_eq!(index.size, common::size(&site, "/"));
    // The bomb stopped at --max-body, with its reason.
    let bomb = crawl.stat(&site.url("/polite/bomb.html"));
    let exception = bomb.exception.as_ref().expect("the bomb fails");
    assert_eq!(exception.kind, "too_large");
    assert!(
        exception.message.contains("compression bomb"),
        "{exception:?}"
    );
    assert_eq!(bomb.status, Some(200));
    // Every URL seen is accounted for once.
    assert_eq!(crawl.seen, crawl.stats.len() + crawl.skipped.len());
}

#[test]
fn a_crawl_delay_spaces_every_request_to_the_host() {
    let delay = Duration::from_millis(40);
    let site = common::crawl_delay_site(delay);
    let crawl = common::crawl(&[site.url("/")], polite_config());
    assert!(crawl.urls().len() > 20);
    let counters = site.counters();
    // With a delay, one request at a time, whatever --per-host says.
    assert_eq!(counters.peak_in_flight, 1);
    let log = counters.request_log;
    assert_eq!(
        log.len(),
        crawl.urls().len() + 3,
        "robots.txt and two sitemaps"
    );
    common::assert_spaced(&log, delay);
}
