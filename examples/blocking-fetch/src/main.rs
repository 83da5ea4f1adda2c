//! The traditional approach, part 1: the chapter's blocking `fetch`, used to
//! crawl the demo site one URL at a time.
//!
//! ```text
//! cargo run -p blocking-fetch [-- --delay-ms 20]
//! ```
//!
//! Each fetch holds the only thread until its response is complete, so the
//! crawl takes the sum of every response's time. `--delay-ms` makes the
//! demo site wait before each response, which makes that sum easy to see.

mod fetch;
mod links;

use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use demo_site::{DemoSite, SiteConfig};

const USAGE: &str = "usage: blocking-fetch [--delay-ms N]

Crawls a demo site that it starts on 127.0.0.1, one blocking fetch at a
time, and prints each URL as it is fetched.
  --delay-ms N   the site waits N ms before each response [default: 0]";

/// How long one connect, write or read may wait.
const TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let delay = match parse_args(&args) {
        Ok(Some(delay)) => delay,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let site = match DemoSite::start(SiteConfig {
        delay,
        ..SiteConfig::default()
    }) {
        Ok(site) => site,
        Err(e) => {
            eprintln!("error: cannot start the demo site: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("crawling the demo site at {}/", site.base_url());
    let start = Instant::now();
    let lines = crawl(&site.base_url(), site.addr(), TIMEOUT, |line| {
        println!("{line}")
    });
    println!(
        "{} URLs fetched in {:.1}s, one at a time",
        lines.len(),
        start.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}

/// `Ok(None)` for help, else the delay.
fn parse_args(args: &[String]) -> Result<Option<Duration>, String> {
    match args {
        [] => Ok(Some(Duration::ZERO)),
        [flag] if flag == "-h" || flag == "--help" => Ok(None),
        [flag, ms] if flag == "--delay-ms" => ms
            .parse()
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| format!("--delay-ms {ms}: expected a whole number of milliseconds")),
        _ => Err(format!("unexpected arguments {args:?}")),
    }
}

// ANCHOR: crawl
/// Crawls every page reachable from `/` on `origin`, one at a time, calling
/// `on_line` with each URL (or `error: URL (reason)`) as it is done.
/// Returns those lines in order.
fn crawl(
    origin: &str,
    addr: SocketAddr,
    timeout: Duration,
    mut on_line: impl FnMut(&str),
) -> Vec<String> {
    let mut seen_urls = HashSet::from(["/".to_string()]);
    let mut urls_todo = VecDeque::from(["/".to_string()]);
    let mut lines = Vec::new();
    while let Some(path) = urls_todo.pop_front() {
        // The whole program waits here until this page is in.
        let line = match fetch::visit(addr, origin, &path, timeout) {
            Ok(links) => {
                for link in links {
                    if seen_urls.insert(link.clone()) {
                        urls_todo.push_back(link);
                    }
                }
                format!("{origin}{path}")
            }
            Err(reason) => format!("error: {origin}{path} ({reason})"),
        };
        on_line(&line);
        lines.push(line);
    }
    lines
}
// ANCHOR_END: crawl

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawls_the_demo_site_in_order_and_completely() {
        let site = DemoSite::start_default().unwrap();
        let lines = crawl(&site.base_url(), site.addr(), TIMEOUT, |_| {});
        // Breadth-first, in document order: the same order every run.
        assert_eq!(lines[0], site.url("/"));
        assert_eq!(lines, crawl(&site.base_url(), site.addr(), TIMEOUT, |_| {}));
        // The same URLs as stage 1: the answer key, less the page that only
        // a non-UTF-8 page links to; non-UTF-8 bodies are error lines.
        let mut want: Vec<String> = site
            .expected()
            .into_iter()
            .filter(|e| e.url != site.url("/charset/from-latin1.html"))
            .map(|e| match e.body_is_utf8 {
                true => e.url,
                false => format!("error: {} (body is not UTF-8)", e.url),
            })
            .collect();
        want.sort();
        let mut got = lines;
        got.sort();
        assert_eq!(got, want);
        // One fetch at a time: the server never had two requests at once.
        assert_eq!(site.counters().peak_in_flight, 1);
    }

    #[test]
    fn failures_are_error_lines() {
        let site = DemoSite::start_default().unwrap();
        let origin = site.base_url();
        let short = Duration::from_millis(200);
        for (path, reason) in [
            ("/fault/drop", "empty response"),
            ("/fault/garbage", "not an HTTP response"),
            ("/fault/hang", "timed out after 200ms"),
        ] {
            assert_eq!(
                fetch::visit(site.addr(), &origin, path, short),
                Err(reason.to_string()),
                "{path}"
            );
        }
    }

    #[test]
    fn arguments() {
        let args = |a: &[&str]| parse_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(args(&[]), Ok(Some(Duration::ZERO)));
        assert_eq!(
            args(&["--delay-ms", "20"]),
            Ok(Some(Duration::from_millis(20)))
        );
        assert_eq!(args(&["--help"]), Ok(None));
        assert!(args(&["--delay-ms", "x"]).is_err());
        assert!(args(&["extra"]).is_err());
    }
}
