//! Cancellation and timeouts: dropping a fetch in the middle of a read
//! deregisters and closes its socket, and a slow server costs an error line,
//! never a hang.

mod common;

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use common::url;
use demo_site::DemoSite;
use demo_site::testing::silent_server;
use runtime::{Elapsed, JoinError, Runtime};
use stage2_coroutines::{Options, Outcome, Style, crawl, fetch};

/// How long a test waits for the server thread to report before it fails.
/// It only bounds a failure; a passing run never waits this long.
const PATIENCE: Duration = Duration::from_secs(10);

#[test]
fn cancelling_a_fetch_in_read_closes_its_socket() {
    for style in Style::ALL {
        let server = silent_server().unwrap();
        let page = url(&format!("http://{}/", server.addr));
        let rt = Runtime::new().unwrap();
        let got_request = server.got_request;
        let joined = rt
            .block_on(async move {
                let handle = runtime::spawn(async move { fetch(&page, style).await.is_ok() });
                // Once the server has the request, the fetch has sent it and
                // returned Pending from its first read: the task that wrote
                // it ran to its next await before we could run again.
                runtime::spawn_blocking(move || got_request.recv())
                    .await
                    .unwrap()
                    .unwrap();
                handle.cancel();
                handle.await
            })
            .unwrap();
        assert_eq!(joined, Err(JoinError::Cancelled), "{style}");
        assert_eq!(rt.registered_sources(), 0, "{style}: {rt:?}");
        // The server's read returns 0: end of stream, the socket is closed.
        assert_eq!(
            server.next_read.recv_timeout(PATIENCE).unwrap().unwrap(),
            0,
            "{style}"
        );
    }
}

#[test]
fn dropping_a_fetch_in_read_closes_its_socket() {
    for style in Style::ALL {
        let server = silent_server().unwrap();
        let page = url(&format!("http://{}/", server.addr));
        let rt = Runtime::new().unwrap();
        let got_request = server.got_request;
        let finished = rt
            .block_on(async move {
                // No task of its own this time: we poll the fetch ourselves,
                // alongside the wait for the server, and drop it when the
                // server has the request.
                let mut fetching = Box::pin(fetch(&page, style));
                let mut waiting = pin!(runtime::spawn_blocking(move || got_request.recv()));
                let finished = poll_fn(|cx| {
                    if fetching.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(true);
                    }
                    waiting.as_mut().poll(cx).map(|_| false)
                })
                .await;
                drop(fetching);
                finished
            })
            .unwrap();
        assert!(!finished, "{style}");
        assert_eq!(rt.registered_sources(), 0, "{style}: {rt:?}");
        assert_eq!(
            server.next_read.recv_timeout(PATIENCE).unwrap().unwrap(),
            0,
            "{style}"
        );
    }
}

#[test]
fn a_hanging_server_costs_an_error_line() {
    let site = DemoSite::start_default().unwrap();
    let hang = site.url("/fault/hang");
    for style in Style::ALL {
        let rt = Runtime::new().unwrap();
        let options = Options {
            style,
            timeout: Duration::from_millis(200),
            ..Options::default()
        };
        let report = rt.block_on(crawl(url(&hang), options, |_| {})).unwrap();
        // The timeout dropped the fetch: its socket and its timer are gone.
        assert_eq!(rt.registered_sources(), 0, "{style}: {rt:?}");
        assert_eq!(rt.pending_timers(), 0, "{style}: {rt:?}");
        let reason = Elapsed(Duration::from_millis(200)).to_string();
        assert_eq!(reason, "timed out after 200ms");
        assert_eq!(report.outcomes, [Outcome::Failed(url(&hang), reason)]);
        assert!(!report.fetched(&url(&hang)));
    }
    assert_eq!(site.counters().per_path.get("/fault/hang"), Some(&2));
}
