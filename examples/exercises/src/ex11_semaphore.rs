//! Exercise 11 ★★: a semaphore on the runtime.
//!
//! asyncio has `Semaphore`; our runtime does not. A crawler needs one to
//! cap anything that is not "one worker, one request": open files, parser
//! jobs, requests to one host (exercise 12). `acquire` waits for a permit,
//! and dropping the permit gives it back.
//!
//! Right now `acquire` hands out a permit every time. Make it wait when
//! none is free, in first-come-first-served order, waking the next waiter
//! when a permit comes back. Two traps, each with a test: a permit given
//! to a waiter must not be taken by somebody else (`try_acquire`, or a new
//! `acquire`) before that waiter runs; and a waiter that is cancelled
//! (dropped) after it was woken must pass its permit on.
//!
//! Read first: the book's "Coordinating Coroutines", then `Get` and its
//! `Drop` in runtime/src/queue.rs, which solves the same two problems for
//! queue items.
//! Check: `cargo run -p exercises -- check 11`. Stuck: `... -- hint 11`.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// At most `permits` holders at once; the others wait in line, first come
/// first served. Cloning gives another handle to the same semaphore.
#[derive(Clone)]
pub struct Semaphore {
    state: Rc<RefCell<State>>,
}

struct State {
    /// Free permits.
    permits: usize,
    // TODO: who is waiting, in order.
}

/// A permit; dropping it gives it back.
pub struct Permit {
    semaphore: Semaphore,
}

impl Semaphore {
    pub fn new(permits: usize) -> Semaphore {
        Semaphore {
            state: Rc::new(RefCell::new(State { permits })),
        }
    }

    /// Waits for a permit.
    pub fn acquire(&self) -> Acquire {
        Acquire {
            semaphore: self.clone(),
        }
    }

    /// A permit if one is free and nobody is waiting for it, without
    /// waiting.
    pub fn try_acquire(&self) -> Option<Permit> {
        Some(self.permit()) // TODO
    }

    /// Free permits.
    pub fn available(&self) -> usize {
        self.state.borrow().permits
    }

    /// Tasks waiting for a permit: in line, not yet handed one. (A waiter
    /// that has been handed a permit but has not run yet no longer counts;
    /// one cancelled in line must not count either.)
    pub fn waiting(&self) -> usize {
        0 // TODO
    }

    fn permit(&self) -> Permit {
        Permit {
            semaphore: self.clone(),
        }
    }

    /// Gives a permit back.
    fn release(&self) {
        // TODO
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
    // TODO: fields of its own, to know between polls (and when it is
    // dropped) whether it is in line, and whether it was handed a permit.
}

impl Future for Acquire {
    type Output = Permit;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Permit> {
        // TODO: take a free permit, or wait in line for one.
        Poll::Ready(self.semaphore.permit())
    }
}
