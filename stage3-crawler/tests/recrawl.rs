//! `--recrawl`: a finished crawl of the demo site (with validators) crawled
//! again after ten of its pages changed. What the site served is counted by
//! the site itself; the archive is judged by warcio and replayed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{Scratch, python_tool};
use demo_site::{DemoSite, SiteConfig};
use serde_json::Value;

/// The JSON Lines report's statistics (not its skips or summary) of a
/// crawl of `site` with `--state`, `--warc` and `args`, by URL.
fn crawl(site: &DemoSite, state: &Path, warc: &Path, args: &[&str]) -> BTreeMap<String, Value> {
    let out = common::stage3()
        .arg(site.url("/"))
        .args(["--report", "json", "--state"])
        .arg(state)
        .arg("--warc")
        .arg(warc)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record.get("status").is_some())
        .map(|record| (record["url"].as_str().unwrap().to_string(), record))
        .collect()
}

/// Whether `url` is one of the revised pages: numbered pages 0 to 9, in
/// their directories, whatever the query (the site ignores it).
fn is_revised(site: &DemoSite, url: &str) -> bool {
    let path = url[site.base_url().len()..].split('?').next().unwrap();
    (0..10).any(|n| path == format!("/pages/{}/{n}.html", ["a", "b", "c"][n % 3]))
}

#[test]
fn a_recrawl_fetches_only_what_changed_and_archives_the_rest_as_revisits() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("ten");
    let (state, warc) = (scratch.0.join("state"), scratch.0.join("crawl.warc"));
    let first = crawl(&site, &state, &warc, &[]);
    assert!(first.values().all(|r| r.get("recrawl").is_none()));
    let pages_with_validators = first.values().filter(|r| r["status"] == 200).count();

    site.revise_pages(10);
    site.reset_counters();
    let again = crawl(&site, &state, &warc, &["--recrawl"]);

    // Every URL again, and the one page only the revised ones link to.
    let changes = site.url("/changes.html");
    let mut want: BTreeSet<&String> = first.keys().collect();
    want.insert(&changes);
    assert_eq!(again.keys().collect::<BTreeSet<_>>(), want);
    let labelled = |label: &str| -> BTreeSet<String> {
        again
            .iter()
            .filter(|(_, r)| r["recrawl"] == label)
            .map(|(url, _)| url.clone())
            .collect()
    };
    let revised: BTreeSet<String> = first
        .keys()
        .filter(|url| is_revised(&site, url))
        .cloned()
        .collect();
    // The ten, and one of them again with a query.
    assert_eq!(revised.len(), 11);
    assert_eq!(labelled("changed"), revised);
    assert_eq!(labelled("new"), BTreeSet::from([changes.clone()]));
    assert_eq!(labelled("not-modified").len(), first.len() - revised.len());
    // The site sent a page only for the ten and the new one: every other
    // page it answered 304, and each URL was asked for once.
    let counters = site.counters();
    assert_eq!(
        counters.not_modified as usize,
        pages_with_validators - revised.len()
    );
    let bodies: BTreeSet<String> = again
        .iter()
        .filter(|(_, r)| r["status"] == 200)
        .map(|(url, _)| url.clone())
        .collect();
    let mut fetched_whole = revised.clone();
    fetched_whole.insert(changes.clone());
    assert_eq!(bodies, fetched_whole);
    for url in again.keys() {
        let path = &url[site.base_url().len()..];
        assert_eq!(counters.per_path.get(path), Some(&1), "{path}");
    }
    // The changed pages' links were read (one more: the changes); the
    // others' were not.
    let a0 = site.url("/pages/a/0.html");
    let links = |crawl: &BTreeMap<String, Value>| crawl[&a0]["num_urls"].as_u64().unwrap();
    assert_eq!(links(&again), links(&first) + 1);
    assert_eq!(again[&site.url("/")]["num_urls"], 0);

    // warcio reads every record, and a 304 is a revisit of the record
    // that holds its page (the first crawl's).
    let checked = std::process::Command::new(python_tool("warcio"))
        .args(["check", "-v"])
        .arg(&warc)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
    let index = std::process::Command::new(python_tool("warcio"))
        .args(["index", "-f", "warc-type,warc-profile"])
        .arg(&warc)
        .output()
        .unwrap();
    let profiles = String::from_utf8(index.stdout).unwrap();
    let not_modified = profiles
        .lines()
        .filter(|l| l.contains("/revisit/server-not-modified"))
        .count();
    assert_eq!(not_modified, pages_with_validators - revised.len());
    // Replayed, the archive gives every page as the site serves it now:
    // the revised ones from this crawl, the others from the first.
    let payloads = common::replayed_payloads(&warc);
    for (url, record) in &again {
        if record["status"] == 200 || record["status"] == 304 {
            let path = &url[site.base_url().len()..];
            assert_eq!(payloads[url], common::body(&site, path), "{url}");
        }
    }

    // Crawled a third time with nothing changed: every URL not modified.
    site.reset_counters();
    let third = crawl(&site, &state, &warc, &["--recrawl"]);
    assert_eq!(third.len(), again.len());
    assert!(third.values().all(|r| r["recrawl"] == "not-modified"));
    assert_eq!(
        site.counters().not_modified as usize,
        pages_with_validators + 1
    );
}

#[test]
fn a_recrawl_needs_the_finished_crawl_it_names() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("usage");
    let state = scratch.0.join("state");
    let recrawl = |root: &str| {
        let out = common::stage3()
            .args([root, "--recrawl", "--state"])
            .arg(&state)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Nothing crawled yet.
    let (code, stderr) = recrawl(&site.url("/"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("holds no crawl to crawl again"), "{stderr}");
    // A crawl killed before its end is resumed first.
    let slow = DemoSite::start(SiteConfig {
        delay: std::time::Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let killed = scratch.0.join("killed");
    let mut child = common::stage3()
        .args([&slow.url("/"), "--max-tasks", "1", "--state"])
        .arg(&killed)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(slow.wait_until(std::time::Duration::from_secs(30), |c| c.requests >= 5));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = common::stage3()
        .args([&slow.url("/"), "--recrawl", "--state"])
        .arg(&killed)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did not finish"), "{stderr}");
    // Finished, another root is not this crawl.
    let out = common::stage3()
        .args([&site.url("/"), "--state"])
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (code, stderr) = recrawl(&site.url("/pages/"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("it holds another crawl"), "{stderr}");
    // --recrawl alone is a usage error.
    let out = common::stage3()
        .args([&site.url("/"), "--recrawl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_recrawl_killed_halfway_goes_on_where_it_was() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        // Slow enough that the kill comes long before the end (a hundred
        // URLs left, two at a time).
        delay: std::time::Duration::from_millis(20),
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("killed");
    let (state, warc) = (scratch.0.join("state"), scratch.0.join("crawl.warc"));
    let first = crawl(&site, &state, &warc, &[]);
    site.revise_pages(10);
    site.reset_counters();
    let mut child = common::stage3()
        .arg(site.url("/"))
        .args(["--max-tasks", "2", "--recrawl", "--state"])
        .arg(&state)
        .arg("--warc")
        .arg(&warc)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(site.wait_until(std::time::Duration::from_secs(30), |c| c.requests >= 40));
    child.kill().unwrap();
    child.wait().unwrap();
    // The same command again finishes this recrawl; it does not begin
    // another, which would find nothing changed.
    let again = crawl(&site, &state, &warc, &["--recrawl"]);
    assert_eq!(again.len(), first.len() + 1);
    let changed: BTreeSet<&String> = again
        .iter()
        .filter(|(_, r)| r["recrawl"] == "changed")
        .map(|(url, _)| url)
        .collect();
    let revised: BTreeSet<&String> = first.keys().filter(|u| is_revised(&site, u)).collect();
    assert_eq!(changed, revised);
    assert_eq!(again[&site.url("/changes.html")]["recrawl"], "new");
    let checked = std::process::Command::new(python_tool("warcio"))
        .arg("check")
        .arg(&warc)
        .output()
        .unwrap();
    assert!(checked.status.success());
    let payloads = common::replayed_payloads(&warc);
    for url in revised {
        let path = &url[site.base_url().len()..];
        assert_eq!(payloads[url], common::body(&site, path), "{url}");
    }
}

#[test]
fn a_compressed_site_recrawled_is_not_modified() {
    // Polite mode compresses, and a 304 names the page's coding.
    let site = DemoSite::start(SiteConfig {
        validators: true,
        polite: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("compressed");
    let (state, warc) = (scratch.0.join("state"), scratch.0.join("crawl.warc"));
    let first = crawl(&site, &state, &warc, &[]);
    let again = crawl(&site, &state, &warc, &["--recrawl"]);
    let missing: Vec<&String> = first.keys().filter(|u| !again.contains_key(*u)).collect();
    let extra: Vec<&String> = again.keys().filter(|u| !first.contains_key(*u)).collect();
    assert_eq!((&missing, &extra), (&vec![], &vec![]));
    for (url, record) in &again {
        // Every page answered 200 is 304 now, none failing to decode (the
        // compression bomb, refused last time, is not sent again at all).
        assert!(record["exception"].is_null(), "{url}: {record}");
        if first[url]["status"] == 200 {
            assert_eq!(record["status"], 304, "{url}");
        }
        assert_eq!(record["recrawl"], "not-modified", "{url}");
    }
}

/// The site's pages as the archive replays them, for every URL of `crawl`
/// the site answered 200 (or 304) to.
fn assert_replays_as_served(site: &DemoSite, warc: &Path, crawl: &BTreeMap<String, Value>) {
    let payloads = common::replayed_payloads(warc);
    for (url, record) in crawl {
        if record["status"] == 200 || record["status"] == 304 {
            let path = &url[site.base_url().len()..];
            assert_eq!(payloads[url], common::body(site, path), "{url}");
        }
    }
}

#[test]
fn a_recrawl_without_the_archive_leaves_it_no_stale_pages() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("without");
    let (state, warc) = (scratch.0.join("state"), scratch.0.join("crawl.warc"));
    let other = scratch.0.join("elsewhere.warc");
    crawl(&site, &state, &warc, &[]);
    site.revise_pages(10);
    // The recrawl that saw the changes archived them elsewhere; the next
    // one, into the first archive, must not take the journal's new tags for
    // the archive's old pages.
    crawl(&site, &state, &other, &["--recrawl"]);
    let third = crawl(&site, &state, &warc, &["--recrawl"]);
    for (url, record) in &third {
        if is_revised(&site, url) {
            assert_eq!(record["recrawl"], "changed", "{url}");
        }
    }
    assert_replays_as_served(&site, &warc, &third);
}

#[test]
fn a_recrawl_whose_archive_was_behind_fetches_again_what_it_lost() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let scratch = Scratch::new("behind");
    let (state, warc) = (scratch.0.join("state"), scratch.0.join("crawl.warc"));
    crawl(&site, &state, &warc, &[]);
    let archived = std::fs::metadata(&warc).unwrap().len();
    site.revise_pages(10);
    crawl(&site, &state, &warc, &["--recrawl"]);
    // As if killed with the archivers behind: the journal has the recrawl
    // done but its last line torn, and the archive has none of its records.
    let file = std::fs::OpenOptions::new().write(true).open(&warc).unwrap();
    file.set_len(archived).unwrap();
    let journal = state.join("journal");
    let mut text = std::fs::read(&journal).unwrap();
    text.truncate(text.len() - 10);
    std::fs::write(&journal, text).unwrap();
    // The same command again fetches the lost pages whole, and archives
    // them: replayed, the archive has every page as served now.
    let resumed = crawl(&site, &state, &warc, &["--recrawl"]);
    let changed = resumed
        .iter()
        .filter(|(_, r)| r["recrawl"] == "changed")
        .count();
    assert_eq!(changed, 11);
    assert_replays_as_served(&site, &warc, &resumed);
}
