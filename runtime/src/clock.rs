//! The runtime's clock: the real one, or, for tests, a paused one.
//!
//! Timers compare deadlines with "now". With the real clock a test of
//! timers depends on how fast the machine runs: a task that registers its
//! timer late sees it fire late. A paused clock stands still while tasks
//! run, and moves only when the loop has nothing else to do, straight to the
//! next deadline (tokio's `time::pause`, which mini-redis's tests use). A
//! test then sees the same order and the same times on any machine, and
//! sleeps of minutes take no time at all.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Where the event loop gets the time.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// `Instant::now()`.
    #[default]
    System,
    /// A time that moves only when the loop jumps to its next timer.
    Paused(Rc<Cell<Instant>>),
}

impl Clock {
    /// A paused clock, stopped at the present moment.
    pub fn paused() -> Clock {
        Clock::Paused(Rc::new(Cell::new(Instant::now())))
    }

    /// The time now, by this clock.
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant::now(),
            Clock::Paused(now) => now.get(),
        }
    }

    /// Moves a paused clock forward by `by`, as if that much time passed
    /// while the caller ran: a test's stand-in for a blocking call. The
    /// system clock cannot be moved; for it this does nothing.
    pub fn advance(&self, by: Duration) {
        if let Clock::Paused(now) = self {
            now.set(saturating_add(now.get(), by));
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        matches!(self, Clock::Paused(_))
    }

    /// Moves a paused clock forward to `deadline` (never back).
    pub(crate) fn advance_to(&self, deadline: Instant) {
        if let Clock::Paused(now) = self {
            now.set(now.get().max(deadline));
        }
    }
}

/// `now + duration`, saturating: `Instant + Duration` panics when the sum
/// does not fit the clock, and a caller's `Duration::MAX` ("no limit") must
/// not crash the program. A hundred years is "never" for any timer this
/// runtime will run.
pub fn saturating_add(now: Instant, duration: Duration) -> Instant {
    const NEVER: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);
    now.checked_add(duration.min(NEVER))
        .or_else(|| now.checked_add(Duration::from_secs(24 * 60 * 60)))
        .unwrap_or(now)
}
