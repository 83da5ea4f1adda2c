//! Running blocking work on a helper thread: asyncio's
//! `loop.run_in_executor`.
//!
//! Some calls have no non-blocking form. The one a crawler meets is DNS:
//! `getaddrinfo` blocks until the resolver answers, which on a bad network
//! takes seconds. Called on the loop thread, it would freeze every task. So
//! [`spawn_blocking`] runs the call on a new thread and hands back a future
//! that completes when the thread is done. The thread's `wake()` reaches the
//! sleeping loop through the run queue's `mio::Waker`, see [`crate::waker`].

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::oneshot;

/// The result of [`spawn_blocking`], as a future.
#[derive(Debug)]
pub struct Blocking<T> {
    result: oneshot::Receiver<io::Result<T>>,
}

/// Runs `f` on a new thread. The future resolves to its return value, or to
/// an error if the thread could not be started or `f` panicked.
///
/// A thread per call is the simplest thing that keeps the loop responsive.
/// It is fine for a crawler, which resolves each host once; a program that
/// made thousands of calls a second would want a pool. The result comes
/// back through a [`oneshot`] handoff, whose wake reaches the sleeping loop
/// through the run queue's `mio::Waker`.
pub fn spawn_blocking<T, F>(f: F) -> Blocking<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (sender, result) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("runtime-blocking".into())
        .spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(f))
                .map_err(|_| io::Error::other("blocking task panicked"));
            sender.send(result);
        });
    // On failure the closure, and the sender in it, is dropped unsent: the
    // future then ends with the error below.
    if let Err(e) = spawned {
        log::warn!(target: "runtime", "cannot start a blocking thread: {e}");
    }
    Blocking { result }
}

impl<T> Future for Blocking<T> {
    type Output = io::Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        Pin::new(&mut self.result).poll(cx).map(|result| {
            result.unwrap_or_else(|_| {
                Err(io::Error::other(
                    "the blocking task's thread could not be started",
                ))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_until_complete;

    #[test]
    fn returns_the_threads_value() {
        let v = run_until_complete(spawn_blocking(|| 40 + 2))
            .unwrap()
            .unwrap();
        assert_eq!(v, 42);
    }

    #[test]
    fn a_panic_becomes_an_error() {
        let err = run_until_complete(spawn_blocking(|| -> u8 { panic!("bad") }))
            .unwrap()
            .unwrap_err();
        assert_eq!(err.to_string(), "blocking task panicked");
    }
}
