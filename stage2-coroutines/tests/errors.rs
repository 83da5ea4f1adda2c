//! Errors keep their context: an error in `read` reaches `fetch`'s caller
//! with the chain of steps it came through, and a panic's backtrace names
//! the coroutines it happened in.

mod common;

use std::backtrace::Backtrace;
use std::cell::RefCell;
use std::time::Duration;

use common::{crawl_from, url};
use demo_site::DemoSite;
use demo_site::testing::{refusing_addr, resetting_server};
use runtime::JoinError;
use stage2_coroutines::error::chain;
use stage2_coroutines::{Outcome, Style, fetch, hooks};

#[test]
fn a_reset_inside_read_reaches_the_caller_with_its_chain() {
    for style in Style::ALL {
        let (addr, server) = resetting_server().unwrap();
        let page = url(&format!("http://{addr}/"));
        let err = runtime::run_until_complete(fetch(&page, style))
            .unwrap()
            .unwrap_err();
        server.join().unwrap().unwrap();
        assert_eq!(
            chain(&err),
            format!(
                "fetch http://{addr}/: read_all: read: Connection reset by peer (os error 104)"
            ),
            "{style}"
        );
        assert_eq!(
            err.reason(),
            "read_all: read: Connection reset by peer (os error 104)"
        );
    }
}

#[test]
fn a_refused_connect_names_the_address() {
    let (_socket, addr) = refusing_addr().unwrap();
    for style in Style::ALL {
        let page = url(&format!("http://{addr}/x"));
        let err = runtime::run_until_complete(fetch(&page, style))
            .unwrap()
            .unwrap_err();
        assert_eq!(
            chain(&err),
            format!("fetch http://{addr}/x: connect {addr}: Connection refused (os error 111)"),
            "{style}"
        );
    }
}

#[test]
fn an_unresolvable_host_is_a_resolve_error() {
    for style in Style::ALL {
        let page = url("http://no-such-host.invalid/");
        let err = runtime::run_until_complete(fetch(&page, style))
            .unwrap()
            .unwrap_err();
        let chain = chain(&err);
        assert!(
            chain.starts_with(
                "fetch http://no-such-host.invalid/: resolve: cannot resolve no-such-host.invalid: "
            ),
            "{style}: {chain}"
        );
    }
}

#[test]
fn broken_responses_are_error_lines_not_crashes() {
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
    for style in Style::ALL {
        for (path, reason) in cases {
            let page = site.url(path);
            let report = crawl_from(&page, style, Duration::from_secs(10));
            assert_eq!(
                report.outcomes,
                [Outcome::Failed(url(&page), reason.to_string())],
                "{style}"
            );
        }
    }
}

thread_local! {
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A hook for `read` that records the stack it runs on, then panics.
fn capture_and_panic(_: &[u8]) {
    let trace = Backtrace::force_capture().to_string();
    CAPTURED.with(|c| *c.borrow_mut() = Some(trace));
    panic!("a bug, found while reading");
}

/// The position of each of `names` in `trace`, which must appear innermost
/// (smallest frame number) first.
fn assert_nested(trace: &str, names: &[&str]) {
    let mut last = 0;
    for name in names {
        let Some(at) = trace.get(last..).and_then(|rest| rest.find(name)) else {
            panic!("{name} missing or out of order in:\n{trace}");
        };
        last += at + name.len();
    }
}

#[test]
fn a_panic_while_reading_shows_fetch_read_all_read_on_its_stack() {
    let site = DemoSite::start_default().unwrap();
    let page = url(&site.url("/notes.txt"));
    let expected: [(Style, [&str; 3]); 2] = [
        (
            Style::StateMachine,
            [
                "<stage2_coroutines::machines::read::Read as core::future::future::Future>::poll",
                "<stage2_coroutines::machines::read_all::ReadAll as core::future::future::Future>::poll",
                "<stage2_coroutines::machines::fetch::Fetch as core::future::future::Future>::poll",
            ],
        ),
        (
            Style::Async,
            [
                "stage2_coroutines::async_fetch::read::",
                "stage2_coroutines::async_fetch::read_all::",
                "stage2_coroutines::async_fetch::fetch::",
            ],
        ),
    ];
    hooks::set_on_chunk(Some(capture_and_panic));
    for (style, frames) in expected {
        let page = page.clone();
        let result = runtime::run_until_complete(async move {
            runtime::spawn(async move { fetch(&page, style).await.is_ok() }).await
        })
        .unwrap();
        assert_eq!(
            result,
            Err(JoinError::Panicked("a bug, found while reading".into()))
        );
        let trace = CAPTURED.with(|c| c.borrow_mut().take()).unwrap();
        assert_nested(&trace, &frames);
        assert_nested(
            &trace,
            &["runtime::task::Task<F> as runtime::task::Runnable>::step"],
        );
    }
    hooks::set_on_chunk(None);
}

#[test]
fn a_panicking_fetcher_still_finishes_the_crawl() {
    let site = DemoSite::start_default().unwrap();
    let root = site.url("/");
    hooks::set_on_chunk(Some(|_| panic!("a bug, found while reading")));
    for style in Style::ALL {
        let report = crawl_from(&root, style, Duration::from_secs(10));
        let (fetched, failed) = report.split();
        assert!(fetched.is_empty());
        assert_eq!(
            failed.into_iter().collect::<Vec<_>>(),
            [(
                root.clone(),
                "the fetcher stopped before it finished".to_string()
            )]
        );
    }
    hooks::set_on_chunk(None);
}
