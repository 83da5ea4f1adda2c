//! Ctrl-C (SIGINT) and SIGTERM as something a task can await.
//!
//! A signal handler may do almost nothing: no locks, no allocation, no
//! waking of tasks. The classic way out is the self-pipe: the handler writes
//! a byte into one end of a socket pair, and the event loop watches the
//! other end like any socket. signal-hook provides the handler; the read end
//! goes to our reactor through `Registration`, the same door our TCP sockets
//! use.

use std::future::poll_fn;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use runtime::{Direction, Registration};
use signal_hook::consts::{SIGINT, SIGTERM};

/// The read end of the self-pipe.
pub struct SignalPipe {
    read_end: UnixStream,
}

impl SignalPipe {
    /// Installs the handlers. The first SIGINT or SIGTERM writes to the
    /// pipe; a second one exits at once, for when a shutdown hangs.
    pub fn install() -> io::Result<SignalPipe> {
        let (read_end, write_end) = UnixStream::pair()?;
        let signalled = Arc::new(AtomicBool::new(false));
        for (signal, status) in [(SIGINT, 130), (SIGTERM, 143)] {
            // Order matters: the exit checks the flag before this signal
            // sets it, so only a second signal exits.
            signal_hook::flag::register_conditional_shutdown(signal, status, signalled.clone())?;
            signal_hook::flag::register(signal, signalled.clone())?;
            signal_hook::low_level::pipe::register(signal, write_end.try_clone()?)?;
        }
        Ok(SignalPipe { read_end })
    }

    // ANCHOR: wait
    /// Waits for the first signal. Must run inside the runtime.
    pub async fn wait(self) -> io::Result<()> {
        self.read_end.set_nonblocking(true)?;
        // Dropped at the end of this function: deregistered and closed.
        let pipe = Registration::new(mio::net::UnixStream::from_std(self.read_end))?;
        let mut byte = [0u8; 1];
        poll_fn(|cx| pipe.poll_io(cx, Direction::Read, |mut p| p.read(&mut byte)))
            .await
            .map(drop)
    }
    // ANCHOR_END: wait
}
