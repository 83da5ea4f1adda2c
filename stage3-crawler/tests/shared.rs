//! `--frontier`: several crawler processes share one crawl through a real
//! redis-server. The merged report must equal the report of one process
//! crawling alone, exactly; the demo site's counters are the witness that
//! no page was fetched twice (or, after a kill, only what the killed
//! process held), and that the per-host cap holds summed over processes.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use demo_site::{DemoSite, SiteConfig};
use redis_client::RedisServer;

/// Workers per process.
const WORKERS: u64 = 3;

/// A site slow enough for three processes to share: every response waits
/// 5 ms.
fn slow_site() -> DemoSite {
    DemoSite::start(SiteConfig {
        delay: Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn crawler(extra: &[&str]) -> Command {
    let mut command = common::stage3();
    command.args(["--report", "json", "--max-tasks", &WORKERS.to_string()]);
    command.args(extra);
    command
}

/// The options of every crawl here: the demo site's calendar is endless,
/// three months are plenty.
fn rules(site: &DemoSite) -> Vec<String> {
    vec![site.url("/"), "--max-query-variants".into(), "3".into()]
}

/// The first process, with the roots.
fn first(site: &DemoSite, frontier: &str, extra: &[&str]) -> Child {
    let mut args: Vec<String> = rules(site);
    args.extend(["--frontier".into(), frontier.into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn(crawler(&args))
}

/// A process that joins, without roots or rules.
fn joiner(frontier: &str, extra: &[&str]) -> Child {
    let mut args = vec!["--frontier", frontier];
    args.extend(extra);
    spawn(crawler(&args))
}

fn spawn(mut command: Command) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished(child: Child) -> Output {
    let out = output(child);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The process's output once it exits; a process still running after two
/// minutes is a hung crawl, killed and reported as such.
fn output(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    rx.recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("the crawler (pid {pid}) did not finish in two minutes")
        })
}

/// A JSON report as (url, what): the status of a statistic, or the reason
/// of a skipped URL. Each URL must be in it once.
fn lines(out: &Output) -> BTreeSet<(String, String)> {
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let mut seen = BTreeSet::new();
    let mut lines = BTreeSet::new();
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v.get("summary").is_some() {
            continue;
        }
        let url = v["url"].as_str().unwrap().to_string();
        assert!(seen.insert(url.clone()), "{url} is in the report twice");
        let what = match v.get("skipped") {
            Some(reason) => reason.to_string(),
            None => v["status"].to_string(),
        };
        lines.insert((url, what));
    }
    lines
}

/// The processes' reports together, each URL in one of them only.
fn union_once(reports: &[BTreeSet<(String, String)>]) -> BTreeSet<(String, String)> {
    let mut union = BTreeSet::new();
    for report in reports {
        for line in report {
            assert!(union.insert(line.clone()), "{line:?} is in two reports");
        }
    }
    union
}

/// The report of one process crawling alone, without a frontier.
fn lone_crawl(site: &DemoSite) -> BTreeSet<(String, String)> {
    let args = rules(site);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crawler(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    lines(&out)
}

/// The report of one process crawling alone, checked against the demo
/// site's answer key.
fn reference(site: &DemoSite) -> BTreeSet<(String, String)> {
    let want = lone_crawl(site);
    let key: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    let fetched: BTreeSet<String> = want
        .iter()
        .filter(|(_, what)| !what.starts_with('"'))
        .map(|(url, _)| url.clone())
        .collect();
    assert_eq!(fetched, key);
    want
}

/// The whole crawl's report, merged from Redis.
fn merged(frontier: &str) -> BTreeSet<(String, String)> {
    let out = crawler(&["--frontier", frontier, "--report-only"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines(&out)
}

/// Requests per path, robots.txt aside (each process reads it).
fn pages_requested(site: &DemoSite) -> BTreeMap<String, u64> {
    let mut per_path = site.counters().per_path;
    per_path.remove("/robots.txt");
    per_path
}

#[test]
fn three_processes_share_one_crawl_and_fetch_each_page_once() {
    let site = slow_site();
    let want = reference(&site);
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("three").to_string();
    let a = first(&site, &frontier, &[]);
    let b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    let reports: Vec<BTreeSet<(String, String)>> =
        [a, b, c].into_iter().map(|p| lines(&finished(p))).collect();

    // Each URL is in one process's report, and together they are the crawl.
    let union = union_once(&reports);
    assert_eq!(union, want);
    assert_eq!(merged(&frontier), want);
    // Each page was requested once, by whichever process took it.
    let per_path = pages_requested(&site);
    assert!(per_path.values().all(|&n| n == 1), "{per_path:?}");
    assert!(site.counters().per_path["/robots.txt"] <= 3);
    // The joiners did take part: the slow site leaves work for everyone.
    assert!(
        reports.iter().filter(|r| !r.is_empty()).count() >= 2,
        "only one process fetched anything"
    );
}

#[test]
fn a_process_killed_mid_crawl_loses_nothing_the_others_finish_its_urls() {
    let site = slow_site();
    let want = reference(&site);
    let total = site.counters().requests;
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("killed").to_string();
    // Short leases, so that the killed process's URLs come back soon.
    let lease = ["--lease", "1s"];
    let a = first(&site, &frontier, &lease);
    let mut b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    assert!(
        site.wait_until(Duration::from_secs(30), |c| c.requests >= total / 3),
        "the crawl never got a third of the way"
    );
    b.kill().unwrap(); // SIGKILL
    b.wait().unwrap();
    finished(a);
    finished(c);
    assert_eq!(merged(&frontier), want);
    // At most what the killed process held was fetched again.
    let per_path = pages_requested(&site);
    let again: u64 = per_path.values().map(|n| n - 1).sum();
    assert!(per_path.values().all(|&n| n <= 2), "{per_path:?}");
    assert!(
        again <= WORKERS,
        "{again} pages were fetched again: {per_path:?}"
    );
}

#[test]
fn the_per_host_cap_holds_summed_over_processes() {
    let site = slow_site();
    let want = reference(&site);
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("capped").to_string();
    let a = first(&site, &frontier, &["--per-host", "2"]);
    let b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    for process in [a, b, c] {
        finished(process);
    }
    assert_eq!(merged(&frontier), want);
    // Three processes of three workers each, and never more than two
    // requests at once on the site.
    let peak = site.counters().peak_in_flight;
    assert!(peak <= 2, "{peak} requests at once");
}

#[test]
fn max_pages_is_counted_over_every_process() {
    let site = slow_site();
    let redis = RedisServer::start();
    let frontier = redis.url("max-pages").to_string();
    let a = first(&site, &frontier, &["--max-pages", "20"]);
    let b = joiner(&frontier, &[]);
    for process in [a, b] {
        finished(process);
    }
    let merged = merged(&frontier);
    let fetched = merged.iter().filter(|(_, w)| !w.starts_with('"')).count();
    assert_eq!(fetched, 20, "{merged:?}");
    assert!(merged.iter().any(|(_, w)| w == "\"max-pages\""));
    assert_eq!(pages_requested(&site).values().sum::<u64>(), 20);
}

#[test]
fn max_depth_is_exact_over_every_process() {
    let site = slow_site();
    // Alone: the levels of one process.
    let mut args = rules(&site);
    args.extend(["--max-depth".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crawler(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let want = lines(&out);
    assert!(want.iter().any(|(_, w)| w == "\"depth\""), "{want:?}");
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("max-depth").to_string();
    let a = first(&site, &frontier, &["--max-depth", "1"]);
    let b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    let reports: Vec<_> = [a, b, c].into_iter().map(|p| lines(&finished(p))).collect();
    assert_eq!(merged(&frontier), want);
    // The processes report what they fetched and refused; what was too
    // deep is known only at the end, in the whole crawl's report.
    let too_deep: BTreeSet<_> = want
        .iter()
        .filter(|(_, w)| w == "\"depth\"")
        .cloned()
        .collect();
    let mut union = union_once(&reports);
    union.extend(too_deep);
    assert_eq!(union, want);
    let per_path = pages_requested(&site);
    assert!(per_path.values().all(|&n| n == 1), "{per_path:?}");
}

/// The whole crawl's text report, merged from Redis: its sitemap lines.
fn merged_sitemaps(frontier: &str) -> Vec<String> {
    let out = common::stage3()
        .args(["--frontier", frontier, "--report-only", "--report", "text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    sitemap_lines(&out.stdout)
}

/// A text report's sitemap lines, in order of URL.
fn sitemap_lines(text: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(text)
        .lines()
        .filter(|l| l.starts_with("sitemap "))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn sitemaps_are_read_once_in_the_whole_crawl() {
    // The polite demo site: a robots.txt that names a sitemap index, which
    // names a gzipped sitemap, whose pages nothing links.
    let site = DemoSite::start(SiteConfig {
        polite: true,
        delay: Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let mut args = rules(&site);
    args.push("--sitemaps".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crawler(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let want = lines(&out);
    // The JSON report has no sitemap lines; the text report does.
    let alone = common::stage3()
        .args(&args)
        .args(["--report", "text", "--max-tasks", "3"])
        .output()
        .unwrap();
    let want_sitemaps = sitemap_lines(&alone.stdout);
    assert_eq!(want_sitemaps.len(), 2, "{want_sitemaps:?}");
    for page in site.expected_from_sitemaps() {
        assert!(want.iter().any(|(url, _)| *url == page), "{page}");
    }
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("sitemaps").to_string();
    let a = first(&site, &frontier, &["--sitemaps"]);
    let b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    let reports: Vec<_> = [a, b, c].into_iter().map(|p| lines(&finished(p))).collect();
    assert_eq!(union_once(&reports), want);
    assert_eq!(merged(&frontier), want);
    assert_eq!(merged_sitemaps(&frontier), want_sitemaps);
    // Each page, and each sitemap, requested once in the whole crawl
    // (robots.txt aside: each process reads it).
    let per_path = pages_requested(&site);
    assert!(per_path.values().all(|&n| n == 1), "{per_path:?}");
    assert!(
        per_path.keys().any(|p| p.starts_with("/sitemap")),
        "{per_path:?}"
    );

    // With --max-depth too: a sitemap's pages are depth 1, and the levels
    // hold for every process.
    let mut args = rules(&site);
    args.extend(["--sitemaps".into(), "--max-depth".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crawler(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let want = lines(&out);
    assert!(want.iter().any(|(_, w)| w == "\"depth\""), "{want:?}");
    let frontier = redis.url("sitemaps-depth").to_string();
    let a = first(&site, &frontier, &["--sitemaps", "--max-depth", "1"]);
    let b = joiner(&frontier, &[]);
    for process in [a, b] {
        finished(process);
    }
    assert_eq!(merged(&frontier), want);
}

#[test]
fn a_joiner_is_refused_for_an_explicit_option_that_differs_and_takes_the_others() {
    let site = slow_site();
    let redis = RedisServer::start();
    let frontier = redis.url("rules").to_string();
    finished(first(&site, &frontier, &["--per-host", "4"]));
    let refused = crawler(&["--frontier", &frontier, "--per-host", "8"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--per-host is 8 here, 4 in the crawl"),
        "{stderr}"
    );
    let other_roots = crawler(&[&site.url("/pages/a/"), "--frontier", &frontier])
        .output()
        .unwrap();
    assert_eq!(other_roots.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&other_roots.stderr).contains("has other roots"));
    // Without the option, it joins a crawl that is over: nothing to do.
    site.reset_counters();
    let joined = finished(joiner(&frontier, &[]));
    assert!(lines(&joined).is_empty());
    assert_eq!(site.counters().requests, 0);
}

#[test]
fn unreachable_redis_missing_crawls_and_clear() {
    let site = slow_site();
    // Nothing listens on a stopped server's port.
    let mut redis = RedisServer::start();
    let frontier = redis.url("gone").to_string();
    redis.kill();
    let out = crawler(&[&site.url("/"), "--frontier", &frontier])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot connect to redis"), "{stderr}");
    assert_eq!(site.counters().requests, 0);

    let redis = RedisServer::start();
    let frontier = redis.url("clear").to_string();
    let missing = crawler(&["--frontier", &frontier, "--report-only"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("there is no crawl at"));
    finished(first(&site, &frontier, &[]));
    clear(&frontier, &frontier);
}

/// `--frontier-clear` through `through`; then the crawl `frontier` names
/// is gone for `--report-only`.
fn clear(through: &str, frontier: &str) {
    let cleared = crawler(&["--frontier", through, "--frontier-clear"])
        .output()
        .unwrap();
    assert_eq!(cleared.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&cleared.stderr).contains("Deleted the crawl at"));
    let gone = crawler(&["--frontier", frontier, "--report-only"])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(1));
}

#[test]
fn redis_restarting_mid_crawl_costs_a_wait_and_redis_gone_stops_the_crawl() {
    let site = slow_site();
    let want = reference(&site);
    let total = site.counters().requests;
    site.reset_counters();
    // A server that keeps its data across a restart.
    let mut redis = RedisServer::start_with(true);
    let frontier = redis.url("restart").to_string();
    let a = first(&site, &frontier, &["--frontier-patience", "30s"]);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= total / 3));
    redis.restart();
    let out = finished(a);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is back"));
    assert_eq!(merged(&frontier), want);

    // Gone for good: the process stops, says so, and exits 1.
    site.reset_counters();
    let frontier = redis.url("lost").to_string();
    let b = first(&site, &frontier, &["--frontier-patience", "1s"]);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= total / 3));
    redis.kill();
    let out = output(b);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("The crawl's state is in Redis: run the command again"),
        "{stderr}"
    );
}

#[test]
fn a_crawl_cleared_under_a_running_process_is_gone_not_kept() {
    let site = slow_site();
    let total = reference_requests(&site);
    let redis = RedisServer::start();
    let frontier = redis.url("cleared").to_string();
    let a = first(&site, &frontier, &[]);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= total / 3));
    clear(&frontier, &frontier);
    let out = output(a);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is gone from Redis"), "{stderr}");
    // Running the command again would start a new crawl: it must not say
    // the state is there to go on with.
    assert!(
        !stderr.contains("The crawl's state is in Redis"),
        "{stderr}"
    );
    // And it wrote nothing after the clear: a crawl of the same name
    // starts from nothing.
    assert_eq!(keys(&redis), Vec::<String>::new());
}

/// Every key in `redis`, sorted.
fn keys(redis: &RedisServer) -> Vec<String> {
    let url = redis.url("any");
    runtime::Runtime::new()
        .unwrap()
        .block_on(async {
            let mut conn = url.connect().await.unwrap();
            let reply = conn.command(&["KEYS", "*"]).await.unwrap();
            let mut keys: Vec<String> = reply
                .into_items()
                .unwrap()
                .iter()
                .map(|key| String::from_utf8_lossy(key.as_bytes().unwrap()).into_owned())
                .collect();
            keys.sort();
            keys
        })
        .unwrap()
}

/// How many requests a lone crawl of `site` makes; the counters are reset.
fn reference_requests(site: &DemoSite) -> u64 {
    reference(site);
    let total = site.counters().requests;
    site.reset_counters();
    total
}

#[test]
fn a_crawl_delay_holds_across_processes() {
    let delay = Duration::from_millis(30);
    let site = common::crawl_delay_site(delay);
    // The polite site's traps go deeper than its answer key with these
    // options; what matters is that the shared crawl makes the same crawl.
    let want = lone_crawl(&site);
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("delay").to_string();
    let a = first(&site, &frontier, &[]);
    let b = joiner(&frontier, &[]);
    for process in [a, b] {
        finished(process);
    }
    assert_eq!(merged(&frontier), want);
    let counters = site.counters();
    // One request at a time to the host, over both processes, and each
    // starts at least the delay after the one before.
    assert_eq!(counters.peak_in_flight, 1);
    common::assert_spaced(&counters.request_log, delay);
    assert!(counters.per_path["/robots.txt"] <= 2);
}

#[test]
fn ctrl_c_gives_a_process_s_urls_back_and_the_others_finish_them() {
    let site = slow_site();
    let want = reference(&site);
    let total = site.counters().requests;
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("ctrl-c").to_string();
    let a = first(&site, &frontier, &[]);
    let b = joiner(&frontier, &[]);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= total / 3));
    let interrupted = Command::new("kill")
        .args(["-INT", &b.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = output(b);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    finished(a);
    assert_eq!(merged(&frontier), want);
    // What it held went back at once, not after its leases (30 s) ran out,
    // and was fetched again at most once.
    let per_path = pages_requested(&site);
    assert!(per_path.values().all(|&n| n <= 2), "{per_path:?}");
}

/// Each page's `num_urls` as a JSON report gives it.
fn num_urls(stdout: &[u8]) -> BTreeMap<String, u64> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            Some((v["url"].as_str()?.to_string(), v["num_urls"].as_u64()?))
        })
        .collect()
}

/// Links a process knows the frontier has seen stay in the process (issue
/// 37), yet each page still counts all its links, as a lone crawl counts
/// them: the page's `num_urls` is the same in the merged report, and the
/// URLs new to the crawl add up to the same.
#[test]
fn links_kept_in_the_process_still_count_in_each_page() {
    let site = slow_site();
    let args = rules(&site);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let alone = crawler(&args).output().unwrap();
    assert_eq!(alone.status.code(), Some(0));
    let redis = RedisServer::start();
    let frontier = redis.url("counts").to_string();
    let shared = finished(first(&site, &frontier, &[]));
    let merged = common::stage3()
        .args(["--frontier", &frontier, "--report-only", "--report", "json"])
        .output()
        .unwrap();
    let want = num_urls(&alone.stdout);
    assert!(want.values().sum::<u64>() > 1_000, "{want:?}");
    assert_eq!(num_urls(&shared.stdout), want);
    assert_eq!(num_urls(&merged.stdout), want);
}

#[test]
fn links_other_processes_saw_are_kept_back_and_still_count_in_each_page() {
    // Twenty links a page, most to pages seen already, and four processes:
    // each knows a quarter of the crawl, and asks Redis which of the rest
    // are seen before it sends them to a script (`keep_back_seen`).
    let site = DemoSite::start(SiteConfig {
        pages: 400,
        fan_out: 20,
        delay: Duration::from_millis(2),
        ..SiteConfig::default()
    })
    .unwrap();
    let want_lines = reference(&site);
    let args = rules(&site);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let alone = crawler(&args).output().unwrap();
    let want = num_urls(&alone.stdout);
    site.reset_counters();
    let redis = RedisServer::start();
    let frontier = redis.url("kept-back").to_string();
    let mut processes = vec![first(&site, &frontier, &["-v"])];
    processes.extend((0..3).map(|_| joiner(&frontier, &["-v"])));
    let outs: Vec<Output> = processes.into_iter().map(finished).collect();
    let kept_back = outs
        .iter()
        .flat_map(|o| {
            String::from_utf8_lossy(&o.stderr)
                .into_owned()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| l.contains("were seen by other processes: kept back"))
        .filter(|l| !l.contains(" 0 of "))
        .count();
    assert!(kept_back > 0, "no process kept a link back");
    let mut counts = BTreeMap::new();
    for out in &outs {
        counts.extend(num_urls(&out.stdout));
    }
    assert_eq!(counts, want);
    let merged_out = common::stage3()
        .args(["--frontier", &frontier, "--report-only", "--report", "json"])
        .output()
        .unwrap();
    assert_eq!(num_urls(&merged_out.stdout), want);
    let reports: Vec<_> = outs.iter().map(lines).collect();
    assert_eq!(union_once(&reports), want_lines);
    assert_eq!(merged(&frontier), want_lines);
    let per_path = pages_requested(&site);
    assert!(per_path.values().all(|&n| n == 1), "{per_path:?}");
}

/// Three slow sites, three hosts: on a cluster of three masters, a host on
/// each.
fn three_sites() -> Vec<DemoSite> {
    (0..3).map(|_| slow_site()).collect()
}

/// The roots and rules of a crawl of several sites.
fn sites_rules(sites: &[DemoSite]) -> Vec<String> {
    let mut args: Vec<String> = sites.iter().map(|s| s.url("/")).collect();
    args.extend(["--max-query-variants".into(), "3".into()]);
    args
}

/// A lone crawl of the sites, checked against their answer keys.
fn sites_reference(sites: &[DemoSite]) -> BTreeSet<(String, String)> {
    let args = sites_rules(sites);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crawler(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let want = lines(&out);
    let key: BTreeSet<String> = sites
        .iter()
        .flat_map(|s| s.expected().into_iter().map(|e| e.url))
        .collect();
    let fetched: BTreeSet<String> = want
        .iter()
        .filter(|(_, what)| !what.starts_with('"'))
        .map(|(url, _)| url.clone())
        .collect();
    assert_eq!(fetched, key);
    for site in sites {
        site.reset_counters();
    }
    want
}

/// Waits until the sites have answered a third of `total` requests.
fn wait_for_a_third(sites: &[DemoSite], total: u64) {
    let requests = || sites.iter().map(|s| s.counters().requests).sum::<u64>();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while requests() < total / 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the crawl never got a third of the way"
        );
        // Polling three sites' counters, with a deadline.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The first process of a crawl of `sites`, with the roots.
fn sites_first(sites: &[DemoSite], frontier: &str, extra: &[&str]) -> Child {
    let mut args = sites_rules(sites);
    args.extend(["--frontier".into(), frontier.into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn(crawler(&args))
}

/// `redis-cli -c` (which follows a cluster's redirections) on `port`.
fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-c", "-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn on_a_redis_cluster_three_processes_share_three_sites_over_three_shards() {
    let sites = three_sites();
    let want = sites_reference(&sites);
    let mut cluster = redis_client::RedisCluster::start(3);
    let frontier = cluster.url("cl").to_string();
    let a = sites_first(&sites, &frontier, &[]);
    // Any node of the cluster will do.
    let elsewhere = cluster.nodes()[1].url("cl").to_string();
    let b = joiner(&elsewhere, &[]);
    let c = joiner(&cluster.nodes()[2].url("cl").to_string(), &[]);
    let reports: Vec<_> = [a, b, c].into_iter().map(|p| lines(&finished(p))).collect();
    let union = union_once(&reports);
    assert_eq!(union, want);
    assert_eq!(merged(&frontier), want);
    assert_eq!(merged(&elsewhere), want);
    for site in &sites {
        let per_path = pages_requested(site);
        assert!(per_path.values().all(|&n| n == 1), "{per_path:?}");
    }
    // One host on each of the three shards, one shard on each master.
    let port = cluster.nodes()[0].port();
    let mut placed: Vec<String> = sites
        .iter()
        .map(|site| {
            let host = site.url("/").trim_start_matches("http://").replace('/', "");
            redis_cli(port, &["HGET", "stage3:{cl}:hosts", &host])
                .trim()
                .to_string()
        })
        .collect();
    placed.sort();
    assert_eq!(placed, ["0", "1", "2"]);
    let ports: Vec<u16> = cluster.nodes().iter().map(|n| n.port()).collect();
    let holding = ports
        .iter()
        .filter(|p| !redis_cli(**p, &["--scan", "--pattern", "stage3:*"]).is_empty())
        .count();
    assert_eq!(holding, 3, "every master holds a shard of the crawl");

    // Cleared from every master, whichever node is named.
    clear(&elsewhere, &frontier);
    for port in ports {
        assert_eq!(redis_cli(port, &["--scan", "--pattern", "stage3:*"]), "");
    }
}

#[test]
fn on_a_redis_cluster_a_process_killed_mid_crawl_loses_nothing() {
    let sites = three_sites();
    let want = sites_reference(&sites);
    let total: u64 = {
        // The lone crawl's requests, robots.txt aside, before the reset.
        want.iter().filter(|(_, w)| !w.starts_with('"')).count() as u64
    };
    let cluster = redis_client::RedisCluster::start(3);
    let frontier = cluster.url("ck").to_string();
    let a = sites_first(&sites, &frontier, &["--lease", "1s"]);
    let mut b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    wait_for_a_third(&sites, total);
    b.kill().unwrap(); // SIGKILL
    b.wait().unwrap();
    finished(a);
    finished(c);
    assert_eq!(merged(&frontier), want);
    let mut again = 0;
    for site in &sites {
        let per_path = pages_requested(site);
        assert!(per_path.values().all(|&n| n <= 2), "{per_path:?}");
        again += per_path.values().map(|n| n - 1).sum::<u64>();
    }
    assert!(again <= WORKERS, "{again} pages were fetched again");
}

#[test]
fn on_a_redis_cluster_a_master_restarting_mid_crawl_costs_a_wait() {
    let sites = three_sites();
    let want = sites_reference(&sites);
    let total = want.iter().filter(|(_, w)| !w.starts_with('"')).count() as u64;
    // Masters that keep their data, and their slots, across a restart.
    let mut cluster = redis_client::RedisCluster::start_with(3, true);
    let frontier = cluster.url("cr").to_string();
    let a = sites_first(&sites, &frontier, &["--frontier-patience", "30s"]);
    wait_for_a_third(&sites, total);
    // Not the node the crawl was started through: one that holds a shard.
    cluster.nodes()[2].restart();
    cluster.wait_until_ok();
    let out = finished(a);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is back"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(merged(&frontier), want);
}

#[test]
fn a_wait_a_host_asks_of_one_process_holds_for_every_process() {
    use common::static_site::{Answer, StaticSite};
    // /a asks for two seconds; the other pages take 300 ms each, so that
    // none ends while the wait is being told to Redis.
    let mut answers = vec![(
        "/a",
        Answer::text(429, "slow down")
            .with_header("Retry-After", "2")
            .then(1, Answer::links(&[])),
    )];
    let pages: Vec<String> = (1..=12).map(|n| format!("/b{n}")).collect();
    let mut links: Vec<&str> = vec!["/a"];
    links.extend(pages.iter().map(String::as_str));
    answers.push(("/", Answer::links(&links)));
    for page in &pages {
        answers.push((page, Answer::links(&[]).after(Duration::from_millis(300))));
    }
    let site = StaticSite::start(answers);
    let redis = RedisServer::start();
    let frontier = redis.url("pause").to_string();
    // The first process has one worker: holding /a while it waits, it
    // takes nothing more, and the host's other pages go to the others.
    let mut first = common::stage3();
    first.args(["--report", "json", "--max-tasks", "1", "--per-host", "2"]);
    first.args(["--frontier", &frontier, &site.url("/")]);
    let a = spawn(first);
    let b = joiner(&frontier, &[]);
    let c = joiner(&frontier, &[]);
    for process in [a, b, c] {
        finished(process);
    }
    // When the site said "slow down", and what it was asked after.
    let arrivals = site.arrivals();
    let said = arrivals.iter().find(|(_, p)| p == "/a").unwrap().0;
    let asked_during: Vec<&String> = arrivals
        .iter()
        .filter(|(at, _)| {
            *at > said + Duration::from_millis(100) && *at < said + Duration::from_secs(2)
        })
        .map(|(_, path)| path)
        .collect();
    // At most one page was granted with /a, before the wait: it arrived
    // with it. Nothing came during the wait, from any process.
    assert!(asked_during.is_empty(), "{asked_during:?}");
    assert_eq!(arrivals.iter().filter(|(_, p)| p == "/a").count(), 2);
    let merged = merged(&frontier);
    assert!(
        merged.contains(&(site.url("/a"), "200".to_string())),
        "{merged:?}"
    );
}
