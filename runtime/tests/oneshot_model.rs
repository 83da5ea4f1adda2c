//! The cross-thread handoff under a model checker: loom runs these tests
//! once for every interleaving of the two threads' steps (every order in
//! which they can take the locks), and each must pass.
//!
//! The property is the lost-wakeup rule of `runtime::oneshot`: if the
//! receiver's poll returned `Pending`, the sender's wake reached its waker,
//! so the task is polled again and finds the value. Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p runtime --test oneshot_model --release
//! ```
//!
//! (`.ci/run` does.) Without `--cfg loom` this file is empty.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use runtime::oneshot::{self, Closed};

/// A waker that counts its wakes.
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls the receiver once while `send` runs on another thread, then checks
/// that a `Pending` was followed by a wake and the value.
fn check(send: fn(oneshot::Sender<u32>), want: Result<u32, Closed>) {
    loom::model(move || {
        let (tx, mut rx) = oneshot::channel::<u32>();
        let sender = loom::thread::spawn(move || send(tx));
        let woken = std::sync::Arc::new(Counting(AtomicUsize::new(0)));
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let first = Pin::new(&mut rx).poll(&mut cx);
        sender.join().unwrap();
        match first {
            Poll::Ready(got) => assert_eq!(got, want),
            Poll::Pending => {
                assert_eq!(woken.0.load(Ordering::SeqCst), 1, "a lost wakeup");
                assert_eq!(Pin::new(&mut rx).poll(&mut cx), Poll::Ready(want));
            }
        }
    });
}

#[test]
fn a_value_sent_from_another_thread_always_wakes_the_receiver() {
    check(|tx| tx.send(7), Ok(7));
}

#[test]
fn a_sender_dropped_on_another_thread_always_wakes_the_receiver() {
    check(drop, Err(Closed));
}
