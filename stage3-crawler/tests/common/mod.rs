//! Helpers shared by the integration tests: run a crawl through the
//! library against a demo site, and look at what it recorded.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};

pub mod nginx;
pub mod static_site;
pub mod tinyproxy;
use stage3_crawler::http::ClientConfig;
use stage3_crawler::logging::{Level, LogLine};
use stage3_crawler::politeness::RobotsOutcome;
use stage3_crawler::{Config, Crawler, FetchStatistic, Outcome, Skipped};
use url::Url;

/// A config for tests: few workers, short but safe timeouts.
pub fn config() -> Config {
    Config {
        max_tasks: 10,
        parse_threads: 1,
        client: ClientConfig {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(5),
            ..ClientConfig::default()
        },
        ..Config::default()
    }
}

/// A config that never follows links to the index or the static files, so
/// a crawl from a leaf page stays small and exact.
pub fn leaf_config() -> Config {
    Config {
        exclude: Some(regex::Regex::new(r"/$|/static/").unwrap()),
        ..config()
    }
}

/// What a crawl left behind.
pub struct Crawl {
    pub outcome: Outcome,
    pub stats: Vec<FetchStatistic>,
    pub log: Vec<LogLine>,
    pub connections: u64,
    pub any_root_fetched: bool,
    /// The URLs seen and not fetched.
    pub skipped: Vec<Skipped>,
    /// Every URL seen.
    pub seen: usize,
    /// What each origin's robots.txt came to.
    pub robots: Vec<RobotsOutcome>,
    /// Each wait a host asked for.
    pub waits: Vec<stage3_crawler::slow_down::Wait>,
}

impl Crawl {
    /// The statistic for `url`; panics (failing the test) if there is none
    /// or more than one.
    pub fn stat(&self, url: &str) -> &FetchStatistic {
        let found: Vec<_> = self.stats.iter().filter(|s| s.url == url).collect();
        assert_eq!(found.len(), 1, "{url}: {:#?}", self.stats);
        found[0]
    }

    /// Every URL with a statistic, sorted.
    pub fn urls(&self) -> BTreeSet<String> {
        self.stats.iter().map(|s| s.url.clone()).collect()
    }

    /// Messages logged at `level`, in order.
    pub fn logged(&self, level: Level) -> Vec<String> {
        self.log
            .iter()
            .filter(|l| l.level == level)
            .map(|l| l.message.clone())
            .collect()
    }
}

/// Crawls from `roots` with `config`, capturing the crawler's log.
pub fn crawl(roots: &[String], config: Config) -> Crawl {
    let roots = roots.iter().map(|r| Url::parse(r).unwrap()).collect();
    let runtime = runtime::Runtime::new().unwrap();
    let crawler = Rc::new(Crawler::new(roots, config).unwrap());
    crawler.capture_log();
    // A crawl that never ends is a failed test, not a hung one.
    let bounded = runtime::timeout(Duration::from_secs(120), crawler.crawl());
    let outcome = runtime
        .block_on(bounded)
        .unwrap()
        .expect("the crawl did not end within two minutes");
    Crawl {
        outcome,
        stats: crawler.done().clone(),
        log: crawler.log_lines(),
        connections: crawler.connections_opened(),
        any_root_fetched: crawler.any_root_fetched(),
        skipped: crawler.skipped().clone(),
        seen: crawler.seen(),
        robots: crawler.robots_outcomes(),
        waits: crawler.waits(),
    }
}

/// The body the site serves at `path`, fetched over HTTP/1.0 (so the site
/// closes after it) with plain std, independent of the crawler's client.
pub fn body(site: &DemoSite, path: &str) -> Vec<u8> {
    let mut s = std::net::TcpStream::connect(site.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: test\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    raw.split_off(end + 4)
}

/// Body length, as a statistic's `size`.
pub fn size(site: &DemoSite, path: &str) -> u64 {
    body(site, path).len() as u64
}

/// The media type of a Content-Type value.
pub fn media_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap().trim().to_string()
}

/// The polite demo site, three pages, whose robots.txt asks stage3-crawler
/// for a Crawl-delay of `delay`.
pub fn crawl_delay_site(delay: Duration) -> DemoSite {
    DemoSite::start(SiteConfig {
        pages: 3,
        polite: true,
        crawl_delay: Some(delay),
        ..SiteConfig::default()
    })
    .unwrap()
}

/// Fails unless every request in `log` (the site's request log) started at
/// least `delay` after the one before it.
pub fn assert_spaced(log: &[(Duration, String)], delay: Duration) {
    for pair in log.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(
            gap >= delay,
            "{gap:?} between {} and {}",
            pair[0].1,
            pair[1].1
        );
    }
}

/// A program of `.ci/venv`, where `.ci/test` installs the Python tools,
/// or else on `PATH`. Missing, the test fails and says how to get it.
pub fn python_tool(name: &str) -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.ci/venv/bin")
        .join(name);
    if venv.exists() {
        return venv;
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.exists());
    on_path.unwrap_or_else(|| {
        panic!("{name} not found: run the tests with .ci/test, which installs warcio into .ci/venv")
    })
}

/// The payload of each URL's last response or revisit record in the
/// archive `warc`, as a replay tool reads it with warcio: a response's
/// own bytes (after the HTTP head, neither de-chunked nor decompressed
/// again), a revisit's from the record its `WARC-Refers-To` names, which
/// must come before it.
pub fn replayed_payloads(warc: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    const SCRIPT: &str = r#"
import sys
from warcio.archiveiterator import ArchiveIterator
held = {}
with open(sys.argv[1], 'rb') as f:
    for record in ArchiveIterator(f):
        uri = record.rec_headers.get_header('WARC-Target-URI')
        if record.rec_type == 'response':
            payload = record.raw_stream.read()
            held[record.rec_headers.get_header('WARC-Record-ID')] = payload
        elif record.rec_type == 'revisit':
            payload = held[record.rec_headers.get_header('WARC-Refers-To')]
        else:
            continue
        print(uri, payload.hex())
"#;
    let out = std::process::Command::new(python_tool("python"))
        .args(["-c", SCRIPT])
        .arg(warc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (uri, hex) = line.split_once(' ').unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (uri.to_string(), bytes)
        })
        .collect()
}

/// A scratch directory of a test, removed when dropped. Its name has the
/// test binary's process id: the binaries of a `cargo test` run at once.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh, empty `stage3-NAME-PID` in the temporary directory.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("stage3-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The proxy environment variables the crawler reads.
pub const PROXY_VARIABLES: [&str; 8] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// The stage-3 binary, with the proxy variables cleared: a developer's or
/// CI's proxy must not carry the tests' requests to 127.0.0.1 (a test
/// about proxies sets them itself).
pub fn stage3() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_stage3-crawler"));
    for name in PROXY_VARIABLES {
        command.env_remove(name);
    }
    command
}
