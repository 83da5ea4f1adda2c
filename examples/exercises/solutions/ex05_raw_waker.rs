//! Exercise 05 ★★: build a `Waker` by hand from a `RawWakerVTable`
//! (reference solution).
//!
//! The waker's data pointer is an `Arc<Signal>` turned into a raw pointer:
//! it owns one strong count. Each vtable function says what it does with
//! that count: clone adds one, wake gives it up, wake_by_ref keeps it, drop
//! gives it up.

// The lesson is the `unsafe` vtable itself.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{RawWaker, RawWakerVTable, Waker};

/// What a waker wakes: here, a counter, so tests can see every wake. A
/// signal made by [`Signal::with_log`] also writes its wakes and its drop
/// to a log that outlives it, so tests can see their order too.
#[derive(Debug, Default)]
pub struct Signal {
    wakes: AtomicUsize,
    log: Option<Arc<Mutex<Vec<&'static str>>>>,
}

impl Signal {
    pub fn new() -> Arc<Signal> {
        Arc::new(Signal::default())
    }

    /// Like [`Signal::new`], but each wake adds `"woken"` to `log` and the
    /// drop adds `"dropped"`: a wake after the drop is a use after free.
    pub fn with_log(log: Arc<Mutex<Vec<&'static str>>>) -> Arc<Signal> {
        Arc::new(Signal {
            wakes: AtomicUsize::new(0),
            log: Some(log),
        })
    }

    /// How many times a waker for this signal was woken.
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }

    /// Call this from `wake` and `wake_by_ref`.
    pub fn wake(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.record("woken");
    }

    fn record(&self, event: &'static str) {
        if let Some(log) = &self.log {
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event);
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        self.record("dropped");
    }
}

/// A waker for `signal`, built from [`VTABLE`]. It keeps `signal` alive
/// until the waker and all its clones are gone.
pub fn waker(signal: Arc<Signal>) -> Waker {
    let data = Arc::into_raw(signal).cast::<()>();
    // SAFETY: `data` came from `Arc::into_raw` of an `Arc<Signal>` and owns
    // one strong count, which is what every function in VTABLE expects; the
    // functions keep that contract (see each one), and `Signal` is `Send +
    // Sync`, as a `Waker` that may be sent to other threads requires.
    unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
}

/// The four things any waker can be asked to do.
pub static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// Makes a second waker for the same signal: one more strong count.
unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` is a live `Arc<Signal>` pointer (it is a waker's), and
    // incrementing its count gives the new RawWaker a count of its own.
    unsafe { Arc::increment_strong_count(data.cast::<Signal>()) };
    RawWaker::new(data, &VTABLE)
}

/// `Waker::wake(self)`: wakes, and the waker is used up, so its count goes.
unsafe fn wake(data: *const ()) {
    // SAFETY: `data` owns one strong count; `from_raw` takes it back, and
    // dropping the Arc at the end of this function releases it.
    let signal = unsafe { Arc::from_raw(data.cast::<Signal>()) };
    signal.wake();
}

/// `Waker::wake_by_ref(&self)`: wakes; the waker lives on with its count.
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: `data` is a live `Arc<Signal>` pointer, and we only borrow it:
    // the count stays with the waker.
    let signal = unsafe { &*data.cast::<Signal>() };
    signal.wake();
}

/// The waker is dropped without waking: its count goes.
unsafe fn drop_waker(data: *const ()) {
    // SAFETY: `data` owns one strong count, released here, exactly once,
    // because a dropped waker is never used again.
    unsafe { Arc::decrement_strong_count(data.cast::<Signal>()) };
}
