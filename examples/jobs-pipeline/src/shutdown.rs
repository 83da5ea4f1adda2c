//! Asking the service to stop, from any thread: a signal handler's helper,
//! a test, or the service itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// A one-way switch: once triggered it stays triggered. Clones share it.
#[derive(Clone, Default)]
pub struct Shutdown {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    triggered: bool,
    /// Tasks waiting in [`Shutdown::wait`]. A `Waker` may be called from
    /// any thread, which is how `trigger` on another thread reaches the
    /// runtime's sleeping loop.
    waiters: Vec<Waker>,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the service to stop. Safe to call from any thread, any number of
    /// times.
    pub fn trigger(&self) {
        let waiters = {
            let mut state = self.lock();
            state.triggered = true;
            std::mem::take(&mut state.waiters)
        };
        for waker in waiters {
            waker.wake();
        }
    }

    pub fn is_triggered(&self) -> bool {
        self.lock().triggered
    }

    /// Completes once [`trigger`](Self::trigger) has been called.
    pub fn wait(&self) -> Wait<'_> {
        Wait { shutdown: self }
    }
}

/// The future returned by [`Shutdown::wait`].
pub struct Wait<'a> {
    shutdown: &'a Shutdown,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.shutdown.lock();
        if state.triggered {
            return Poll::Ready(());
        }
        // One entry per waiting task, however often it polls.
        if !state.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            state.waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_from_another_thread_wakes_the_waiting_task() {
        let shutdown = Shutdown::new();
        let theirs = shutdown.clone();
        let done = runtime::run_until_complete(async move {
            let trigger = runtime::spawn_blocking(move || theirs.trigger());
            shutdown.wait().await;
            trigger.await.is_ok() && shutdown.is_triggered()
        })
        .unwrap();
        assert!(done);
    }
}
