//! Ctrl-C: every URL seen is still in the report (fetched, in flight or
//! queued), the counts add up, and a second Ctrl-C right after the first
//! never tears the report.

mod common;

use std::collections::BTreeSet;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use demo_site::testing::read_request;
use stage3_crawler::{Config, Crawler, Outcome, SkipReason};
use url::Url;

/// A site where `/` links to five pages and one other host, `/a` answers
/// at once and links to `/f`, and every other page never answers. Each
/// request line is sent on the returned channel as it arrives.
fn stuck_site() -> (SocketAddr, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            thread::spawn(move || serve(stream, addr, &tx));
        }
    });
    (addr, rx)
}

fn serve(stream: TcpStream, addr: SocketAddr, tx: &mpsc::Sender<String>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    while let Some(request) = read_request(&mut reader) {
        let path = request.split(' ').nth(1).unwrap_or("").to_string();
        let body = match path.as_str() {
            "/" => format!(
                "<a href=/a>a</a><a href=/b>b</a><a href=/c>c</a><a href=/d>d</a>\
                 <a href=/e>e</a><a href=http://other.test:{}/x>x</a>",
                addr.port()
            ),
            "/a" => "<a href=/f>f</a>".to_string(),
            _ => {
                let _ = tx.send(path);
                // Never answer; return when the client closes.
                let _ = reader.read_to_end(&mut Vec::new());
                return;
            }
        };
        let _ = tx.send(path);
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    }
}

/// Waits until the site has seen `n` requests (bounded: a crawl that never
/// gets there fails the test instead of hanging it).
fn wait_for_requests(rx: &mpsc::Receiver<String>, n: usize) -> BTreeSet<String> {
    (0..n)
        .map(|_| rx.recv_timeout(Duration::from_secs(60)).expect("a request"))
        .collect()
}

#[test]
fn an_interrupted_crawl_names_every_url_it_saw() {
    let (addr, requests) = stuck_site();
    let root = Url::parse(&format!("http://{addr}/")).unwrap();
    let config = Config {
        max_tasks: 2,
        parse_threads: 0,
        ..common::config()
    };
    let runtime = runtime::Runtime::new().unwrap();
    let crawler = Rc::new(Crawler::new(vec![root.clone()], config).unwrap());
    // Interrupted once both workers are stuck: `/`, `/a` and two of the
    // pages that never answer have been requested.
    let (seen_tx, seen_rx) = mpsc::channel();
    let interrupt = async move {
        let seen = runtime::spawn_blocking(move || wait_for_requests(&requests, 4))
            .await
            .unwrap();
        seen_tx.send(seen).unwrap();
    };
    let outcome = runtime.block_on(crawler.crawl_until(interrupt)).unwrap();
    assert_eq!(outcome, Outcome::Interrupted);
    let requested = seen_rx.recv().unwrap();
    let url = |path: &str| format!("http://{addr}{path}");
    let fetched: BTreeSet<String> = crawler.done().iter().map(|s| s.url.clone()).collect();
    assert_eq!(fetched, BTreeSet::from([url("/"), url("/a")]));
    let skipped = |reason| -> BTreeSet<(String, Option<String>)> {
        crawler
            .skipped()
            .iter()
            .filter(|s| s.reason == reason)
            .map(|s| (s.url.clone(), s.from.clone()))
            .collect()
    };
    // In flight: the two stuck pages the workers were waiting on.
    let stuck: Vec<&String> = requested
        .iter()
        .filter(|p| !["/", "/a"].contains(&p.as_str()))
        .collect();
    assert_eq!(stuck.len(), 2, "{requested:?}");
    let from_root = Some(url("/"));
    let want_interrupted: BTreeSet<(String, Option<String>)> = [
        (url("/b"), from_root.clone()),
        (url("/c"), from_root.clone()),
        (url("/d"), from_root.clone()),
        (url("/e"), from_root.clone()),
        (url("/f"), Some(url("/a"))),
    ]
    .into();
    assert_eq!(skipped(SkipReason::Interrupted), want_interrupted);
    assert_eq!(
        skipped(SkipReason::OffHost),
        BTreeSet::from([(format!("http://other.test:{}/x", addr.port()), from_root)])
    );
    // Every URL seen is accounted for exactly once.
    assert_eq!(crawler.seen(), 8);
    assert_eq!(crawler.done().len() + crawler.skipped().len(), 8);
}

#[test]
fn a_root_still_being_fetched_is_not_lost() {
    let (addr, requests) = stuck_site();
    let root = Url::parse(&format!("http://{addr}/b")).unwrap();
    let runtime = runtime::Runtime::new().unwrap();
    let crawler = Rc::new(Crawler::new(vec![root.clone()], common::config()).unwrap());
    let interrupt = async move {
        runtime::spawn_blocking(move || wait_for_requests(&requests, 1))
            .await
            .unwrap();
    };
    let outcome = runtime.block_on(crawler.crawl_until(interrupt)).unwrap();
    assert_eq!(outcome, Outcome::Interrupted);
    assert!(crawler.done().is_empty());
    let skipped = crawler.skipped();
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        (
            skipped[0].url.as_str(),
            skipped[0].reason,
            skipped[0].from.as_deref()
        ),
        (root.as_str(), SkipReason::Interrupted, None)
    );
}

/// Runs the binary on the stuck site with `--report json`, sends it two
/// SIGINTs at once when both workers are stuck, and returns its exit code
/// and stdout.
fn interrupt_twice(addr: SocketAddr, requests: &mpsc::Receiver<String>) -> (Option<i32>, String) {
    let mut child = common::stage3()
        .args([
            &format!("http://{addr}/"),
            "--max-tasks",
            "2",
            "--report",
            "json",
            "-q",
            "--progress",
            "never",
            // This site never answers anything else, robots.txt included.
            "--ignore-robots",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_requests(requests, 4);
    // One `kill` sending SIGINT twice to the same process, microseconds
    // apart, as `timeout` does to a child and its group.
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-INT", &pid, &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    (child.wait().unwrap().code(), stdout)
}

#[test]
fn two_sigints_at_once_never_tear_the_report() {
    let (addr, requests) = stuck_site();
    for run in 0..20 {
        let (code, stdout) = interrupt_twice(addr, &requests);
        assert_eq!(code, Some(130), "run {run}: {stdout}");
        assert!(stdout.ends_with('\n'), "run {run}: {stdout:?}");
        let lines: Vec<serde_json::Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("run {run}: {e}: {l}")))
            .collect();
        let (last, records) = lines.split_last().unwrap();
        let summary = &last["summary"];
        assert_eq!(summary["interrupted"], true, "run {run}");
        assert_eq!(summary["seen"], 8, "run {run}");
        assert_eq!(records.len(), 8, "run {run}: {stdout}");
        assert_eq!(summary["counters"]["skipped_interrupted"], 5, "run {run}");
        assert_eq!(summary["counters"]["skipped_off-host"], 1, "run {run}");
        assert_eq!(summary["done"], 2, "run {run}");
    }
}
