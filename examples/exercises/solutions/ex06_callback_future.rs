//! Exercise 06 ★★: turn a callback API into a future (reference solution).
//!
//! The first poll sets a timer whose callback resolves a chapter-style
//! `Future`; every poll delegates to that future, which keeps the latest
//! waker and is woken by `set_result`. Dropping the sleep early cancels
//! the timer.

use std::cell::RefCell;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use runtime::EventLoop;
use runtime::TimerId;
use stage2_coroutines::chapter_future::Future as ChapterFuture;

/// Completes `delay` after it is first polled, on the bare event loop.
pub fn sleep(event_loop: &RefCell<EventLoop>, delay: Duration) -> Sleep<'_> {
    Sleep {
        event_loop,
        delay,
        timer: None,
    }
}

/// The future returned by [`sleep`].
pub struct Sleep<'a> {
    event_loop: &'a RefCell<EventLoop>,
    delay: Duration,
    /// Once polled: the timer, and the future its callback resolves.
    timer: Option<(TimerId, ChapterFuture<()>)>,
}

impl std::future::Future for Sleep<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let fired = match &mut this.timer {
            Some((_, fired)) => fired,
            None => {
                // The callback side: all it does is resolve the future,
                // like the chapter's `on_connected`.
                let fired = ChapterFuture::new();
                let theirs = fired.clone();
                let id = this
                    .event_loop
                    .borrow_mut()
                    .call_later(this.delay, move |_| {
                        let _ = theirs.set_result(());
                    });
                &mut this.timer.insert((id, fired)).1
            }
        };
        // The future side: the chapter Future stores our waker (the latest
        // one wins) and `set_result` wakes it.
        Pin::new(fired).poll(cx)
    }
}

impl Drop for Sleep<'_> {
    fn drop(&mut self) {
        let Some((id, fired)) = self.timer.take() else {
            return;
        };
        if fired.is_done() {
            return; // the timer has fired: nothing to cancel
        }
        // Busy means we are dropped inside one of the loop's callbacks; then
        // the timer fires later into a future nobody awaits, harmlessly.
        if let Ok(mut event_loop) = self.event_loop.try_borrow_mut() {
            event_loop.cancel_timer(id);
        }
    }
}
