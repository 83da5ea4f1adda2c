//! `kill -USR1 PID`: what is the crawler doing right now? Python 3.14 has
//! `python -m asyncio ps PID`; ours is a signal. The crawler prints its
//! task table to stderr (each task's id, state, name and where it was
//! spawned, from [`runtime::task_table`]) and carries on.
//!
//! The signal arrives the way Ctrl-C does (see [`crate::interrupt`]): the
//! handler writes a byte to a socket pair, and a task on our runtime waits
//! for the other end to be readable. The handler is removed when the
//! watcher is dropped, and SIGUSR1 has its default meaning again.

use std::future::poll_fn;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;

use runtime::{Direction, Registration};
use signal_hook::consts::SIGUSR1;

// ANCHOR: ps
/// The SIGUSR1 watcher. Install it inside `Runtime::block_on`, before the
/// crawl starts (a SIGUSR1 with no handler ends the process), then await
/// [`Ps::serve`] beside the crawl.
pub struct Ps {
    reader: Registration<mio::net::UnixStream>,
    _handler: Unregister,
}

impl Ps {
    /// Installs the SIGUSR1 handler.
    pub fn install() -> io::Result<Ps> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        let handler = Unregister(signal_hook::low_level::pipe::register(SIGUSR1, writer)?);
        let reader = Registration::new(mio::net::UnixStream::from_std(reader))?;
        Ok(Ps {
            reader,
            _handler: handler,
        })
    }

    /// Prints the task table on every SIGUSR1. Never completes: drop it
    /// to stop.
    pub async fn serve(&self) {
        let mut bytes = [0u8; 64];
        loop {
            // One byte per signal; signals that came together print one table.
            let signalled = poll_fn(|cx| {
                self.reader
                    .poll_io(cx, Direction::Read, |mut r| r.read(&mut bytes))
            })
            .await;
            if let Err(e) = signalled {
                log::warn!("SIGUSR1 will not print the task table any more: {e}");
                return std::future::pending().await;
            }
            while let Ok(1..) = self.reader.get_ref().read(&mut bytes) {}
            let table = runtime::task_table().unwrap_or_default();
            eprint!("tasks (SIGUSR1):\n{table}");
        }
    }
}
// ANCHOR_END: ps

/// Removes the signal handler when dropped.
struct Unregister(signal_hook::SigId);

impl Drop for Unregister {
    fn drop(&mut self) {
        signal_hook::low_level::unregister(self.0);
    }
}
