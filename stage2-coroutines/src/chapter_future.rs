//! The chapter's `Future`: a slot for a result, and callbacks to run when the
//! result arrives.
//!
//! ```python
//! class Future:
//!     def __init__(self):
//!         self.result = None
//!         self._callbacks = []
//!
//!     def add_done_callback(self, fn):
//!         self._callbacks.append(fn)
//!
//!     def set_result(self, result):
//!         self.result = result
//!         for fn in self._callbacks:
//!             fn(self)
//! ```
//!
//! Rust's standard `Future` is a different thing: not a result slot but a
//! computation that is polled. This type is the chapter's, and it also
//! implements the standard trait, which shows how the two meet: awaiting it
//! stores the task's `Waker` and returns `Pending`, and `set_result` calls
//! `wake()`, which is the chapter's `Task.step` arriving as a done-callback.
//!
//! The crawler uses one as its `stopped` flag, and [`crate::on_connected`]
//! uses one the way the chapter does, resolved by an event-loop callback.

use std::cell::RefCell;
use std::fmt;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

type Callback<T> = Box<dyn FnOnce(&Future<T>)>;

// ANCHOR: future
/// A result that is not there yet. Cloning gives another handle to the same
/// future, as passing a Python object around does.
pub struct Future<T> {
    state: Rc<RefCell<State<T>>>,
}

struct State<T> {
    result: Option<T>,
    callbacks: Vec<Callback<T>>,
    /// The task awaiting this future, if one is.
    waiter: Option<Waker>,
}
// ANCHOR_END: future

/// `set_result` on a future that already has one (asyncio raises
/// `InvalidStateError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlreadyResolved;

impl fmt::Display for AlreadyResolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the future already has a result")
    }
}

impl std::error::Error for AlreadyResolved {}

impl<T> Future<T> {
    /// A pending future.
    pub fn new() -> Future<T> {
        Future {
            state: Rc::new(RefCell::new(State {
                result: None,
                callbacks: Vec::new(),
                waiter: None,
            })),
        }
    }

    // ANCHOR: add_done_callback
    /// Runs `callback` with this future once it has a result. If it already
    /// has one, runs it now: the chapter's version would never run it (its
    /// footnote 9 owns up to that).
    pub fn add_done_callback(&self, callback: impl FnOnce(&Future<T>) + 'static) {
        if self.is_done() {
            callback(self);
        } else {
            self.state.borrow_mut().callbacks.push(Box::new(callback));
        }
    }
    // ANCHOR_END: add_done_callback

    // ANCHOR: set_result
    /// Stores the result, runs the done-callbacks, and wakes the task
    /// awaiting the future.
    pub fn set_result(&self, result: T) -> Result<(), AlreadyResolved> {
        let (callbacks, waiter) = {
            let mut state = self.state.borrow_mut();
            if state.result.is_some() {
                return Err(AlreadyResolved);
            }
            state.result = Some(result);
            (std::mem::take(&mut state.callbacks), state.waiter.take())
        };
        // The borrow has ended: a callback may look at the result or add
        // another callback.
        for callback in callbacks {
            callback(self);
        }
        if let Some(waker) = waiter {
            waker.wake();
        }
        Ok(())
    }
    // ANCHOR_END: set_result

    /// Whether the future has its result.
    pub fn is_done(&self) -> bool {
        self.state.borrow().result.is_some()
    }
}

impl<T: Clone> Future<T> {
    /// The result, if it has arrived.
    pub fn result(&self) -> Option<T> {
        self.state.borrow().result.clone()
    }
}

// ANCHOR: poll
impl<T: Clone> std::future::Future for Future<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut state = self.state.borrow_mut();
        match &state.result {
            // Resolved already: no need to wait for a callback that has run.
            Some(result) => Poll::Ready(result.clone()),
            None => {
                // The chapter's Task adds its `step` as a done-callback each
                // time it yields the future. A Rust future may be polled many
                // times before it is ready, so we keep one slot, and the
                // latest waker wins, rather than a callback per poll.
                state.waiter = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
// ANCHOR_END: poll

impl<T> Clone for Future<T> {
    fn clone(&self) -> Self {
        Future {
            state: self.state.clone(),
        }
    }
}

impl<T> Default for Future<T> {
    fn default() -> Self {
        Future::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for Future<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("Future")
            .field("result", &state.result)
            .field("callbacks", &state.callbacks.len())
            .field("awaited", &state.waiter.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    use runtime::yield_now;

    #[test]
    fn set_result_runs_the_callbacks_in_order_with_the_future() {
        let f = Future::new();
        let log = Rc::new(RefCell::new(Vec::new()));
        for name in ["first", "second"] {
            let log = log.clone();
            f.add_done_callback(move |f: &Future<u32>| {
                log.borrow_mut().push(format!("{name} {:?}", f.result()))
            });
        }
        assert!(log.borrow().is_empty());
        assert_eq!(f.set_result(7), Ok(()));
        assert_eq!(*log.borrow(), ["first Some(7)", "second Some(7)"]);
        assert_eq!(f.result(), Some(7));
    }

    #[test]
    fn a_callback_added_after_the_result_runs_at_once() {
        let f = Future::new();
        f.set_result("done").unwrap();
        let ran = Rc::new(RefCell::new(None));
        let ran2 = ran.clone();
        f.add_done_callback(move |f| *ran2.borrow_mut() = f.result());
        assert_eq!(*ran.borrow(), Some("done"));
    }

    #[test]
    fn a_callback_may_add_another() {
        let f = Future::new();
        let ran = Rc::new(RefCell::new(0));
        let ran2 = ran.clone();
        f.add_done_callback(move |f: &Future<()>| {
            let ran3 = ran2.clone();
            f.add_done_callback(move |_| *ran3.borrow_mut() += 1);
            *ran2.borrow_mut() += 1;
        });
        f.set_result(()).unwrap();
        assert_eq!(*ran.borrow(), 2);
    }

    #[test]
    fn a_second_result_is_refused() {
        let f = Future::new();
        f.set_result(1).unwrap();
        assert_eq!(f.set_result(2), Err(AlreadyResolved));
        assert_eq!(f.result(), Some(1));
    }

    #[test]
    fn awaiting_parks_the_task_until_set_result_wakes_it() {
        let f: Future<&str> = Future::new();
        let log = Rc::new(RefCell::new(Vec::new()));
        let out = runtime::run_until_complete({
            let (f, log) = (f.clone(), log.clone());
            async move {
                let waiter = runtime::spawn({
                    let (f, log) = (f.clone(), log.clone());
                    async move {
                        log.borrow_mut().push("waiting");
                        let result = f.await;
                        log.borrow_mut().push("resumed");
                        result
                    }
                });
                // Let the waiter run up to its await.
                yield_now().await;
                log.borrow_mut().push("set_result");
                f.set_result("hello").unwrap();
                waiter.await.unwrap()
            }
        })
        .unwrap();
        assert_eq!(out, "hello");
        assert_eq!(*log.borrow(), ["waiting", "set_result", "resumed"]);
        assert!(!format!("{f:?}").contains("awaited: true"));
    }
}
