//! A fetch that fails prints an error line, and the crawl still ends.

mod common;

use std::time::Duration;

use common::{crawl_from, url};
use demo_site::DemoSite;
use demo_site::testing::{refusing_addr, resetting_server};
use stage1_callbacks::Outcome;

const TIMEOUT: Duration = Duration::from_secs(10);

fn failed(page: &str, reason: &str) -> Outcome {
    Outcome::Failed(url(page), reason.to_string())
}

#[test]
fn broken_responses_are_error_lines() {
    let site = DemoSite::start_default().unwrap();
    let cases = [
        ("/fault/drop", "empty response"),
        (
            "/fault/garbage",
            "not an HTTP response: invalid HTTP version",
        ),
        ("/fault/short-body", "body cut short: 100 of 500 bytes"),
        (
            "/fault/close-mid-body",
            "unexpected Transfer-Encoding: chunked (we asked for HTTP/1.0)",
        ),
    ];
    for (path, reason) in cases {
        let page = site.url(path);
        let report = crawl_from(&page, TIMEOUT);
        assert_eq!(report.outcomes, [failed(&page, reason)], "{path}");
    }
    // A PNG is not UTF-8, and not a page either: fetched, never read as
    // text, and no error.
    let logo = site.url("/static/logo.png");
    let report = crawl_from(&logo, TIMEOUT);
    assert_eq!(report.outcomes, [Outcome::Fetched(url(&logo))]);
}

#[test]
fn a_server_that_never_answers_costs_a_timeout() {
    let site = DemoSite::start_default().unwrap();
    let page = site.url("/fault/hang");
    let report = crawl_from(&page, Duration::from_millis(300));
    assert_eq!(report.outcomes, [failed(&page, "timed out after 300ms")]);
    // The request did reach the server: the timeout is not a connect failure.
    assert_eq!(site.counters().per_path.get("/fault/hang"), Some(&1));
}

#[test]
fn a_refused_connect_is_an_error_line() {
    let (_socket, addr) = refusing_addr().unwrap();
    let page = format!("http://{addr}/");
    let report = crawl_from(&page, TIMEOUT);
    assert_eq!(
        report.outcomes,
        [failed(&page, "connect: Connection refused (os error 111)")]
    );
}

#[test]
fn a_reset_is_an_error_line() {
    let (addr, server) = resetting_server().unwrap();
    let page = format!("http://{addr}/");
    let report = crawl_from(&page, TIMEOUT);
    server.join().unwrap().unwrap();
    assert_eq!(
        report.outcomes,
        [failed(
            &page,
            "read: Connection reset by peer (os error 104)"
        )]
    );
}

#[test]
fn an_unresolvable_root_is_an_error_line() {
    let page = "http://no-such-host.invalid/";
    let report = crawl_from(page, TIMEOUT);
    let [Outcome::Failed(got, reason)] = &report.outcomes[..] else {
        panic!("{:?}", report.outcomes);
    };
    assert_eq!(got, &url(page));
    assert!(
        reason.starts_with("cannot resolve no-such-host.invalid: "),
        "{reason}"
    );
}

#[test]
fn an_endless_body_is_cut_at_the_cap() {
    use std::io::{BufRead, BufReader, Write};
    // Answers with a body that never ends, until the client hangs up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut lines = BufReader::new(stream.try_clone().unwrap()).lines();
        while lines.next().is_some_and(|l| !l.unwrap().is_empty()) {}
        stream
            .write_all(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n")
            .unwrap();
        let chunk = [b'x'; 64 * 1024];
        while stream.write_all(&chunk).is_ok() {}
    });
    let page = format!("http://{addr}/");
    let report = crawl_from(&page, TIMEOUT);
    server.join().unwrap();
    assert_eq!(
        report.outcomes,
        [failed(&page, "read: response larger than 16777216 bytes")]
    );
}
