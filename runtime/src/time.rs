//! Timers: [`sleep`] and [`timeout`], our `asyncio.sleep` and
//! `asyncio.wait_for`.
//!
//! A `Sleep` asks the event loop for a timer that wakes its task. The loop
//! never spins: when nothing is ready it blocks in the selector for exactly
//! as long as the nearest timer allows (see [`EventLoop::turn`]).
//!
//! [`EventLoop::turn`]: crate::event_loop::EventLoop::turn

use std::cell::RefCell;
use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::clock::saturating_add;
use crate::event_loop::TimerId;
use crate::executor::{self, Inner};

/// Completes after `duration`. A duration too long for the clock (say
/// `Duration::MAX`) means a deadline that never comes, not a panic.
///
/// # Panics
///
/// When polled outside a running runtime, where no timer could ever fire.
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(deadline_after(duration))
}

/// The instant `duration` from now by the running runtime's clock,
/// saturating at "never" rather than panicking.
pub fn deadline_after(duration: Duration) -> Instant {
    saturating_add(now(), duration)
}

/// The time now by the running runtime's clock (paused in some tests), or
/// the system's outside a runtime.
pub fn now() -> Instant {
    executor::current()
        .and_then(|rt| rt.event_loop.try_borrow().ok().map(|el| el.now()))
        .unwrap_or_else(Instant::now)
}

/// Completes at `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        timer: None,
    }
}

/// The future returned by [`sleep`].
pub struct Sleep {
    deadline: Instant,
    timer: Option<Timer>,
}

/// A timer in the event loop, and the waker it will call.
struct Timer {
    id: TimerId,
    waker: Rc<RefCell<Option<Waker>>>,
    runtime: Rc<Inner>,
}

impl Sleep {
    /// When this sleep ends.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl Future for Sleep {
    type Output = ();

    // ANCHOR: sleep_poll
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if now() >= self.deadline {
            return Poll::Ready(());
        }
        match &self.timer {
            // The latest waker wins: we may have moved to another task.
            Some(timer) => *timer.waker.borrow_mut() = Some(cx.waker().clone()),
            None => {
                let runtime =
                    executor::current().expect("runtime::sleep polled outside Runtime::block_on");
                let waker = Rc::new(RefCell::new(Some(cx.waker().clone())));
                let theirs = waker.clone();
                let id = runtime
                    .event_loop
                    .borrow_mut()
                    .call_at(self.deadline, move |_| {
                        if let Some(waker) = theirs.borrow_mut().take() {
                            waker.wake();
                        }
                    });
                self.timer = Some(Timer { id, waker, runtime });
            }
        }
        crate::task::note_wait(crate::task::WaitsOn::Timer(self.deadline));
        Poll::Pending
    }
    // ANCHOR_END: sleep_poll
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.waker.borrow_mut().take();
            // If the loop is busy (we are dropped from inside one of its
            // callbacks), the timer stays and fires into an empty slot.
            if let Ok(mut event_loop) = timer.runtime.event_loop.try_borrow_mut() {
                event_loop.cancel_timer(timer.id);
            }
        }
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field(
                "remaining",
                &self.deadline.saturating_duration_since(Instant::now()),
            )
            .finish()
    }
}

/// The error of a [`timeout`] that ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed(pub Duration);

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timed out after {:?}", self.0)
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for io::Error {
    fn from(e: Elapsed) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, e)
    }
}

// ANCHOR: timeout
/// Runs `future`, but gives up after `duration`: `asyncio.wait_for`. Giving
/// up drops the future, which closes whatever it had open.
pub async fn timeout<F: Future>(duration: Duration, future: F) -> Result<F::Output, Elapsed> {
    let mut future = pin!(future);
    let mut sleep = pin!(sleep(duration));
    poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(duration))),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
// ANCHOR_END: timeout

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_until_complete;

    #[test]
    fn sleep_waits_at_least_its_duration() {
        let start = Instant::now();
        run_until_complete(sleep(Duration::from_millis(20))).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn durations_too_long_for_the_clock_mean_never() {
        let out = run_until_complete(timeout(Duration::MAX, async { 7 })).unwrap();
        assert_eq!(out, Ok(7));
        let never = deadline_after(Duration::MAX);
        assert!(never > Instant::now() + Duration::from_secs(50 * 365 * 24 * 60 * 60));
        // A sleep that will never fire, raced against one that will.
        let out = run_until_complete(timeout(Duration::from_millis(1), sleep(Duration::MAX)));
        assert_eq!(out.unwrap(), Err(Elapsed(Duration::from_millis(1))));
    }

    #[test]
    fn timeout_passes_through_a_fast_future() {
        let out = run_until_complete(timeout(Duration::from_secs(60), async { 5 })).unwrap();
        assert_eq!(out, Ok(5));
    }

    #[test]
    fn timeout_fires_on_a_future_that_never_finishes() {
        let out = run_until_complete(timeout(
            Duration::from_millis(10),
            std::future::pending::<()>(),
        ))
        .unwrap();
        assert_eq!(out, Err(Elapsed(Duration::from_millis(10))));
        let io: io::Error = Elapsed(Duration::from_millis(10)).into();
        assert_eq!(io.kind(), io::ErrorKind::TimedOut);
        assert_eq!(io.to_string(), "timed out after 10ms");
    }

    #[test]
    fn a_dropped_sleep_cancels_its_timer() {
        let rt = crate::Runtime::new().unwrap();
        rt.block_on(async {
            let _ = timeout(Duration::ZERO, sleep(Duration::from_secs(3600))).await;
        })
        .unwrap();
        assert_eq!(rt.pending_timers(), 0);
    }
}
