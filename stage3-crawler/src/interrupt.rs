//! Ctrl-C, on our own runtime: the self-pipe trick.
//!
//! A signal handler may do almost nothing safely; writing a byte to a pipe
//! is one of the few things it may. `signal-hook` installs a handler for
//! SIGINT that writes to one end of a socket pair. The other end is an
//! ordinary non-blocking socket, registered with our reactor like any TCP
//! connection, so "Ctrl-C was pressed" arrives as "this socket is
//! readable", and wakes the task waiting on it.

use std::future::poll_fn;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use runtime::reactor::{Direction, Registration};
use signal_hook::SigId;
use signal_hook::consts::SIGINT;

/// The exit status of a process ended by Ctrl-C, by shell convention
/// (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

// ANCHOR: interrupt
/// A SIGINT watcher. Must be created inside `Runtime::block_on`.
pub struct Interrupt {
    reader: mio::net::UnixStream,
    registration: Registration,
    handlers: Vec<SigId>,
}

impl Interrupt {
    pub fn install() -> io::Result<Interrupt> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        // A second Ctrl-C while the report is being written means "now":
        // the first sets the flag, the second finds it set and exits.
        let pressed = Arc::new(AtomicBool::new(false));
        let handlers = vec![
            signal_hook::flag::register_conditional_shutdown(
                SIGINT,
                i32::from(EXIT_INTERRUPTED),
                Arc::clone(&pressed),
            )?,
            signal_hook::flag::register(SIGINT, pressed)?,
            signal_hook::low_level::pipe::register(SIGINT, writer)?,
        ];
        let mut reader = mio::net::UnixStream::from_std(reader);
        let registration = Registration::new(&mut reader)?;
        Ok(Interrupt {
            reader,
            registration,
            handlers,
        })
    }

    /// Completes when Ctrl-C is pressed.
    pub async fn wait(&self) {
        let mut byte = [0u8; 1];
        let reader = &self.reader;
        // Readable means the handler wrote its byte (or, impossibly, the
        // writer closed): either way, stop waiting.
        let _ = poll_fn(|cx| {
            self.registration
                .poll_io(cx, Direction::Read, || (&*reader).read(&mut byte))
        })
        .await;
    }
}
// ANCHOR_END: interrupt

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.handlers.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        self.registration.deregister(&mut self.reader);
    }
}
