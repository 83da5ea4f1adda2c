//! The channel between loops under a model checker: loom runs each test
//! once for every interleaving of the threads' steps, and each must pass.
//!
//! The property is the lost-wakeup rule of `runtime::mpsc`: if the
//! receiver's poll returned `Pending`, a sender's wake reached its waker,
//! so the task is polled again and finds what was sent. Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p runtime --test mpsc_model --release
//! ```
//!
//! (`.ci/run` does.) Without `--cfg loom` this file is empty.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use runtime::mpsc;

/// A waker that counts its wakes.
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls the receiver once while `senders` threads each run `send` with a
/// sender of their own, then checks that a `Pending` was followed by a wake
/// and that everything sent is there, followed by the end.
fn check(senders: usize, send: fn(mpsc::Sender<u32>), want: &'static [u32]) {
    loom::model(move || {
        let (tx, mut rx) = mpsc::channel::<u32>();
        let threads: Vec<_> = (0..senders)
            .map(|_| {
                let tx = tx.clone();
                loom::thread::spawn(move || send(tx))
            })
            .collect();
        drop(tx);
        let woken = std::sync::Arc::new(Counting(AtomicUsize::new(0)));
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let first = rx.poll_recv(&mut cx);
        for thread in threads {
            thread.join().unwrap();
        }
        let mut got = Vec::new();
        match first {
            Poll::Ready(Some(v)) => got.push(v),
            Poll::Ready(None) => {}
            Poll::Pending => assert!(woken.0.load(Ordering::SeqCst) >= 1, "a lost wakeup"),
        }
        while let Poll::Ready(Some(v)) = rx.poll_recv(&mut cx) {
            got.push(v);
        }
        assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(None));
        assert_eq!(got, want);
    });
}

#[test]
fn a_value_sent_from_another_thread_always_wakes_the_receiver() {
    check(1, |tx| tx.send(7).unwrap(), &[7]);
}

#[test]
fn the_last_sender_dropped_on_another_thread_always_wakes_the_receiver() {
    check(1, drop, &[]);
}

#[test]
fn two_senders_on_two_threads_never_lose_a_wake_or_a_value() {
    check(2, |tx| tx.send(7).unwrap(), &[7, 7]);
}
