//! Exercise 06 ★★: turn a callback API into a future.
//!
//! The event loop speaks callbacks: `call_later(delay, callback)`. A
//! coroutine wants something to `.await`. The chapter bridges the two with
//! a `Future` that a callback resolves (`on_connected` calls `set_result`,
//! and that resumes the coroutine). Do the same for timers: `sleep` must
//! return a future that completes only after a timer callback has run.
//!
//! Right now `Sleep` is ready at once, without any timer. Make it set a
//! timer with `call_later` the first time it is polled, return `Pending`
//! until the timer's callback has run, and wake the task that polled it
//! last. A `Sleep` dropped before it fires cancels its timer, or a dropped
//! sleep would keep the loop running for nothing.
//!
//! Read first: the book's "Building Coroutines With Futures", then
//! stage2-coroutines/src/chapter_future.rs (a Future with set_result) and
//! stage2-coroutines/src/on_connected.rs (a callback resolving it).
//! Check: `cargo run -p exercises -- check 06`. Stuck: `... -- hint 06`.

use std::cell::RefCell;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use runtime::EventLoop;

/// Completes `delay` after it is first polled, on the bare event loop.
pub fn sleep(event_loop: &RefCell<EventLoop>, delay: Duration) -> Sleep<'_> {
    Sleep { event_loop, delay }
}

/// The future returned by [`sleep`].
pub struct Sleep<'a> {
    event_loop: &'a RefCell<EventLoop>,
    delay: Duration,
    // TODO: once polled, the timer's id (to cancel it) and whatever its
    // callback uses to tell this future that it ran.
}

impl std::future::Future for Sleep<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        // TODO: on the first poll, set a timer for `self.delay` with
        // `self.event_loop.borrow_mut().call_later(...)`. Pending until its
        // callback has run; wake the latest waker when it does.
        let _ = (self.event_loop, self.delay);
        Poll::Ready(())
    }
}

// TODO: impl Drop for Sleep<'_>: cancel a timer that has not fired.
