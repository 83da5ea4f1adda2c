//! `kill -USR1 PID`: what is the crawler doing right now? Python 3.14 has
//! `python -m asyncio ps PID`; ours is a signal. The crawler prints its
//! task table to stderr (each task's id, state, name and where it was
//! spawned, from [`runtime::task_table`]) and carries on.
//!
//! The signal arrives the way Ctrl-C does (through [`runtime::SignalPipe`]): the
//! handler writes a byte to a socket pair, and a task on our runtime waits
//! for the other end to be readable. The handler is removed when the
//! watcher is dropped, and SIGUSR1 has its default meaning again.

use std::io;

use signal_hook::consts::SIGUSR1;

use runtime::SignalPipe;

// ANCHOR: ps
/// The SIGUSR1 watcher. Install it inside `Runtime::block_on`, before the
/// crawl starts (a SIGUSR1 with no handler ends the process), then await
/// [`Ps::serve`] beside the crawl.
pub struct Ps(SignalPipe);

impl Ps {
    /// Installs the SIGUSR1 handler.
    pub fn install() -> io::Result<Ps> {
        SignalPipe::install(&[SIGUSR1]).map(Ps)
    }

    /// Prints the task table on every SIGUSR1. Never completes: drop it
    /// to stop.
    pub async fn serve(&self) {
        loop {
            if let Err(e) = self.0.wait().await {
                log::warn!("SIGUSR1 will not print the task table any more: {e}");
                return std::future::pending().await;
            }
            // Signals that came together print one table.
            self.0.take();
            let table = runtime::task_table().unwrap_or_default();
            eprint!("tasks (SIGUSR1):\n{table}");
        }
    }
}
// ANCHOR_END: ps
