//! Exercise 05 ★★: build a `Waker` by hand from a `RawWakerVTable`.
//!
//! Our runtime builds its wakers with `std::task::Wake`, which writes the
//! unsafe part for us. Underneath, a `Waker` is a data pointer and a table
//! of four functions: clone, wake, wake_by_ref and drop. Write them for a
//! waker whose data is an `Arc<Signal>`, so that every wake counts, and
//! the `Arc`'s strong count is exactly right at every moment: not one too
//! many (a leak) nor one too few (a use after free).
//!
//! `waker` returns `Waker::noop()` for now, which wakes nobody. Replace it
//! with a waker built by `Waker::from_raw`, and fill in the vtable. Every
//! `unsafe` block gets a `// SAFETY:` comment that says why it is sound.
//!
//! Read first: the book's "How Rust Futures Work", runtime/src/waker.rs,
//! and the docs of `RawWakerVTable` (the contract of each function), and
//! `Arc::into_raw`, `Arc::from_raw`, `Arc::increment_strong_count`.
//! Check: `cargo run -p exercises -- check 05`. Stuck: `... -- hint 05`.

// The lesson is the `unsafe` vtable itself.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

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

/// A waker for `signal`. It keeps `signal` alive until the waker and all
/// its clones are gone.
pub fn waker(signal: Arc<Signal>) -> Waker {
    // TODO: turn `signal` into a data pointer with `Arc::into_raw`, and
    // build the waker with `Waker::from_raw(RawWaker::new(data, &VTABLE))`,
    // where VTABLE is a `static RawWakerVTable` of your four functions.
    drop(signal);
    Waker::noop().clone()
}
