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
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// What the helper thread and the waiting task share.
struct Shared<T> {
    result: Mutex<Option<io::Result<T>>>,
    waker: Mutex<Option<Waker>>,
}

/// The result of [`spawn_blocking`], as a future.
pub struct Blocking<T> {
    shared: Arc<Shared<T>>,
}

/// Runs `f` on a new thread. The future resolves to its return value, or to
/// an error if the thread could not be started or `f` panicked.
///
/// A thread per call is the simplest thing that keeps the loop responsive.
/// It is fine for a crawler, which resolves each host once; a program that
/// made thousands of calls a second would want a pool.
pub fn spawn_blocking<T, F>(f: F) -> Blocking<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let shared = Arc::new(Shared {
        result: Mutex::new(None),
        waker: Mutex::new(None),
    });
    let theirs = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("runtime-blocking".into())
        .spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(f))
                .map_err(|_| io::Error::other("blocking task panicked"));
            complete(&theirs, result);
        });
    if let Err(e) = spawned {
        complete(&shared, Err(e));
    }
    Blocking { shared }
}

// ANCHOR: complete
fn complete<T>(shared: &Shared<T>, result: io::Result<T>) {
    *lock(&shared.result) = Some(result);
    // Publish the result first, then look for a waker: if the task stored
    // its waker after we looked, it also checks the result after storing,
    // and finds it.
    if let Some(waker) = lock(&shared.waker).take() {
        waker.wake();
    }
}
// ANCHOR_END: complete

impl<T> Future for Blocking<T> {
    type Output = io::Result<T>;

    // ANCHOR: poll
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        // Register, then check. Checking first would lose the wakeup when the
        // thread finishes between our check and our store: it would find no
        // waker, and we would wait for a wake that never comes.
        *lock(&self.shared.waker) = Some(cx.waker().clone());
        match lock(&self.shared.result).take() {
            Some(result) => Poll::Ready(result),
            None => Poll::Pending,
        }
    }
    // ANCHOR_END: poll
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
