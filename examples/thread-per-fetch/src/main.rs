//! The traditional approach, part 2: the same blocking fetch, on a thread
//! per URL, and what those threads cost.
//!
//! ```text
//! cargo run -p thread-per-fetch [-- --delay-ms 20]
//! cargo run -p thread-per-fetch -- --measure 1000
//! ```
//!
//! The first crawls the demo site with a new thread for every new link, as
//! the stage 1 crawler starts a new `Fetcher`. The second starts N idle
//! threads and reads from /proc what they cost this machine.
//!
//! | module | holds |
//! |---|---|
//! | `measure` | what an idle thread costs, read from /proc |

// The very same fetch and link scanner as blocking-fetch, not a copy.
#[path = "../../blocking-fetch/src/fetch.rs"]
mod fetch;
#[path = "../../blocking-fetch/src/links.rs"]
mod links;
mod measure;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::{self, Scope};
use std::time::{Duration, Instant};

use clap::Parser;
use demo_site::{DemoSite, SiteConfig};

/// Crawls a demo site that it starts on 127.0.0.1 with a thread per URL,
/// and prints each URL as it is fetched.
#[derive(Debug, Parser)]
#[command(name = "thread-per-fetch")]
struct Args {
    /// The site waits N ms before each response (at most a day).
    #[arg(long = "delay-ms", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=86_400_000),
          conflicts_with = "measure")]
    delay_ms: u64,
    /// Instead of crawling, start N idle threads (1 to 100000) and print
    /// their memory cost.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    measure: Option<u32>,
}

/// How long one connect, write or read may wait.
const TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(threads) = args.measure else {
        return run_crawl(Duration::from_millis(args.delay_ms));
    };
    match measure::idle_threads(threads as usize) {
        Ok(cost) => {
            print!("{cost}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_crawl(delay: Duration) -> ExitCode {
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
    let report = crawl(&site.base_url(), site.addr(), TIMEOUT, |line| {
        println!("{line}")
    });
    println!(
        "{} URLs fetched in {:.1}s, {} threads at most at once",
        report.lines.len(),
        start.elapsed().as_secs_f64(),
        report.peak_threads
    );
    ExitCode::SUCCESS
}

/// What a crawl did.
#[derive(Debug)]
struct Report {
    /// Each URL (or `error: URL (reason)`), in the order they finished.
    lines: Vec<String>,
    /// The most fetch threads that were running at once.
    peak_threads: usize,
}

// ANCHOR: state
/// What the fetch threads share. Any thread may be interrupted anywhere, so
/// every access takes the lock.
struct Crawl<'a> {
    origin: &'a str,
    addr: SocketAddr,
    timeout: Duration,
    on_line: &'a (dyn Fn(&str) + Sync),
    state: Mutex<State>,
}

struct State {
    seen_urls: HashSet<String>,
    running: usize,
    peak_threads: usize,
    lines: Vec<String>,
}
// ANCHOR_END: state

impl Crawl<'_> {
    fn state(&self) -> MutexGuard<'_, State> {
        // A thread that panicked while holding the lock cannot have left the
        // sets half-updated in a way that matters here.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(&self, line: String) {
        (self.on_line)(&line);
        let mut state = self.state();
        state.lines.push(line);
        state.running -= 1;
    }
}

/// Crawls every page reachable from `/` on `origin`, a thread per URL.
fn crawl(
    origin: &str,
    addr: SocketAddr,
    timeout: Duration,
    on_line: impl Fn(&str) + Sync,
) -> Report {
    let crawl = Crawl {
        origin,
        addr,
        timeout,
        on_line: &on_line,
        state: Mutex::new(State {
            seen_urls: HashSet::from(["/".to_string()]),
            running: 1,
            peak_threads: 1,
            lines: Vec::new(),
        }),
    };
    // The scope ends when every thread started in it has ended, that is,
    // when the last fetch is done: the crawl's `join`.
    thread::scope(|scope| start_fetch(scope, &crawl, "/".to_string()));
    let state = crawl
        .state
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    Report {
        lines: state.lines,
        peak_threads: state.peak_threads,
    }
}

// ANCHOR: start_fetch
/// Starts a thread that fetches `path` and starts a thread for each new
/// link it finds.
fn start_fetch<'scope>(scope: &'scope Scope<'scope, '_>, crawl: &'scope Crawl<'_>, path: String) {
    let url = format!("{}{path}", crawl.origin);
    let line = url.clone();
    let thread = thread::Builder::new().spawn_scoped(scope, move || {
        // This thread blocks here until the page is in; the others run on.
        match fetch::visit(crawl.addr, crawl.origin, &path, crawl.timeout) {
            Ok(links) => {
                let new: Vec<String> = {
                    let mut state = crawl.state();
                    let new: Vec<String> = links
                        .into_iter()
                        .filter(|link| state.seen_urls.insert(link.clone()))
                        .collect();
                    state.running += new.len();
                    state.peak_threads = state.peak_threads.max(state.running);
                    new
                };
                // Report before starting the others, so that a page is
                // always printed before the pages found through it.
                crawl.finish(line);
                for link in new {
                    start_fetch(scope, crawl, link);
                }
            }
            Err(reason) => crawl.finish(format!("error: {line} ({reason})")),
        }
    });
    // Threads are a limited resource: the OS may refuse one more.
    if let Err(e) = thread {
        crawl.finish(format!("error: {url} (cannot start a thread: {e})"));
    }
}
// ANCHOR_END: start_fetch

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawls_the_demo_site_on_many_threads() {
        // A delay keeps each thread busy long enough to overlap with others.
        let site = DemoSite::start(SiteConfig {
            delay: Duration::from_millis(20),
            ..SiteConfig::default()
        })
        .unwrap();
        let report = crawl(&site.base_url(), site.addr(), TIMEOUT, |_| {});
        assert_eq!(report.lines[0], site.url("/"));
        // The same URLs as blocking-fetch and stage 1.
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
        let mut got = report.lines;
        got.sort();
        assert_eq!(got, want);
        assert!(report.peak_threads > 1);
        assert!(site.counters().peak_in_flight > 1);
    }

    #[test]
    fn arguments() {
        let args = |a: &[&str]| {
            Args::try_parse_from(std::iter::once("thread-per-fetch").chain(a.iter().copied()))
                .map(|args| (args.delay_ms, args.measure))
                .map_err(|e| e.exit_code())
        };
        assert_eq!(args(&[]), Ok((0, None)));
        assert_eq!(args(&["--delay-ms", "5"]), Ok((5, None)));
        assert_eq!(args(&["--measure", "10"]), Ok((0, Some(10))));
        assert_eq!(args(&["--measure", "0"]), Err(2));
        assert_eq!(args(&["--measure", "3", "--delay-ms", "1"]), Err(2));
        assert_eq!(args(&["-h"]), Err(0));
        assert_eq!(args(&["--delay-ms"]), Err(2));
    }
}
