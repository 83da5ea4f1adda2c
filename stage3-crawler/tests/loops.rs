//! `--loops N`: a crawl of many hosts on several event loops reports
//! exactly what one loop reports, the site sees each URL requested once,
//! and Ctrl-C still names every URL seen, across loops.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use serde_json::Value;

/// Hosts of the site: `h0.many.test` … `h29.many.test`.
const HOSTS: usize = 30;

/// What the site saw: how many times each `host path` was asked for.
#[derive(Default)]
struct Seen {
    counts: Mutex<BTreeMap<String, usize>>,
    arrived: Condvar,
}

impl Seen {
    /// Waits until `n` requests have arrived (a condition, not a sleep).
    fn wait_for(&self, n: usize) {
        let mut counts = self.counts.lock().unwrap();
        while counts.values().sum::<usize>() < n {
            counts = self.arrived.wait(counts).unwrap();
        }
    }
}

/// A site of [`HOSTS`] hosts on one port, told apart by the `Host`
/// header. Host N's `/` links two paths of its own, a redirect, a missing
/// page, two other hosts, a `mailto:`, an off-site host and an href that
/// is no URL (the same on every host); `/p` links another host; its
/// `/redirect` goes to a third host. With `stall`, every `/p` never
/// answers.
fn many_hosts(stall: bool) -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let seen = Arc::clone(&shared);
            thread::spawn(move || serve(stream, addr.port(), stall, &seen));
        }
    });
    (addr, seen)
}

fn host(n: usize, port: u16) -> String {
    format!("h{}.many.test:{port}", n % HOSTS)
}

fn serve(stream: TcpStream, port: u16, stall: bool, seen: &Seen) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or("").to_string();
        let mut name = String::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                break;
            }
            if let Some(value) = header.strip_prefix("Host: ") {
                name = value.trim().to_string();
            }
        }
        *seen
            .counts
            .lock()
            .unwrap()
            .entry(format!("{name} {path}"))
            .or_default() += 1;
        seen.arrived.notify_all();
        let n: usize = name
            .strip_prefix('h')
            .and_then(|rest| rest.split('.').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let (status, extra, body) = match path.as_str() {
            "/" => (
                "200 OK",
                String::new(),
                format!(
                    "<a href=/p>p</a><a href=/redirect>r</a><a href=/missing>m</a>\
                     <a href=http://{}/>next</a><a href=http://{}/p>far</a>\
                     <a href=mailto:someone@h{n}.many.test>mail</a>\
                     <a href=http://elsewhere.example/>away</a><a href=http://[oops>bad</a>",
                    host(n + 1, port),
                    host(n * 7 + 3, port),
                ),
            ),
            "/p" if stall => {
                // Never answer; return when the client closes.
                let _ = reader.read_to_end(&mut Vec::new());
                return;
            }
            "/p" => (
                "200 OK",
                String::new(),
                format!(
                    "<a href=/>home</a><a href=/p?x=1>x</a><a href=http://{}/p>p</a>",
                    host(n + 2, port)
                ),
            ),
            "/p?x=1" => ("200 OK", String::new(), "<p>a leaf</p>".to_string()),
            "/redirect" => (
                "301 Moved Permanently",
                format!("Location: http://{}/p?x=1\r\n", host(n + 5, port)),
                String::new(),
            ),
            _ => ("404 Not Found", String::new(), "no".to_string()),
        };
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: text/html\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
    }
}

/// The crawler on the site with `loops` loops, its report in JSON.
fn crawler(addr: SocketAddr, loops: usize) -> Command {
    let mut command = common::stage3();
    command.args(["--lenient", "--report", "json", "-q", "--loops"]);
    command.arg(loops.to_string());
    for n in 0..HOSTS {
        command.arg("--resolve");
        command.arg(format!("{}:{}", host(n, addr.port()), addr.ip()));
    }
    command.arg(format!("http://{}/", host(0, addr.port())));
    command
}

/// A report's records without what may differ between two runs (which
/// page found a URL first, the site's port), sorted; and its summary
/// without times and the workers' count.
fn report(output: &Output, addr: SocketAddr) -> (BTreeSet<String>, Value) {
    let mut records = BTreeSet::new();
    let mut summary = Value::Null;
    let stdout =
        String::from_utf8_lossy(&output.stdout).replace(&format!(":{}", addr.port()), ":PORT");
    for line in stdout.lines() {
        let mut value: Value = serde_json::from_str(line).unwrap();
        if let Some(s) = value.get_mut("summary") {
            for key in ["secs", "max_tasks", "urls_per_sec_per_task", "connections"] {
                s.as_object_mut().unwrap().remove(key);
            }
            summary = s.take();
        } else {
            value.as_object_mut().unwrap().remove("from");
            // As between two runs of one loop: which page saw a link first.
            value.as_object_mut().unwrap().remove("num_new_urls");
            // The site's pages hold its address, whose port differs from
            // run to run: compressed, they differ in size by a byte or two.
            value.as_object_mut().unwrap().remove("wire_size");
            records.insert(value.to_string());
        }
    }
    (records, summary)
}

fn urls(records: &BTreeSet<String>) -> BTreeMap<String, String> {
    records
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap();
            let url = v["url"].as_str().unwrap().to_string();
            let what = match v.get("skipped") {
                Some(reason) => format!("skipped {}", reason.as_str().unwrap()),
                None => format!("status {}", v["status"]),
            };
            (url, what)
        })
        .collect()
}

#[test]
fn several_loops_report_exactly_what_one_loop_reports() {
    let mut reports = Vec::new();
    for loops in [1, 2, 3] {
        let (addr, seen) = many_hosts(false);
        let output = crawler(addr, loops).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Every URL of the site asked for exactly once, by whichever loop.
        let counts = seen.counts.lock().unwrap();
        assert_eq!(counts.len(), HOSTS * 6, "{counts:?}");
        assert!(counts.values().all(|n| *n == 1), "{counts:?}");
        reports.push(report(&output, addr));
    }
    let (records, summary) = &reports[0];
    let got = urls(records);
    // 30 hosts × `/`, `/p`, `/p?x=1`, `/redirect`, `/missing`; a mailto
    // per host, one off-site host and one bad href.
    assert_eq!(got.len(), HOSTS * 5 + HOSTS + 2);
    assert_eq!(summary["done"], HOSTS * 5);
    assert_eq!(summary["counters"]["redirect"], HOSTS);
    assert_eq!(summary["counters"]["status_404"], HOSTS);
    assert_eq!(summary["counters"]["skipped_scheme"], HOSTS);
    assert_eq!(summary["counters"]["skipped_off-host"], 1);
    assert_eq!(summary["counters"]["skipped_invalid-url"], 1);
    for (loops, (other_records, other_summary)) in [2, 3].iter().zip(&reports[1..]) {
        assert_eq!(&urls(other_records), &got, "{loops} loops");
        assert_eq!(other_records, records, "{loops} loops");
        // The robots.txt outcomes come in each loop's order.
        let sorted = |s: &Value| {
            let mut s = s.clone();
            let robots = s["robots"].as_array_mut().unwrap();
            robots.sort_by_key(|r| r["origin"].as_str().unwrap().to_string());
            s
        };
        assert_eq!(sorted(other_summary), sorted(summary), "{loops} loops");
    }
}

#[test]
fn ctrl_c_names_every_url_seen_on_every_loop() {
    let (addr, seen) = many_hosts(true);
    let mut child = crawler(addr, 2)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Everything but the 30 `/p` answers; they never do. Each host's
    // robots.txt, `/`, `/p`, `/redirect`, `/missing` and `/p?x=1`, asked
    // for (the last answers may still be on their way when Ctrl-C comes).
    seen.wait_for(HOSTS * 6);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&stderr)
    );
    let output = Output {
        status,
        stdout,
        stderr,
    };
    let (records, summary) = report(&output, addr);
    let got = urls(&records);
    // Each URL once, and every URL seen is there.
    assert_eq!(got.len(), records.len());
    assert_eq!(got.len(), HOSTS * 5 + HOSTS + 2);
    for n in 0..HOSTS {
        let p = format!("http://h{n}.many.test:PORT/p");
        assert_eq!(got[&p], "skipped interrupted", "{p}");
    }
    assert_eq!(summary["interrupted"], true);
    // A page whose answer came just before Ctrl-C may still have been on
    // its way through the crawler: it is named interrupted too. The
    // summary counts what the records say.
    let interrupted = got.values().filter(|w| *w == "skipped interrupted").count();
    assert!(interrupted >= HOSTS);
    assert_eq!(summary["counters"]["skipped_interrupted"], interrupted);
}

/// The built-in demo site (one host, on one of the loops), with its port.
fn demo_crawl(loops: usize) -> (BTreeSet<String>, Value) {
    let output = common::stage3()
        .args(["--report", "json", "--loops", &loops.to_string()])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let root = stderr
        .lines()
        .find_map(|l| l.split("started in-process at ").nth(1))
        .unwrap();
    let addr: SocketAddr = root
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    report(&output, addr)
}

#[test]
fn the_demo_site_on_two_loops_is_the_demo_site_on_one() {
    let (one, one_summary) = demo_crawl(1);
    let (two, two_summary) = demo_crawl(2);
    assert_eq!(two, one);
    assert_eq!(two_summary, one_summary);
    assert_eq!(one_summary["done"], 138);
}

/// The `WARC-Target-URI` of each response (or revisit) record in the archive at
/// `path`, the port made `PORT`, sorted; and how many there were.
fn archived(path: &std::path::Path, addr: SocketAddr) -> (Vec<String>, usize) {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap())
        .replace(&format!(":{}", addr.port()), ":PORT");
    let mut uris = Vec::new();
    let mut response = false;
    for line in text.lines() {
        if line == "WARC/1.1" {
            response = false;
        } else if line == "WARC-Type: response" || line == "WARC-Type: revisit" {
            response = true;
        } else if let Some(uri) = line.strip_prefix("WARC-Target-URI: ")
            && response
        {
            uris.push(uri.to_string());
        }
    }
    let n = uris.len();
    uris.sort();
    (uris, n)
}

#[test]
fn several_loops_archive_every_exchange_in_one_warc() {
    let dir = std::env::temp_dir().join(format!("stage3-loops-warc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut archives = Vec::new();
    for loops in [1, 3] {
        let (addr, _seen) = many_hosts(false);
        let path = dir.join(format!("loops-{loops}.warc"));
        let output = crawler(addr, loops)
            .arg("--warc")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        archives.push(archived(&path, addr));
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Every fetch's exchange, robots.txt's included, once.
    assert_eq!(archives[0].1, HOSTS * 6);
    assert_eq!(archives[1], archives[0]);
}

#[test]
fn the_polite_demo_site_on_two_loops_is_the_polite_demo_site_on_one() {
    let mut reports = Vec::new();
    for loops in [1, 2] {
        let site = demo_site::DemoSite::start(demo_site::SiteConfig {
            polite: true,
            ..demo_site::SiteConfig::default()
        })
        .unwrap();
        let output = common::stage3()
            .args(["--report", "json", "-q", "--loops", &loops.to_string()])
            // The calendar trap's first three months, whatever the order
            // the pages come in (its thousandth month would depend on it).
            .args(["--max-query-variants", "3"])
            .arg(site.url("/"))
            .output()
            .unwrap();
        assert!(output.status.success());
        let addr: SocketAddr = site
            .base_url()
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let counters = site.counters();
        // robots.txt once, and every page once, whichever loop asked.
        assert_eq!(counters.per_path["/robots.txt"], 1);
        assert!(
            counters.per_path.values().all(|n| *n == 1),
            "{:?}",
            counters.per_path
        );
        reports.push(report(&output, addr));
        site.shutdown();
    }
    let (one, two) = (&reports[0], &reports[1]);
    let only_one: Vec<_> = one.0.difference(&two.0).collect();
    let only_two: Vec<_> = two.0.difference(&one.0).collect();
    assert!(
        only_one.is_empty() && only_two.is_empty(),
        "only on one loop: {only_one:?}\nonly on two: {only_two:?}"
    );
    assert_eq!(two.1, one.1);
    assert!(one.1["counters"]["skipped_robots"].as_u64() > Some(0));
}

#[test]
fn max_pages_counts_every_loops_pages() {
    for loops in [1, 3] {
        let (addr, seen) = many_hosts(false);
        let output = crawler(addr, loops)
            .args(["--max-pages", "40"])
            .output()
            .unwrap();
        assert!(output.status.success());
        let (records, summary) = report(&output, addr);
        // Forty URLs queued in all, whichever loop queued them; every
        // other URL seen is skipped, once.
        assert_eq!(summary["done"], 40, "{loops} loops");
        let got = urls(&records);
        assert_eq!(got.len(), records.len());
        let over = got.values().filter(|w| *w == "skipped max-pages").count();
        assert!(over > 0);
        assert_eq!(summary["counters"]["skipped_max-pages"], over);
        assert!(seen.counts.lock().unwrap().values().all(|n| *n == 1));
    }
}

#[test]
fn the_progress_line_counts_every_loops_pages() {
    let output = common::stage3()
        .args(["--loops", "2", "--progress", "always", "-q"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The last state stays: every page done, nothing left anywhere.
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("\r\x1b[K138 done, 0 queued or in flight, 2 errors, "),
        "{last:?}"
    );
}

#[test]
fn what_several_loops_cannot_do_yet_is_a_usage_error() {
    let output = common::stage3()
        .args(["--loops", "2", "--max-depth", "1", "http://127.0.0.1:1/"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--loops 2 cannot be used with --max-depth yet"),
        "{stderr}"
    );
    // One loop takes everything.
    let output = common::stage3()
        .args(["--loops", "1", "--max-depth", "0", "--report", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
}
