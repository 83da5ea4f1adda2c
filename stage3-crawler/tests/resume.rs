//! `--state DIR`: a crawl killed with SIGKILL at many points, or stopped
//! with Ctrl-C, resumes and ends with exactly the report of a crawl that
//! never stopped; the demo site's per-path request counter is the witness
//! that nothing was fetched more than once per kill. A damaged state is
//! refused with a clear error.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::Scratch;
use demo_site::{DemoSite, SiteConfig};

/// A site slow enough to be stopped in the middle: every response waits
/// 5 ms, and three workers share it.
fn slow_site() -> DemoSite {
    DemoSite::start(SiteConfig {
        delay: Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn crawler(site: &DemoSite, state: Option<&Path>) -> Command {
    crawler_with(site, state, &[])
}

fn crawler_with(site: &DemoSite, state: Option<&Path>, extra: &[&str]) -> Command {
    let mut command = common::stage3();
    command.args(extra);
    command.args([
        &site.url("/"),
        "--max-tasks",
        &WORKERS.to_string(),
        "--report",
        "json",
    ]);
    // The polite site's calendar is endless: three months are plenty.
    command.args(["--max-query-variants", "3"]);
    if let Some(state) = state {
        command.arg("--state").arg(state);
    }
    command
}

fn start(site: &DemoSite, state: &Path) -> Child {
    crawler(site, Some(state))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A report as sets: every statistic's URL and status, and every skipped
/// URL with its reason; and its count of lines and of URLs seen. (Which
/// page linked a skipped URL *first* depends on which worker got where
/// first, so `report` only checks that it is a page of the report.)
#[derive(Debug, PartialEq, Eq)]
struct Report {
    stats: BTreeSet<(String, String)>,
    skipped: BTreeSet<(String, String)>,
    lines: usize,
    seen: u64,
}

fn report(out: &Output) -> Report {
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let mut report = Report {
        stats: BTreeSet::new(),
        skipped: BTreeSet::new(),
        lines: 0,
        seen: 0,
    };
    let mut urls = BTreeSet::new();
    let mut froms = Vec::new();
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(summary) = v.get("summary") {
            report.seen = summary["seen"].as_u64().unwrap();
            continue;
        }
        report.lines += 1;
        let url = v["url"].as_str().unwrap().to_string();
        assert!(urls.insert(url.clone()), "{url} is in the report twice");
        match v.get("skipped") {
            Some(reason) => {
                report.skipped.insert((url, reason.to_string()));
                froms.extend(v["from"].as_str().map(str::to_string));
            }
            None => {
                report.stats.insert((url, v["status"].to_string()));
            }
        }
    }
    for from in froms {
        assert!(
            urls.contains(&from),
            "{from} linked a URL but is not in the report"
        );
    }
    report
}

/// Workers: at most this many fetches are in flight at a kill.
const WORKERS: u64 = 3;

/// Checks the site's witness after `kills` stops: no path requested more
/// than once per stop beyond the first, and no more requests beyond one
/// per path than the fetches a stop can leave unfinished (the workers'
/// URLs, and robots.txt, which a resumed crawl reads again).
fn assert_at_most_in_flight_again(site: &DemoSite, kills: u64, when: &str) {
    let per_path = site.counters().per_path;
    let again: u64 = per_path.values().map(|n| n - 1).sum();
    let most = per_path.values().max().copied().unwrap_or(0);
    assert!(
        most <= 1 + kills,
        "{when}: a path was requested {most} times"
    );
    assert!(
        again <= kills * (WORKERS + 1),
        "{when}: {again} requests were repeated: {per_path:?}"
    );
}

fn finish(site: &DemoSite, state: &Path) -> Output {
    let out = crawler(site, Some(state)).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The report of a crawl that never stopped, and the answer key's URLs.
fn reference(site: &DemoSite) -> Report {
    let out = crawler(site, None).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let reference = report(&out);
    let key: BTreeSet<String> = site.expected().into_iter().map(|e| e.url).collect();
    let stats: BTreeSet<String> = reference.stats.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(stats, key);
    reference
}

#[test]
fn killed_at_many_points_a_crawl_resumes_to_exactly_the_report_of_one_that_never_stopped() {
    let site = slow_site();
    let want = reference(&site);
    let total = site.counters().requests;
    // Kill points, in requests the site has seen in this crawl: the first
    // fetch (robots.txt), the first page, early, the middle, near the end.
    for kill_at in [1, 2, 10, total / 2, total - 3] {
        site.reset_counters();
        let scratch = Scratch::new(&format!("kill-{kill_at}"));
        let state = scratch.0.join("state");
        let mut child = start(&site, &state);
        assert!(
            site.wait_until(Duration::from_secs(30), |c| c.requests >= kill_at),
            "the crawl never reached {kill_at} requests"
        );
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let got = report(&finish(&site, &state));
        assert_eq!(got, want, "killed after {kill_at} requests");
        // At most the fetches in flight at the kill were done twice.
        assert_at_most_in_flight_again(&site, 1, &format!("killed after {kill_at}"));
    }
}

#[test]
fn killed_again_and_again_it_still_ends_with_the_same_report() {
    let site = slow_site();
    let want = reference(&site);
    let total = site.counters().requests;
    site.reset_counters();
    let scratch = Scratch::new("again");
    let state = scratch.0.join("state");
    // Each kill point counts the requests of every run so far.
    let kills = [total / 5, total / 2, total * 3 / 4];
    for kill_at in kills {
        let mut child = start(&site, &state);
        assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= kill_at));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let got = report(&finish(&site, &state));
    assert_eq!(got, want);
    assert_at_most_in_flight_again(&site, kills.len() as u64, "killed three times");
    // A finished crawl, run again, fetches nothing and reports the same.
    site.reset_counters();
    let again = report(&finish(&site, &state));
    assert_eq!(again, want);
    assert_eq!(site.counters().requests, 0, "nothing is fetched again");
}

#[test]
fn ctrl_c_saves_says_how_to_resume_and_exits_130() {
    let site = slow_site();
    let want = reference(&site);
    site.reset_counters();
    let scratch = Scratch::new("ctrl-c");
    let state = scratch.0.join("state");
    let child = start(&site, &state);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= 20));
    // Past the report's first 500 ms, a Ctrl-C would cut the report short;
    // this one stops the crawl.
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "The crawl's state is saved in {}: run the same command again to resume it.",
            state.display()
        )),
        "{stderr}"
    );
    // The interrupted report accounts for every URL seen; the resumed one
    // finishes the crawl.
    let interrupted = report(&out);
    assert!(
        interrupted
            .skipped
            .iter()
            .any(|(_, r)| r == "\"interrupted\"")
    );
    let got = report(&finish(&site, &state));
    assert_eq!(got, want);
    assert_at_most_in_flight_again(&site, 1, "after Ctrl-C");
}

#[test]
fn a_torn_journal_resumes_and_a_damaged_one_is_refused() {
    let site = slow_site();
    let want = reference(&site);
    let scratch = Scratch::new("damaged");
    let state = scratch.0.join("state");
    site.reset_counters();
    let mut child = start(&site, &state);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= 30));
    child.kill().unwrap();
    child.wait().unwrap();
    let journal = state.join("journal");
    let whole = std::fs::read(&journal).unwrap();
    // A crash in the middle of a write: half a line at the end.
    let mut torn = whole.clone();
    torn.extend_from_slice(b"0badc0de {\"done\":{\"url\":");
    std::fs::write(&journal, &torn).unwrap();
    // A copy, damaged in the middle.
    let damaged_state = scratch.0.join("damaged");
    std::fs::create_dir_all(&damaged_state).unwrap();
    let mut damaged = whole.clone();
    let middle = whole.len() / 2;
    damaged[middle] = if damaged[middle] == b'x' { b'y' } else { b'x' };
    std::fs::write(damaged_state.join("journal"), &damaged).unwrap();

    let out = finish(&site, &state);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("were cut off"), "{stderr}");
    assert_eq!(report(&out), want);

    let out = crawler(&site, Some(&damaged_state)).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "stage3-crawler: --state {}: {}: line ",
            damaged_state.display(),
            damaged_state.join("journal").display()
        )) && stderr.contains("is damaged"),
        "{stderr}"
    );
}

#[test]
fn a_state_of_another_crawl_or_without_roots_is_refused() {
    let site = slow_site();
    let scratch = Scratch::new("other");
    let state = scratch.0.join("state");
    finish(&site, &state);
    // Other roots: refused, and the state is left as it was.
    let before = std::fs::read(state.join("journal")).unwrap();
    let out = common::stage3()
        .arg(site.url("/pages/"))
        .arg("--state")
        .arg(&state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("it holds another crawl"), "{stderr}");
    assert_eq!(std::fs::read(state.join("journal")).unwrap(), before);
    // Other rules: refused too.
    let out = crawler(&site, Some(&state))
        .args(["--exclude", "pages"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // No roots: a usage error.
    let out = common::stage3()
        .arg("--state")
        .arg(&state)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--state needs the roots"), "{stderr}");
}

#[test]
fn a_resumed_crawl_keeps_robots_txt_and_the_crawl_delay() {
    let delay = Duration::from_millis(30);
    let site = common::crawl_delay_site(delay);
    let want = report(&crawler(&site, None).output().unwrap());
    site.reset_counters();
    let scratch = Scratch::new("polite");
    let state = scratch.0.join("state");
    let mut child = start(&site, &state);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= 6));
    child.kill().unwrap();
    child.wait().unwrap();
    let got = report(&finish(&site, &state));
    assert_eq!(got, want);
    let counters = site.counters();
    // The rules came from the state, not from a second request.
    assert_eq!(counters.per_path["/robots.txt"], 1);
    assert_at_most_in_flight_again(&site, 1, "polite");
    // And the host's Crawl-delay held across the kill: the resumed crawl
    // waited a delay before its first request.
    common::assert_spaced(&counters.request_log, delay);
}

#[test]
fn with_max_depth_a_resumed_crawl_still_goes_level_by_level() {
    let site = slow_site();
    let depth = ["--max-depth", "1"];
    let out = crawler_with(&site, None, &depth).output().unwrap();
    let want = report(&out);
    assert!(
        want.skipped.iter().any(|(_, reason)| reason == "\"depth\""),
        "the limit must matter: {want:?}"
    );
    let total = site.counters().requests;
    for kill_at in [5, total / 2] {
        site.reset_counters();
        let scratch = Scratch::new(&format!("depth-{kill_at}"));
        let state = scratch.0.join("state");
        let mut child = crawler_with(&site, Some(&state), &depth)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= kill_at));
        child.kill().unwrap();
        child.wait().unwrap();
        let out = crawler_with(&site, Some(&state), &depth).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(report(&out), want, "killed after {kill_at}");
        assert_at_most_in_flight_again(&site, 1, &format!("depth, killed after {kill_at}"));
    }
}

/// Requests per path, as a test server counts them.
type PathCounts = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, u32>>>;

/// A site of three pages where the first request for `/a` stops in the
/// middle of its body (and says so on `mid_body`), and later ones answer
/// whole. Counts the requests for each path.
fn half_body_site() -> (
    std::net::SocketAddr,
    std::sync::mpsc::Receiver<()>,
    PathCounts,
) {
    use std::io::{BufReader, Read, Write};
    use std::sync::{Arc, Mutex, mpsc};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (mid_body, told) = mpsc::channel();
    let counts = Arc::new(Mutex::new(std::collections::BTreeMap::new()));
    let seen = Arc::clone(&counts);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (mid_body, seen) = (mid_body.clone(), Arc::clone(&seen));
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                while let Some(request) = demo_site::testing::read_request(&mut reader) {
                    let path = request.split(' ').nth(1).unwrap_or("").to_string();
                    let n = {
                        let mut seen = seen.lock().unwrap();
                        let n = seen.entry(path.clone()).or_insert(0);
                        *n += 1;
                        *n
                    };
                    let body = match path.as_str() {
                        "/" => "<a href=/a>a</a> <a href=/b>b</a>".to_string(),
                        "/a" | "/b" => format!("<p>{}</p>", "x".repeat(990)),
                        _ => {
                            let _ = stream
                                .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                            continue;
                        }
                    };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    if path == "/a" && n == 1 {
                        let _ = stream.write_all(head.as_bytes());
                        let _ = stream.write_all(&body.as_bytes()[..100]);
                        let _ = stream.flush();
                        let _ = mid_body.send(());
                        // Hold it there until the client goes away.
                        let _ = reader.read_to_end(&mut Vec::new());
                        return;
                    }
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(body.as_bytes());
                }
            });
        }
    });
    (addr, told, counts)
}

#[test]
fn killed_in_the_middle_of_a_body_the_page_is_fetched_again_and_nothing_else() {
    let (addr, mid_body, counts) = half_body_site();
    let scratch = Scratch::new("mid-body");
    let state = scratch.0.join("state");
    let run = || {
        let mut command = common::stage3();
        command
            .arg(format!("http://{addr}/"))
            .args(["--report", "json", "--state"])
            .arg(&state);
        command
    };
    let mut child = run()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    mid_body
        .recv_timeout(Duration::from_secs(30))
        .expect("the crawler never asked for /a");
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run().output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let got = report(&out);
    let url = |path: &str| format!("http://{addr}{path}");
    let want: BTreeSet<(String, String)> = ["/", "/a", "/b"]
        .into_iter()
        .map(|p| (url(p), "200".to_string()))
        .collect();
    assert_eq!(got.stats, want);
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts["/a"], 2, "{counts:?}");
    assert_eq!(counts["/"], 1, "{counts:?}");
    assert_eq!(counts["/robots.txt"], 1, "{counts:?}");
    // /b was done before the kill, or in flight at it.
    assert!(counts["/b"] <= 2, "{counts:?}");
}

/// A journal is a file, and a file can be edited (issue 33): queued URLs
/// with valid checksums but another host or a `javascript:` scheme are not
/// fetched on resumption; they are in the report, skipped for that reason.
#[test]
fn a_resumed_crawl_checks_the_rules_for_every_url_of_its_journal() {
    let site = slow_site();
    let scratch = Scratch::new("edited");
    let state = scratch.0.join("state");
    let mut child = start(&site, &state);
    assert!(site.wait_until(Duration::from_secs(30), |c| c.requests >= 10));
    child.kill().unwrap();
    child.wait().unwrap();
    let journal = state.join("journal");
    let mut bytes = std::fs::read(&journal).unwrap();
    // Cut a torn last line, as the crawler would, so the new lines are whole.
    let end = bytes.iter().rposition(|&b| b == b'\n').unwrap();
    bytes.truncate(end + 1);
    let root = site.url("/");
    for url in ["http://elsewhere.example/x", "javascript:alert(1)"] {
        let fact = serde_json::json!({"queued": url, "from": root, "depth": 1, "redirects": 10});
        let text = fact.to_string();
        bytes.extend(format!("{:08x} {text}\n", crc32fast::hash(text.as_bytes())).into_bytes());
    }
    std::fs::write(&journal, &bytes).unwrap();
    let out = finish(&site, &state);
    let report = report(&out);
    let skipped_as = |url: &str| {
        report
            .skipped
            .iter()
            .find(|(u, _)| u == url)
            .map(|(_, reason)| reason.clone())
    };
    assert_eq!(
        skipped_as("http://elsewhere.example/x").as_deref(),
        Some("\"off-host\"")
    );
    assert_eq!(
        skipped_as("javascript:alert(1)").as_deref(),
        Some("\"scheme\"")
    );
    assert!(
        report
            .stats
            .iter()
            .all(|(url, _)| url.starts_with(&site.base_url()))
    );
}
