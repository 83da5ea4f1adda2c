//! Exercise 11: a planted wrong answer, for `verify` (not for learners).
//!
//! The reference solution with the trap the second hint warns about: a
//! waiter dropped while still in line never leaves it. `release` then
//! hands a permit to a waiter that is gone, and the permit is lost for
//! good. The test `a_waiter_cancelled_in_line_leaves_it` must fail on it;
//! `verify` checks that it does (runner/catalog.rs, `PLANTED`).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// At most `permits` holders at once; the others wait in line, first come
/// first served. Cloning gives another handle to the same semaphore.
#[derive(Clone)]
pub struct Semaphore {
    state: Rc<RefCell<State>>,
}

struct State {
    /// Free permits. Never more than zero while someone waits.
    permits: usize,
    /// Tasks waiting, in order, each with an id so it can find its entry.
    waiters: VecDeque<(u64, Waker)>,
    /// Waiters that were handed a permit and have not polled since.
    granted: Vec<u64>,
    next_id: u64,
}

/// A permit; dropping it gives it back.
pub struct Permit {
    semaphore: Semaphore,
}

impl Semaphore {
    pub fn new(permits: usize) -> Semaphore {
        Semaphore {
            state: Rc::new(RefCell::new(State {
                permits,
                waiters: VecDeque::new(),
                granted: Vec::new(),
                next_id: 0,
            })),
        }
    }

    /// Waits for a permit.
    pub fn acquire(&self) -> Acquire {
        Acquire {
            semaphore: self.clone(),
            id: None,
            done: false,
        }
    }

    /// A permit if one is free and nobody is waiting for it, without
    /// waiting.
    pub fn try_acquire(&self) -> Option<Permit> {
        let mut state = self.state.borrow_mut();
        if state.permits > 0 && state.waiters.is_empty() && state.granted.is_empty() {
            state.permits -= 1;
            Some(self.permit())
        } else {
            None
        }
    }

    /// Free permits.
    pub fn available(&self) -> usize {
        self.state.borrow().permits
    }

    /// Tasks waiting for a permit.
    pub fn waiting(&self) -> usize {
        self.state.borrow().waiters.len()
    }

    fn permit(&self) -> Permit {
        Permit {
            semaphore: self.clone(),
        }
    }

    /// Gives a permit back: to the first waiter if there is one, else to
    /// the pool.
    fn release(&self) {
        let waker = {
            let Ok(mut state) = self.state.try_borrow_mut() else {
                return; // cannot happen: no borrow is held across a call out
            };
            match state.waiters.pop_front() {
                Some((id, waker)) => {
                    state.granted.push(id);
                    waker
                }
                None => {
                    state.permits += 1;
                    return;
                }
            }
        };
        waker.wake();
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.semaphore.release();
    }
}

/// The future returned by [`Semaphore::acquire`].
pub struct Acquire {
    semaphore: Semaphore,
    /// Our place in line, once we have waited.
    id: Option<u64>,
    /// Set when we returned the permit.
    done: bool,
}

impl Future for Acquire {
    type Output = Permit;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit> {
        let semaphore = self.semaphore.clone();
        let mut state = semaphore.state.borrow_mut();
        match self.id {
            None if state.permits > 0 && state.waiters.is_empty() && state.granted.is_empty() => {
                state.permits -= 1;
                drop(state);
                self.done = true;
                Poll::Ready(semaphore.permit())
            }
            None => {
                let id = state.next_id;
                state.next_id += 1;
                state.waiters.push_back((id, cx.waker().clone()));
                self.id = Some(id);
                Poll::Pending
            }
            Some(id) => {
                if let Some(i) = state.granted.iter().position(|&g| g == id) {
                    state.granted.swap_remove(i);
                    drop(state);
                    self.done = true;
                    return Poll::Ready(semaphore.permit());
                }
                // Still in line: the latest waker wins.
                if let Some(entry) = state.waiters.iter_mut().find(|(w, _)| *w == id) {
                    entry.1 = cx.waker().clone();
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let (Some(id), false) = (self.id, self.done) else {
            return;
        };
        let was_granted = {
            let Ok(mut state) = self.semaphore.state.try_borrow_mut() else {
                return;
            };
            // The trap: the waiter is not taken out of the line.
            match state.granted.iter().position(|&g| g == id) {
                Some(i) => {
                    state.granted.swap_remove(i);
                    true
                }
                None => false,
            }
        };
        // Handed a permit, but cancelled before taking it: pass it on, or
        // it is lost for good.
        if was_granted {
            self.semaphore.release();
        }
    }
}
