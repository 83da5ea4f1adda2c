//! The crawl's settings, with the chapter's defaults: plain values, so
//! that the lesson, which reads them, needs none of the features they set.

use std::time::Duration;

use regex::Regex;

use crate::http::ClientConfig;

/// Everything a [`Crawler`](crate::Crawler) needs besides its roots. The
/// command line fills it in; tests and library users can start from
/// `Config::default()`.
#[derive(Clone, Debug)]
pub struct Config {
    /// Redirects to follow from one URL before giving up. Default 10.
    pub max_redirect: u32,
    /// Attempts per URL on network errors, the first included. Default 4.
    pub max_tries: u32,
    /// Workers, and so the most requests in flight. Default 100, as in
    /// `crawl.py`.
    pub max_tasks: usize,
    /// URLs matching this (anywhere in the URL) are not followed.
    pub exclude: Option<Regex>,
    /// Strict (`www.` only) or lenient (last two labels) host matching.
    pub strict: bool,
    /// Stop queueing new URLs after this many. `None`: no limit.
    pub max_pages: Option<usize>,
    /// Follow links at most this many steps from a root (a root is 0).
    /// `None`: no limit.
    pub max_depth: Option<u32>,
    /// Seed the crawl from the roots' sitemaps: `/sitemap.xml` and the
    /// `Sitemap:` lines of robots.txt.
    pub sitemaps: bool,
    /// The limits that end crawler traps.
    pub traps: TrapLimits,
    /// Helper threads that parse pages; 0 parses on the loop thread.
    pub parse_threads: usize,
    /// Timeouts, body cap, User-Agent and `--resolve` pins, for the HTTP
    /// client.
    pub client: ClientConfig,
    /// Per-host limits and robots.txt. The default is the chapter's crawler
    /// (no limits, no robots.txt); the command line's default is polite.
    pub polite: PoliteConfig,
    /// Keep every statistic and skipped URL in memory, for
    /// `Crawler::done`, `Crawler::skipped` and the text report (which
    /// sorts them). Default true. Off, they go only to the sinks
    /// (`Crawler::on_stat`, `on_skip`) and the tally: the command line
    /// turns it off, as both its reports are made as the crawl goes (JSON
    /// Lines written at once, the text report's lines sorted in bounded
    /// memory), so that a crawl of a million pages keeps nothing per URL
    /// for its report.
    pub keep_records: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_redirect: 10,
            max_tries: 4,
            max_tasks: 100,
            exclude: None,
            strict: true,
            max_pages: None,
            max_depth: None,
            sitemaps: false,
            traps: TrapLimits::default(),
            parse_threads: default_parse_threads(),
            client: ClientConfig::default(),
            polite: PoliteConfig::default(),
            keep_records: true,
        }
    }
}

/// One core for the loop, the rest for parsing, and at least one helper.
pub fn default_parse_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get().saturating_sub(1))
        .max(1)
}

/// The settings: `--per-host`, `--delay`, `--max-crawl-delay`, and whether
/// robots.txt is obeyed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoliteConfig {
    /// Requests in flight to one host at most. Default 8, as Scrapy's
    /// `CONCURRENT_REQUESTS_PER_DOMAIN`.
    pub per_host: usize,
    /// The least time between two requests to one host. With a delay, a
    /// host gets one request at a time, and the next starts this long
    /// after the last one ended.
    pub delay: Duration,
    /// A robots.txt Crawl-delay above this is cut to it. Default 30 s.
    pub max_crawl_delay: Duration,
    /// Fetch and obey robots.txt.
    pub robots: bool,
}

impl Default for PoliteConfig {
    /// No robots.txt and no per-host cap: the chapter's crawler, for unit
    /// tests and library users. The command line's defaults are polite.
    fn default() -> Self {
        PoliteConfig {
            per_host: usize::MAX,
            delay: Duration::ZERO,
            max_crawl_delay: Duration::from_secs(30),
            robots: false,
        }
    }
}

/// The limits that end crawler traps (the `traps` module). The defaults stop
/// every trap there and no real site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrapLimits {
    /// The longest URL followed, in bytes. Default 2,048.
    pub max_url_length: usize,
    /// How often one path segment may appear in a path. Default 3.
    pub max_path_repetition: usize,
    /// Distinct query strings queued for one path. Default 1,000.
    pub max_query_variants: usize,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_length: 2048,
            max_path_repetition: 3,
            max_query_variants: 1000,
        }
    }
}
