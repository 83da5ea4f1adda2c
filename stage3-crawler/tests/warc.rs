//! `--warc`: the archive of a demo-site crawl, judged by the tool
//! archivists use, warcio (installed by `.ci/test` into `.ci/venv`), and
//! byte for byte against what the site serves.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use common::{Scratch, python_tool};
use demo_site::{DemoSite, SiteConfig};

fn run(program: &Path, args: &[&str]) -> Output {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Crawls `site` with `--warc path` and the extra `args`.
fn crawl_to(site: &DemoSite, path: &Path, args: &[&str]) {
    let mut all = vec![site.url("/")];
    all.extend(["--warc".into(), path.to_str().unwrap().to_string()]);
    all.extend(["--report".into(), "json".into()]);
    all.extend(args.iter().map(|a| a.to_string()));
    let out = common::stage3().args(&all).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("INFO stage3_crawler::cli: archived "),
        "{stderr}"
    );
}

/// `(type, target URI)` of every record, in order, from `warcio index`.
fn index(warc: &Path) -> Vec<(String, String)> {
    let out = run(
        &python_tool("warcio"),
        &[
            "index",
            "-f",
            "warc-type,warc-target-uri",
            warc.to_str().unwrap(),
        ],
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (field("warc-type"), field("warc-target-uri"))
        })
        .collect()
}

/// The payload of each URL's last record, as a replay tool reads the
/// archive: a response's own, a revisit's from the record it points at.
fn payloads(warc: &Path) -> BTreeMap<String, Vec<u8>> {
    common::replayed_payloads(warc)
}

#[test]
fn the_archive_of_a_crawl_passes_warcio_and_holds_exactly_what_the_site_sent() {
    let site = DemoSite::start_default().unwrap();
    let scratch = Scratch::new("plain");
    let warc = scratch.0.join("crawl.warc");
    crawl_to(&site, &warc, &[]);
    // Every record well formed, every digest right.
    run(
        &python_tool("warcio"),
        &["check", "-v", warc.to_str().unwrap()],
    );
    let records = index(&warc);
    assert_eq!(records[0], ("warcinfo".to_string(), String::new()));
    // A response then its request, for every URL the site answered (its
    // answer key) and its robots.txt, each once.
    let mut want: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    want.insert(site.url("/robots.txt"));
    let responses: Vec<&str> = records
        .iter()
        .filter(|(kind, _)| kind == "response" || kind == "revisit")
        .map(|(_, uri)| uri.as_str())
        .collect();
    assert_eq!(responses.len(), want.len(), "a URL was archived twice");
    assert_eq!(
        responses
            .iter()
            .map(|u| u.to_string())
            .collect::<BTreeSet<_>>(),
        want
    );
    for pair in records[1..].chunks(2) {
        assert!(["response", "revisit"].contains(&pair[0].0.as_str()));
        assert_eq!(pair[1], ("request".to_string(), pair[0].1.clone()));
    }
    // Two pages of the site are the same bytes: the second is a revisit
    // of the first (identical-payload-digest), and replays as it.
    let revisits: Vec<&str> = records
        .iter()
        .filter(|(kind, _)| kind == "revisit")
        .map(|(_, uri)| uri.as_str())
        .collect();
    assert_eq!(revisits.len(), 1, "{revisits:?}");
    // Each body as the site serves it, byte for byte (chunked ones
    // de-chunked: the WARC 1.1 payload).
    let payloads = payloads(&warc);
    for url in &want {
        let path = &url[site.base_url().len()..];
        assert_eq!(payloads[url], common::body(&site, path), "{url}");
    }
}

#[test]
fn a_gz_name_compresses_each_record_and_a_polite_crawl_archives_compressed_bodies() {
    let site = DemoSite::start(SiteConfig {
        polite: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("gz");
    let warc = scratch.0.join("crawl.warc.gz");
    crawl_to(&site, &warc, &["--sitemaps"]);
    let bytes = std::fs::read(&warc).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b], "not gzip");
    run(
        &python_tool("warcio"),
        &["check", "-v", warc.to_str().unwrap()],
    );
    let records = index(&warc);
    let uris: BTreeSet<&str> = records.iter().map(|(_, uri)| uri.as_str()).collect();
    // robots.txt with its rules, a sitemap, and the compression bomb, which
    // the crawler refused to decode but the server did send.
    for path in ["/robots.txt", "/sitemap.xml", "/polite/bomb.html"] {
        assert!(uris.contains(site.url(path).as_str()), "{path}: {uris:?}");
    }
    // Bodies are archived as transferred: compressed when the site
    // compressed them (gzip's magic, or brotli's lack of one).
    let payloads = payloads(&warc);
    let index_page = &payloads[&site.url("/")];
    assert_ne!(index_page, &common::body(&site, "/"));
}

/// Crawls `site` with `--warc warc --state state` until the site has seen
/// `kill_at` requests, then kills the crawler with SIGKILL.
fn crawl_and_kill(site: &DemoSite, warc: &Path, state: &Path, kill_at: u64) {
    site.reset_counters();
    let mut child = common::stage3()
        .arg(site.url("/"))
        .args(["--max-tasks", "3", "--report", "json", "--warc"])
        .arg(warc)
        .arg("--state")
        .arg(state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        site.wait_until(std::time::Duration::from_secs(30), |c| c.requests
            >= kill_at)
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn killed_and_resumed_the_archive_stays_valid_and_holds_every_page() {
    let site = DemoSite::start(SiteConfig {
        delay: std::time::Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let mut want: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    for name in ["crawl.warc", "crawl.warc.gz"] {
        let scratch = Scratch::new(&format!("resume-{name}"));
        let warc = scratch.0.join(name);
        let state = scratch.0.join("state");
        crawl_and_kill(&site, &warc, &state, 20);
        crawl_and_kill(&site, &warc, &state, 60);
        // And a crash in the middle of writing a record: half of one.
        let mut bytes = std::fs::read(&warc).unwrap();
        let whole = bytes.len();
        bytes.extend_from_within(whole / 2..whole / 2 + 300);
        std::fs::write(&warc, &bytes).unwrap();
        // The last run finishes the crawl.
        let out = common::stage3()
            .arg(site.url("/"))
            .args(["--max-tasks", "3", "--report", "json", "--warc"])
            .arg(&warc)
            .arg("--state")
            .arg(&state)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("a record torn by a crash"), "{stderr}");
        run(&python_tool("warcio"), &["check", warc.to_str().unwrap()]);
        // Every page the site answered has its response in the archive
        // (some twice: a capture the journal had not yet recorded as done
        // is fetched, and archived, again).
        let archived: BTreeSet<String> = index(&warc)
            .into_iter()
            .filter(|(kind, _)| kind == "response" || kind == "revisit")
            .map(|(_, uri)| uri)
            .collect();
        want.insert(site.url("/robots.txt"));
        assert_eq!(archived, want, "{name}");
        // Three warcinfo records: one per run.
        let runs = index(&warc)
            .iter()
            .filter(|(kind, _)| kind == "warcinfo")
            .count();
        assert_eq!(runs, 3, "{name}");
    }
}
