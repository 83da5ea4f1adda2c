//! A channel between loops: many senders on any threads, one receiver that
//! is a future on its loop.
//!
//! Several event loops on several threads ([`crate::Loops`]) share nothing
//! but what they send each other, and this is how they send it. It is the
//! [`oneshot`](crate::oneshot) handoff made long-lived: a sender pushes a
//! value and, if the receiving task is asleep, wakes it; the wake reaches
//! the other loop through its run queue's `mio::Waker`, as a blocking
//! thread's does. The rule that keeps a wake from being lost is the same
//! one, and here it is kept by one lock: the receiver looks for a value
//! and, finding none, leaves its waker *in the same critical section*; the
//! sender pushes and takes the waker in one too. Whichever comes first, the
//! second sees what it did. The model test
//! (`runtime/tests/mpsc_model.rs`, run under loom) tries every interleaving.
//!
//! The channel is unbounded: the loops that use it (stage 3's shards, the
//! snake's) each receive from a bounded number of producers at a bounded
//! rate, and a full channel would need a second waker list for senders
//! that the lesson does not need.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::PoisonError;
use std::task::{Context, Poll, Waker};

#[cfg(loom)]
use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Arc, Mutex, MutexGuard};

/// What the ends share, behind one lock.
struct State<T> {
    items: VecDeque<T>,
    /// The receiving task, when it found nothing and is waiting.
    waker: Option<Waker>,
    /// Live senders: at zero, an empty channel is over.
    senders: usize,
    /// Whether the receiver is gone: a send then hands its value back.
    receiver_gone: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

/// The sending end: clone it for each producer, on any thread.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving end, on one loop.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A new channel.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            waker: None,
            senders: 1,
            receiver_gone: false,
        }),
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

/// The receiver is gone; the value comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the receiver was dropped")
    }
}

impl<T: fmt::Debug> std::error::Error for SendError<T> {}

impl<T> Sender<T> {
    // ANCHOR: send
    /// Puts `value` on the channel and wakes the receiving task if it is
    /// waiting. Never waits itself.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let waker = {
            let mut state = lock(&self.shared.state);
            if state.receiver_gone {
                return Err(SendError(value));
            }
            state.items.push_back(value);
            // Taken under the lock the receiver stores it under: if it is
            // not there yet, the receiver has not looked yet either, and
            // will find the value when it does.
            state.waker.take()
        };
        // Woken outside the lock: the wake may take the other loop's run
        // queue lock and write to its `mio::Waker`.
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }
    // ANCHOR_END: send
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        lock(&self.shared.state).senders += 1;
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.shared.state);
            state.senders -= 1;
            if state.senders > 0 {
                return;
            }
            state.waker.take()
        };
        // The last sender: a receiver waiting on an empty channel is told
        // it is over.
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// The next value, or `None` once every sender is gone and the channel
    /// is empty.
    pub fn recv(&mut self) -> Recv<'_, T> {
        Recv { receiver: self }
    }

    /// Waits for values, and moves every value there into `into` at once,
    /// under one lock: a loop that takes a burst from another thread then
    /// contends with its senders once, not once a value. Resolves to how
    /// many it moved, 0 once every sender is gone and the channel is empty.
    pub async fn recv_many(&mut self, into: &mut Vec<T>) -> usize {
        std::future::poll_fn(|cx| self.poll_recv_many(cx, into)).await
    }

    /// [`recv_many`](Self::recv_many) as a poll function.
    pub fn poll_recv_many(&mut self, cx: &mut Context<'_>, into: &mut Vec<T>) -> Poll<usize> {
        let mut state = lock(&self.shared.state);
        if !state.items.is_empty() {
            let n = state.items.len();
            into.extend(state.items.drain(..));
            return Poll::Ready(n);
        }
        if state.senders == 0 {
            return Poll::Ready(0);
        }
        match &mut state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next value if one is there now, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        lock(&self.shared.state).items.pop_front()
    }

    // ANCHOR: poll_recv
    /// [`recv`](Self::recv) as a poll function.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.shared.state);
        if let Some(value) = state.items.pop_front() {
            return Poll::Ready(Some(value));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        // Still holding the lock we looked under: a sender cannot slip a
        // value in between our look and our waker, and so cannot miss it.
        match &mut state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
    // ANCHOR_END: poll_recv
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let items = {
            let mut state = lock(&self.shared.state);
            state.receiver_gone = true;
            std::mem::take(&mut state.items)
        };
        // What was sent and never received is dropped here, on the
        // receiver's thread, as it would have been had it been received,
        // and after the lock: a value's drop may send on this channel.
        drop(items);
    }
}

/// The future of [`Receiver::recv`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Recv<'a, T> {
    receiver: &'a mut Receiver<T>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.receiver.poll_recv(cx)
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("Receiver")
            .field("queued", &state.items.len())
            .field("senders", &state.senders)
            .finish()
    }
}

/// A poisoned lock only means another thread panicked while holding it;
/// the queue inside is still whole (every change to it is one call).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_until_complete;

    #[test]
    fn values_from_other_threads_arrive_in_each_senders_order() {
        let (tx, mut rx) = channel();
        let threads: Vec<_> = (0..3)
            .map(|t| {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    for i in 0..100 {
                        tx.send((t, i)).unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        let got = run_until_complete(async move {
            let mut got = Vec::new();
            while let Some(v) = rx.recv().await {
                got.push(v);
            }
            got
        })
        .unwrap();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(got.len(), 300);
        for t in 0..3 {
            let mine: Vec<u32> = got.iter().filter(|v| v.0 == t).map(|v| v.1).collect();
            assert_eq!(mine, (0..100).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_last_sender_dropped_ends_the_channel_after_what_it_sent() {
        let (tx, mut rx) = channel();
        tx.send(1).unwrap();
        std::thread::spawn(move || drop(tx)).join().unwrap();
        assert_eq!(rx.try_recv(), Some(1));
        assert_eq!(run_until_complete(rx.recv()).unwrap(), None);
    }

    #[test]
    fn a_value_whose_drop_sends_on_its_channel_is_dropped_after_the_lock() {
        /// Sends on its channel as it is dropped (a job holding a handle
        /// to the loop it was sent to, say).
        struct Resend(Option<Sender<Resend>>);
        impl Drop for Resend {
            fn drop(&mut self) {
                if let Some(tx) = self.0.take() {
                    // The receiver is gone: the value comes back, and is
                    // dropped here, with nothing to send.
                    assert!(tx.send(Resend(None)).is_err());
                }
            }
        }
        let (tx, rx) = channel();
        assert!(tx.send(Resend(Some(tx.clone()))).is_ok());
        // Would deadlock if the queued value were dropped under the lock.
        drop(rx);
    }

    #[test]
    fn a_send_to_a_dropped_receiver_hands_the_value_back() {
        let (tx, rx) = channel();
        drop(rx);
        assert_eq!(tx.send("x"), Err(SendError("x")));
    }
}
