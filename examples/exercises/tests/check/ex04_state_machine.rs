use std::future::Future;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use demo_site::DemoSite;
use exercises::ex04_state_machine::{Get, get_async};

use crate::common::{block_on, refusing_socket};

/// Both versions fetch `path`; they must return the same bytes.
fn same_as_async(path: &str) -> Vec<u8> {
    let site = DemoSite::start_default().unwrap();
    let addr = site.addr();
    let by_hand = block_on("Get", Get::new(addr, path)).expect("Get failed");
    let by_compiler = block_on("get_async", get_async(addr, path)).expect("get_async failed");
    assert_eq!(
        String::from_utf8_lossy(&by_hand[..by_hand.len().min(200)]),
        String::from_utf8_lossy(&by_compiler[..by_compiler.len().min(200)]),
        "the responses start differently"
    );
    assert_eq!(by_hand.len(), by_compiler.len(), "response lengths");
    assert!(by_hand == by_compiler, "the responses differ");
    by_hand
}

#[test]
fn fetches_a_page_like_the_async_fn() {
    let response = same_as_async("/framing/content-length.html");
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

#[test]
fn fetches_a_large_page_across_many_reads() {
    let response = same_as_async("/framing/large.html");
    assert!(response.len() > 256 * 1024, "{} bytes", response.len());
}

#[test]
fn a_refused_connect_is_the_error() {
    let (_socket, addr) = refusing_socket();
    let err = block_on("Get", Get::new(addr, "/")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
}

#[test]
fn nothing_happens_before_the_first_poll() {
    // An async fn's body does not start until it is polled; neither may
    // the machine's. Creating one and dropping it connects nowhere.
    let site = DemoSite::start_default().unwrap();
    drop(Get::new(site.addr(), "/"));
    let _ = block_on("get_async", get_async(site.addr(), "/framing/empty.html"));
    assert_eq!(site.counters().connections, 1, "connections the server saw");
}

#[test]
fn the_machine_is_unpin_and_polling_it_after_ready_panics() {
    fn unpin<T: Unpin>(_: &T) {}
    let (_socket, addr) = refusing_socket();
    let mut get = Get::new(addr, "/");
    unpin(&get);
    let mut cx = Context::from_waker(Waker::noop());
    // Outside a runtime, the connect fails at once; then it is finished.
    let first = Pin::new(&mut get).poll(&mut cx);
    assert!(matches!(first, Poll::Ready(Err(_))), "{first:?}");
    let again = catch_unwind(AssertUnwindSafe(|| Pin::new(&mut get).poll(&mut cx)));
    assert!(again.is_err(), "a second poll after Ready must panic");
}
