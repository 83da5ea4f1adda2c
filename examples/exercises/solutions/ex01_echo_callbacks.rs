//! Exercise 01 ★★: talk and listen at once, with callbacks (reference
//! solution).
//!
//! Keep writing while the peer's echo keeps arriving: every callback moves
//! both directions as far as the socket allows, and only then returns to
//! the loop.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::rc::Rc;

use mio::net::TcpStream;
use mio::{Interest, Token};
use runtime::{EventLoop, Readiness};

/// Called once with everything the peer sent back, or the error.
pub type OnEcho = Box<dyn FnOnce(&mut EventLoop, io::Result<Vec<u8>>)>;

/// What the callback must remember between calls: the chapter's point
/// about callbacks is that this is all state, none of it is local variables.
struct Echo {
    sock: TcpStream,
    token: Token,
    data: Vec<u8>,
    /// How many bytes of `data` the socket has taken.
    sent: usize,
    /// Whether we told the peer we are done sending (a half-close).
    shut: bool,
    received: Vec<u8>,
    on_done: Option<OnEcho>,
}

/// Sends `data` to the peer of the connected `sock` while reading back
/// whatever the peer sends, until the peer closes. Then calls `on_done` with
/// what was read. After the last byte is sent, shuts down our write half,
/// which is how the peer learns there is no more.
pub fn echo(
    event_loop: &mut EventLoop,
    mut sock: TcpStream,
    data: Vec<u8>,
    on_done: impl FnOnce(&mut EventLoop, io::Result<Vec<u8>>) + 'static,
) -> io::Result<()> {
    let state: Rc<RefCell<Option<Echo>>> = Rc::new(RefCell::new(None));
    let theirs = Rc::clone(&state);
    // Both directions, for the whole conversation: we never know which one
    // the peer will unblock next.
    let token = event_loop.register(
        &mut sock,
        Interest::READABLE | Interest::WRITABLE,
        move |el, ready| on_ready(&theirs, el, ready),
    )?;
    *state.borrow_mut() = Some(Echo {
        sock,
        token,
        data,
        sent: 0,
        shut: false,
        received: Vec::new(),
        on_done: Some(Box::new(on_done)),
    });
    Ok(())
}

fn on_ready(state: &Rc<RefCell<Option<Echo>>>, event_loop: &mut EventLoop, _: Readiness) {
    let result = {
        let mut slot = state.borrow_mut();
        let Some(echo) = slot.as_mut() else { return };
        match pump(echo) {
            Ok(false) => return, // both directions would block: wait
            Ok(true) => Ok(std::mem::take(&mut echo.received)),
            Err(e) => Err(e),
        }
    };
    let Some(mut echo) = state.borrow_mut().take() else {
        return;
    };
    let _ = event_loop.unregister(&mut echo.sock, echo.token);
    if let Some(on_done) = echo.on_done.take() {
        on_done(event_loop, result);
    }
}

/// Writes until the socket would block (or all is sent), then reads until
/// it would block. `Ok(true)` once the peer has closed its side.
fn pump(echo: &mut Echo) -> io::Result<bool> {
    while echo.sent < echo.data.len() {
        match echo.sock.write(&echo.data[echo.sent..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            // A partial write is normal: remember how far we got.
            Ok(n) => echo.sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if echo.sent == echo.data.len() && !echo.shut {
        echo.sock.shutdown(Shutdown::Write)?;
        echo.shut = true;
    }
    // Read even while sending: the peer cannot take more from us until we
    // take its echo off its hands.
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match echo.sock.read(&mut chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => echo.received.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
