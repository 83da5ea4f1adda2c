//! The fault paths, and shutting down while clients misbehave.

mod common;

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{Client, get, raw_exchange};
use demo_site::{DemoSite, SiteConfig};

const WAIT: Duration = Duration::from_secs(10);

fn fetch_raw(site: &DemoSite, path: &str) -> Vec<u8> {
    raw_exchange(
        site.addr(),
        format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes(),
    )
}

/// Runs `site.shutdown()` on another thread and fails if it takes too long.
fn shutdown_promptly(site: DemoSite) {
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        site.shutdown();
        let _ = done_tx.send(());
    });
    assert!(
        done_rx.recv_timeout(WAIT).is_ok(),
        "shutdown did not finish within {WAIT:?}"
    );
}

#[test]
fn hang_never_answers_and_does_not_block_shutdown() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(b"GET /fault/hang HTTP/1.1\r\n\r\n");
    assert!(site.wait_until(WAIT, |c| c.requests == 1));
    // The request is in the server's hands. Nothing comes back (we can only
    // check "not yet", so look briefly), but the server stays responsive.
    client
        .stream()
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut byte = [0u8; 1];
    let err = client.stream().read(&mut byte).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut
    ));
    assert_eq!(get(site.addr(), "/").status, 200);
    // The hanging request counts as in flight for as long as it hangs.
    assert_eq!(site.counters().peak_in_flight, 2);

    shutdown_promptly(site);
    client.stream().set_read_timeout(Some(WAIT)).unwrap();
    let (bytes, _) = client.read_to_close();
    assert!(bytes.is_empty());
}

#[test]
fn close_mid_body_cuts_a_chunk_short() {
    let site = DemoSite::start_default().unwrap();
    let reply = fetch_raw(&site, "/fault/close-mid-body");
    let head =
        b"HTTP/1.1 200 OK\r\nServer: demo-site\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Transfer-Encoding: chunked\r\n\r\n3e8\r\n";
    assert!(
        reply.starts_with(head),
        "{:?}",
        String::from_utf8_lossy(&reply)
    );
    assert_eq!(reply.len() - head.len(), 100);
    // A real client notices the truncation.
    let mut client = Client::connect(site.addr());
    client.send(b"GET /fault/close-mid-body HTTP/1.1\r\n\r\n");
    assert!(client.read_response(false).is_err());
}

#[test]
fn short_body_sends_less_than_content_length() {
    let site = DemoSite::start_default().unwrap();
    let reply = fetch_raw(&site, "/fault/short-body");
    let text = String::from_utf8_lossy(&reply);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(head.contains("\r\nContent-Length: 500"));
    assert_eq!(body.len(), 100);
}

#[test]
fn garbage_is_not_http() {
    let site = DemoSite::start_default().unwrap();
    let reply = fetch_raw(&site, "/fault/garbage");
    assert!(!reply.is_empty());
    assert!(!reply.starts_with(b"HTTP/"));
    let mut client = Client::connect(site.addr());
    client.send(b"GET /fault/garbage HTTP/1.1\r\n\r\n");
    assert!(client.read_response(false).is_err());
}

#[test]
fn drop_closes_without_a_response() {
    let site = DemoSite::start_default().unwrap();
    assert!(fetch_raw(&site, "/fault/drop").is_empty());
    let counters = site.counters();
    assert_eq!(counters.per_path.get("/fault/drop"), Some(&1));
}

#[test]
fn flaky_fails_n_times_per_path_then_succeeds() {
    let site = DemoSite::start_default().unwrap();
    assert!(fetch_raw(&site, "/fault/flaky/2").is_empty());
    // Another target has its own count.
    assert!(fetch_raw(&site, "/fault/flaky/2?other").is_empty());
    assert!(fetch_raw(&site, "/fault/flaky/2").is_empty());
    for _ in 0..2 {
        let page = get(site.addr(), "/fault/flaky/2");
        assert_eq!(page.status, 200);
        assert_eq!(common::hrefs(&page.body), ["/"]);
    }
    assert_eq!(get(site.addr(), "/fault/flaky/0").status, 200);
    // Resetting the counters re-arms the failures.
    site.reset_counters();
    assert!(fetch_raw(&site, "/fault/flaky/2").is_empty());
}

#[test]
fn fault_paths_are_not_expected() {
    let site = DemoSite::start_default().unwrap();
    assert!(site.expected().iter().all(|e| !e.url.contains("/fault/")));
}

#[test]
fn shutdown_interrupts_delays_and_idle_connections() {
    let site = DemoSite::start(SiteConfig {
        path_delays: vec![("/feed.xml".to_string(), Duration::from_secs(3600))],
        ..SiteConfig::default()
    })
    .unwrap();
    // An idle keep-alive connection...
    let mut idle = Client::connect(site.addr());
    assert_eq!(idle.get("/").status, 200);
    // ...a request stuck in an hour-long delay...
    let mut delayed = Client::connect(site.addr());
    delayed.send(b"GET /feed.xml HTTP/1.1\r\n\r\n");
    // ...and a connection that never sends anything.
    let silent = TcpStream::connect(site.addr()).unwrap();
    assert!(site.wait_until(WAIT, |c| c.connections == 3 && c.requests == 2));

    shutdown_promptly(site);
    assert!(idle.is_closed_by_server());
    assert!(delayed.is_closed_by_server());
    drop(silent);
}

#[test]
fn dropping_the_site_shuts_it_down() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(b"GET /fault/hang HTTP/1.1\r\n\r\n");
    assert!(site.wait_until(WAIT, |c| c.requests == 1));
    drop(site);
    assert!(client.is_closed_by_server());
}
