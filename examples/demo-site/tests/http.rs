//! How the site speaks HTTP: framing, keep-alive, counters, delays and
//! malformed requests.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use common::{Client, Framing, get, raw_exchange};
use demo_site::{DemoSite, SiteConfig};

/// Long enough for any sane machine; only reached if the test fails.
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn chunked_and_content_length_for_http11() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    for (path, framing) in [
        ("/", Framing::Chunked),
        ("/pages/b/1.html", Framing::Chunked),
        ("/pages/a/3.html", Framing::Chunked),
        ("/pages/a/0.html", Framing::ContentLength),
        ("/pages/c/2.html", Framing::ContentLength),
        ("/framing/chunked.html", Framing::Chunked),
        ("/framing/content-length.html", Framing::ContentLength),
        ("/static/logo.png", Framing::ContentLength),
        ("/redirect/chain/1", Framing::ContentLength),
        ("/missing.html", Framing::ContentLength),
    ] {
        let response = client.get(path);
        assert_eq!(response.framing, framing, "{path}");
        assert_eq!(response.header("connection"), None, "{path}");
    }
}

#[test]
fn http10_bodies_are_close_delimited() {
    let site = DemoSite::start_default().unwrap();
    for path in [
        "/",
        "/pages/b/1.html",
        "/pages/a/0.html",
        "/static/logo.png",
    ] {
        let mut client = Client::connect(site.addr());
        client.send(format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes());
        let response = client.read_response(false).unwrap();
        assert_eq!(response.framing, Framing::Close, "{path}");
        assert_eq!(response.header("connection"), Some("close"), "{path}");
        assert_eq!(response.header("content-length"), None, "{path}");
        assert_eq!(response.header("transfer-encoding"), None, "{path}");
        // Same body as over HTTP/1.1.
        assert_eq!(response.body, get(site.addr(), path).body, "{path}");
    }
    // Even if the HTTP/1.0 client asks to keep the connection alive.
    let mut client = Client::connect(site.addr());
    client.send(b"GET /pages/a/0.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let response = client.read_response(false).unwrap();
    assert_eq!(response.framing, Framing::Close);
}

#[test]
fn keep_alive_reuses_one_connection() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    assert_eq!(client.get("/").status, 200);
    assert_eq!(client.get("/pages/a/0.html").status, 200);
    let counters = site.counters();
    assert_eq!((counters.connections, counters.requests), (1, 2));
    assert_eq!(counters.per_path.get("/"), Some(&1));
    assert_eq!(counters.per_path.get("/pages/a/0.html"), Some(&1));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(
        b"GET /pages/a/0.html HTTP/1.1\r\n\r\nGET /missing.html HTTP/1.1\r\n\r\n\
          GET /static/style.css HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    let statuses: Vec<u16> = (0..3)
        .map(|_| client.read_response(false).unwrap().status)
        .collect();
    assert_eq!(statuses, [200, 404, 200]);
    assert!(client.is_closed_by_server());
}

#[test]
fn connection_close_request_header_is_honoured() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(b"GET /pages/a/0.html HTTP/1.1\r\nConnection: close\r\n\r\n");
    let response = client.read_response(false).unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(client.is_closed_by_server());
}

#[test]
fn keep_alive_off_closes_after_every_response() {
    let site = DemoSite::start(SiteConfig {
        keep_alive: false,
        ..SiteConfig::default()
    })
    .unwrap();
    let mut client = Client::connect(site.addr());
    let response = client.get("/pages/b/1.html");
    assert_eq!(response.status, 200);
    // Still chunked: the framing does not depend on keep-alive.
    assert_eq!(response.framing, Framing::Chunked);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(client.is_closed_by_server());
}

#[test]
fn head_sends_headers_only() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(b"HEAD /pages/a/0.html HTTP/1.1\r\n\r\n");
    let head = client.read_response(true).unwrap();
    let full = client.get("/pages/a/0.html");
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length").map(str::to_string),
        Some(full.body.len().to_string())
    );
    // The connection is still usable, so no stray body bytes were sent.
    assert_eq!(full.status, 200);
}

#[test]
fn other_methods_get_405_and_the_connection_survives() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    client.send(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
    let response = client.read_response(false).unwrap();
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("GET, HEAD"));
    assert_eq!(client.get("/").status, 200);
}

#[test]
fn absolute_form_request_target() {
    let site = DemoSite::start_default().unwrap();
    let mut client = Client::connect(site.addr());
    let url = site.url("/pages/a/0.html");
    client.send(format!("GET {url} HTTP/1.1\r\n\r\n").as_bytes());
    let response = client.read_response(false).unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(site.counters().per_path.get("/pages/a/0.html"), Some(&1));
}

#[test]
fn peak_in_flight_counts_concurrent_requests() {
    const CLIENTS: usize = 4;
    // A delay far longer than the test: every request is still in flight
    // when we look, whatever the scheduling. Shutdown cuts the delays short.
    let site = DemoSite::start(SiteConfig {
        delay: Duration::from_secs(60),
        ..SiteConfig::default()
    })
    .unwrap();
    let addr = site.addr();
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut client = Client::connect(addr);
                barrier.wait();
                client.send(format!("GET /pages/a/0.html?client={i} HTTP/1.1\r\n\r\n").as_bytes());
                // Shutdown closes the connection without an answer.
                client.read_to_close().0
            })
        })
        .collect();
    assert!(site.wait_until(WAIT, |c| c.requests == CLIENTS as u64));
    let counters = site.counters();
    assert_eq!(counters.connections, CLIENTS as u64);
    assert_eq!(counters.peak_in_flight, CLIENTS as u64);
    assert_eq!(counters.per_path.len(), CLIENTS);

    let started = Instant::now();
    site.shutdown();
    assert!(started.elapsed() < WAIT);
    for client in clients {
        assert!(client.join().unwrap().is_empty());
    }
}

#[test]
fn sequential_requests_have_peak_one_and_reset_works() {
    let site = DemoSite::start(SiteConfig {
        delay: Duration::from_millis(20),
        ..SiteConfig::default()
    })
    .unwrap();
    let mut client = Client::connect(site.addr());
    for _ in 0..3 {
        client.get("/");
    }
    let counters = site.counters();
    assert_eq!(
        (
            counters.connections,
            counters.requests,
            counters.peak_in_flight
        ),
        (1, 3, 1)
    );
    assert_eq!(counters.per_path.get("/"), Some(&3));
    site.reset_counters();
    client.get("/missing.html");
    let mut counters = site.counters();
    let log = std::mem::take(&mut counters.request_log);
    assert_eq!(
        counters,
        demo_site::Counters {
            connections: 0,
            requests: 1,
            peak_in_flight: 1,
            per_path: [("/missing.html".to_string(), 1)].into(),
            request_log: Vec::new(),
            not_modified: 0,
        }
    );
    let paths: Vec<&str> = log.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(paths, ["/missing.html"]);
}

#[test]
fn path_delays_override_the_global_delay() {
    let global = Duration::from_millis(150);
    let slow = Duration::from_millis(300);
    let site = DemoSite::start(SiteConfig {
        delay: global,
        path_delays: vec![
            ("/pages/a/0.html".to_string(), Duration::ZERO),
            ("/feed.xml".to_string(), slow),
        ],
        ..SiteConfig::default()
    })
    .unwrap();
    // The rule, with no clock involved.
    assert_eq!(site.delay_for("/pages/a/0.html"), Duration::ZERO);
    // The query does not matter for matching a path delay.
    assert_eq!(site.delay_for("/pages/a/0.html?q=1"), Duration::ZERO);
    assert_eq!(site.delay_for("/static/style.css"), global);
    assert_eq!(site.delay_for("/feed.xml"), slow);
    // And the server applies it: an answer never comes before its delay (a
    // lower bound, which no machine's speed can break).
    let mut client = Client::connect(site.addr());
    let timed = |client: &mut Client, path: &str| {
        let started = Instant::now();
        assert_eq!(client.get(path).status, 200);
        started.elapsed()
    };
    assert!(timed(&mut client, "/static/style.css") >= global);
    assert!(timed(&mut client, "/feed.xml") >= slow);
}

#[test]
fn page_delay_holds_back_numbered_pages_only() {
    // Which paths count as pages is tested in the content module.
    let pages = Duration::from_secs(1);
    let site = DemoSite::start(SiteConfig {
        page_delay: Some(pages),
        path_delays: vec![("/pages/b/1.html".to_string(), Duration::ZERO)],
        ..SiteConfig::default()
    })
    .unwrap();
    // The index answers at once, and a path delay still wins over pages.
    assert_eq!(site.delay_for("/"), Duration::ZERO);
    assert_eq!(site.delay_for("/pages/b/1.html"), Duration::ZERO);
    assert_eq!(site.delay_for("/pages/c/2.html?q=1"), pages);
    let mut client = Client::connect(site.addr());
    let started = Instant::now();
    assert_eq!(client.get("/pages/c/2.html?q=1").status, 200);
    assert!(started.elapsed() >= pages);
}

#[test]
fn malformed_requests_are_refused_with_their_status_and_closed() {
    let site = DemoSite::start_default().unwrap();
    let long_header = format!(
        "GET / HTTP/1.1\r\nX-Long: {}\r\n\r\n",
        "x".repeat(20 * 1024)
    );
    let many_headers = format!("GET / HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(100));
    let cases: [(&[u8], &str); 8] = [
        (b"NONSENSE\r\n\r\n", "400 Bad Request"),
        (
            b"GET / HTTP/1.1\r\nThis header has no colon\r\n\r\n",
            "400 Bad Request",
        ),
        (b"GET / HTTP/9.9\r\n\r\n", "505 HTTP Version Not Supported"),
        (
            b"GET / HTTP/1.1\r\nContent-Length: lots\r\n\r\n",
            "400 Bad Request",
        ),
        (
            b"GET / HTTP/1.1\r\nContent-Length: +28\r\n\r\n",
            "400 Bad Request",
        ),
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello\r\n\r\n",
            "400 Bad Request",
        ),
        (
            long_header.as_bytes(),
            "431 Request Header Fields Too Large",
        ),
        (
            many_headers.as_bytes(),
            "431 Request Header Fields Too Large",
        ),
    ];
    for (request, status) in cases {
        let reply = raw_exchange(site.addr(), request);
        let reply = String::from_utf8_lossy(&reply);
        assert!(
            reply.starts_with(&format!("HTTP/1.1 {status}\r\n")),
            "{reply:?} for {:?}",
            String::from_utf8_lossy(&request[..request.len().min(40)])
        );
        assert!(reply.contains("\r\nConnection: close\r\n"));
    }
    // Nothing stops the server from serving the next client.
    assert_eq!(get(site.addr(), "/").status, 200);
    let counters = site.counters();
    assert_eq!(counters.requests, cases.len() as u64 + 1);
    assert_eq!(counters.per_path.len(), 1);
}

#[test]
fn a_client_that_disappears_mid_request_does_no_harm() {
    let site = DemoSite::start_default().unwrap();
    {
        let mut client = Client::connect(site.addr());
        client.send(b"GET /pages/a/0.html HTTP/1.1\r\nHost: half");
    }
    // A request body that never arrives in full.
    {
        let mut client = Client::connect(site.addr());
        client.send(b"GET / HTTP/1.1\r\nContent-Length: 100\r\n\r\nshort");
    }
    assert_eq!(get(site.addr(), "/").status, 200);
}

#[test]
fn validators_answer_304_until_a_page_is_revised() {
    let site = DemoSite::start(SiteConfig {
        validators: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let mut client = Client::connect(site.addr());
    let first = client.get("/pages/a/0.html");
    let etag = first.header("etag").unwrap().to_string();
    let date = first.header("last-modified").unwrap().to_string();
    assert_eq!(date, "Sat, 01 Jan 2022 00:00:00 GMT");
    let ask = |client: &mut Client, field: &str, value: &str| {
        client.send(
            format!("GET /pages/a/0.html HTTP/1.1\r\nHost: test\r\n{field}: {value}\r\n\r\n")
                .as_bytes(),
        );
        client.read_response(true).unwrap()
    };
    // By its tag, or by its date: not modified, no body, the page's length.
    for (field, value) in [("If-None-Match", &etag), ("If-Modified-Since", &date)] {
        let answer = ask(&mut client, field, value);
        assert_eq!(answer.status, 304, "{field}");
        assert_eq!(answer.header("etag"), Some(etag.as_str()));
        let length = first.body.len().to_string();
        assert_eq!(answer.header("content-length"), Some(length.as_str()));
    }
    // Another page's tag is not this one's.
    assert_eq!(client.get("/pages/b/1.html").status, 200);
    assert_eq!(site.counters().not_modified, 2);
    // Revised: the old tag gets the new page, which links to the changes.
    assert_eq!(client.get("/changes.html").status, 404);
    site.revise_pages(1);
    client.send(
        format!("GET /pages/a/0.html HTTP/1.1\r\nHost: test\r\nIf-None-Match: {etag}\r\n\r\n")
            .as_bytes(),
    );
    let revised = client.read_response(false).unwrap();
    assert_eq!(revised.status, 200);
    assert_ne!(revised.header("etag"), Some(etag.as_str()));
    assert_eq!(
        revised.header("last-modified"),
        Some("Sun, 01 Jan 2023 00:00:00 GMT")
    );
    assert!(String::from_utf8_lossy(&revised.body).contains("href=\"/changes.html\""));
    let changes = client.get("/changes.html");
    assert_eq!(changes.status, 200);
    assert!(String::from_utf8_lossy(&changes.body).contains("href=\"/pages/a/0.html\""));
    // Page 1 was not revised.
    let page1 = get(site.addr(), "/pages/b/1.html");
    assert!(!String::from_utf8_lossy(&page1.body).contains("changes.html"));
    assert_eq!(site.counters().not_modified, 2);
}
