//! The command line: `crawl.py`'s options, in the chapter's spellings and
//! ours, plus what a real site needs (timeouts, a body cap, `--resolve`).

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::{ArgAction, Parser, ValueEnum};
use crawl_kit::args::MAX_DURATION;
use redis_client::RedisUrl;
use regex::Regex;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use url::Url;

use crate::config::{Config, default_parse_threads};
use crate::http::{ClientConfig, DEFAULT_USER_AGENT, Proxies, Proxy};

use crate::keeping::journal::Identity;
use crate::keeping::warc::Info;
use crate::polite::politeness::PoliteConfig;
use crate::polite::traps::TrapLimits;
use crate::program::progress;

mod parse;

pub use parse::*;

/// A web crawler on a hand-made async runtime: the finished crawler of
/// "A Web Crawler With asyncio Coroutines", in Rust.
///
/// Crawls every page reachable from the roots on the roots' hosts, then
/// prints a report on stdout. Logs and the progress line go to stderr.
#[derive(Clone, Debug, Parser)]
// `allow_negative_numbers`: `--max-tasks -5` is a bad value for
// `--max-tasks` ("-5 is not in 1..=100000"), not a flag `-5` (clap's tip
// for that, `-- -5`, would crawl a host called "-5"). `override_usage`:
// after a mistyped flag clap suggests the nearest one and would show it in
// the usage line as if it were required (`--frobnicate` -> `--frontier <URL>`).
#[command(
    name = "stage3-crawler",
    version,
    after_help = AFTER_HELP,
    allow_negative_numbers = true,
    override_usage = "stage3-crawler [OPTIONS] [ROOT]..."
)]
pub struct Args {
    /// Root URLs. A root without a scheme gets http://. With no root, the
    /// crawler starts the demo site in-process and crawls that.
    #[arg(value_name = "ROOT", value_parser = parse_root)]
    pub roots: Vec<Url>,

    /// Follow at most N redirects in a row from one URL.
    #[arg(
        long = "max-redirect",
        alias = "max_redirect",
        value_name = "N",
        default_value_t = 10
    )]
    pub max_redirect: u32,

    /// Try each URL at most N times on network errors.
    #[arg(long = "max-tries", alias = "max_tries", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tries: u32,

    /// Run N workers: at most N requests at once.
    #[arg(long = "max-tasks", alias = "max_tasks", value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_tasks: u32,

    /// Do not follow URLs that match REGEX (anywhere in the URL).
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub exclude: Option<Regex>,

    /// Strict host matching: a root's host, with or without "www." (default).
    #[arg(long, overrides_with = "lenient")]
    pub strict: bool,

    /// Lenient host matching: any host sharing the root's last two labels.
    #[arg(long, overrides_with = "strict")]
    pub lenient: bool,

    /// Log more: -v for debug, -vv for everything.
    #[arg(short, long, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Log errors only.
    #[arg(short, long)]
    pub quiet: bool,

    /// Give up connecting (DNS and the TLS handshake included) after this
    /// long: 500ms, 10s, 1m.
    #[arg(long = "connect-timeout", alias = "connect_timeout", value_name = "DURATION",
          default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,

    /// Give up when the server sends nothing for this long.
    #[arg(long = "read-timeout", alias = "read_timeout", value_name = "DURATION",
          default_value = "30s", value_parser = parse_duration)]
    pub read_timeout: Duration,

    /// Give up on one try of a URL after this long in all, from connect to
    /// the last byte, even if the server keeps sending (aiohttp's `total`).
    #[arg(long = "fetch-timeout", alias = "fetch_timeout", value_name = "DURATION",
          default_value = "5m", value_parser = parse_duration)]
    pub fetch_timeout: Duration,

    /// Fail pages whose body is larger than this: 500K, 10MiB, 1048576.
    #[arg(long = "max-body", alias = "max_body", value_name = "BYTES",
          default_value = "10MiB", value_parser = parse_size)]
    pub max_body: u64,

    /// Skip URLs longer than N bytes (a trap guard: url-too-long).
    #[arg(long = "max-url-length", value_name = "N", default_value_t = 2048,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_url_length: u32,

    /// Skip URLs whose path has one segment more than N times (a trap
    /// guard: path-repetition, as /a/a/a/a/).
    #[arg(long = "max-path-repetition", value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_path_repetition: u32,

    /// Queue at most N distinct query strings for one path (a trap guard:
    /// query-variants, as /q?id=RANDOM forever).
    #[arg(long = "max-query-variants", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_query_variants: u32,

    /// At most N requests at once to one host (name and port), whatever
    /// --max-tasks is; a worker whose URL's host is busy takes another URL.
    #[arg(long = "per-host", value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub per_host: u32,

    /// At least this long between two requests to one host (0, 500ms, 2s):
    /// with a delay, a host gets one request at a time, and the next starts
    /// this long after the last one ended. A robots.txt Crawl-delay that is
    /// longer wins.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_gap)]
    pub delay: Duration,

    /// Cut a robots.txt Crawl-delay longer than this to it (the report
    /// says so); and the longest wait a 429 or 503 may ask for with
    /// Retry-After, past which the URL fails with a reason that says so.
    /// Without Retry-After, such a host backs off from 1s, doubling, up to
    /// this; a URL waits three times at most.
    #[arg(long = "max-crawl-delay", value_name = "DURATION", default_value = "30s",
          value_parser = parse_gap)]
    pub max_crawl_delay: Duration,

    /// Do not fetch robots.txt, and fetch what it disallows. Without this,
    /// each origin's robots.txt (RFC 9309) is fetched before its first
    /// page and obeyed, Crawl-delay included.
    #[arg(long = "ignore-robots")]
    pub ignore_robots: bool,

    /// The User-Agent header. Its product token (up to the first /) is
    /// the name robots.txt groups are matched against.
    #[arg(long = "user-agent", value_name = "STRING", default_value = DEFAULT_USER_AGENT,
          value_parser = parse_user_agent)]
    pub user_agent: String,

    /// Follow links at most N steps from a root (a root is depth 0; a
    /// redirect's target has the depth of the URL that redirected).
    /// Depths are exact: the crawl goes level by level.
    #[arg(long = "max-depth", value_name = "N")]
    pub max_depth: Option<u32>,

    /// Also crawl what the roots' sitemaps list: /sitemap.xml and the
    /// Sitemap: lines of robots.txt, indexes and .xml.gz included. Their
    /// URLs pass every rule, and count as depth 1. At most 200,000 URLs
    /// (or --max-pages) are taken from sitemaps; then no more are read.
    #[arg(long)]
    pub sitemaps: bool,

    /// Queue at most N URLs in all (roots included).
    #[arg(long = "max-pages", alias = "max_pages", value_name = "N",
          value_parser = clap::builder::RangedI64ValueParser::<u64>::new().range(1..))]
    pub max_pages: Option<u64>,

    /// The report on stdout: the chapter's text, or JSON Lines (one object
    /// per URL as it completes, then a summary).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = Report::Text)]
    pub report: Report,

    /// Show a progress line on stderr, redrawn in place; when the crawl
    /// ends, its last state stays, however short the crawl.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = progress::When::Auto)]
    pub progress: progress::When,

    /// Connect to ADDR for HOST:PORT instead of asking DNS (as curl's
    /// --resolve). Repeatable.
    #[arg(long, value_name = "HOST:PORT:ADDR", value_parser = parse_resolve)]
    pub resolve: Vec<Resolve>,

    /// Also trust the CA certificates in this PEM file for https, besides
    /// the bundled Mozilla roots. Repeatable. Certificates are always
    /// verified; there is no option to turn that off.
    #[arg(long = "ca-file", alias = "ca_file", value_name = "PEM",
          value_parser = clap::builder::OsStringValueParser::new()
              .try_map(|path| parse_ca_file(Path::new(&path))))]
    pub ca_file: Vec<CaFile>,

    /// Whether to speak HTTP/2 over https: auto offers it in the TLS
    /// handshake and speaks it where the server chooses it (one connection
    /// per origin, --per-host streams on it); never speaks HTTP/1.1 only.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = Http2::Auto)]
    pub http2: Http2,

    /// Speak HTTP/2 to http:// URLs from the first byte, without asking
    /// (h2c, as curl's option of that name): for servers known to speak it.
    #[arg(long = "http2-prior-knowledge")]
    pub http2_prior_knowledge: bool,

    /// Send every request through this HTTP proxy:
    /// http://[USER:PASSWORD@]HOST[:PORT] (port 1080 if none, as curl).
    /// https URLs go through a CONNECT tunnel. Without it, the http_proxy,
    /// https_proxy, all_proxy and no_proxy environment variables (or their
    /// upper-case forms) are read, as curl reads them; no_proxy is honoured
    /// either way.
    #[arg(long, value_name = "URL", value_parser = parse_proxy)]
    pub proxy: Option<Proxy>,

    /// Keep no cookies. Without it, the cookies servers set are kept for
    /// the crawl (RFC 6265; none for a public suffix such as co.uk, a few
    /// thousand at most) and sent back, as a browser would. A shared crawl
    /// (--frontier) keeps none either way: its processes fetch each
    /// other's URLs, and one process's session would not be the others'.
    #[arg(long = "no-cookies")]
    pub no_cookies: bool,

    /// Ignore the proxy environment variables: connect directly.
    #[arg(long = "no-proxy", conflicts_with = "proxy")]
    pub no_proxy: bool,

    /// Keep every HTTP exchange (robots.txt, redirects and errors with a
    /// status included) in a WARC 1.1 archive: the request as sent and the
    /// response as received. A name ending in .gz compresses each record.
    #[arg(long, value_name = "FILE")]
    pub warc: Option<PathBuf>,

    /// Keep the crawl's state in DIR as it goes (a journal of every URL
    /// queued, fetched or skipped), so that a crawl that was stopped,
    /// killed or crashed resumes where it was: run the same command again.
    /// Needs explicit roots.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,

    /// Crawl again the finished crawl whose state is in --state DIR (the
    /// same roots and rules): fetch every URL it knew, each page asked for
    /// only if it changed (If-None-Match, If-Modified-Since), follow the
    /// links of the pages that changed, and crawl what is new. The report
    /// names each URL not-modified, changed or new. With --warc, a page
    /// not modified, or whose content is already in the archive, is kept
    /// as a revisit record pointing at the one that holds it.
    #[arg(long, requires = "state")]
    pub recrawl: bool,

    /// Threads that parse pages [default: cores - 1, at least 1]; 0 parses
    /// on the event-loop thread. At most 256: parsing is CPU work, and more
    /// threads than cores only cost memory.
    #[arg(long = "parse-threads", alias = "parse_threads", value_name = "N",
          value_parser = clap::value_parser!(u16).range(0..=MAX_PARSE_THREADS))]
    pub parse_threads: Option<u16>,

    /// Event loops to crawl on, each on a thread of its own, the crawl's
    /// hosts shared out among them: a host's URLs, turns, robots.txt and
    /// connections all live on one loop. Each loop runs --max-tasks
    /// workers, and parses on its own thread unless --parse-threads gives
    /// it helpers. Not yet with --frontier, --state, --max-depth or
    /// --sitemaps.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=MAX_LOOPS))]
    pub loops: u16,

    /// Share the crawl with other processes, on this machine or others,
    /// through Redis: redis://HOST[:PORT]/NAME, where NAME names the crawl
    /// (a prefix for its keys, not a database number). With roots, the
    /// first process creates the crawl; the others join it, with or
    /// without the roots, and take its rules. Each process prints its own
    /// report; --report-only prints the whole crawl's.
    #[arg(long, value_name = "URL", value_parser = parse_frontier,
          conflicts_with = "state")]
    pub frontier: Option<RedisUrl>,

    /// With --frontier: print the report of the whole crawl, every
    /// process's URLs merged, from Redis, and exit.
    #[arg(long = "report-only", requires = "frontier")]
    pub report_only: bool,

    /// With --frontier: delete the crawl from Redis (every key of it),
    /// and exit.
    #[arg(
        long = "frontier-clear",
        requires = "frontier",
        conflicts_with = "report_only"
    )]
    pub frontier_clear: bool,

    /// With --frontier: a process holds each URL it fetches under a lease
    /// this long, renewed while it works; if it dies, the URL goes back to
    /// the others when the lease runs out.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub lease: Duration,

    /// With --frontier: how long to keep trying a Redis that was lost in
    /// the middle of the crawl before stopping (its state stays in Redis).
    #[arg(long = "frontier-patience", value_name = "DURATION", default_value = "1m",
          value_parser = parse_duration)]
    pub frontier_patience: Duration,

    /// The options given on the command line rather than by default (clap
    /// ids): a process that joins a shared crawl is refused only for those.
    #[arg(skip)]
    pub explicit: Vec<String>,

    /// The proxies, from `--proxy` and the environment
    /// ([`Args::read_proxies`]).
    #[arg(skip)]
    pub proxies: Proxies,
}

/// The most `--loops` accepted: a loop is a thread, and more threads
/// than cores only take turns.
const MAX_LOOPS: i64 = 256;

/// The most `--parse-threads` accepted.
const MAX_PARSE_THREADS: i64 = 256;

const AFTER_HELP: &str = "\
Every option is also accepted with underscores, as the chapter spells them
(--max_redirect, --max_tries, --max_tasks, ...).

Exit status: 0 when the crawl completed (even if some pages failed), 1 when
no root could be fetched, the --warc file could not be written or the
--frontier's Redis was lost, 2 on a usage error, 130 when interrupted by
Ctrl-C.

Certificates are always verified, against the bundled Mozilla roots and
any --ca-file; a certificate that fails is a statistic, not a fatal error.

While it runs, `kill -USR1 PID` prints its task table to stderr.

Examples:
  stage3-crawler                               crawl the built-in demo site
  stage3-crawler xkcd.com --max-tasks 20       crawl xkcd.com (http, then https)
  stage3-crawler http://localhost:8000/ --exclude '\\.pdf$' --report json
  stage3-crawler example.org --loops 4         crawl example.org on 4 event loops
  stage3-crawler example.org --frontier redis://127.0.0.1:6379/crawl1
                                               crawl example.org, shared in Redis
  stage3-crawler --frontier redis://127.0.0.1:6379/crawl1
                                               join that crawl (on any machine)";

/// `--report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Report {
    /// The chapter's report: one line per URL, then the counters.
    Text,
    /// JSON Lines: an object per URL as it completes, then a summary.
    Json,
}

/// `--http2`: when to speak HTTP/2 over https.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Http2 {
    /// Where the server chooses it in the TLS handshake.
    Auto,
    /// Never: HTTP/1.1 only.
    Never,
}

/// One `--ca-file PEM`: the file and the certificates in it.
#[derive(Clone, Debug)]
pub struct CaFile {
    /// The file named.
    pub path: PathBuf,
    /// The certificates in it.
    pub certs: Vec<CertificateDer<'static>>,
}

/// One `--resolve HOST:PORT:ADDR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolve {
    /// The host name, lower-cased.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The address to connect to instead of asking DNS.
    pub addr: IpAddr,
}

impl Args {
    /// The proxies requests go through: `--proxy`, or else the ones the
    /// environment (`var`) names; none with `--no-proxy`. An environment
    /// variable that is not a proxy URL is an error that names it.
    pub fn read_proxies(&self, var: impl Fn(&str) -> Option<String>) -> Result<Proxies, String> {
        if self.no_proxy {
            return Ok(Proxies::default());
        }
        let from_env = Proxies::from_env(&var);
        match &self.proxy {
            Some(proxy) => {
                let no_proxy = from_env.map(|p| p.no_proxy).unwrap_or_default();
                Ok(Proxies::all(proxy.clone(), no_proxy))
            }
            None => from_env,
        }
    }

    /// The first option given that a crawl on several loops cannot take
    /// yet, if `--loops` asks for more than one.
    pub fn not_with_loops(&self) -> Option<&'static str> {
        if self.loops <= 1 {
            return None;
        }
        [
            (self.frontier.is_some(), "--frontier"),
            (self.state.is_some(), "--state"),
            (self.max_depth.is_some(), "--max-depth"),
            (self.sitemaps, "--sitemaps"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The crawl settings these arguments ask for.
    pub fn config(&self) -> Config {
        let resolve: HashMap<(String, u16), IpAddr> = self
            .resolve
            .iter()
            .map(|r| ((r.host.clone(), r.port), r.addr))
            .collect();
        Config {
            max_redirect: self.max_redirect,
            max_tries: self.max_tries,
            max_tasks: self.max_tasks as usize,
            exclude: self.exclude.clone(),
            strict: !self.lenient,
            traps: TrapLimits {
                max_url_length: self.max_url_length as usize,
                max_path_repetition: self.max_path_repetition as usize,
                max_query_variants: self.max_query_variants as usize,
            },
            max_depth: self.max_depth,
            sitemaps: self.sitemaps,
            max_pages: self
                .max_pages
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            parse_threads: self
                .parse_threads
                .map_or_else(default_parse_threads, usize::from),
            client: ClientConfig {
                connect_timeout: self.connect_timeout,
                read_timeout: self.read_timeout,
                fetch_timeout: self.fetch_timeout,
                max_body: self.max_body,
                resolve,
                ca_certs: self
                    .ca_file
                    .iter()
                    .flat_map(|f| f.certs.iter().cloned())
                    .collect(),
                user_agent: self.user_agent.clone(),
                http2: self.http2 == Http2::Auto,
                http2_prior_knowledge: self.http2_prior_knowledge,
                proxies: self.proxies.clone(),
                cookies: !self.no_cookies && self.frontier.is_none(),
                ..ClientConfig::default()
            },
            polite: PoliteConfig {
                per_host: self.per_host as usize,
                delay: self.delay,
                max_crawl_delay: self.max_crawl_delay,
                robots: !self.ignore_robots,
            },
            // Both reports are made as the crawl goes: JSON Lines written
            // at once, the text report's lines sorted in bounded memory.
            keep_records: false,
        }
    }

    /// What makes a crawl the same crawl, for `--state`: its roots, and
    /// the options that decide which URLs it fetches. Timeouts, workers
    /// and the report may change between runs.
    pub fn identity(&self, roots: &[Url]) -> Identity {
        let rules = format!(
            "{} hosts, exclude {}, max-pages {}, max-depth {}, robots {}, user-agent {}, \
             sitemaps {}, max-redirect {}, max-url-length {}, max-path-repetition {}, \
             max-query-variants {}",
            if self.lenient { "lenient" } else { "strict" },
            self.exclude.as_ref().map_or("none", Regex::as_str),
            self.max_pages.map_or("none".into(), |n| n.to_string()),
            self.max_depth.map_or("none".into(), |n| n.to_string()),
            if self.ignore_robots { "ignore" } else { "obey" },
            self.user_agent,
            if self.sitemaps { "yes" } else { "no" },
            self.max_redirect,
            self.max_url_length,
            self.max_path_repetition,
            self.max_query_variants,
        );
        Identity {
            roots: roots.iter().map(|r| r.to_string()).collect(),
            rules,
        }
    }

    /// What the archive's `warcinfo` record says: the command line as
    /// typed (quoted where a shell would need it), the robots policy and
    /// the User-Agent.
    pub fn warc_info(&self, path: &std::path::Path) -> Info {
        let quote = |arg: String| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
            if plain {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        };
        Info {
            filename: path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            // Arguments are any bytes the OS allows; the record is text,
            // so one that is not UTF-8 is shown with U+FFFD in its place.
            command_line: std::env::args_os()
                .map(|arg| quote(arg.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(" "),
            robots: if self.ignore_robots { "ignore" } else { "obey" },
            user_agent: self.user_agent.clone(),
            generation: 0,
        }
    }

    /// The log level the flags ask for: info by default.
    pub fn log_level(&self) -> log::LevelFilter {
        match (self.quiet, self.verbose) {
            (true, _) => log::LevelFilter::Error,
            (false, 0) => log::LevelFilter::Info,
            (false, 1) => log::LevelFilter::Debug,
            (false, _) => log::LevelFilter::Trace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn chapter_and_our_spellings_and_defaults() {
        let a =
            Args::try_parse_from(["c", "--max_redirect", "3", "--max-tries=2", "x.org"]).unwrap();
        assert_eq!((a.max_redirect, a.max_tries, a.max_tasks), (3, 2, 100));
        assert_eq!(a.roots, [Url::parse("http://x.org/").unwrap()]);
        let c = a.config();
        assert!(c.strict);
        assert_eq!(c.client.max_body, 10 << 20);
        assert_eq!(c.client.connect_timeout, Duration::from_secs(10));
        assert_eq!(c.client.read_timeout, Duration::from_secs(30));
        assert_eq!(c.client.fetch_timeout, Duration::from_secs(300));
        assert_eq!(a.log_level(), log::LevelFilter::Info);
        let a = Args::try_parse_from(["c", "--strict", "--lenient", "-vv"]).unwrap();
        assert!(!a.config().strict);
        assert_eq!(a.log_level(), log::LevelFilter::Trace);
        let a = Args::try_parse_from(["c", "--lenient", "--strict", "-q"]).unwrap();
        assert!(a.config().strict);
        assert_eq!(a.log_level(), log::LevelFilter::Error);
    }

    #[test]
    fn polite_by_default() {
        let c = Args::try_parse_from(["c"]).unwrap().config();
        assert_eq!(
            c.polite,
            PoliteConfig {
                per_host: 8,
                delay: Duration::ZERO,
                max_crawl_delay: Duration::from_secs(30),
                robots: true,
            }
        );
        assert_eq!(c.client.user_agent, DEFAULT_USER_AGENT);
        assert_eq!((c.max_depth, c.sitemaps), (None, false));
        let c = Args::try_parse_from([
            "c",
            "--per-host",
            "100",
            "--delay",
            "0",
            "--max-crawl-delay",
            "2s",
            "--ignore-robots",
            "--user-agent",
            "mybot/1.0 (+https://example.org/bot)",
            "--max-depth",
            "0",
            "--sitemaps",
        ])
        .unwrap()
        .config();
        assert_eq!(
            c.polite,
            PoliteConfig {
                per_host: 100,
                delay: Duration::ZERO,
                max_crawl_delay: Duration::from_secs(2),
                robots: false,
            }
        );
        assert_eq!(c.client.user_agent, "mybot/1.0 (+https://example.org/bot)");
        assert_eq!((c.max_depth, c.sitemaps), (Some(0), true));
        let c = Args::try_parse_from(["c", "--delay", "250ms"])
            .unwrap()
            .config();
        assert_eq!(c.polite.delay, Duration::from_millis(250));
        for zero in ["0", "0s", "0ms", "0.0"] {
            assert_eq!(parse_gap(zero), Ok(Duration::ZERO), "{zero}");
        }
    }

    #[test]
    fn usage_errors() {
        for bad in [
            &["c", "--max-tries", "0"][..],
            &["c", "--max_tasks", "0"],
            &["c", "--max-redirect", "-1"],
            &["c", "--exclude", "("],
            &["c", "ftp://example.com/"],
            &["c", "http://"],
            &["c", "--resolve", "a.test:80"],
            &["c", "--report", "xml"],
            &["c", "-q", "-v"],
            &["c", "--read-timeout", "0s"],
            &["c", "--read-timeout", "10000000000000000000"],
            &["c", "--connect-timeout", "10000000000000000000"],
            &["c", "--fetch-timeout", "25h"],
            &["c", "--parse-threads", "100000"],
            &["c", "--parse-threads", "257"],
            &["c", "mailto:a@host"],
            &["c", "javascript:void(0)"],
            &["c", "file:///etc/passwd"],
            &["c", "--no-such-option"],
            &["c", "--per-host", "0"],
            &["c", "--delay", "-1s"],
            &["c", "--delay", "2d"],
            &["c", "--delay", "0x"],
            &["c", "--max-crawl-delay", "25h"],
            &["c", "--user-agent", ""],
            &["c", "--user-agent", "bot\r\nX-Injected: 1"],
            &["c", "--user-agent", "b\u{f6}t"],
            &["c", "--max-depth", "-1"],
            &["c", "--frontier", "http://127.0.0.1:6379/crawl"],
            &["c", "--frontier", "redis://127.0.0.1:6379/"],
            &["c", "--frontier", "redis://127.0.0.1:6379/a/b"],
            &[
                "c",
                "--frontier",
                "redis://127.0.0.1:6379/c",
                "--state",
                "dir",
            ],
            &["c", "--report-only"],
            &["c", "--frontier-clear"],
            &[
                "c",
                "--frontier",
                "redis://h/c",
                "--report-only",
                "--frontier-clear",
            ],
            &["c", "--lease", "0s"],
        ] {
            let err = Args::try_parse_from(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_ca_file_must_be_a_small_regular_file() {
        assert_eq!(
            parse_ca_file(Path::new("/dev/zero")).unwrap_err(),
            "/dev/zero is not a regular file"
        );
        let dir = std::env::temp_dir().join(format!("ca-file-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A FIFO: opening it for reading would block until a writer came,
        // so it must be refused by its type before it is opened.
        let fifo = dir.join("fifo.pem");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(
            parse_ca_file(&fifo).unwrap_err(),
            format!("{} is not a regular file", fifo.display())
        );
        let big = dir.join("big.pem");
        std::fs::write(&big, vec![b'x'; MAX_CA_FILE as usize + 1]).unwrap();
        assert_eq!(
            parse_ca_file(&big).unwrap_err(),
            format!("{} is larger than {MAX_CA_FILE} bytes", big.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn roots_durations_sizes_resolves() {
        assert_eq!(parse_root("a/x#frag").unwrap().as_str(), "http://a/x");
        assert_eq!(
            parse_root("localhost:8000").unwrap().as_str(),
            "http://localhost:8000/"
        );
        assert_eq!(
            parse_root("mailto:a@host"),
            Err(
                "mailto:a@host: unsupported scheme mailto; give an http:// URL or an https:// URL"
                    .into()
            )
        );
        assert_eq!(
            parse_root("https://A.com").unwrap().as_str(),
            "https://a.com/"
        );
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1440m"), Ok(MAX_DURATION));
        assert_eq!(
            parse_duration("86401"),
            Err("\"86401\" is longer than a day".into())
        );
        assert_eq!(
            parse_duration("10000000000000000000"),
            Err("\"10000000000000000000\" is longer than a day".into())
        );
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1h").is_err());
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("10MiB"), Ok(10 << 20));
        assert!(parse_size("1T").is_err());
        assert!(parse_size("99999999999999G").is_err());
        assert_eq!(
            parse_resolve("WWW.Example.test:8080:127.0.0.1"),
            Ok(Resolve {
                host: "www.example.test".into(),
                port: 8080,
                addr: "127.0.0.1".parse().unwrap()
            })
        );
        assert_eq!(
            parse_resolve("h:1:[::1]").unwrap().addr,
            "::1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            parse_resolve("h:1:::1").unwrap().addr,
            "::1".parse::<IpAddr>().unwrap()
        );
        assert!(parse_resolve("h:x:1.2.3.4").is_err());
        assert!(parse_resolve(":80:1.2.3.4").is_err());
        assert!(parse_resolve("h:80:nowhere").is_err());
    }
}
