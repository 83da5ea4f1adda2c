//! Exercise 03 ★★: at most N fetchers at a time, with callbacks.
//!
//! Stage 1 starts a `Fetcher` for every new link the moment it is found, so
//! a page with a thousand links opens a thousand sockets at once, and a
//! crawl of a big site runs out of file descriptors (or gets the crawler
//! banned). A `Limiter` runs at most `max` jobs at once. Right now it starts
//! every job at once, however many are running.
//!
//! Make `submit` queue a job when `max` are running, and make
//! `Slot::release` start the longest-waiting job (first come, first
//! served). A job can submit more jobs (a crawler does, for every link it
//! finds), so never hold a `RefCell` borrow while you call a job.
//!
//! Read first: the book's "Programming With Callbacks", then
//! stage1-callbacks/src/fetcher.rs (`read_response` starts the new
//! fetchers) and `callback_get` in examples/exercises/src/support.rs.
//! Check: `cargo run -p exercises -- check 03`. Stuck: `... -- hint 03`.

use std::cell::RefCell;
use std::rc::Rc;

use runtime::EventLoop;

/// A job: it starts when it gets a [`Slot`], and must call
/// [`Slot::release`] when it is done.
pub type Job = Box<dyn FnOnce(&mut EventLoop, Slot)>;

/// Runs at most `max` jobs at once; the rest wait their turn, first come
/// first served. Cloning gives another handle to the same limiter.
#[derive(Clone)]
pub struct Limiter {
    state: Rc<RefCell<State>>,
}

struct State {
    max: usize,
    running: usize,
    peak: usize,
    // TODO: somewhere for the jobs that wait.
}

/// The right to run, held by a running job.
#[must_use = "a job must call `release` when it is done, or its slot is lost"]
pub struct Slot {
    limiter: Limiter,
}

impl Limiter {
    /// A limiter for `max` jobs at once (at least one).
    pub fn new(max: usize) -> Limiter {
        Limiter {
            state: Rc::new(RefCell::new(State {
                max: max.max(1),
                running: 0,
                peak: 0,
            })),
        }
    }

    /// Starts `job` now if fewer than `max` jobs are running; otherwise
    /// queues it behind the others.
    pub fn submit(
        &self,
        event_loop: &mut EventLoop,
        job: impl FnOnce(&mut EventLoop, Slot) + 'static,
    ) {
        // TODO: this starts every job at once. Queue it when `max` are
        // running.
        {
            let mut state = self.state.borrow_mut();
            state.running += 1;
            state.peak = state.peak.max(state.running);
        }
        job(
            event_loop,
            Slot {
                limiter: self.clone(),
            },
        );
    }

    /// The most jobs that were ever running at once.
    pub fn peak(&self) -> usize {
        self.state.borrow().peak
    }

    /// Jobs running now.
    pub fn running(&self) -> usize {
        self.state.borrow().running
    }

    /// Jobs waiting for a slot.
    pub fn waiting(&self) -> usize {
        0 // TODO
    }

    /// The limit.
    pub fn max(&self) -> usize {
        self.state.borrow().max
    }
}

impl Slot {
    /// Gives the slot back, and hands it straight to the longest-waiting
    /// job, if there is one.
    pub fn release(self, event_loop: &mut EventLoop) {
        // TODO: start the next waiting job with this slot.
        let _ = event_loop;
        self.limiter.state.borrow_mut().running -= 1;
    }
}
