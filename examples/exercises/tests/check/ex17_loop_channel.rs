//! Exercise 17's tests: every one runs under loom's model checker, which
//! runs its closure once for every order in which the threads can take the
//! channel's lock, and fails on the first order that breaks an assertion.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use exercises::ex17_loop_channel::{Receiver, Sender, channel};

/// A waker that counts its wakes, as a loop's task waker would queue the
/// task once per wake.
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `rx` once while `senders` threads run `send_from` with a sender
/// each; then, after they are done, polls until the end. Returns what the
/// first poll said, the wakes it got, and every value received.
fn race(senders: usize, send_from: fn(usize, Sender<u32>)) -> (Poll<Option<u32>>, usize, Vec<u32>) {
    let (tx, mut rx): (Sender<u32>, Receiver<u32>) = channel();
    let threads: Vec<_> = (0..senders)
        .map(|i| {
            let tx = tx.clone();
            loom::thread::spawn(move || send_from(i, tx))
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
    let wakes = woken.0.load(Ordering::SeqCst);
    let mut got = Vec::new();
    if let Poll::Ready(Some(v)) = first {
        got.push(v);
    }
    while let Poll::Ready(Some(v)) = rx.poll_recv(&mut cx) {
        got.push(v);
    }
    (first, wakes, got)
}

#[test]
fn values_sent_on_one_thread_arrive_in_order() {
    loom::model(|| {
        let (tx, mut rx) = channel::<u32>();
        tx.send(1);
        tx.send(2);
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(1)));
        assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(2)));
        assert_eq!(
            rx.poll_recv(&mut cx),
            Poll::Pending,
            "an empty channel with a live sender waits"
        );
        drop(tx);
        assert_eq!(
            rx.poll_recv(&mut cx),
            Poll::Ready(None),
            "once the last sender is gone, an empty channel is over"
        );
    });
}

#[test]
fn a_value_sent_from_another_thread_always_wakes_the_receiver() {
    loom::model(|| {
        let (first, wakes, got) = race(1, |_, tx| tx.send(7));
        if first.is_pending() {
            assert!(
                wakes >= 1,
                "a lost wakeup: the receiver said Pending, and the value sent meanwhile never woke it"
            );
        }
        assert_eq!(got, [7], "every value sent is received, once");
    });
}

#[test]
fn the_last_sender_dropped_on_another_thread_wakes_the_receiver() {
    loom::model(|| {
        let (first, wakes, got) = race(1, |_, tx| drop(tx));
        if first.is_pending() {
            assert!(
                wakes >= 1,
                "the receiver waited, and the last sender went away without waking it: it would wait forever"
            );
        }
        assert_eq!(got, Vec::<u32>::new());
    });
}

#[test]
fn two_senders_on_two_threads_lose_no_wake_and_no_value() {
    loom::model(|| {
        let (first, wakes, mut got) = race(2, |i, tx| tx.send(i as u32));
        if first.is_pending() {
            assert!(wakes >= 1, "a lost wakeup with two senders");
        }
        got.sort();
        assert_eq!(got, [0, 1], "each sender's value, once");
    });
}
