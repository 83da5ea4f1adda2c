//! Exercise 01 ★★: talk and listen at once, with callbacks.
//!
//! `echo` sends a buffer to a peer that sends every byte straight back, and
//! collects the echo. It does what the chapter's `connected` does: one
//! `write`, and on to reading. With a small buffer that works. With two
//! megabytes, the socket takes only part, and the rest is never sent.
//!
//! Make `echo` send all of `data`, however many callbacks that takes, while
//! it reads the echo. Careful: sending everything first and reading after
//! deadlocks. The peer stops reading from us while its echo has nowhere to
//! go, and its echo has nowhere to go until we read it.
//!
//! Read first: the book's "Programming With Callbacks", and `connected` in
//! stage1-callbacks/src/fetcher.rs (how it remembers `sent`).
//! Check: `cargo run -p exercises -- check 01`. Stuck: `... -- hint 01`.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::rc::Rc;

use mio::net::TcpStream;
use mio::{Interest, Token};
use runtime::{EventLoop, Readiness};

/// Called once with everything the peer sent back, or the error.
pub type OnEcho = Box<dyn FnOnce(&mut EventLoop, io::Result<Vec<u8>>)>;

/// What the callback must remember between calls.
struct Echo {
    sock: TcpStream,
    token: Token,
    data: Vec<u8>,
    /// How many bytes of `data` the socket has taken.
    sent: usize,
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
            Ok(false) => return,
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

/// Moves the conversation forward. `Ok(true)` once the peer has closed.
fn pump(echo: &mut Echo) -> io::Result<bool> {
    // TODO: this is the chapter's `sock.send(request)`: one write, whatever
    // it takes. Remember how much was sent, keep writing on later calls, and
    // shut down the write half only after the last byte.
    if echo.sent == 0 {
        echo.sent = echo.sock.write(&echo.data)?;
        echo.sock.shutdown(Shutdown::Write)?;
    }
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
