use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use exercises::ex02_retry_refused::{Retry, connect_with_retry};
use runtime::EventLoop;

use crate::common::{refusing_socket, turn_until};

/// What one `connect_with_retry` reported.
#[derive(Debug)]
struct Report {
    /// The attempt numbers passed to `on_attempt`, in order.
    failed_attempts: Vec<u32>,
    /// `on_done`'s result (the peer address when connected) and count.
    result: Option<(io::Result<std::net::SocketAddr>, u32)>,
    done_calls: u32,
}

/// Runs one `connect_with_retry` to the end. `on_failure` runs after each
/// failed attempt with its number.
fn run(
    addr: std::net::SocketAddr,
    retry: Retry,
    mut on_failure: impl FnMut(u32) + 'static,
) -> (Report, EventLoop) {
    let mut event_loop = EventLoop::new().unwrap();
    let report = Rc::new(RefCell::new(Report {
        failed_attempts: Vec::new(),
        result: None,
        done_calls: 0,
    }));
    let (on_attempt_report, on_done_report) = (Rc::clone(&report), Rc::clone(&report));
    connect_with_retry(
        &mut event_loop,
        addr,
        retry,
        move |n, e| {
            assert_eq!(
                e.kind(),
                io::ErrorKind::ConnectionRefused,
                "attempt {n}: {e}"
            );
            on_attempt_report.borrow_mut().failed_attempts.push(n);
            on_failure(n);
        },
        move |_, result, tries| {
            let mut report = on_done_report.borrow_mut();
            report.done_calls += 1;
            report.result = Some((result.and_then(|s| s.peer_addr()), tries));
        },
    );
    assert_eq!(
        report.borrow().done_calls,
        0,
        "on_done must not run inside connect_with_retry"
    );
    turn_until(&mut event_loop, "connect_with_retry", || {
        report.borrow().result.is_some()
    });
    let report = Rc::try_unwrap(report).unwrap().into_inner();
    (report, event_loop)
}

fn retry(max_tries: u32) -> Retry {
    Retry {
        max_tries,
        delay: Duration::from_millis(5),
    }
}

#[test]
fn a_port_that_always_refuses_is_tried_max_tries_times() {
    let (_socket, addr) = refusing_socket();
    let (report, event_loop) = run(addr, retry(3), |_| {});
    assert_eq!(report.failed_attempts, [1, 2, 3], "attempts made");
    let (result, tries) = report.result.unwrap();
    assert_eq!(result.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
    assert_eq!(tries, 3);
    assert_eq!(report.done_calls, 1);
    assert_eq!(event_loop.registered(), 0, "sockets left registered");
    assert_eq!(event_loop.pending_timers(), 0, "timers left pending");
}

#[test]
fn a_server_that_starts_listening_late_is_reached() {
    let (socket, addr) = refusing_socket();
    let socket = Rc::new(socket);
    let listener = Rc::clone(&socket);
    // The server comes up right after the first refusal.
    let (report, event_loop) = run(addr, retry(5), move |n| {
        if n == 1 {
            listener.listen(16).unwrap();
        }
    });
    assert_eq!(report.failed_attempts, [1]);
    let (result, tries) = report.result.unwrap();
    assert_eq!(result.expect("should have connected"), addr);
    assert_eq!(tries, 2, "attempts made");
    assert_eq!(report.done_calls, 1);
    assert_eq!(
        (event_loop.registered(), event_loop.pending_timers()),
        (0, 0)
    );
}

#[test]
fn one_try_means_one_attempt() {
    let (_socket, addr) = refusing_socket();
    let (report, _) = run(addr, retry(1), |_| {});
    assert_eq!(report.failed_attempts, [1]);
    assert_eq!(report.result.unwrap().1, 1);
}

#[test]
fn an_error_other_than_a_refusal_is_not_tried_again() {
    // A TCP connect to a multicast address fails at once, and not with a
    // refusal (Linux: the network is unreachable; the BSDs and macOS: the
    // address family is not supported). Waiting cannot fix that.
    let addr = std::net::SocketAddr::from(([224, 0, 0, 1], 80));
    let mut event_loop = EventLoop::new().unwrap();
    let attempts = Rc::new(RefCell::new(Vec::new()));
    let done = Rc::new(RefCell::new(None));
    let (attempts_seen, done_seen) = (Rc::clone(&attempts), Rc::clone(&done));
    connect_with_retry(
        &mut event_loop,
        addr,
        retry(3),
        move |n, e| attempts_seen.borrow_mut().push((n, e.kind())),
        move |_, result, tries| {
            *done_seen.borrow_mut() = Some((result.err().map(|e| e.kind()), tries));
        },
    );
    turn_until(&mut event_loop, "connect_with_retry", || {
        done.borrow().is_some()
    });
    let (error, tries) = done.take().unwrap();
    let kind = error.expect("a connect to a multicast address cannot succeed");
    assert_ne!(
        kind,
        io::ErrorKind::ConnectionRefused,
        "this test needs an error other than a refusal"
    );
    assert_eq!(
        *attempts.borrow(),
        [(1, kind)],
        "only a refusal is worth another try: any other error ends at once"
    );
    assert_eq!(tries, 1, "attempts made");
    assert_eq!(
        (event_loop.registered(), event_loop.pending_timers()),
        (0, 0)
    );
}
