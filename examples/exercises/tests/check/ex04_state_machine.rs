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

#[test]
fn a_pending_read_resumes_where_it_stopped() {
    use std::io::{Read, Write};
    use std::sync::mpsc;

    // The server takes the whole request, says so, and answers only when
    // told. Until then every read of the response is `Pending`, however the
    // threads are scheduled, so the machine must stop in its last state and
    // resume from it.
    const ANSWER: &[u8] = b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nlate";
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (has_request, request_seen) = mpsc::channel::<()>();
    let (answer, answer_now) = mpsc::channel::<()>();
    let server = std::thread::spawn(move || -> io::Result<Vec<u8>> {
        let (mut stream, _) = listener.accept()?;
        let mut received = Vec::new();
        let mut chunk = [0u8; 1024];
        while !received.ends_with(b"\r\n\r\n") {
            match stream.read(&mut chunk)? {
                0 => break,
                n => received.extend_from_slice(&chunk[..n]),
            }
        }
        let _ = has_request.send(());
        if answer_now.recv().is_ok() {
            stream.write_all(ANSWER)?;
        }
        Ok(received) // dropping `stream` closes it: the end of the response
    });

    let mut get = Get::new(addr, "/late");
    let response = block_on(
        "Get",
        std::future::poll_fn(|cx| {
            let poll = Pin::new(&mut get).poll(cx);
            if poll.is_pending() {
                // Once the server has the whole request, the machine waits
                // for the answer: let it come.
                if request_seen.try_recv().is_ok() {
                    let _ = answer.send(());
                }
                // And poll again at once, woken or not: a future must go on
                // from wherever its last `Pending` left it.
                cx.waker().wake_by_ref();
            }
            poll
        }),
    )
    .expect("Get failed");
    assert!(
        response == ANSWER,
        "the response: {:?}",
        String::from_utf8_lossy(&response)
    );
    let received = server.join().unwrap().expect("the server failed");
    assert_eq!(
        received,
        exercises::ex04_state_machine::request(addr, "/late"),
        "the request the server received"
    );
}
