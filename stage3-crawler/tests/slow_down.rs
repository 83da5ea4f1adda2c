//! "Slow down": hosts that answer 429 or 503 are asked again only after
//! the wait they ask for (`Retry-After`), or after a backoff that doubles
//! while they keep saying it and starts over when they answer; the other
//! hosts go on meanwhile, and the report names every wait. The waits are
//! read as lower bounds from the servers' own logs.

mod common;

use std::time::Duration;

use common::static_site::{Answer, StaticSite};
use common::{config, crawl};
use stage3_crawler::Config;

/// A crawl with the per-host lines on.
fn polite() -> Config {
    let mut c = config();
    c.polite.per_host = 4;
    c
}

/// When `path` was asked for, each time, in the server's log.
fn arrivals(site: &StaticSite, path: &str) -> Vec<std::time::Instant> {
    site.arrivals()
        .into_iter()
        .filter(|(_, p)| p == path)
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn retry_after_pauses_its_host_while_the_others_go_on() {
    let slow = StaticSite::start(vec![
        ("/", Answer::links(&["/a"])),
        (
            "/a",
            Answer::text(429, "slow down")
                .with_header("Retry-After", "2")
                .then(1, Answer::links(&[])),
        ),
    ]);
    let other = StaticSite::start(vec![
        ("/", Answer::links(&["/1", "/2", "/3"])),
        ("/1", Answer::links(&[])),
        ("/2", Answer::links(&[])),
        ("/3", Answer::links(&[])),
    ]);
    let c = crawl(&[slow.url("/"), other.url("/")], polite());

    // /a came in the end, asked twice, the second time two seconds or more
    // after the first, by the server's own clock.
    assert_eq!(c.stat(&slow.url("/a")).status, Some(200));
    let asked = arrivals(&slow, "/a");
    assert_eq!(asked.len(), 2);
    assert!(asked[1] - asked[0] >= Duration::from_secs(2), "{asked:?}");
    // The other host did not wait for it: all of its pages came before.
    let last_other = other.arrivals().last().unwrap().0;
    assert!(last_other < asked[1]);
    assert_eq!(c.stats.len(), 6);

    let wait = &c.waits[..];
    assert_eq!(wait.len(), 1);
    assert_eq!(wait[0].host, format!("127.0.0.1:{}", slow.addr.port()));
    assert_eq!(wait[0].url, slow.url("/a"));
    assert_eq!(wait[0].why, "429 with Retry-After: 2");
    assert_eq!(wait[0].wait, Duration::from_secs(2));
}

#[test]
fn without_retry_after_the_host_backs_off_and_recovers() {
    let site = StaticSite::start(vec![
        ("/", Answer::links(&["/flaky"])),
        (
            "/flaky",
            Answer::text(503, "busy").then(2, Answer::links(&["/after"])),
        ),
        (
            "/after",
            Answer::text(503, "busy").then(1, Answer::links(&[])),
        ),
    ]);
    let c = crawl(&[site.url("/")], polite());
    assert_eq!(c.stat(&site.url("/flaky")).status, Some(200));
    assert_eq!(c.stat(&site.url("/after")).status, Some(200));

    let why: Vec<(&str, &str)> = c
        .waits
        .iter()
        .map(|w| (w.url.rsplit('/').next().unwrap(), w.why.as_str()))
        .collect();
    // The backoff doubled while /flaky said 503, and started over once the
    // host had answered.
    assert_eq!(
        why,
        [
            ("flaky", "503 without Retry-After (backoff 1s)"),
            ("flaky", "503 without Retry-After (backoff 2s)"),
            ("after", "503 without Retry-After (backoff 1s)"),
        ]
    );
    // Each wait is at least half its backoff ("equal jitter"), by the
    // server's clock too.
    let flaky = arrivals(&site, "/flaky");
    assert_eq!(flaky.len(), 3);
    assert!(flaky[1] - flaky[0] >= Duration::from_millis(500));
    assert!(flaky[2] - flaky[1] >= Duration::from_secs(1));
    for (w, half) in c.waits.iter().zip([500, 1000, 500]) {
        assert!(w.wait >= Duration::from_millis(half), "{w}");
        assert!(w.wait <= Duration::from_millis(2 * half), "{w}");
    }
}

#[test]
fn a_wait_past_the_cap_fails_and_a_url_waits_three_times_at_most() {
    let site = StaticSite::start(vec![
        ("/", Answer::links(&["/later", "/never"])),
        (
            "/later",
            Answer::text(429, "come back in an hour").with_header("Retry-After", "3600"),
        ),
        // Always 503, with a wait of nothing: three waits, then its 503.
        (
            "/never",
            Answer::text(503, "down").with_header("Retry-After", "0"),
        ),
    ]);
    let c = crawl(&[site.url("/")], polite());
    let later = c.stat(&site.url("/later"));
    assert_eq!(later.status, Some(429));
    assert_eq!(
        later
            .exception
            .as_ref()
            .map(|e| (e.kind, e.message.as_str())),
        Some((
            "slow_down",
            "the server answered 429 and asked to wait 3600s (Retry-After), longer than \
             --max-crawl-delay (30s)"
        ))
    );
    let never = c.stat(&site.url("/never"));
    assert_eq!((never.status, &never.exception), (Some(503), &None));
    assert_eq!(site.counts()["/never"], 4);
    assert_eq!(site.counts()["/later"], 1);
    assert_eq!(c.waits.len(), 3);
}
