//! Exercise 03: a planted wrong answer, for `verify` (not for learners).
//!
//! The reference solution with the trap the second hint warns about: the
//! next job is called while the limiter's state is still borrowed, so a
//! job that releases or submits at once panics ("already borrowed"). The
//! test `a_job_that_releases_or_submits_at_once_is_fine` must fail on it.

use std::cell::RefCell;
use std::collections::VecDeque;
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
    waiting: VecDeque<Job>,
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
                waiting: VecDeque::new(),
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
        let job: Job = Box::new(job);
        {
            let mut state = self.state.borrow_mut();
            if state.running >= state.max {
                state.waiting.push_back(job);
                return;
            }
            state.running += 1;
            state.peak = state.peak.max(state.running);
        }
        // The borrow has ended: the job may submit more jobs, or release.
        job(event_loop, self.slot());
    }

    fn slot(&self) -> Slot {
        Slot {
            limiter: self.clone(),
        }
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
        self.state.borrow().waiting.len()
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
        let mut state = self.limiter.state.borrow_mut();
        match state.waiting.pop_front() {
            // The trap: the job is called with `state` still borrowed.
            Some(job) => job(event_loop, self.limiter.slot()),
            None => state.running -= 1,
        }
    }
}
