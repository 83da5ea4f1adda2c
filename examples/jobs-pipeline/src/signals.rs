//! Ctrl-C (SIGINT) and SIGTERM as something a task can await, through the
//! runtime's self-pipe ([`runtime::SignalPipe`]), with one policy of our
//! own: a second signal exits at once, for when a shutdown hangs.

use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGINT, SIGTERM};

// ANCHOR: install
/// The first SIGINT or SIGTERM wakes whoever waits on the pipe; a second
/// one ends the process with the shell's status for that signal.
pub fn install() -> io::Result<runtime::SignalPipe> {
    let signalled = Arc::new(AtomicBool::new(false));
    for (signal, status) in [(SIGINT, 130), (SIGTERM, 143)] {
        // Order matters: the exit checks the flag before this signal sets
        // it, so only a second signal exits.
        signal_hook::flag::register_conditional_shutdown(signal, status, signalled.clone())?;
        signal_hook::flag::register(signal, signalled.clone())?;
    }
    runtime::SignalPipe::install(&[SIGINT, SIGTERM])
}
// ANCHOR_END: install
