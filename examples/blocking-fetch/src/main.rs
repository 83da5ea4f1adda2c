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
//!
//! | module | holds |
//! |---|---|
//! | `fetch` | the chapter's blocking fetch, on std's blocking sockets (thread-per-fetch runs this same file) |
//! | `links` | a page's `href`s and the same-origin rule, with std only |

mod fetch;
mod links;

use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use demo_site::{DemoSite, SiteConfig};

/// Crawls a demo site that it starts on 127.0.0.1, one blocking fetch at a
/// time, and prints each URL as it is fetched.
#[derive(Debug, Parser)]
#[command(name = "blocking-fetch")]
struct Args {
    /// The site waits N ms before each response (at most a day).
    #[arg(long = "delay-ms", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    delay_ms: u64,
}

/// How long one connect, write or read may wait.
const TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let delay = Duration::from_millis(Args::parse().delay_ms);
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
        let args = |a: &[&str]| {
            Args::try_parse_from(std::iter::once("blocking-fetch").chain(a.iter().copied()))
                .map(|args| args.delay_ms)
                .map_err(|e| e.exit_code())
        };
        assert_eq!(args(&[]), Ok(0));
        assert_eq!(args(&["--delay-ms", "20"]), Ok(20));
        assert_eq!(args(&["--help"]), Err(0));
        assert_eq!(args(&["--delay-ms", "x"]), Err(2));
        assert_eq!(args(&["--delay-ms", "86400001"]), Err(2));
        assert_eq!(args(&["extra"]), Err(2));
    }
}
