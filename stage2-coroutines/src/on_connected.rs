//! The chapter's first coroutine, on the bare stage-1 event loop: a callback,
//! `on_connected`, resolves a [`Future`], and that wakes the coroutine.
//!
//! ```python
//! def fetch(self):
//!     sock = socket.socket()
//!     sock.setblocking(False)
//!     try:
//!         sock.connect(('xkcd.com', 80))
//!     except BlockingIOError:
//!         pass
//!     f = Future()
//!     def on_connected():
//!         f.set_result(None)
//!     selector.register(sock.fileno(), EVENT_WRITE, on_connected)
//!     yield f
//!     selector.unregister(sock.fileno())
//!     print('connected!')
//! ```
//!
//! [`run`] is the chapter's `Task` and `loop()` for a single coroutine, with
//! no task table and no reactor: it polls when woken and otherwise turns the
//! event loop. The runtime's executor is this, grown up (many tasks, a run
//! queue, wakes from other threads); the book walks from one to the other.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use mio::Interest;
use runtime::{EventLoop, Readiness};

use crate::chapter_future::Future;

// ANCHOR: connect
/// Connects to `addr`, waiting on a [`Future`] that an event-loop callback
/// resolves when the socket becomes writable.
pub async fn connect(
    event_loop: &RefCell<EventLoop>,
    addr: SocketAddr,
) -> io::Result<mio::net::TcpStream> {
    // Non-blocking from the start: the connect carries on in the background.
    let mut sock = mio::net::TcpStream::connect(addr)?;
    let f = Future::new();
    let on_connected = {
        let f = f.clone();
        move |_: &mut EventLoop, _: Readiness| {
            // A second event before we unregister finds it resolved; fine.
            let _ = f.set_result(());
        }
    };
    let token = event_loop
        .borrow_mut()
        .register(&mut sock, Interest::WRITABLE, on_connected)?;
    f.await; // yield f
    event_loop.borrow_mut().unregister(&mut sock, token)?;
    // Writable means the connect has finished, not that it worked.
    if let Some(e) = sock.take_error()? {
        return Err(e);
    }
    sock.peer_addr()?;
    Ok(sock)
}
// ANCHOR_END: connect

// ANCHOR: run
/// Runs one coroutine to completion on a bare event loop: the chapter's
/// `Task(coro)` followed by `loop()`.
///
/// Single-threaded only: a wake from another thread would not interrupt the
/// event loop's wait (the runtime's waker pokes the selector; this one does
/// not). And a coroutine that waits on something other than the loop's
/// sources waits forever.
pub fn run<F: std::future::Future>(
    event_loop: &RefCell<EventLoop>,
    coro: F,
) -> io::Result<F::Output> {
    // Like the chapter's Task.__init__, which calls step() at once.
    let woken = Arc::new(Woken(AtomicBool::new(true)));
    let waker = Waker::from(woken.clone());
    let mut coro = pin!(coro);
    loop {
        if woken.0.swap(false, Ordering::AcqRel) {
            // Task.step: run the coroutine to its next `yield`.
            if let Poll::Ready(output) = coro.as_mut().poll(&mut Context::from_waker(&waker)) {
                return Ok(output);
            }
        }
        // loop(): wait for events and run their callbacks. One of them
        // resolves the future, whose set_result calls our waker.
        event_loop.borrow_mut().turn(None)?;
    }
}

/// The waker: it only notes that the coroutine should take its next step.
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}
// ANCHOR_END: run

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_connected_resolves_the_future_and_the_coroutine_resumes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let event_loop = RefCell::new(EventLoop::new().unwrap());
        let sock = run(&event_loop, connect(&event_loop, addr))
            .unwrap()
            .unwrap();
        assert_eq!(sock.peer_addr().unwrap(), addr);
        let (_server_side, peer) = listener.accept().unwrap();
        assert_eq!(peer, sock.local_addr().unwrap());
        // The coroutine unregistered its socket after it resumed.
        assert_eq!(event_loop.borrow().registered(), 0);
    }

    #[test]
    fn a_refused_connect_is_an_error() {
        let (_closed, addr) = demo_site::testing::refusing_addr().unwrap();
        let event_loop = RefCell::new(EventLoop::new().unwrap());
        let err = run(&event_loop, connect(&event_loop, addr))
            .unwrap()
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
    }
}
