//! Exercise 17 ★★: a channel between loops.
//!
//! Loops on different threads share nothing but what they send each
//! other, and they send it through a channel: any number of senders, on
//! any threads, and one receiver, a task on one loop. Write its two
//! halves: `send`, which puts a value in and wakes the receiving task if it
//! is waiting, and `poll_recv`, which takes a value out or leaves the
//! task's waker for a sender to find. The last sender dropped ends the
//! channel: `poll_recv` then says `Ready(None)` once it is empty.
//!
//! The trap is the lost wakeup. If the receiver looks, finds nothing, and
//! stores its waker in a second step, a value sent between the two steps
//! finds no waker, and the receiver sleeps on a channel that holds a
//! value. Your channel runs on loom's `Mutex`, and the tests run under
//! loom's model checker, which tries every order in which the threads can
//! take the lock: an order that loses a wakeup is found, whatever the
//! machine's timing.
//!
//! Read first: the book's "Beyond One Core" (How loops talk) and
//! `runtime/src/oneshot.rs` (the same rule, for one value; don't read
//! runtime/src/mpsc.rs until you are done: it is this exercise's answer).
//! Check: `cargo run -p exercises -- check 17`. Stuck: `... -- hint 17`.

use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

use loom::sync::{Arc, Mutex};

/// What the two halves share, behind one lock.
struct State<T> {
    items: VecDeque<T>,
    /// The receiving task, when it found nothing and waits.
    waker: Option<Waker>,
    /// Senders still alive.
    senders: usize,
}

/// The sending half: clone it for each producer.
pub struct Sender<T> {
    state: Arc<Mutex<State<T>>>,
}

/// The receiving half, polled by one task.
pub struct Receiver<T> {
    state: Arc<Mutex<State<T>>>,
}

/// A new channel, with one sender.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let state = Arc::new(Mutex::new(State {
        items: VecDeque::new(),
        waker: None,
        senders: 1,
    }));
    (
        Sender {
            state: Arc::clone(&state),
        },
        Receiver { state },
    )
}

impl<T> Sender<T> {
    /// Puts `value` on the channel, and wakes the receiving task if it is
    /// waiting. Never waits.
    pub fn send(&self, value: T) {
        // TODO: push the value and take the waker under the lock; wake it
        // after letting go of the lock. (No `todo!` in this file: a panic
        // on one of loom's threads while another runs aborts the test run.)
        drop(value);
    }
}

impl<T> Receiver<T> {
    /// The next value; `Ready(None)` once every sender is gone and the
    /// channel is empty; `Pending`, with the task's waker left for a
    /// sender, otherwise.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        // TODO: a value if there is one; the end if every sender is gone;
        // otherwise leave `cx`'s waker for a sender, without letting a
        // value slip in between the look and the store.
        let _ = cx;
        Poll::Pending
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        self.state.lock().unwrap().senders += 1;
        Sender {
            state: Arc::clone(&self.state),
        }
    }
}

impl<T> Drop for Sender<T> {
    /// The last sender wakes a waiting receiver: the channel is over.
    fn drop(&mut self) {
        // TODO: count this sender out; the last one wakes a receiver that
        // is waiting, so that it sees the end.
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    /// What a debugger, or a failing test, wants to see.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().unwrap();
        f.debug_struct("Receiver")
            .field("queued", &state.items.len())
            .field("waiting", &state.waker.is_some())
            .field("senders", &state.senders)
            .finish()
    }
}
