//! Signals (Ctrl-C, SIGTERM, ...) as something a task can await: the
//! self-pipe trick. asyncio's counterpart is `loop.add_signal_handler`,
//! which is built the same way.
//!
//! A signal handler may do almost nothing safely: no locks, no allocation,
//! no waking of tasks. Writing a byte to a pipe is one of the few things it
//! may do. `signal-hook` installs a handler that writes to one end of a
//! socket pair. The other end is an ordinary non-blocking socket,
//! registered with our reactor like any TCP connection, so "the signal
//! arrived" reaches the loop as "this socket is readable", and wakes the
//! task waiting on it.

use std::cell::OnceCell;
use std::ffi::c_int;
use std::fmt;
use std::future::poll_fn;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;

use signal_hook::SigId;

use crate::reactor::{Direction, Registration};

// ANCHOR: signal_pipe
/// Signals delivered as readiness: a handler per signal that writes a byte
/// to one end of a socket pair, and the other end registered with our
/// reactor the first time a task waits. Dropping it removes the handlers,
/// so the signals have their default meaning again (Ctrl-C ends the
/// process).
pub struct SignalPipe {
    handlers: Vec<SigId>,
    /// The read end, for [`SignalPipe::take`], which never waits.
    read_end: UnixStream,
    /// The same socket, registered with the reactor by the first `wait`:
    /// installing may happen before the runtime starts.
    registered: OnceCell<Registration<mio::net::UnixStream>>,
}

impl SignalPipe {
    /// Installs a handler for each of `signals`. May be called outside the
    /// runtime, before a server prints its address, say, so that whoever
    /// reads it may signal at once.
    pub fn install(signals: &[c_int]) -> io::Result<SignalPipe> {
        let (read_end, write_end) = UnixStream::pair()?;
        read_end.set_nonblocking(true)?;
        // A burst of signals must not block the handler: once the pipe is
        // full, one more byte would say nothing new.
        write_end.set_nonblocking(true)?;
        let mut pipe = SignalPipe {
            handlers: Vec::new(),
            read_end,
            registered: OnceCell::new(),
        };
        for &signal in signals {
            // The handler only writes its byte. It never exits the process
            // itself: that is the program's choice, made in a task.
            let handler = signal_hook::low_level::pipe::register(signal, write_end.try_clone()?)?;
            pipe.handlers.push(handler);
        }
        Ok(pipe)
    }

    /// Completes when one of the signals has arrived (at least once since
    /// the last `wait` or `take`). Must run inside the runtime.
    pub async fn wait(&self) -> io::Result<()> {
        let registered = match self.registered.get() {
            Some(registered) => registered,
            None => {
                let socket = mio::net::UnixStream::from_std(self.read_end.try_clone()?);
                let registration = Registration::new(socket)?;
                self.registered.get_or_init(|| registration)
            }
        };
        let mut byte = [0u8; 1];
        poll_fn(|cx| registered.poll_io(cx, Direction::Read, |mut r| r.read(&mut byte)))
            .await
            .map(drop)
    }

    /// How many signals arrived since the last call (or since `wait`
    /// returned). Never waits.
    pub fn take(&self) -> usize {
        let mut bytes = [0u8; 64];
        let mut count = 0;
        while let Ok(n @ 1..) = (&self.read_end).read(&mut bytes) {
            count += n;
        }
        count
    }
}

impl Drop for SignalPipe {
    fn drop(&mut self) {
        // The registration deregisters the socket after this.
        for &handler in &self.handlers {
            signal_hook::low_level::unregister(handler);
        }
    }
}
// ANCHOR_END: signal_pipe

impl fmt::Debug for SignalPipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignalPipe")
            .field("signals", &self.handlers.len())
            .field("registered", &self.registered.get().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Runtime;
    use signal_hook::consts::{SIGUSR1, SIGUSR2};

    // Each test uses a signal of its own: the tests of a crate run on
    // threads of one process, and a signal is the process's.

    #[test]
    fn a_signal_wakes_the_waiting_task_and_take_counts_the_rest() {
        let pipe = SignalPipe::install(&[SIGUSR1]).unwrap();
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let raiser = crate::spawn(async {
                crate::yield_now().await;
                signal_hook::low_level::raise(SIGUSR1).unwrap();
            });
            pipe.wait().await.unwrap();
            raiser.await.unwrap();
            assert_eq!(pipe.take(), 0);
            signal_hook::low_level::raise(SIGUSR1).unwrap();
            signal_hook::low_level::raise(SIGUSR1).unwrap();
            assert_eq!(pipe.take(), 2);
            assert_eq!(pipe.take(), 0);
        })
        .unwrap();
    }

    #[test]
    fn a_signal_before_the_first_wait_is_kept() {
        // Installed outside the runtime, signalled before anyone waits.
        let pipe = SignalPipe::install(&[SIGUSR2]).unwrap();
        signal_hook::low_level::raise(SIGUSR2).unwrap();
        let rt = Runtime::new().unwrap();
        rt.block_on(pipe.wait()).unwrap().unwrap();
        // The registration went when the pipe did.
        drop(pipe);
        assert_eq!(rt.registered_sources(), 0);
    }
}
