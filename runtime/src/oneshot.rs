//! A one-shot handoff of a value from any thread to a task.
//!
//! A helper thread (DNS in [`spawn_blocking`](crate::spawn_blocking), page parsing in stage 3)
//! finishes its work and must wake the task waiting for the result, which
//! lives on the loop thread. Two threads touch two things, the result and
//! the waker, and the order of the touches is the whole lesson: the sender
//! publishes the result *then* looks for a waker; the receiver stores its
//! waker *then* looks for the result. Whichever way they interleave, one of
//! them sees the other's write, so the wakeup is never lost. The model
//! test (`runtime/tests/oneshot_model.rs`, run under loom) tries every
//! interleaving.
//!
//! A sender dropped without sending (its thread panicked, or its job was
//! thrown away) completes the handoff with [`Closed`], so the receiver never
//! waits for a value that cannot come.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::PoisonError;
use std::task::{Context, Poll, Waker};

// Under the model checker (`--cfg loom`, see `tests/oneshot_model.rs`) the
// same code runs on loom's `Arc` and `Mutex`, which try every interleaving
// of the two threads.
#[cfg(loom)]
use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Arc, Mutex, MutexGuard};

/// The sender went away without sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the sender was dropped without sending")
    }
}

impl std::error::Error for Closed {}

/// What the two ends share.
struct Shared<T> {
    result: Mutex<Option<Result<T, Closed>>>,
    waker: Mutex<Option<Waker>>,
}

/// The sending end: [`send`](Sender::send) once, from any thread.
pub struct Sender<T> {
    shared: Option<Arc<Shared<T>>>,
}

/// The receiving end: a future of the value.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A new handoff.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        result: Mutex::new(None),
        waker: Mutex::new(None),
    });
    (
        Sender {
            shared: Some(Arc::clone(&shared)),
        },
        Receiver { shared },
    )
}

impl<T> Sender<T> {
    /// Hands `value` over and wakes the receiver's task.
    pub fn send(mut self, value: T) {
        if let Some(shared) = self.shared.take() {
            complete(&shared, Ok(value));
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            complete(&shared, Err(Closed));
        }
    }
}

// ANCHOR: complete
fn complete<T>(shared: &Shared<T>, result: Result<T, Closed>) {
    *lock(&shared.result) = Some(result);
    // Publish the result first, then look for a waker: if the task stored
    // its waker after we looked, it also checks the result after storing,
    // and finds it.
    if let Some(waker) = lock(&shared.waker).take() {
        waker.wake();
    }
}
// ANCHOR_END: complete

impl<T> Future for Receiver<T> {
    type Output = Result<T, Closed>;

    // ANCHOR: poll
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, Closed>> {
        // Register, then check. Checking first would lose the wakeup when the
        // sender finishes between our check and our store: it would find no
        // waker, and we would wait for a wake that never comes.
        *lock(&self.shared.waker) = Some(cx.waker().clone());
        match lock(&self.shared.result).take() {
            Some(result) => Poll::Ready(result),
            None => Poll::Pending,
        }
    }
    // ANCHOR_END: poll
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("sent", &self.shared.is_none())
            .finish()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("ready", &lock(&self.shared.result).is_some())
            .finish()
    }
}

/// A poisoned lock only means another thread panicked while holding it; the
/// `Option` inside is still whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_until_complete;

    #[test]
    fn a_value_sent_from_another_thread_arrives() {
        let (tx, rx) = channel();
        let thread = std::thread::spawn(move || tx.send(42));
        assert_eq!(run_until_complete(rx).unwrap(), Ok(42));
        thread.join().unwrap();
    }

    #[test]
    fn a_sender_dropped_unsent_closes_the_handoff() {
        let (tx, rx) = channel::<u8>();
        std::thread::spawn(move || drop(tx)).join().unwrap();
        assert_eq!(run_until_complete(rx).unwrap(), Err(Closed));
    }
}
