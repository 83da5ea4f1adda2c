//! Ctrl-C (SIGINT) and SIGTERM as something a task can await, through the
//! runtime's self-pipe ([`runtime::SignalPipe`]), with one policy of our
//! own: a second signal exits at once, for when a shutdown hangs.

use std::io;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use jobs_pipeline::Shutdown;
use runtime::{JoinHandle, SignalPipe, spawn};
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

/// [`install`], or says why not in `who`'s name: every entry point
/// installs the handlers before its banner (whoever reads it may signal at
/// once), and none starts without them.
pub fn install_or_say(who: &str) -> Result<SignalPipe, ExitCode> {
    install().map_err(|e| {
        eprintln!("{who}: cannot handle Ctrl-C: {e}");
        ExitCode::FAILURE
    })
}

/// Turns the first Ctrl-C (or SIGTERM) into `shutdown`, saying `what`
/// happens next.
pub fn trigger_on_signal(
    signals: SignalPipe,
    shutdown: &Shutdown,
    what: &'static str,
) -> JoinHandle<()> {
    let shutdown = shutdown.clone();
    spawn(async move {
        match signals.wait().await {
            Ok(()) => println!("shutting down: {what}"),
            Err(e) => eprintln!("jobs-pipeline: waiting for Ctrl-C failed: {e}"),
        }
        shutdown.trigger();
    })
}
