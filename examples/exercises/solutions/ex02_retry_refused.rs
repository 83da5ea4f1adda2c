//! Exercise 02 ★★: try again later, with a timer callback (reference
//! solution).
//!
//! A refused attempt sets a timer with `call_later`, and the timer's
//! callback makes the next attempt. The attempt count travels from callback
//! to callback inside the closures, because nothing else survives between
//! them.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use mio::net::TcpStream;
use mio::{Interest, Token};
use runtime::EventLoop;

/// How often to try, and how long to wait after a refusal.
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Attempts in all, the first included.
    pub max_tries: u32,
    /// The wait between a refused attempt and the next.
    pub delay: Duration,
}

/// Called after each failed attempt with its number (from 1) and error.
type OnAttempt = Box<dyn FnMut(u32, &io::Error)>;
/// Called once: the connected socket or the last error, and the number of
/// attempts made.
type OnDone = Box<dyn FnOnce(&mut EventLoop, io::Result<TcpStream>, u32)>;

/// Connects to `addr`. A refused connection (nobody listening yet) is tried
/// again after `retry.delay`, up to `retry.max_tries` attempts in all; any
/// other error ends at once. Calls `on_attempt` after each failed attempt,
/// and `on_done` exactly once at the end, from a callback, never from
/// inside this call.
pub fn connect_with_retry(
    event_loop: &mut EventLoop,
    addr: SocketAddr,
    retry: Retry,
    on_attempt: impl FnMut(u32, &io::Error) + 'static,
    on_done: impl FnOnce(&mut EventLoop, io::Result<TcpStream>, u32) + 'static,
) {
    let on_attempt: OnAttempt = Box::new(on_attempt);
    let on_done: OnDone = Box::new(on_done);
    // Even the first attempt starts from a timer, so that `on_done` never
    // runs inside this call, whatever happens.
    event_loop.call_later(Duration::ZERO, move |el| {
        attempt(el, addr, retry, 1, on_attempt, on_done)
    });
}

/// Attempt number `tries`.
fn attempt(
    event_loop: &mut EventLoop,
    addr: SocketAddr,
    retry: Retry,
    tries: u32,
    mut on_attempt: OnAttempt,
    on_done: OnDone,
) {
    start_connect(event_loop, addr, move |el, result| match result {
        Ok(sock) => on_done(el, Ok(sock), tries),
        Err(e) => {
            on_attempt(tries, &e);
            let again = e.kind() == io::ErrorKind::ConnectionRefused && tries < retry.max_tries;
            if again {
                el.call_later(retry.delay, move |el| {
                    attempt(el, addr, retry, tries + 1, on_attempt, on_done)
                });
            } else {
                on_done(el, Err(e), tries)
            }
        }
    });
}

/// Called once with the connected socket, or why there is none.
type Connected = Box<dyn FnOnce(&mut EventLoop, io::Result<TcpStream>)>;

/// One connect in progress: the socket and its token (known only after
/// `register` returns) and who to tell when it is over.
struct Connecting {
    sock: Option<(TcpStream, Token)>,
    done: Option<Connected>,
}

/// One non-blocking connect: `done` runs once, from a callback, with the
/// connected socket or the error.
fn start_connect(
    event_loop: &mut EventLoop,
    addr: SocketAddr,
    done: impl FnOnce(&mut EventLoop, io::Result<TcpStream>) + 'static,
) {
    let state = Rc::new(RefCell::new(Connecting {
        sock: None,
        done: Some(Box::new(done)),
    }));
    let mut sock = match TcpStream::connect(addr) {
        Ok(sock) => sock,
        Err(e) => return finish_later(event_loop, &state, e),
    };
    let theirs = Rc::clone(&state);
    let registered = event_loop.register(&mut sock, Interest::WRITABLE, move |el, _| {
        let finished = match theirs.borrow().sock.as_ref() {
            Some((sock, _)) => connect_result(sock),
            None => return,
        };
        let result = match finished {
            Ok(false) => return, // a spurious event: still connecting
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        };
        let (sock, done) = {
            let mut state = theirs.borrow_mut();
            (state.sock.take(), state.done.take())
        };
        let (Some((mut sock, token)), Some(done)) = (sock, done) else {
            return;
        };
        let _ = el.unregister(&mut sock, token);
        done(el, result.map(|()| sock));
    });
    match registered {
        Ok(token) => state.borrow_mut().sock = Some((sock, token)),
        Err(e) => finish_later(event_loop, &state, e),
    }
}

/// Reports `error` from a timer callback, so that `done` never runs inside
/// the call that started the connect.
fn finish_later(event_loop: &mut EventLoop, state: &Rc<RefCell<Connecting>>, error: io::Error) {
    if let Some(done) = state.borrow_mut().done.take() {
        event_loop.call_later(Duration::ZERO, move |el| done(el, Err(error)));
    }
}

/// Whether the connect has finished: `Ok(true)` connected, `Ok(false)` not
/// yet, `Err` failed (refused, say).
fn connect_result(sock: &TcpStream) -> io::Result<bool> {
    if let Some(e) = sock.take_error()? {
        return Err(e);
    }
    match sock.peer_addr() {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(e),
    }
}
