//! HTTP/2 against a real server: nginx, over TLS, choosing h2 by ALPN.
//! The crawl must give the report the same site gives over HTTP/1.1, on
//! one connection, with every request in nginx's own log as HTTP/2.0.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::nginx::Nginx;
use common::{Crawl, config, crawl};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use stage3_crawler::{Config, FetchStatistic};

/// The site's pages: `/p/0.html` to `/p/39.html` in a binary tree below
/// the index, a few links to pages that do not exist, a redirect, and one
/// 6 MB file (wider than a stream's window, so that it only arrives if the
/// client keeps opening the window).
const PAGES: usize = 40;
const BIG: usize = 6 << 20;

struct Site {
    root: PathBuf,
}

impl Site {
    fn write(name: &str) -> Site {
        let root = std::env::temp_dir().join(format!("h2-site-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("p")).unwrap();
        // Words enough for gzip to have something to do.
        let filler = "A crawler fetches a page, finds its links, and fetches them. ".repeat(40);
        let page = |links: Vec<String>| {
            let links: String = links
                .iter()
                .map(|href| format!("<a href=\"{href}\">{href}</a>\n"))
                .collect();
            format!("<!doctype html><title>t</title><p>{filler}</p>\n{links}")
        };
        let mut index: Vec<String> = (0..10).map(|i| format!("p/{i}.html")).collect();
        index.extend(["/big.bin".into(), "/old".into()]);
        std::fs::write(root.join("index.html"), page(index)).unwrap();
        for i in 0..PAGES {
            let mut links: Vec<String> = [2 * i + 1, 2 * i + 2]
                .into_iter()
                .filter(|&j| j < PAGES)
                .map(|j| format!("{j}.html"))
                .collect();
            if i % 10 == 0 {
                links.push(format!("missing-{i}.html"));
            }
            std::fs::write(root.join(format!("p/{i}.html")), page(links)).unwrap();
        }
        let big: Vec<u8> = (0..BIG).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(root.join("big.bin"), big).unwrap();
        Site { root }
    }

    fn path(&self) -> &Path {
        &self.root
    }

    /// Every URL the crawl reaches, with its status.
    fn expected(nginx: &Nginx) -> BTreeMap<String, u16> {
        let mut want = BTreeMap::new();
        want.insert(nginx.url("/"), 200);
        want.insert(nginx.url("/big.bin"), 200);
        want.insert(nginx.url("/old"), 301);
        for i in 0..PAGES {
            want.insert(nginx.url(&format!("/p/{i}.html")), 200);
            if i % 10 == 0 {
                want.insert(nginx.url(&format!("/p/missing-{i}.html")), 404);
            }
        }
        want
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A polite crawl's config (robots.txt, 8 per host), trusting nginx.
fn polite(nginx: &Nginx, http2: bool) -> Config {
    let mut c = config();
    c.polite.per_host = 8;
    c.polite.robots = true;
    c.client.http2 = http2;
    c.client.ca_certs = CertificateDer::pem_slice_iter(nginx.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    c
}

fn sorted(c: &Crawl) -> Vec<FetchStatistic> {
    let mut stats = c.stats.clone();
    stats.sort_by(|a, b| a.url.cmp(&b.url));
    stats
}

#[test]
fn a_crawl_over_h2_gives_the_http1_report_on_one_connection() {
    let site = Site::write("same");
    let nginx = Nginx::start(
        "same",
        site.path(),
        "absolute_redirect off; location = /old { return 301 /p/3.html; }",
    );
    let want = Site::expected(&nginx);

    let h2 = crawl(&[nginx.url("/")], polite(&nginx, true));
    let h2_log = nginx.log();
    nginx.clear_log();
    let h1 = crawl(&[nginx.url("/")], polite(&nginx, false));
    let h1_log = nginx.log();

    // The URLs and statuses are the site's.
    let got: BTreeMap<String, u16> = h2
        .stats
        .iter()
        .map(|s| (s.url.clone(), s.status.unwrap_or(0)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(h2.stats.len(), want.len(), "a URL was recorded twice");
    assert_eq!(h2.stat(&nginx.url("/big.bin")).size, BIG as u64);
    assert_eq!(
        h2.stat(&nginx.url("/old")).next_url.as_deref(),
        Some(nginx.url("/p/3.html").as_str())
    );
    // The HTML came gzipped, and was decoded.
    let index = h2.stat(&nginx.url("/"));
    assert!(index.wire_size < index.size, "{index:?}");

    // Every statistic is the HTTP/1.1 crawl's, but for the protocol.
    for s in &h2.stats {
        assert_eq!(s.protocol, Some("h2"), "{}", s.url);
    }
    for s in &h1.stats {
        assert_eq!(s.protocol, Some("http/1.1"), "{}", s.url);
    }
    let without_protocol = |c: &Crawl| -> Vec<FetchStatistic> {
        sorted(c)
            .into_iter()
            .map(|s| FetchStatistic {
                protocol: None,
                ..s
            })
            .collect()
    };
    assert_eq!(without_protocol(&h2), without_protocol(&h1));

    // nginx saw each URL once, and robots.txt, all as HTTP/2.0 on one
    // connection; over HTTP/1.1, the same requests as HTTP/1.1.
    assert_eq!(h2.connections, 1);
    assert_eq!(h2_log.len(), want.len() + 1, "{h2_log:#?}");
    let connection = h2_log[0].split(' ').nth(1).unwrap().to_string();
    for line in &h2_log {
        assert!(
            line.starts_with(&format!("HTTP/2.0 {connection} ")),
            "{line}"
        );
    }
    assert!(h2_log.iter().any(|l| l.ends_with(" 404 /robots.txt")));
    assert_eq!(h1_log.len(), want.len() + 1, "{h1_log:#?}");
    assert!(
        h1_log.iter().all(|l| l.starts_with("HTTP/1.1 ")),
        "{h1_log:#?}"
    );
}

#[test]
fn the_per_host_limit_is_the_number_of_streams_and_the_servers_limit_holds() {
    // nginx takes 2 streams at a time on a connection; we would take 8.
    let site = Site::write("streams");
    let nginx = Nginx::start(
        "streams",
        site.path(),
        "absolute_redirect off; http2_max_concurrent_streams 2; \
         location = /old { return 301 /p/3.html; }",
    );
    let c = crawl(&[nginx.url("/")], polite(&nginx, true));
    let got: BTreeMap<String, u16> = c
        .stats
        .iter()
        .map(|s| (s.url.clone(), s.status.unwrap_or(0)))
        .collect();
    assert_eq!(got, Site::expected(&nginx));
    // Refused streams would have been sent again on the same connection;
    // none was refused, so each request is in the log once.
    assert_eq!(c.connections, 1);
    assert_eq!(nginx.log().len(), Site::expected(&nginx).len() + 1);
}

#[test]
fn the_command_line_archives_h2_exchanges_as_warcio_reads_them() {
    let site = Site::write("warc");
    let nginx = Nginx::start(
        "warc",
        site.path(),
        "absolute_redirect off; location = /old { return 301 /p/3.html; }",
    );
    let dir = std::env::temp_dir().join(format!("h2-warc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ca, warc) = (dir.join("ca.pem"), dir.join("crawl.warc.gz"));
    std::fs::write(&ca, &nginx.cert_pem).unwrap();
    let out = common::stage3()
        .arg(nginx.url("/"))
        .arg("--ca-file")
        .arg(&ca)
        .arg("--warc")
        .arg(&warc)
        .args(["--report", "json", "-q", "--progress", "never"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every URL's record in the report says h2.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let records: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("status").is_some())
        .collect();
    assert_eq!(records.len(), Site::expected(&nginx).len());
    assert!(records.iter().all(|r| r["protocol"] == "h2"), "{stdout}");

    // warcio reads every record; each response says WARC-Protocol: h2,
    // and its payload is what nginx served.
    let check = common::python_tool("warcio");
    let status = std::process::Command::new(&check)
        .args(["check", warc.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let script = "
import sys
from warcio.archiveiterator import ArchiveIterator
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        # A page whose bytes the archive holds already is a revisit.
        if r.rec_type in ('response', 'revisit'):
            body = r.content_stream().read()
            print(r.rec_headers.get_header('WARC-Protocol'),
                  r.http_headers.get_statuscode(),
                  len(body),
                  r.rec_headers.get_header('WARC-Target-URI'))
";
    let out = std::process::Command::new(common::python_tool("python3"))
        .args(["-c", script, warc.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    // The site's URLs and robots.txt.
    assert_eq!(lines.len(), Site::expected(&nginx).len() + 1, "{lines:#?}");
    assert!(lines.iter().all(|l| l.starts_with("h2 ")), "{lines:#?}");
    assert!(lines.contains(&format!("h2 200 {BIG} {}", nginx.url("/big.bin"))));
    let old = nginx.url("/old");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("h2 301 ") && l.ends_with(&old)),
        "{lines:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn through_a_proxy_h2_runs_inside_the_connect_tunnel() {
    let site = Site::write("tunnel");
    let nginx = Nginx::start(
        "tunnel",
        site.path(),
        "absolute_redirect off; location = /old { return 301 /p/3.html; }",
    );
    let proxy = common::tinyproxy::Tinyproxy::start("h2", "");
    let mut config = polite(&nginx, true);
    config.client.proxies = stage3_crawler::http::Proxies::all(
        stage3_crawler::http::Proxy::parse(&proxy.url()).unwrap(),
        stage3_crawler::http::NoProxy::default(),
    );
    let c = crawl(&[nginx.url("/")], config);
    let tunnels = proxy.stop();
    let got: BTreeMap<String, u16> = c
        .stats
        .iter()
        .map(|s| (s.url.clone(), s.status.unwrap_or(0)))
        .collect();
    assert_eq!(got, Site::expected(&nginx));
    assert!(c.stats.iter().all(|s| s.protocol == Some("h2")));
    // One tunnel, one connection, every request a stream on it.
    assert_eq!(
        tunnels,
        [format!("CONNECT 127.0.0.1:{} HTTP/1.1", nginx.port)]
    );
    let log = nginx.log();
    assert_eq!(log.len(), Site::expected(&nginx).len() + 1);
    assert!(log.iter().all(|l| l.starts_with("HTTP/2.0 ")));
}

#[test]
fn on_two_loops_the_host_keeps_its_one_connection() {
    // A host lives on one loop, so its one HTTP/2 connection does too.
    let site = Site::write("loops");
    let nginx = Nginx::start(
        "loops",
        site.path(),
        "absolute_redirect off; location = /old { return 301 /p/3.html; }",
    );
    let dir = std::env::temp_dir().join(format!("h2-loops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &nginx.cert_pem).unwrap();
    let out = common::stage3()
        .arg(nginx.url("/"))
        .arg("--ca-file")
        .arg(&ca)
        .args([
            "--loops",
            "2",
            "--report",
            "json",
            "-q",
            "--progress",
            "never",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let records: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("status").is_some())
        .collect();
    assert_eq!(records.len(), Site::expected(&nginx).len());
    assert!(records.iter().all(|r| r["protocol"] == "h2"), "{stdout}");
    let log = nginx.log();
    let connections: std::collections::BTreeSet<&str> =
        log.iter().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(connections.len(), 1, "{log:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}
