//! Wakeups that cross threads, and the race that loses them.

use std::future::poll_fn;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use runtime::timeout;
use runtime::{Runtime, run_until_complete, spawn, spawn_blocking};

/// Generous: each case completes in microseconds. The limit only turns a lost
/// wakeup into a failure instead of a hung test.
const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn no_wakeup_is_lost_when_threads_finish_at_any_moment() {
    // Each helper thread finishes at some arbitrary point relative to the
    // task's first poll: before it, during it, or after the task is asleep
    // in the selector. With check-then-register instead of
    // register-then-check, some of these thousands would hang.
    let done = run_until_complete(timeout(LIMIT, async {
        let handles: Vec<_> = (0..2_000u64)
            .map(|i| spawn(async move { spawn_blocking(move || i * 2).await.unwrap() }))
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    }))
    .unwrap();
    assert_eq!(done, Ok((0..2_000u64).map(|i| i * 2).sum()));
}

#[test]
fn a_wake_from_another_thread_reaches_a_sleeping_loop() {
    // The main future parks with its waker handed to a thread. The thread
    // waits until the loop is certainly parked (the waker has been sent),
    // then wakes it from outside. Nothing else is registered, so without the
    // mio::Waker poke the loop would sleep in the selector forever.
    let (tx, rx) = mpsc::channel::<Waker>();
    let flag = Arc::new(Mutex::new(false));
    let theirs = flag.clone();
    let thread = std::thread::spawn(move || {
        let waker = rx.recv().unwrap();
        *theirs.lock().unwrap() = true;
        waker.wake();
    });
    let rt = Runtime::new().unwrap();
    let mut sent = Some(tx);
    let out = rt
        .block_on(timeout(
            LIMIT,
            poll_fn(|cx| {
                if *flag.lock().unwrap() {
                    return Poll::Ready("woken");
                }
                if let Some(tx) = sent.take() {
                    tx.send(cx.waker().clone()).unwrap();
                }
                Poll::Pending
            }),
        ))
        .unwrap();
    thread.join().unwrap();
    assert_eq!(out, Ok("woken"));
}
